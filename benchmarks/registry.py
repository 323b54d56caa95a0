"""Registry throughput and p99 latency: browse and post, on SQLite and PostgreSQL.

Measured in the same run, each against one uvicorn process with the same
settings:
  bare-get   a bare Starlette endpoint answering a constant page of 20
             invitation-shaped objects as JSON (the baseline for browse);
  bare-post  a bare Starlette endpoint parsing a JSON body and answering JSON
             (the baseline for post);
  browse     GET /v1/invitations?limit=20 on a registry holding ``--invitations``
             (default 1,000) open invitations: one query string, so after the
             first request it is answered from the list cache;
  uncached   GET /v1/invitations?limit=20&cursor=C with C a random page start
             among the open invitations: the cache holds at most 512 answers and
             there are as many cursors as invitations, so nearly every request
             runs the query (keyset page, joins, JSON) — what a page costs after
             a write, or the pages behind the first;
  post       POST /v1/invitations, each request freshly Ed25519-signed, the
             options checked against the spec, one logged transaction each;
             ``--hosts`` hosts (default 16) take turns, so each host's count of
             open invitations (checked per post against its cap) is its share.
The open invitations belong to as many hosts as it takes for none to hold more
than ``--per-host`` (default 20, the server's default cap), as on a registry
whose hosts keep to the cap: with 20,000 open that is 1,000 hosts, and the
first ``--hosts`` of them post. (The server itself runs without a cap, as the
posting hosts post thousands in the slices.)
The first 1,000 invitations are posted through the HTTP API, the rest (with
``--invitations 20000``, say) through a ``Store`` of this process on the same
database: the same signed write path, without the HTTP client's cost.
Beside req/s each line gives the CPU the server process spent per request (from
/proc, all threads), which the load of other programs moves far less than req/s.
The load generator is a small keep-alive HTTP/1.1 client on asyncio in this
process (so it shares the 2 cores with the server, equally for every line).
Each registry slice runs right after a bare slice, for several rounds, and the
ratios are medians of the per-round ratios, so the load other programs put on
the machine drifts out of them.
Run: .venv/bin/python benchmarks/registry.py [--rounds R] [--seconds S]
     [--concurrency C] [--backends sqlite,postgres] [--workers N]
     (--workers N: N server processes for the registry and for the bare baseline;
     the server CPU is then that of all of them)
Profile: .venv/bin/python benchmarks/registry.py --profile N [--backends ...]
     posts N invitations with Store.post_invitation in a loop, in this process,
     and prints the SQL statements and the wall time per post.
Sample: .venv/bin/python benchmarks/registry.py --sample S [--backends ...]
     posts for S seconds against a server running a sampling profiler over all
     its threads (samples count only while the OS says the thread runs) and
     prints its busiest functions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
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


def serve_bare(port: int, workers: int = 1) -> None:
    """The bare app on uvicorn, on ``workers`` processes as ``lingxi server --workers``."""
    import uvicorn

    settings = {"host": "127.0.0.1", "port": port, "log_level": "warning",
                "access_log": False, "lifespan": "off"}
    if workers > 1:  # uvicorn's workers import the app: this file, as module "registry"
        uvicorn.run("registry:bare_app", factory=True, workers=workers,
                    app_dir=str(Path(__file__).parent), **settings)
    else:
        uvicorn.run(bare_app(), **settings)


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


# ---------------------------------------------------------------- sampled server profile
def serve_sampled(port: int, url: str, out: str, interval: float = 0.001) -> None:
    """``lingxi server`` in this process with a sampling profiler over every thread (what
    cProfile cannot do: writes run in the thread pool). A sample counts only when the
    OS says the thread is running (state R in /proc), so waits on locks, the GIL, the
    socket or the database do not. On SIGTERM the busiest functions (self and
    inclusive) go to ``out``."""
    import collections
    import signal
    import threading

    from lingxi.registry.server.run import serve

    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    busy = [0, 0]  # running samples, all samples
    stop = threading.Event()

    def name(code) -> str:  # noqa: ANN001
        return f"{Path(code.co_filename).name}:{code.co_name}"

    def running(native_id: int) -> bool:
        try:
            stat = Path(f"/proc/self/task/{native_id}/stat").read_text()
        except OSError:
            return False
        return stat[stat.rindex(")") + 2] == "R"

    def sample() -> None:
        me = threading.get_ident()
        while not stop.wait(interval):
            frames = sys._current_frames()
            for thread in threading.enumerate():
                frame = frames.get(thread.ident)
                if thread.ident == me or frame is None or thread.native_id is None:
                    continue
                busy[1] += 1
                if not running(thread.native_id):
                    continue
                busy[0] += 1
                own[name(frame.f_code)] += 1
                seen = set()
                while frame is not None:
                    key = name(frame.f_code)
                    if key not in seen:
                        inclusive[key] += 1
                        seen.add(key)
                    frame = frame.f_back

    def dump(*_: object) -> None:
        stop.set()
        total = max(1, busy[0])
        lines = [f"{busy[0]} running samples of {busy[1]} thread samples"]
        lines += ["self:"] + [f"  {n / total:6.1%}  {k}" for k, n in own.most_common(40)]
        lines += ["inclusive:"] + [f"  {n / total:6.1%}  {k}"
                                   for k, n in inclusive.most_common(70)]
        Path(out).write_text("\n".join(lines) + "\n")
        os._exit(0)

    threading.Thread(target=sample, daemon=True).start()
    signal.signal(signal.SIGTERM, dump)
    serve(port=port, database_url=url, max_open_invitations=10 ** 9, writes_per_minute=None,
          presence_timeout=3600)


# ---------------------------------------------------------------- deterministic server profile
def serve_profiled(port: int, url: str, out: str) -> None:
    """``lingxi server`` in this process under cProfile on the CPU clock of each thread
    (``time.thread_time``: waits on the GIL, locks, sockets or the database count
    nothing). Profiling starts on SIGUSR1 (after the registry is filled), for the main
    thread (the event loop) and every thread started from then on (the writer thread
    starts on demand); on SIGTERM the merged statistics go to ``out`` (pstats format).
    Threads still running then are left out (stop the load and wait for the writer to
    idle out first)."""
    import cProfile
    import threading

    from lingxi.registry.server.run import serve

    done: list[cProfile.Profile] = []
    on = threading.Event()
    main = cProfile.Profile(time.thread_time)
    plain_run = threading.Thread.run

    def run(self: threading.Thread) -> None:
        if not on.is_set():
            plain_run(self)
            return
        mine = cProfile.Profile(time.thread_time)
        mine.enable()
        try:
            plain_run(self)
        finally:
            mine.disable()
            done.append(mine)

    def begin(*_: object) -> None:
        on.set()
        main.enable()

    def dump(*_: object) -> None:
        import pstats

        main.disable()
        stats = pstats.Stats(main)
        for profile in done:
            stats.add(profile)
        stats.dump_stats(out)
        os._exit(0)

    threading.Thread.run = run  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, begin)
    signal.signal(signal.SIGTERM, dump)
    serve(port=port, database_url=url, max_open_invitations=10 ** 9, writes_per_minute=None,
          presence_timeout=3600)


# one post's CPU in parts: (label, file, function) whose inclusive time is the part's; the
# writer thread's parts nest (the write holds the log append, which holds the hashing)
PARTS = (
    ("event loop: uvicorn h11 parsing a request", "h11_impl.py", "data_received"),
    ("event loop: the ASGI app (middleware, route, handler, response)", "h11_impl.py",
     "run_asgi"),
    ("  read_signed: body, JSON, signature headers", "http.py", "read_signed"),
    ("  sending the response (h11 framing, headers)", "responses.py", "__call__"),
    ("event loop: asyncio's own (selector, callbacks)", "selectors.py", "select"),
    ("writer thread: the whole batch (run_many)", "batch.py", "run_many"),
    ("  authenticate: key lookup + Ed25519 verify", "identities.py", "authenticate"),
    ("    the verify itself", "keys.py", "verify"),
    ("  check_options against the spec", "invitations.py", "check_options"),
    ("  check_endpoint", "records.py", "check_endpoint"),
    ("  the write in its savepoint (write_once)", "unit.py", "write_once"),
    ("    nonce spend (SQLite: alone; PostgreSQL: with the open count)", "unit.py",
     "_spend_and_probe"),
    ("    log append (record JSON, entry hash, Merkle nodes)", "unit.py", "append"),
    ("      canonical JSON", "canonical.py", "canonical_json"),
    ("      Merkle append", "tree.py", "append"),
    ("    statements sent to the driver (driver.send)", "driver.py", "send"),
    ("  begin, head lock, commit (transaction)", "unit.py", "transaction"),
)


def print_parts(table: dict, posts: int) -> None:
    print("  one post's thread CPU by part (inclusive, us per post, under cProfile):")
    for label, file, function in PARTS:
        spent = sum(value[3] for (where, _, name), value in table.items()
                    if name == function and where.endswith("/" + file))
        print(f"    {1e6 * spent / posts:8.1f}  {label}")


def print_profile(path: Path, posts: int, cpu_ms: float, top: int = 45) -> None:
    """The profile's busiest functions, in microseconds of thread CPU per post."""
    import pstats

    stats = pstats.Stats(str(path))
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in table.values())
    print(f"  profiled thread CPU {1000 * total / posts:.3f} ms per post "
          f"(server /proc CPU {cpu_ms:.3f} ms per post, unprofiled run's is lower: "
          "cProfile adds its own cost per call)")
    print_parts(table, posts)

    def name(key: tuple[str, int, str]) -> str:
        file, line, func = key
        return f"{Path(file).parent.name}/{Path(file).name}:{line}:{func}" if line else func

    for title, column in (("self", 2), ("inclusive", 3)):
        print(f"  {title} (us per post, calls per post):")
        rows = sorted(table.items(), key=lambda kv: kv[1][column], reverse=True)[:top]
        for key, value in rows:
            print(f"    {1e6 * value[column] / posts:8.1f}  {value[1] / posts:6.2f}  {name(key)}")


