"""P2A benchmark: signed word-count requests per second through a real `lingxi serve`.

Run: .venv/bin/python benchmarks/callers.py [--requests N] [--repeat R]

Two servers run as child processes on loopback, each on uvicorn (h11):

- **served**: ``lingxi serve --protocol-dir word-count`` — every request is
  depth-scanned, parsed, HMAC-checked, replay-guarded, validated against the
  contract, answered by the word-count hooks through the session core, and
  the reply validated and signed;
- **baseline**: a bare Starlette app on the same uvicorn settings that reads
  the body and answers a fixed JSON envelope of the same size (no checks).

One client (httpx, one keep-alive connection, TCP_NODELAY) sends N distinct signed
requests to each, alternating runs. Reported per server: requests per wall
second and the *server process's* CPU time per request (user + system from
/proc/<pid>/stat, what the OS charged it), with the ratio served/baseline.
The machine is shared, so the CPU-per-request figure is the steadier one.
Exits 1 when either server does not start (no baseline, no figure).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import httpx  # noqa: E402

from lingxi.serve.callers import add_caller  # noqa: E402
from lingxi.wire import AgentEndpoint, EnvelopeBuilder  # noqa: E402

KEY = "b" * 64
ALICE = AgentEndpoint("alice", "lingxi", "lingxi://alice")
TEXT = "Two agents agree on a contract,\nthen run it peer to peer. " * 4
TICKS = os.sysconf("SC_CLK_TCK")

BASELINE = r"""
import json, socket, sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
REPLY = sys.argv[1].encode()
async def root(request):
    await request.body()
    return Response(REPLY, media_type="application/json")
app = Starlette(routes=[Route("/", root, methods=["POST"])])
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(128)
print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}/"}), flush=True)
config = uvicorn.Config(app, lifespan="off", log_level="error", access_log=False,
                        http="h11", ws="none", timeout_keep_alive=5)
uvicorn.Server(config).run(sockets=[sock])
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        proc.kill()
        sys.exit(f"a server did not start: {' '.join(cmd[:4])} …")
    return proc, json.loads(line)["url"]


def run(url: str, bodies: list[bytes], pid: int) -> tuple[float, float]:
    """(requests per wall second, server CPU ms per request) for ``bodies``."""
    # httpx writes headers and body separately; without TCP_NODELAY each request waits
    # for a delayed ACK (~40 ms), which would measure the kernel, not the servers.
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(timeout=60, transport=nodelay) as client:
        client.post(url, content=bodies[0], headers={"Content-Type": "application/json"})
        cpu0, wall0 = cpu_seconds(pid), time.perf_counter()
        for body in bodies[1:]:
            response = client.post(url, content=body,
                                   headers={"Content-Type": "application/json"})
            if response.status_code != 200:
                sys.exit(f"{url} answered {response.status_code}: {response.text[:200]}")
        wall, cpu = time.perf_counter() - wall0, cpu_seconds(pid) - cpu0
    n = len(bodies) - 1
    return n / wall, cpu / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        add_caller(home / "callers.json", "alice", new_key=lambda: KEY)
        env = {**os.environ, "LINGXI_HOME": str(home)}
        served, served_url = start(
            [sys.executable, "-m", "lingxi", "serve", "--protocol-dir", "word-count", "--http",
             "127.0.0.1:0", "--callers", str(home / "callers.json"), "--agent-id", "lx-bench",
             "--quiet", "--json"], env)
        me = AgentEndpoint("lx-bench", "lingxi", served_url)
        builder = EnvelopeBuilder(ALICE, me, KEY, clock=time.time, prefix="caller")
        sample = httpx.post(served_url, content=builder.build(
            {"action": "request", "text": TEXT}).to_bytes(),
            headers={"Content-Type": "application/json"}).content
        baseline, baseline_url = start([sys.executable, "-c", BASELINE, sample.decode()], env)
        try:
            figures: dict[str, list[tuple[float, float]]] = {"served": [], "baseline": []}
            for _ in range(args.repeat):
                for name, url, pid in (("served", served_url, served.pid),
                                       ("baseline", baseline_url, baseline.pid)):
                    bodies = [builder.build({"action": "request", "text": TEXT}).to_bytes()
                              for _ in range(args.requests + 1)]
                    figures[name].append(run(url, bodies, pid))
        finally:
            for proc in (served, baseline):
                proc.terminate()
                proc.wait(10)
    rate = {k: statistics.median(r for r, _ in v) for k, v in figures.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in figures.items()}
    print(f"requests: {args.requests} x {args.repeat} runs, body {len(bodies[0])} bytes")
    for name in ("served", "baseline"):
        print(f"  {name:8} {rate[name]:8.0f} req/s   server CPU {cpu[name]:6.3f} ms/req")
    print(f"  ratio    {rate['served'] / rate['baseline']:8.2f} x rate  "
          f"{cpu['served'] / cpu['baseline']:8.2f} x CPU per request")


if __name__ == "__main__":
    main()
