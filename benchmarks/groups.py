"""Group benchmark: CPU per seat for one Hold'em hand at 2, 4 and 6 seats; log throughput.

Run: .venv/bin/python benchmarks/groups.py [--repeat N] [--messages M] [--tcp] [--relay]

- Hold'em: one hand with every seat in this process (each member keeps its
  own verified log and hand state, as separate processes would), played by
  the passive strategy so every hand reaches the showdown and does all the
  card work: N keys, N proven shuffles of 52 cards, every hole and board
  share proven and checked by every member. CPU seconds of this process
  divided by the seats, median of ``--repeat`` runs; the baseline is the
  2-seat hand of the same run (the ratio says how the cost per seat grows).
- Log: group messages per CPU second through the sequencer and 4 member
  views (each entry signed by its sender, countersigned, checked by every
  member, payload checked against the group-vote contract) vs. the floor
  measured in the same run: one Ed25519 sign and five verifies per message
  over the same bytes (what no implementation of a signed log can skip).
- ``--tcp``: the same hand with every seat its own process over loopback TCP
  (``lingxi group host`` / ``lingxi group join``); CPU of the child processes
  (``RUSAGE_CHILDREN``) per seat, and the same less one process start-up
  (``lingxi group --help``, measured in the same run) per seat.
- ``--relay``: the 4-seat hand with every seat a process, once over TCP and
  once over the relay (a nats-server of its own on a free loopback port,
  credentials from ``lingxi group relay-credentials``): children CPU per seat
  and wall seconds per hand, both medians; the relay's ratio to TCP.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from nacl.signing import SigningKey  # noqa: E402

from lingxi.contract import load_spec  # noqa: E402
from lingxi.contract.catalog import template_document  # noqa: E402
from lingxi.group.holdem_play import HoldemTable  # noqa: E402
from lingxi.group.memory import InMemoryGroup  # noqa: E402


def _cpu() -> float:
    return time.process_time()


def hand_cpu(seats: int, seed: int) -> tuple[float, int]:
    spec = load_spec(template_document("group-poker"))
    rng = random.Random(seed)
    start = _cpu()
    table = HoldemTable(spec, seats, rng.randbytes)
    table.play()
    table.group.close()
    return _cpu() - start, len(table.group.views[0].log.entries)


def log_rate(messages: int) -> float:
    spec = load_spec(template_document("group-vote"))
    rng = random.Random(1)
    group = InMemoryGroup(spec, 4, rng.randbytes)
    start = _cpu()
    for i in range(messages):
        group.send(i % 4, {"action": "say", "text": f"message {i} to the whole group"})
    return messages / (_cpu() - start)


def floor_rate(messages: int) -> float:
    key = SigningKey(b"\x01" * 32)
    verify = key.verify_key
    body = b'{"action":"say","text":"message 0 to the whole group"}' * 3
    start = _cpu()
    for _ in range(messages):
        signed = key.sign(body)
        for _ in range(5):
            verify.verify(signed)
    return messages / (_cpu() - start)


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tcp_hand_cpu(seats: int, relay: tuple[str, dict] | None = None) -> float:
    """Children CPU seconds of one hand with every seat a process (over the relay at
    ``relay = (url, seeds)`` when given)."""
    return process_hand(seats, relay)[0]


def process_hand(seats: int, relay: tuple[str, dict] | None = None) -> tuple[float, float]:
    """Children CPU and wall seconds of one hand with every seat a process."""
    import json
    import os
    import re
    import subprocess
    import tempfile

    lingxi = [sys.executable, "-m", "lingxi", "group"]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "LINGXI_HOME": home}
        if relay is not None:
            seeds = Path(home) / "seeds.json"
            seeds.write_text(json.dumps(relay[1]))
            subprocess.run([*lingxi, "relay-credentials", "--relay-seeds", str(seeds),
                            "--relay", relay[0], "--seats", str(seats), "--out",
                            f"{home}/table"], env=env, check=True, capture_output=True)
        before, started = _children_cpu(), time.monotonic()
        if relay is not None:
            creds = [a for s in range(1, seats)
                     for a in ("--relay-credential", f"{home}/table/host-seat{s}.json")]
            host = subprocess.Popen([*lingxi, "host", "holdem", "--seats", str(seats),
                                     "--ephemeral", "--via", "relay", *creds], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            assert host.stderr is not None
            host.stderr.readline()
            ways = [["--via", "relay", "--relay-credential", f"{home}/table/seat{i}.json"]
                    for i in range(1, seats)]
        else:
            host = subprocess.Popen([*lingxi, "host", "holdem", "--seats", str(seats),
                                     "--ephemeral"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            assert host.stderr is not None
            endpoint = re.search(r"tcp://[0-9.]+:[0-9]+", host.stderr.readline())
            assert endpoint is not None
            ways = [[endpoint.group(0)] for _ in range(1, seats)]
        members = [subprocess.Popen([*lingxi, "join", *way, "--protocol", "holdem",
                                     "--seat", str(i), "--ephemeral"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for i, way in enumerate(ways, start=1)]
        for proc in [host, *members]:
            if proc.wait(timeout=600) != 0:
                raise SystemExit("a seat's process failed")
        return _children_cpu() - before, time.monotonic() - started


def nats_relay(folder: Path) -> tuple[Any, str, dict]:
    """A nats-server on a free loopback port trusting fresh relay keys: (process, url, seeds)."""
    import shutil
    import socket
    import subprocess

    from lingxi.registry.models.relay import RelayKeys, server_config

    keys = RelayKeys.generate()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config, log = folder / "nats.conf", folder / "nats.log"
    config.write_text(server_config(keys.trust(int(time.time())), listen=f"127.0.0.1:{port}"))
    binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
    process = subprocess.Popen([binary, "-c", str(config), "-l", str(log)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not (log.exists() and "Server is ready" in log.read_text()):
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("nats-server did not start")
        time.sleep(0.05)
    return process, f"nats://127.0.0.1:{port}", keys.to_seeds()


def startup_cpu() -> float:
    import subprocess

    before = _children_cpu()
    subprocess.run([sys.executable, "-m", "lingxi", "group", "--help"], check=True,
                   stdout=subprocess.DEVNULL)
    return _children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--tcp", action="store_true", help="also every seat a process")
    parser.add_argument("--relay", action="store_true",
                        help="also the 4-seat hand over TCP and over the relay")
    args = parser.parse_args()
    print("Hold'em, one hand, CPU seconds per seat (median of", args.repeat, "runs)")
    base = None
    for seats in (2, 4, 6):
        runs = [hand_cpu(seats, seed) for seed in range(args.repeat)]
        per_seat = statistics.median(cpu for cpu, _ in runs) / seats
        entries = runs[0][1]
        base = base or per_seat
        print(f"  {seats} seats: {per_seat:.3f} s/seat, {entries} log entries, "
              f"{per_seat / base:.2f}x the 2-seat cost per seat")
    rates = [log_rate(args.messages) for _ in range(args.repeat)]
    floors = [floor_rate(args.messages) for _ in range(args.repeat)]
    rate, floor = statistics.median(rates), statistics.median(floors)
    print(f"group log, 4 members: {rate:,.0f} messages per CPU second; floor (1 sign + 5 "
          f"verifies) {floor:,.0f}/s; the log runs at {rate / floor:.2f}x the floor")
    if args.relay:
        relay_vs_tcp(args.repeat)
    if not args.tcp:
        return
    start = statistics.median(startup_cpu() for _ in range(args.repeat))
    print(f"over TCP, every seat a process (start-up of one process: {start:.3f} s CPU)")
    base = None
    for seats in (2, 4, 6):
        per_seat = statistics.median(tcp_hand_cpu(seats) for _ in range(args.repeat)) / seats
        base = base or per_seat
        print(f"  {seats} seats: {per_seat:.3f} s/seat ({per_seat - start:.3f} s/seat beyond "
              f"start-up), {per_seat / base:.2f}x the 2-seat cost per seat")


def relay_vs_tcp(repeat: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        process, url, seeds = nats_relay(Path(folder))
        try:
            figures = {}
            for name, relay in (("TCP", None), ("relay", (url, seeds))):
                runs = [process_hand(4, relay) for _ in range(repeat)]
                figures[name] = (statistics.median(c for c, _ in runs) / 4,
                                 statistics.median(w for _, w in runs))
        finally:
            process.kill()
            process.wait()
    print("4 seats, every seat a process: children CPU per seat, wall per hand")
    for name, (cpu, wall) in figures.items():
        print(f"  over {name}: {cpu:.3f} s/seat, {wall:.2f} s wall, "
              f"{cpu / figures['TCP'][0]:.2f}x TCP's CPU")


if __name__ == "__main__":
    main()