async def run_cprofile(args: argparse.Namespace) -> None:
    """Posts for ``args.cprofile`` seconds against ``--serve-profiled``; prints its profile."""

    async def measure(server: subprocess.Popen, port: int, hosts, pid: str,  # noqa: ANN001
                      out: Path) -> None:
        await asyncio.sleep(1.0)  # the writer thread idles out: a fresh, profiled one
        server.send_signal(signal.SIGUSR1)
        await asyncio.sleep(0.2)
        result = await load(port, post_maker(hosts, pid), args.cprofile,
                            args.concurrency, server.pid)
        await asyncio.sleep(1.0)  # the writer thread ends and hands in its profile
        print(f"{result['rps']:.0f} posts/s under cProfile, {result['requests']} posts")
        server.terminate()
        server.wait()  # the profile is written as the server ends
        print_profile(out, result["requests"], result["cpu_ms"])

    await under_profiler(args, "--serve-profiled", "pstats", measure)


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


def _stat(pid: int | str) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process ``pid`` and every process under it (uvicorn's
    workers) have used, all their threads, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(entry.name)[1]), []).append(int(entry.name))
            except OSError:  # it ended meanwhile
                continue
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            fields = _stat(current)
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def load(port: int, make_request, seconds: float, concurrency: int,
               server: int | None = None) -> dict:
    """Keep-alive clients for ``seconds``; with ``server`` (its pid) also the CPU the
    server process spent per request (robust to the machine's load, unlike req/s)."""
    cpu = cpu_seconds(server) if server else 0.0
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
    cpu_ms = 1000 * (cpu_seconds(server) - cpu) / max(1, len(latencies)) if server else 0.0
    return {"rps": len(latencies) / elapsed, "requests": len(latencies), "failures": failures,
            "cpu_ms": cpu_ms,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))]}


