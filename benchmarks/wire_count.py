"""Fixed work for instruction counts: N SecureChannel round trips over loopback TCP, or N handshakes.

Rates on a shared machine move with its load; instruction counts do not. Run
under callgrind twice, with a small and a large N, and divide the difference:

    valgrind --tool=callgrind --callgrind-out-file=/tmp/a.out \
        .venv/bin/python benchmarks/wire_count.py roundtrips 10
    valgrind --tool=callgrind --callgrind-out-file=/tmp/b.out \
        .venv/bin/python benchmarks/wire_count.py roundtrips 1010
    # instructions per round trip = (Collected(b) - Collected(a)) / 1000

``--src PATH`` runs another checkout's ``src`` (e.g. the code before a change,
unpacked with ``git archive <commit> src | tar -x -C /tmp/before``) with the
same interpreter, so both sides of a comparison differ only in the code.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["roundtrips", "handshakes"])
    parser.add_argument("count", type=int)
    parser.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"))
    args = parser.parse_args()
    sys.path.insert(0, args.src)
    asyncio.run(roundtrips(args.count) if args.what == "roundtrips" else handshakes(args.count))


def _parties():
    from lingxi.wire import AgentEndpoint
    from lingxi.wire.identity import Identity
    host = AgentEndpoint("agent-host-01", "sys-a", "tcp://127.0.0.1:7401", agent_name="Host")
    guest = AgentEndpoint("agent-guest-02", "sys-b", "tcp://127.0.0.1:7402")
    return host, guest, Identity.from_seed(b"\x01" * 32), Identity.from_seed(b"\x02" * 32)


async def roundtrips(count: int) -> None:
    from lingxi.wire.channel import connect_channel, serve_channels
    host, guest, host_id, guest_id = _parties()
    payload = {"action": "move", "turn": 3, "row": 2, "col": 5, "note": "benchmark 基准"}
    quiet = {"heartbeat_interval": None, "peer_timeout": None}

    async def echo(channel) -> None:
        for _ in range(count):
            env = await channel.recv()
            await channel.send(payload, reply_to=env.id)

    server = await serve_channels(echo, host_id, host, clock=time.time, **quiet)
    port = server.sockets[0].getsockname()[1]
    channel = await connect_channel(f"tcp://127.0.0.1:{port}", guest_id, guest, clock=time.time,
                                    **quiet)
    for _ in range(count):
        await channel.send(payload)
        await channel.recv()
    await channel.close()
    server.close()


async def handshakes(count: int) -> None:
    from lingxi.wire.handshake import client_handshake, server_handshake
    from lingxi.wire.transport import memory_pair
    host, guest, host_id, guest_id = _parties()
    for _ in range(count):
        a, b = memory_pair()
        await asyncio.gather(client_handshake(a, guest_id, guest, clock=time.time),
                             server_handshake(b, host_id, host, clock=time.time))


if __name__ == "__main__":
    main()
