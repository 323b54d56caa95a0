"""Rounds per second: 1,000-round rock-paper-scissors self-play.

Four ways, measured in the same run:
  baseline   the two sans-IO machines alone, payloads handed across directly
             (hooks, flow, validation both ways, commit-reveal; no envelopes);
  memory     the in-memory driver (lingxi.session.drivers.memory): every message a
             signed Synapse envelope through the receive pipeline, transcript
             chain and receipts, virtual clock;
  memory-io  the network driver over the wire's in-memory transport pair
             (SecureChannel, handshake keys, asyncio, real clock);
  tcp        the network driver over loopback TCP, both sides in one process.
Run: .venv/bin/python benchmarks/session.py [--rounds N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections import deque

from lingxi.session import guest_session, host_session, memory_session
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import Send, SendControl, Start
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.registry import make_machine
from lingxi.session.drivers.link import control_to_payload, payload_to_event
from lingxi.session.runner import load_protocol, run_pair
from lingxi.wire.identity import Identity


def options(rounds: int) -> dict:
    return {"best_of": rounds, "termination": "fixed_rounds"}


def machines_alone(protocol, rounds: int) -> int:
    sides = {
        "host": make_machine("host", protocol.spec, protocol.hooks("host", 1),
                             options=options(rounds), entropy=seeded(1)),
        "guest": make_machine("guest", protocol.spec, protocol.hooks("guest", 1),
                              entropy=seeded(2)),
    }
    queue: deque = deque()

    def pump(role, actions):
        peer = "guest" if role == "host" else "host"
        for action in actions:
            if isinstance(action, Send):
                queue.append((peer, payload_to_event(action.payload)))
            elif isinstance(action, SendControl):
                queue.append((peer, payload_to_event(control_to_payload(action))))

    for role in ("host", "guest"):
        pump(role, sides[role].handle(Start()))
    while queue:
        role, event = queue.popleft()
        if event is not None:
            pump(role, sides[role].handle(event))
    assert sides["host"].outcome.ok and sides["guest"].outcome.ok, sides["host"].outcome
    return sides["host"].outcome.rounds


def memory_driver(protocol, rounds: int) -> int:
    result = run_pair(protocol, options=options(rounds), seed=1, keep_events=False)
    assert result.host.ok and result.receipts_verified, result.host
    return result.host.rounds


def memory_io(protocol, rounds: int) -> int:
    host, guest = asyncio.run(memory_session(protocol, options=options(rounds), seed=1,
                                             keep_events=False,
                                             config=SessionConfig(peer_timeout=30)))
    assert host.outcome.ok and host.receipts_verified, host.outcome
    return host.outcome.rounds


def tcp(protocol, rounds: int) -> int:
    async def both():
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        config = SessionConfig(peer_timeout=30)
        host_task = asyncio.ensure_future(host_session(
            protocol, "tcp://127.0.0.1:0", options=options(rounds), config=config, seed=1,
            identity=Identity.generate(), on_listening=ready.set_result, keep_events=False))
        endpoint = await ready
        guest = await guest_session(protocol, endpoint, config=config, seed=2,
                                    identity=Identity.generate(), keep_events=False)
        host = await host_task
        return host, guest

    host, guest = asyncio.run(both())
    assert host.outcome.ok and host.receipts_verified, host.outcome
    return host.outcome.rounds


def measure(fn, protocol, rounds: int, repeat: int) -> float:
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        played = fn(protocol, rounds)
        rates.append(played / (time.perf_counter() - start))
        assert played == rounds, played
    return statistics.median(rates)


def main() -> None:
    os.environ["LINGXI_HOME"] = tempfile.mkdtemp(prefix="lingxi-bench-")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    protocol = load_protocol("rock-paper-scissors")
    results = {}
    for name, fn in (("baseline (machines alone)", machines_alone),
                     ("memory driver (envelopes, virtual clock)", memory_driver),
                     ("memory transport (SecureChannel, asyncio)", memory_io),
                     ("loopback TCP (SecureChannel, asyncio)", tcp)):
        results[name] = measure(fn, protocol, args.rounds, args.repeat)
    base = results["baseline (machines alone)"]
    print(f"rock-paper-scissors self-play, {args.rounds} rounds, median of {args.repeat}")
    for name, rate in results.items():
        print(f"  {name:<44} {rate:>9.0f} rounds/s   {rate / base:5.2f}x baseline")


if __name__ == "__main__":
    main()