def get_request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


def post_request(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


# ---------------------------------------------------------------- one backend
async def post_share(client, pid: str, share: range) -> None:  # noqa: ANN001
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem:
            await client.post_invitation(pid, endpoint=f"tcp://127.0.0.1:{2000 + i}",
                                         options={"best_of": 3})

    await asyncio.gather(*(one(i) for i in share))


async def populate(url: str, count: int, hosts: int = 1):
    """``hosts`` registered hosts, ``count`` open invitations posted among them (16 hosts
    at a time: a thousand one after another take a minute)."""
    from lingxi.registry.client.api import RegistryClient
    from lingxi.wire.identity import Identity

    made = [Identity.generate() for _ in range(hosts)]
    async with RegistryClient(url, made[0], timeout=60) as client:
        await client.register("bench-host-" + secrets.token_hex(3))
        pid = (await client.register_protocol(json.loads(RPS.read_text())))["protocol_id"]
        await post_share(client, pid, range(0, count, hosts))
    sem = asyncio.Semaphore(16)

    async def one(h: int) -> None:
        async with sem, RegistryClient(url, made[h], timeout=60) as client:
            await client.register("bench-host-" + secrets.token_hex(4))
            await post_share(client, pid, range(h, count, hosts))

    await asyncio.gather(*(one(h) for h in range(1, hosts)))
    return made, pid


def post_direct(database_url: str, key_file: str | None, hosts, pid: str, count: int,
                threads: int = 8) -> None:
    """``count`` open invitations posted through a ``Store`` of this process on the
    server's database (the same write path, signed requests included, without the HTTP
    client's cost): filling a registry with 20,000 through HTTP takes minutes here."""
    from concurrent.futures import ThreadPoolExecutor

    from lingxi.registry.models.signing import parse_signed, sign_request
    from lingxi.registry.storage.store import Store

    store = Store(database_url, key_file=key_file, writes_per_minute=None,
                  presence_timeout=3600)
    store.max_open_invitations = 10 ** 9

    def one(i: int) -> None:
        text = json.dumps({"protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{2000 + i % 60000}",
                           "options": {"best_of": 3}})
        raw = text.encode()
        headers = sign_request(hosts[i % len(hosts)], "POST", "/v1/invitations", raw)
        signed = parse_signed(headers, "POST", "/v1/invitations", raw, now=time.time())
        store.post_invitation(signed, json.loads(text), text)

    try:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(count)))
    finally:
        store.close()


