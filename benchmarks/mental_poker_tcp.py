"""Mental poker through the session runtime: in process and over loopback TCP.

Three timings of a whole 52-card Crazy Eights game (seats, hellos, both proven
shuffles and their checks, the deal, every draw and play, both openings and
end audits, both session receipts), median of several games each:

- library: ``lingxi.cards.driver.play_game`` (the cards library alone, the
  baseline of this run; ``benchmarks/mental_poker.py`` compares it with the
  published implementation);
- session, in process: the built-in ``crazy-eights`` protocol through
  ``run_pair`` (both machines, real signed envelopes, the wire's receive
  pipeline, the in-memory driver; Compute runs inline);
- session, loopback TCP: ``host_session`` and ``guest_session`` on
  127.0.0.1 in one process (handshake, framing, heartbeats, Compute in
  worker threads, receipt exchange).

Run: .venv/bin/python benchmarks/mental_poker_tcp.py [--games N] [--tcp-games M]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lingxi.cards.driver import play_game  # noqa: E402
from lingxi.session.core.machine import SessionConfig  # noqa: E402
from lingxi.session.net import guest_session, host_session  # noqa: E402
from lingxi.session.runner import load_protocol, run_pair  # noqa: E402
from lingxi.wire.identity import Identity  # noqa: E402


def _median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def library(games: int) -> list[float]:
    out = []
    for seed in range(games):
        start = time.perf_counter()
        play_game("crazy_eights", seed)
        out.append(time.perf_counter() - start)
    return out


def session_in_process(games: int) -> tuple[list[float], list[int]]:
    protocol = load_protocol("crazy-eights")
    out, messages = [], []
    for seed in range(games):
        start = time.perf_counter()
        result = run_pair(protocol, seed=seed, keep_events=False)
        out.append(time.perf_counter() - start)
        assert result.host.ok and result.guest.ok, (result.host, result.guest)
        messages.append(result.host.messages)
    return out, messages


async def _tcp_game(protocol, seed: int, folder: Path) -> float:
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    config = SessionConfig(peer_timeout=30)
    start = time.perf_counter()
    host_task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", identity=Identity.generate(), state_dir=folder / "h",
        config=config, on_listening=ready.set_result, seed=seed, keep_events=False))
    endpoint = await ready
    guest = await guest_session(protocol, endpoint, identity=Identity.generate(),
                                state_dir=folder / "g", config=config, seed=seed,
                                keep_events=False)
    host = await host_task
    elapsed = time.perf_counter() - start
    assert host.outcome.ok and guest.outcome.ok, (host.outcome, guest.outcome)
    return elapsed


def session_tcp(games: int) -> list[float]:
    protocol = load_protocol("crazy-eights")
    out = []
    with tempfile.TemporaryDirectory(prefix="lingxi-bench-mp-") as tmp:
        for seed in range(games):
            out.append(asyncio.run(_tcp_game(protocol, seed, Path(tmp) / str(seed))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=9)
    parser.add_argument("--tcp-games", type=int, default=5)
    args = parser.parse_args()
    play_game("crazy_eights", "warm-up")
    base = library(args.games)
    mem, messages = session_in_process(args.games)
    tcp = session_tcp(args.tcp_games)
    lib_ms = _median_ms(base)
    print(f"Crazy Eights, 52 cards; medians of {args.games} games "
          f"({args.tcp_games} over TCP); messages per game: median "
          f"{statistics.median(messages):g}")
    print(f"  library alone (cards.driver.play_game):   {lib_ms:8.1f} ms  (baseline)")
    print(f"  session, in process (run_pair):           {_median_ms(mem):8.1f} ms  "
          f"x{_median_ms(mem) / lib_ms:.2f} of the library")
    print(f"  session, loopback TCP (host/guest_session): {_median_ms(tcp):6.1f} ms  "
          f"x{_median_ms(tcp) / lib_ms:.2f} of the library")


if __name__ == "__main__":
    main()
