"""Registry throughput and p99 latency: browse and post, on SQLite and PostgreSQL.

Measured in the same run, each against one uvicorn process with the same
settings:
  bare-get   a bare Starlette endpoint answering a constant page of 20
             invitation-shaped objects as JSON (the baseline for browse);
  bare-post  a bare Starlette endpoint parsing a JSON body and answering JSON
             (the baseline for post);
  browse     GET /v1/invitations?limit=20 on a registry holding 1,000 open
             invitations;
  post       POST /v1/invitations, each request freshly Ed25519-signed, the
             options checked against the spec, one logged transaction each.
The load generator is a small keep-alive HTTP/1.1 client on asyncio in this
process (so it shares the 2 cores with the server, equally for every line).
Each registry slice runs right after a bare slice, for several rounds, and the
ratios are medians of the per-round ratios, so the load other programs put on
the machine drifts out of them.
Run: .venv/bin/python benchmarks/registry.py [--rounds R] [--seconds S]
     [--concurrency C] [--backends sqlite,postgres]
Profile: .venv/bin/python benchmarks/registry.py --profile N [--backends ...]
     posts N invitations with Store.post_invitation in a loop, in this process,
     and prints the SQL statements and the wall time per post.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RPS = ROOT / "src" / "lingxi" / "protocols" / "rock-paper-scissors" / "spec.json"


# ---------------------------------------------------------------- the bare baseline
def bare_app():
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    page = {"items": [{"invitation_id": f"inv-{i:020d}", "protocol_id": "a" * 64,
                       "host_agent_id": "lx-0123456789abcdef", "host_public_key": "b" * 64,
                       "endpoint": "tcp://127.0.0.1:9000", "options": {"best_of": 3},
                       "note": "", "status": "open", "created_at": "2026-12-01T00:00:00.000Z",
                       "expires_at": "2026-12-01T02:00:00.000Z", "seq": i,
                       "protocol_name": "Rock-Paper-Scissors (Lingxi)", "protocol_type": "game"}
                      for i in range(20)], "next_cursor": "czE"}

    async def get(request: Request) -> JSONResponse:
        return JSONResponse(page)

    async def post(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        return JSONResponse({"invitation": body, "created": True}, status_code=201)

    return Starlette(routes=[Route("/bare", get, methods=["GET"]),
                             Route("/bare", post, methods=["POST"])])


def serve_bare(port: int) -> None:
    import uvicorn

    uvicorn.run(bare_app(), host="127.0.0.1", port=port, log_level="warning",
                access_log=False, lifespan="off")


# ---------------------------------------------------------------- in-process profile
def profile(url: str, posts: int) -> str:
    """Statements and milliseconds per ``Store.post_invitation``, sequentially in process."""
    from collections import Counter

    from sqlalchemy import event

    from lingxi.registry.models.signing import SignedRequest, parse_signed, sign_request
    from lingxi.registry.storage.store import Store
    from lingxi.wire.identity import Identity

    store = Store(url, writes_per_minute=None, presence_timeout=3600)
    store.max_open_invitations = 10 ** 9
    host = Identity.generate()

    def signed(path: str, body: dict) -> tuple[SignedRequest, dict, str]:
        text = json.dumps(body)
        headers = sign_request(host, "POST", path, text.encode())
        return parse_signed(headers, "POST", path, text.encode(), now=time.time()), body, text

    try:
        store.register_identity(*signed("/v1/identities", {
            "nickname": "prof-" + secrets.token_hex(3), "public_key": host.public_hex}))
        pid = store.register_protocol(*signed("/v1/protocols", {
            "spec": json.loads(RPS.read_text())}))["protocol_id"]
        requests = [signed("/v1/invitations", {"protocol_id": pid, "options": {"best_of": 3},
                                               "endpoint": f"tcp://127.0.0.1:{2000 + i}"})
                    for i in range(posts)]
        seen: Counter[str] = Counter()

        def count(_conn, _cursor, statement, _params, _context, _many) -> None:  # noqa: ANN001
            seen[" ".join(statement.split())[:70]] += 1

        event.listen(store.writer, "before_cursor_execute", count)
        started = time.perf_counter()
        for request in requests:
            store.post_invitation(*request)
        elapsed = time.perf_counter() - started
        event.remove(store.writer, "before_cursor_execute", count)
    finally:
        store.close()
    lines = [f"{store.writer.dialect.name}: {posts} posts, {elapsed / posts * 1000:.2f} ms "
             f"per post, {sum(seen.values()) / posts:.1f} statements per post "
             "(+ BEGIN/COMMIT)"]
    lines += [f"  {n / posts:5.2f}  {s}" for s, n in seen.most_common()]
    return "\n".join(lines)


def run_profile(posts: int, backends: str) -> None:
    for backend in backends.split(","):
        drop = None
        if backend == "sqlite":
            url = f"sqlite:///{tempfile.mkdtemp(prefix='lingxi-prof-')}/registry.db"
        else:
            made = postgres_database()
            if made is None:
                continue
            url, drop = made
        try:
            print(profile(url, posts))
        finally:
            if drop:
                drop()


# ---------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: list[str], port: int, home: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, *args], env={**os.environ, "LINGXI_HOME": home},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("a server did not start")


# ---------------------------------------------------------------- load generator
class Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def request(self, raw: bytes) -> int:
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        await self.reader.readexactly(length)
        return status


async def load(port: int, make_request, seconds: float, concurrency: int) -> dict:
    latencies: list[float] = []
    failures = 0
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal failures
        conn = Conn(*await asyncio.open_connection("127.0.0.1", port))
        while time.perf_counter() < stop:
            raw = make_request()
            began = time.perf_counter()
            status = await conn.request(raw)
            latencies.append(time.perf_counter() - began)
            if status >= 300:
                failures += 1
        conn.writer.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - began
    latencies.sort()
    return {"rps": len(latencies) / elapsed, "requests": len(latencies), "failures": failures,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))]}


def get_request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


def post_request(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


# ---------------------------------------------------------------- one backend
async def populate(url: str, count: int):
    from lingxi.registry.client.api import RegistryClient
    from lingxi.wire.identity import Identity

    host = Identity.generate()
    async with RegistryClient(url, host, timeout=60) as client:
        await client.register("bench-host-" + secrets.token_hex(3))
        pid = (await client.register_protocol(json.loads(RPS.read_text())))["protocol_id"]
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            async with sem:
                await client.post_invitation(pid, endpoint=f"tcp://127.0.0.1:{2000 + i}",
                                             options={"best_of": 3})

        await asyncio.gather(*(one(i) for i in range(count)))
    return host, pid


def post_maker(host, pid: str):
    from lingxi.registry.models.signing import sign_request

    counter = iter(range(10**9))

    def make() -> bytes:
        body = json.dumps({"protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{next(counter) % 60000 + 1}",
                           "options": {"best_of": 3}}).encode()
        return post_request("/v1/invitations", body,
                            sign_request(host, "POST", "/v1/invitations", body))

    return make


def postgres_database() -> tuple[str, callable] | None:
    try:
        import psycopg

        name = "lingxi_bench_" + secrets.token_hex(4)
        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as error:  # noqa: BLE001
        print(f"postgres: skipped ({error})")
        return None

    def drop() -> None:
        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", drop


def median_of(rounds: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in rounds) for k in ("rps", "p50_ms", "p99_ms")}
    out["requests"] = sum(r["requests"] for r in rounds)
    out["failures"] = sum(r["failures"] for r in rounds)
    return out


def ratio_line(name: str, pairs: list[tuple[dict, dict]]) -> str:
    """Median over rounds of (measured, baseline-in-the-same-round) ratios."""
    tput = statistics.median(m["rps"] / b["rps"] for m, b in pairs)
    p99 = statistics.median(m["p99_ms"] / b["p99_ms"] for m, b in pairs)
    m = median_of([m for m, _ in pairs])
    return (f"{name:<16} {m['rps']:>7.0f} req/s  p99 {m['p99_ms']:7.2f} ms   "
            f"throughput {tput:>5.0%} of bare, p99 x{p99:.2f} of bare   "
            f"({m['requests']} requests, {m['failures']} failed)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per slice")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--invitations", type=int, default=1000)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile N in-process posts instead of the HTTP benchmark")
    args = parser.parse_args()
    if args.profile:
        run_profile(args.profile, args.backends)
        return
    work = Path(tempfile.mkdtemp(prefix="lingxi-bench-"))
    bare_port = free_port()
    bare = start([__file__, "--serve-bare", str(bare_port)], bare_port, str(work / "bare"))
    bare_body = json.dumps({"protocol_id": "a" * 64, "endpoint": "tcp://127.0.0.1:1",
                            "options": {"best_of": 3}}).encode()
    print(f"concurrency {args.concurrency}; {args.rounds} rounds of {args.seconds:.0f} s slices, "
          "each registry slice next to a bare slice; medians over rounds; "
          f"{args.invitations} open invitations")
    try:
        for backend in args.backends.split(","):
            drop = None
            if backend == "sqlite":
                url = f"sqlite:///{work / 'registry.db'}"
            else:
                made = postgres_database()
                if made is None:
                    continue
                url, drop = made
            port = free_port()
            server = start(["-m", "lingxi", "server", "--port", str(port), "--database-url",
                            url, "--max-open-invitations", str(10 ** 9),  # one host posts all,
                            "--rate-limit", "0", "--presence-timeout", "3600"],  # unthrottled
                           port, str(work / backend))
            try:
                host, pid = await populate(f"http://127.0.0.1:{port}", args.invitations)
                path = "/v1/invitations?limit=20"
                await load(port, lambda p=path: get_request(p), 1.0, args.concurrency)
                await load(bare_port, lambda: get_request("/bare"), 1.0, args.concurrency)
                gets, posts = [], []
                make_post = post_maker(host, pid)
                for _ in range(args.rounds):
                    base = await load(bare_port, lambda: get_request("/bare"), args.seconds,
                                      args.concurrency)
                    gets.append((await load(port, lambda p=path: get_request(p), args.seconds,
                                            args.concurrency), base))
                    base = await load(bare_port, lambda: post_request("/bare", bare_body, {}),
                                      args.seconds, args.concurrency)
                    posts.append((await load(port, make_post, args.seconds, args.concurrency),
                                  base))
                bare_get = median_of([b for _, b in gets])
                bare_post = median_of([b for _, b in posts])
                print(f"{backend}: bare GET {bare_get['rps']:.0f} req/s p99 "
                      f"{bare_get['p99_ms']:.2f} ms; bare POST {bare_post['rps']:.0f} req/s "
                      f"p99 {bare_post['p99_ms']:.2f} ms")
                print("  " + ratio_line("browse", gets))
                print("  " + ratio_line("post", posts))
            finally:
                server.terminate()
                server.wait()
                if drop:
                    drop()
    finally:
        bare.terminate()
        bare.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-bare"]:
        serve_bare(int(sys.argv[2]))
    else:
        asyncio.run(main())