def analyze(database_url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("ANALYZE"))
    finally:
        engine.dispose()


def post_maker(hosts, pid: str):
    """Fresh signed posts, the hosts taking turns."""
    from lingxi.registry.models.signing import sign_request

    counter = iter(range(10**9))

    def make() -> bytes:
        n = next(counter)
        body = json.dumps({"protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{n % 60000 + 1}",
                           "options": {"best_of": 3}}).encode()
        return post_request("/v1/invitations", body,
                            sign_request(hosts[n % len(hosts)], "POST", "/v1/invitations", body))

    return make


def page_maker(last_seq: int):
    """Browse pages starting at random points of the log (``last_seq``: about its size),
    each a query string of its own, so the list cache seldom holds the answer."""
    import random

    from lingxi.registry.models.records import encode_cursor

    pick = random.Random(7)

    def make() -> bytes:
        before = pick.randint(min(40, last_seq), max(40, last_seq))
        return get_request(f"/v1/invitations?limit=20&cursor={encode_cursor(before)}")

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
    out = {k: statistics.median(r[k] for r in rounds)
           for k in ("rps", "p50_ms", "p99_ms", "cpu_ms")}
    out["requests"] = sum(r["requests"] for r in rounds)
    out["failures"] = sum(r["failures"] for r in rounds)
    return out


