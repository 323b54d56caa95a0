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

With --vs-reference it measures instead whole `protocol test` runs on the
default games both implementations ship (rock-paper-scissors, guess-number,
hero-duel, crazy-eights; default options, each in a fresh process), as the
OS sees them: the child's CPU time (user + system), interleaved with the
published implementation's `aigenora protocol test` of the same game (its
own venv, see reference.py; exits non-zero without it). Goal (issue 22.7):
Lingxi <= 0.5x the reference's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

import reference

from lingxi.session.conductor.link import control_to_payload, payload_to_event
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import Send, SendControl, Start
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.registry import make_machine
from lingxi.session.net import guest_session, host_session, memory_session
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


GAMES = {"rock-paper-scissors": "Rock-Paper-Scissors", "guess-number": "Guess Number",
         "hero-duel": "Hero Duel", "crazy-eights": "Crazy Eights"}


def _child_cpu(argv: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done


def reference_folders() -> dict[str, Path]:
    python = reference.ensure()
    root = subprocess.run([str(python), "-c", "import aigenora, os; "
                           "print(os.path.dirname(aigenora.__file__))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    found = {}
    for spec in glob.glob(os.path.join(root, "protocols", "*", "*", "spec.json")):
        with open(spec, encoding="utf-8") as f:
            found[json.load(f).get("name")] = Path(spec).parent
    return found


def vs_reference(repeat: int) -> int:
    lingxi = Path(sys.executable).with_name("lingxi")
    folders = reference_folders()
    aigenora = reference.executable()
    print(f"protocol test on default games, CPU of the whole process (median of {repeat}, "
          "interleaved, bytecode cached for both); lingxi built-ins vs aigenora 0.1.4's folders")
    ratios = []
    for game, name in GAMES.items():
        if name not in folders:
            raise SystemExit(f"baseline missing: the reference ships no {name!r}")
        ours, theirs = [], []
        for warm in range(repeat + 1):  # the first run of each only fills the bytecode cache
            with tempfile.TemporaryDirectory() as home:
                cpu, done = _child_cpu([str(lingxi), "protocol", "test", game],
                                       reference.child_env(LINGXI_HOME=home))
                if done.returncode != 0:
                    raise SystemExit(f"lingxi protocol test {game} failed: {done.stdout[-300:]}")
                if warm:
                    ours.append(cpu)
            with tempfile.TemporaryDirectory() as home:
                cpu, done = _child_cpu([str(aigenora), "protocol", "test", "--state-base",
                                        home, str(folders[name])], reference.child_env(HOME=home))
                if done.returncode != 0:
                    raise SystemExit(f"baseline failed on {name}: {done.stdout[-300:]}")
                if warm:
                    theirs.append(cpu)
        lx, rf = statistics.median(ours), statistics.median(theirs)
        ratios.append(lx / rf)
        print(f"  {game:<20} lingxi {lx * 1000:7.0f} ms cpu   reference {rf * 1000:7.0f} ms cpu"
              f"   ratio {lx / rf:5.2f}x")
    print(f"ratio over the games: {min(ratios):.2f}-{max(ratios):.2f}x, median "
          f"{statistics.median(ratios):.2f}x (goal <= 0.5x)")
    return 0


def main() -> None:
    os.environ["LINGXI_HOME"] = tempfile.mkdtemp(prefix="lingxi-bench-")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vs-reference", action="store_true",
                        help="whole protocol test runs against the published implementation")
    args = parser.parse_args()
    if args.vs_reference:
        sys.exit(vs_reference(args.repeat))
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
