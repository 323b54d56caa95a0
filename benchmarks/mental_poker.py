"""Mental poker: one whole 52-card Crazy Eights game, in process, against the
published implementation run as a black box in the same run.

Lingxi: ``lingxi.cards.driver.play_game`` with both parties in this process:
keys and proofs of knowledge, two proven shuffles and their verification, the
initial deal (shares with proofs), every draw and play, both openings and
both end audits (receipts). The offline third-party ``audit`` of the same
transcript (every proof re-verified) is timed separately. Group operations
are counted in a separate, untimed game.

Baseline: ``aigenora`` 0.1.4 from PyPI, installed into its own virtual
environment (``/tmp/lingxi-bench-aigenora``; never a Lingxi dependency, none
of its code read or imported here). Its Crazy Eights (protocol folder
``3a3c352a…`` in the package) is run with ``aigenora protocol test``, which
plays the game host against guest locally. Its in-game time is taken from
the first and last timestamps of the event logs it writes; the whole command
(interpreter start-up included) is reported as well.

The shuffle is broken down too: one 52-card proof and its verification, in
CPU time and in group operations (variable-base and fixed-base products,
additions), the two steps that dominate a game.

Run: .venv/bin/python benchmarks/mental_poker.py [--games N] [--baseline-runs R]
Without the baseline (it cannot be installed, or --no-baseline) the script
prints Lingxi's figures and exits 1: a figure without its baseline is no result.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import reference  # noqa: E402

from lingxi.cards import audit, shuffle  # noqa: E402
from lingxi.cards import group as g  # noqa: E402
from lingxi.cards.driver import play_game  # noqa: E402


def lingxi_games(n: int) -> tuple[list[float], list[float], list[float], dict]:
    wall, cpu, audits = [], [], []
    info: dict = {}
    for seed in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        result = play_game("crazy_eights", seed=seed)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        t1 = time.perf_counter()
        report = audit(result.host.transcript())
        audits.append(time.perf_counter() - t1)
        assert report.ok, report.message
        info.setdefault("draws", []).append(result.draws)
        info.setdefault("plays", []).append(result.plays)
        info.setdefault("messages", []).append(result.messages)
    return wall, cpu, audits, info


def count_ops(seed: int = 0) -> dict[str, int]:
    """Group operations of one game (and of its offline audit), by kind."""
    counts = {"mul": 0, "base": 0, "add": 0}
    originals = {k: getattr(g, k) for k in ("mul", "base", "add", "sub")}

    def wrap(name, kind):
        fn = originals[name]

        def counted(*a):
            counts[kind] += 1
            return fn(*a)
        return counted
    for name, kind in (("mul", "mul"), ("base", "base"), ("add", "add"), ("sub", "add")):
        setattr(g, name, wrap(name, kind))
    try:
        result = play_game("crazy_eights", seed=seed, measure_sizes=True)
        game = dict(counts)
        for k in counts:
            counts[k] = 0
        audit(result.host.transcript())
        game.update({f"audit_{k}": v for k, v in counts.items()})
        game["largest_message"] = result.largest_message
        game["draws"], game["plays"] = result.draws, result.plays
    finally:
        for name, fn in originals.items():
            setattr(g, name, fn)
    return game


def shuffle_breakdown(n: int = 52, runs: int = 5) -> dict[str, float]:
    """CPU time (median of ``runs``) and group operations of one proof and one verification."""
    import random
    rng = random.Random(5)

    def entropy(k: int) -> bytes:
        return rng.randbytes(k)

    deck = [g.hash_point(b"bench/deck", i.to_bytes(4, "big")) for i in range(n)]
    secret = g.random_scalar(entropy)
    key = g.base(secret)
    shuffle.generators(n)  # built once per process, like in a game
    prove, verify = [], []
    for _ in range(runs):
        perm = shuffle.sample_permutation(entropy, n)
        c0 = time.process_time()
        out, proof = shuffle.prove_shuffle(b"bench", secret, key, deck, perm, entropy)
        c1 = time.process_time()
        ok = shuffle.verify_shuffle(b"bench", key, deck, out, proof)
        c2 = time.process_time()
        assert ok
        prove.append(c1 - c0)
        verify.append(c2 - c1)
    counts = _count(lambda: shuffle.verify_shuffle(
        b"bench", key, deck, *shuffle.prove_shuffle(b"bench", secret, key, deck, perm, entropy)))
    return {"prove": statistics.median(prove), "verify": statistics.median(verify), **counts}


def _count(run) -> dict[str, int]:
    counts = {"mul": 0, "base": 0, "add": 0}
    originals = {k: getattr(g, k) for k in ("mul", "base", "add", "sub")}

    def wrap(name, kind):
        fn = originals[name]

        def counted(*a):
            counts[kind] += 1
            return fn(*a)
        return counted
    for name, kind in (("mul", "mul"), ("base", "base"), ("add", "add"), ("sub", "add")):
        setattr(g, name, wrap(name, kind))
    try:
        run()
    finally:
        for name, fn in originals.items():
            setattr(g, name, fn)
    return counts


def baseline_protocol_dir() -> Path:
    out = subprocess.run([str(reference.ensure()), "-c",
                          "import aigenora, os; print(os.path.dirname(aigenora.__file__))"],
                         check=True, capture_output=True, text=True).stdout.strip()
    dirs = glob.glob(os.path.join(out, "protocols", "3a3c352a", "*", "spec.json"))
    if not dirs:
        raise SystemExit("aigenora's Crazy Eights protocol folder (3a3c352a…) not found")
    return Path(dirs[0]).parent


def _span(state: str) -> float:
    stamps = []
    for path in glob.glob(os.path.join(state, "*", "events.jsonl")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                ts = json.loads(line).get("ts")
                if ts:
                    stamps.append(datetime.fromisoformat(ts))
    if len(stamps) < 2:
        raise SystemExit("the baseline wrote no event timestamps")
    return (max(stamps) - min(stamps)).total_seconds()


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd: list[str], env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    c0, t0 = _child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, _child_cpu() - c0, proc


def baseline_runs(exe: Path, proto: Path, runs: int) -> dict[str, list[float]]:
    """Wall and CPU of ``protocol test`` and of bare start-up (``--help``), per run."""
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "start_wall": [], "start_cpu": [],
                                   "span": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as state, tempfile.TemporaryDirectory() as home:
            env = dict(os.environ, HOME=home)
            wall, cpu, proc = _run([str(exe), "protocol", "test", "--state-base", state,
                                    str(proto)], env)
            if proc.returncode != 0 or "passed" not in proc.stdout:
                raise SystemExit(f"baseline failed: {proc.stdout[-300:]} {proc.stderr[-300:]}")
            out["span"].append(_span(state))
            swall, scpu, _ = _run([str(exe), "protocol", "test", "--help"], env)
        out["wall"].append(wall)
        out["cpu"].append(cpu)
        out["start_wall"].append(swall)
        out["start_cpu"].append(scpu)
    return out


def ms(v: float) -> str:
    return f"{v * 1000:.0f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=7)
    ap.add_argument("--baseline-runs", type=int, default=3)
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the reference (the script then exits 1)")
    args = ap.parse_args()

    ops = count_ops()
    wall, cpu, audits, info = lingxi_games(args.games)
    lx = statistics.median(wall)
    print(f"lingxi crazy eights, {args.games} games (median): {ms(lx)} wall, "
          f"{ms(statistics.median(cpu))} cpu  [min {ms(min(wall))}, max {ms(max(wall))}]")
    print(f"  draws {statistics.median(info['draws'])}, plays {statistics.median(info['plays'])}, "
          f"messages {statistics.median(info['messages'])} (median per game)")
    print(f"  offline third-party audit (every proof again): {ms(statistics.median(audits))}")
    print(f"  group ops in one game: {ops['mul']} variable-base, {ops['base']} fixed-base, "
          f"{ops['add']} add/sub; its audit: {ops['audit_mul']} / {ops['audit_base']} / "
          f"{ops['audit_add']}")
    print(f"  largest message: {ops['largest_message']} bytes of JSON")
    parts = shuffle_breakdown()
    print(f"  one 52-card shuffle (median of 5): proof {ms(parts['prove'])} cpu, verification "
          f"{ms(parts['verify'])} cpu; proof + verification: {parts['mul']} variable-base, "
          f"{parts['base']} fixed-base, {parts['add']} add/sub")
    if args.no_baseline:
        print("no baseline measured (--no-baseline): not a result")
        return 1
    exe = reference.executable()
    proto = baseline_protocol_dir()
    runs = baseline_runs(exe, proto, args.baseline_runs)
    med = {k: statistics.median(v) for k, v in runs.items()}
    play_cpu = med["cpu"] - med["start_cpu"]
    play_wall = med["wall"] - med["start_wall"]
    lx_cpu = statistics.median(cpu)
    print(f"aigenora 0.1.4 crazy eights self-play, {args.baseline_runs} runs (median): "
          f"`protocol test` {ms(med['wall'])} wall / {ms(med['cpu'])} cpu, of which start-up "
          f"(`--help`) {ms(med['start_wall'])} / {ms(med['start_cpu'])}; "
          f"event-log span {ms(med['span'])}")
    print(f"  self-play without start-up: {ms(play_wall)} wall, {ms(play_cpu)} cpu")
    print(f"ratio (cpu): lingxi {ms(lx_cpu)} vs baseline {ms(play_cpu)}: "
          f"{play_cpu / lx_cpu:.1f}x faster")
    print(f"ratio (wall): lingxi {ms(lx)} vs baseline {ms(play_wall)}: "
          f"{play_wall / lx:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