def ratio_line(name: str, pairs: list[tuple[dict, dict]]) -> str:
    """Median over rounds of (measured, baseline-in-the-same-round) ratios."""
    tput = statistics.median(m["rps"] / b["rps"] for m, b in pairs)
    p99 = statistics.median(m["p99_ms"] / b["p99_ms"] for m, b in pairs)
    cpu = statistics.median(m["cpu_ms"] / b["cpu_ms"] for m, b in pairs)
    m = median_of([m for m, _ in pairs])
    return (f"{name:<16} {m['rps']:>7.0f} req/s  p99 {m['p99_ms']:7.2f} ms   "
            f"throughput {tput:>5.0%} of bare, p99 x{p99:.2f} of bare   "
            f"server CPU {m['cpu_ms']:.2f} ms/req = x{cpu:.2f} of bare   "
            f"({m['requests']} requests, {m['failures']} failed)")


def backend_database(backend: str, work: Path) -> tuple[str, callable | None] | None:
    """The database URL for ``backend`` and how to drop it afterwards (None: nothing to
    drop), or None when PostgreSQL is not reachable."""
    if backend == "sqlite":
        return f"sqlite:///{work / 'registry.db'}", None
    return postgres_database()


async def under_profiler(args: argparse.Namespace, flag: str, suffix: str, measure) -> None:  # noqa: ANN001
    """For each backend: a server started with ``flag`` (a profiler in it), filled, then
    ``measure(server, port, hosts, protocol_id, out)`` (``out``: where its profile goes)."""
    work = Path(tempfile.mkdtemp(prefix="lingxi-profile-"))
    for backend in args.backends.split(","):
        made = backend_database(backend, work)
        if made is None:
            continue
        url, drop = made
        port, out = free_port(), work / f"{backend}.{suffix}"
        server = start([__file__, flag, str(port), url, str(out)], port, str(work / backend))
        try:
            hosts, pid = await populate(f"http://127.0.0.1:{port}", args.invitations,
                                        args.hosts)
            print(f"{backend}: ", end="")
            await measure(server, port, hosts, pid, out)
        finally:
            if server.poll() is None:
                server.terminate()
                server.wait()
            if drop:
                drop()


