"""Relay benchmark: what the NATS relay costs against direct loopback TCP, in one run.

Run: .venv/bin/python benchmarks/relay.py [--seconds S] [--repeat N] [--sessions K]
                                          [--idle N]

One nats-server (Debian's binary, this benchmark's own, on a free loopback port,
trusting a relay key set made here) and, measured in the same run:

1. **Round trip**: a signed, sealed envelope sent by a guest's SecureChannel and
   echoed by the host's, both in this process — over the relay vs. over direct
   loopback TCP (the baseline). Time per round trip, median of ``--repeat``
   runs of ``--seconds`` each; the ratio relay/direct (goal ≤ 1.5×); CPU per
   round trip of this process plus the nats-server process (what the OS counts).
2. **Sessions per second one node carries**: ``--sessions`` relayed sessions
   opened at once (each: two NATS connections with credentials, OPEN/ACCEPT,
   the version-2 handshake, one sealed round trip, close), repeated for
   ``--seconds``; vs. the same sessions over direct TCP.
3. **Memory per idle relayed session**: ``--idle`` sessions opened and left
   idle; the growth of the nats-server's RSS and of this process's RSS, per
   session (``/proc``); the direct-TCP growth of this process per session as
   the baseline.

Exits 2 when nats-server is missing (no relay, no figure) and 1 when a
measurement fails.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lingxi.natsauth import NKey  # noqa: E402
from lingxi.registry.models.relay import RelayKeys, server_config  # noqa: E402
from lingxi.wire.channel import SecureChannel, connect_channel, serve_channels  # noqa: E402
from lingxi.wire.envelope import AgentEndpoint  # noqa: E402
from lingxi.wire.handshake import client_handshake, server_handshake  # noqa: E402
from lingxi.wire.identity import Identity  # noqa: E402
from lingxi.wire.relay_link import RelayCredential, RelayLink  # noqa: E402
from lingxi.wire.relay_transport import open_to_host  # noqa: E402

PAYLOAD = {"action": "move", "turn": 3, "row": 2, "col": 5, "note": "benchmark 基准"}
HOST_ID, GUEST_ID = Identity.generate(), Identity.generate()
HOST = AgentEndpoint(HOST_ID.agent_id, "lingxi", "tcp://127.0.0.1:7401")
GUEST = AgentEndpoint(GUEST_ID.agent_id, "lingxi", "tcp://127.0.0.1:7402")
QUIET = {"heartbeat_interval": None, "peer_timeout": None}
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class Node:
    def __init__(self, keys: RelayKeys, folder: Path) -> None:
        binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
        if not os.path.exists(binary):
            print("nats-server is not installed (apt-get install nats-server): no relay, "
                  "no figure", file=sys.stderr)
            raise SystemExit(2)
        self.port = free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        config, log = folder / "nats.conf", folder / "nats.log"
        config.write_text(server_config(keys.trust(int(time.time())),
                                        listen=f"127.0.0.1:{self.port}"))
        self.process = subprocess.Popen([binary, "-c", str(config), "-l", str(log)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while "Server is ready" not in (log.read_text() if log.exists() else ""):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("nats-server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)


def credential(keys: RelayKeys, url: str, role: str, session_id: str) -> RelayCredential:
    user = NKey.generate("user")
    answer = keys.credential(user_key=user.public, role=role, session_id=session_id,
                             now=int(time.time()), ttl=3600)
    return RelayCredential.from_answer({**answer, "servers": [url]}, user)


async def relayed_session(keys: RelayKeys, url: str, session_id: str):
    """(host channel, guest channel, links) over the relay, handshake done."""
    opened: asyncio.Queue = asyncio.Queue()
    host_link = await RelayLink(credential(keys, url, "host", session_id),
                                on_open=opened.put_nowait).open()
    guest_link = await RelayLink(credential(keys, url, "guest", session_id)).open()
    guest_t = await open_to_host(guest_link, timeout=10)
    host_t = await asyncio.wait_for(opened.get(), 10)
    guest_keys, host_keys = await asyncio.gather(
        client_handshake(guest_t, GUEST_ID, GUEST, clock=time.time),
        server_handshake(host_t, HOST_ID, HOST, clock=time.time))
    guest = await SecureChannel(guest_t, guest_keys, clock=time.time, **QUIET).start()
    host = await SecureChannel(host_t, host_keys, clock=time.time, **QUIET).start()
    return host, guest, (host_link, guest_link)


async def direct_session(seal: bool = True):
    """(host channel, guest channel, (server, done)) over loopback TCP."""
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def handler(channel):
        ready.set_result(channel)
        await done.wait()

    server = await serve_channels(handler, HOST_ID, HOST, clock=time.time, seal=seal, **QUIET)
    port = server.sockets[0].getsockname()[1]
    guest = await connect_channel(f"tcp://127.0.0.1:{port}", GUEST_ID, GUEST, clock=time.time,
                                  seal=seal, **QUIET)
    host = await ready
    return host, guest, (server, done)


async def round_trips(host, guest, seconds: float, pids: list[int]) -> tuple[float, float]:
    """(seconds per round trip, CPU seconds per round trip over ``pids``)."""

    async def echo():
        while True:
            env = await host.recv()
            await host.send({**env.payload, "action": "echo"}, reply_to=env.id)

    echoer = asyncio.ensure_future(echo())
    for _ in range(50):  # warm up
        sent = await guest.send(PAYLOAD)
        await guest.recv(expect_reply_to=sent.id)
    cpu0 = sum(cpu_seconds(p) for p in pids)
    start, count = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            sent = await guest.send(PAYLOAD)
            await guest.recv(expect_reply_to=sent.id)
        count += 50
    wall = time.perf_counter() - start
    cpu = sum(cpu_seconds(p) for p in pids) - cpu0
    echoer.cancel()
    return wall / count, cpu / count


async def measure_round_trips(keys, node, seconds, repeat):
    me = os.getpid()
    relay_t, direct_t, relay_c, direct_c, plain_t, plain_c = [], [], [], [], [], []
    for n in range(repeat):
        host, guest, (server, done) = await direct_session(seal=False)
        t, c = await round_trips(host, guest, seconds, [me])
        plain_t.append(t)
        plain_c.append(c)
        await guest.close()
        done.set()
        server.close()
        host, guest, (server, done) = await direct_session()
        t, c = await round_trips(host, guest, seconds, [me])
        direct_t.append(t)
        direct_c.append(c)
        await guest.close()
        done.set()
        server.close()
        host, guest, links = await relayed_session(keys, node.url, f"ses-rt{n}")
        t, c = await round_trips(host, guest, seconds, [me, node.process.pid])
        relay_t.append(t)
        relay_c.append(c)
        await guest.close()
        for link in links:
            await link.close()
    return (statistics.median(direct_t), statistics.median(relay_t),
            statistics.median(direct_c), statistics.median(relay_c),
            statistics.median(plain_t), statistics.median(plain_c))


async def one_session(keys, url, n, relay: bool) -> None:
    if relay:
        host, guest, links = await relayed_session(keys, url, f"ses-s{n}")
    else:
        host, guest, (server, done) = await direct_session()
    sent = await guest.send(PAYLOAD)
    got = await host.recv()
    await host.send({"action": "echo"}, reply_to=got.id)
    await guest.recv(expect_reply_to=sent.id)
    await guest.close()
    if relay:
        for link in links:
            await link.close()
    else:
        done.set()
        server.close()


async def sessions_per_second(keys, url, seconds, concurrency, relay: bool) -> float:
    start, count, n = time.perf_counter(), 0, 0
    while time.perf_counter() - start < seconds:
        await asyncio.gather(*(one_session(keys, url, n + i, relay) for i in range(concurrency)))
        n += concurrency
        count += concurrency
    return count / (time.perf_counter() - start)


async def idle_memory(keys, node, count) -> tuple[float, float, float]:
    """(nats-server bytes, this process's bytes per relayed session, this process's bytes per
    direct session)."""
    me = os.getpid()
    base_me = rss_bytes(me)
    kept = []
    for _n in range(count):
        kept.append(await direct_session())
    direct = (rss_bytes(me) - base_me) / count
    for _host, guest, (server, done) in kept:
        await guest.close()
        done.set()
        server.close()
    kept.clear()
    await asyncio.sleep(0.5)
    base_me, base_node = rss_bytes(me), rss_bytes(node.process.pid)
    relayed = [await relayed_session(keys, node.url, f"ses-idle{n}") for n in range(count)]
    await asyncio.sleep(1.0)
    node_per = (rss_bytes(node.process.pid) - base_node) / count
    me_per = (rss_bytes(me) - base_me) / count
    for _host, guest, links in relayed:
        await guest.close()
        for link in links:
            await link.close()
    return node_per, me_per, direct


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=8, help="sessions opened at once")
    parser.add_argument("--idle", type=int, default=100, help="idle sessions for memory")
    args = parser.parse_args()
    keys = RelayKeys.generate()
    with tempfile.TemporaryDirectory(prefix="lingxi-bench-relay-") as tmp:
        node = Node(keys, Path(tmp))
        try:
            direct_rt, relay_rt, direct_cpu, relay_cpu, plain_rt, plain_cpu = \
                await measure_round_trips(keys, node, args.seconds, args.repeat)
            print(f"signed sealed round trip (median of {args.repeat} runs of "
                  f"{args.seconds:.1f} s)")
            print(f"  direct, unsealed     {plain_rt * 1e6:8.1f} µs   CPU "
                  f"{plain_cpu * 1e6:7.1f} µs (debug --unsealed: what sealing costs)")
            print(f"  direct loopback TCP  {direct_rt * 1e6:8.1f} µs   CPU "
                  f"{direct_cpu * 1e6:7.1f} µs (this process)")
            print(f"  through one NATS     {relay_rt * 1e6:8.1f} µs   CPU "
                  f"{relay_cpu * 1e6:7.1f} µs (this process + nats-server)")
            print(f"  ratio relay/direct   {relay_rt / direct_rt:8.2f}×  (goal ≤ 1.5×)   CPU "
                  f"{relay_cpu / direct_cpu:.2f}×")
            direct_sps = await sessions_per_second(keys, node.url, args.seconds,
                                                   args.sessions, relay=False)
            relay_sps = await sessions_per_second(keys, node.url, args.seconds,
                                                  args.sessions, relay=True)
            print(f"sessions per second ({args.sessions} at once: connect, handshake, one "
                  "round trip, close)")
            print(f"  direct loopback TCP  {direct_sps:8.1f}/s")
            print(f"  through one NATS     {relay_sps:8.1f}/s   ratio {relay_sps / direct_sps:.2f}×")
            node_per, me_per, direct_per = await idle_memory(keys, node, args.idle)
            print(f"memory per idle session ({args.idle} sessions, RSS growth)")
            print(f"  nats-server          {node_per / 1024:8.1f} KiB per relayed session "
                  "(two connections)")
            print(f"  this process         {me_per / 1024:8.1f} KiB per relayed session (both "
                  f"ends), {direct_per / 1024:.1f} KiB per direct TCP session (baseline)")
        finally:
            node.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