async def run_sample(args: argparse.Namespace) -> None:
    """Posts for ``args.sample`` seconds against ``--serve-sampled``; prints its profile."""

    async def measure(server: subprocess.Popen, port: int, hosts, pid: str,  # noqa: ANN001
                      out: Path) -> None:
        cpu = os.times()
        result = await load(port, post_maker(hosts, pid), args.sample,
                            args.concurrency)
        spent = os.times()
        print(f"{result['rps']:.0f} posts/s; load generator CPU "
              f"{(spent.user + spent.system - cpu.user - cpu.system) / result['requests'] * 1000:.2f}"
              " ms per post")
        server.terminate()
        server.wait()
        print(out.read_text())

    await under_profiler(args, "--serve-sampled", "txt", measure)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per slice")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--invitations", type=int, default=1000)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--hosts", type=int, default=16,
                        help="hosts that post, taking turns (each has its share open)")
    parser.add_argument("--per-host", type=int, default=20,
                        help="at most this many of the open invitations belong to one host")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile N in-process posts instead of the HTTP benchmark")
    parser.add_argument("--sample", type=float, default=0, metavar="S",
                        help="post for S seconds against a server under a sampling profiler "
                        "and print where its CPU goes, instead of the benchmark")
    parser.add_argument("--workers", type=int, default=1,
                        help="server processes, for the registry (lingxi server --workers) "
                        "and the bare baseline alike")
    parser.add_argument("--cprofile", type=float, default=0, metavar="S",
                        help="post for S seconds against a server under cProfile (CPU time "
                        "of each thread) and print one post's CPU by function, instead of "
                        "the benchmark")
    args = parser.parse_args()
    if args.cprofile:
        await run_cprofile(args)
        return
    if args.profile:
        run_profile(args.profile, args.backends)
        return
    if args.sample:
        await run_sample(args)
        return
    work = Path(tempfile.mkdtemp(prefix="lingxi-bench-"))
    bare_port = free_port()
    bare = start([__file__, "--serve-bare", str(bare_port), str(args.workers)], bare_port,
                 str(work / "bare"))
    bare_body = json.dumps({"protocol_id": "a" * 64, "endpoint": "tcp://127.0.0.1:1",
                            "options": {"best_of": 3}}).encode()
    print(f"concurrency {args.concurrency}; {args.rounds} rounds of {args.seconds:.0f} s slices, "
          "each registry slice next to a bare slice; medians over rounds; "
          f"{args.invitations} open invitations; {args.workers} server process(es) each")
    try:
        for backend in args.backends.split(","):
            made = backend_database(backend, work)
            if made is None:
                continue
            url, drop = made
            port = free_port()
            server = start(["-m", "lingxi", "server", "--port", str(port), "--database-url",
                            url, "--max-open-invitations", str(10 ** 9),  # hosts post thousands,
                            "--rate-limit", "0", "--presence-timeout", "3600",  # unthrottled
                            *(["--workers", str(args.workers)] if args.workers > 1 else [])],
                           port, str(work / backend))
            try:
                http_share = min(args.invitations, 1000)  # the rest straight to the store
                owners = max(args.hosts, -(-args.invitations // args.per_host))
                hosts, pid = await populate(f"http://127.0.0.1:{port}", http_share, owners)
                if args.invitations > http_share:
                    key_file = (None if backend == "sqlite"
                                else str(work / backend / "registry" / "server.key"))
                    await asyncio.to_thread(post_direct, url, key_file, hosts, pid,
                                            args.invitations - http_share)
                    if backend == "postgres":  # as autovacuum would have by then: a table
                        analyze(url)  # grown from 0 to 20,000 in a minute has no statistics
                path = "/v1/invitations?limit=20"
                await load(port, lambda p=path: get_request(p), 1.0, args.concurrency)
                await load(bare_port, lambda: get_request("/bare"), 1.0, args.concurrency)
                gets, uncached, posts = [], [], []
                make_post = post_maker(hosts[:args.hosts], pid)
                make_page = page_maker(args.invitations + owners + 1)
                for _ in range(args.rounds):
                    base = await load(bare_port, lambda: get_request("/bare"), args.seconds,
                                      args.concurrency, bare.pid)
                    gets.append((await load(port, lambda p=path: get_request(p), args.seconds,
                                            args.concurrency, server.pid), base))
                    base = await load(bare_port, lambda: get_request("/bare"), args.seconds,
                                      args.concurrency, bare.pid)
                    uncached.append((await load(port, make_page, args.seconds,
                                                args.concurrency, server.pid), base))
                    base = await load(bare_port, lambda: post_request("/bare", bare_body, {}),
                                      args.seconds, args.concurrency, bare.pid)
                    posts.append((await load(port, make_post, args.seconds, args.concurrency,
                                             server.pid), base))
                bare_get = median_of([b for _, b in gets])
                bare_post = median_of([b for _, b in posts])
                print(f"{backend}: bare GET {bare_get['rps']:.0f} req/s p99 "
                      f"{bare_get['p99_ms']:.2f} ms CPU {bare_get['cpu_ms']:.2f} ms/req; "
                      f"bare POST {bare_post['rps']:.0f} req/s p99 {bare_post['p99_ms']:.2f} ms "
                      f"CPU {bare_post['cpu_ms']:.2f} ms/req")
                print("  " + ratio_line("browse", gets))
                print("  " + ratio_line("browse uncached", uncached))
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
        serve_bare(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1:2] == ["--serve-profiled"]:
        serve_profiled(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif sys.argv[1:2] == ["--serve-sampled"]:
        serve_sampled(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        asyncio.run(main())
