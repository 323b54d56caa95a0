"""Greedy-match3 vs random over the same seeds, on the DOM, canvas and an unseen Match-3.

Run: .venv/bin/python benchmarks/play_actors.py [--seeds 1,2,3,4,5] [--budget 20]

For each game and seed both actors play ``budget`` actions through the full
harness (``lingxi.playtest.launch.play``, one shared Chromium). Prints the
score of every run, totals, and the greedy/random ratio per game; also checks
that every run found the board (8×8 with 112 swap candidates on the demos).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# label -> (game, expected board rows/columns, expected swap candidates)
GAMES = {
    "dom": (ROOT / "examples/games/match3", 8, 112),
    "canvas": (ROOT / "examples/games/match3-canvas", 8, 112),
    # a tap-only 7×7 board of dots in row containers, not written for the harness
    "unseen": (ROOT / "tests/playtest/fixtures/tapgame", 7, 84),
    # the same rules, a 9×9 board of fruit emoji drawn as text
    "emoji": (ROOT / "tests/playtest/fixtures/emojigame", 9, 144),
    # a canvas board animated one step per requestAnimationFrame
    "raf": (ROOT / "tests/playtest/fixtures/rafgame", 8, 112),
}


def main() -> int:
    from lingxi.actor.actors import create_actor
    from lingxi.playtest.browser import Browser
    from lingxi.playtest.launch import play
    from lingxi.playtest.objectives import load_brief

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--budget", type=int, default=20)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    ok = True
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp:
        for label, (game, side, swaps) in GAMES.items():
            totals = {"greedy-match3": 0.0, "random": 0.0}
            for seed in seeds:
                line = [f"{label:6} seed {seed:3}"]
                for actor_name in totals:
                    started = time.perf_counter()
                    actor = create_actor(actor_name, seed=seed, options={})
                    evidence = play(str(game), actor, actor_name=actor_name, actor_options={},
                                    seed=seed, budget=args.budget, brief=load_brief(None),
                                    out=Path(tmp) / f"{label}-{actor_name}-{seed}",
                                    run_id=f"{label}-{actor_name}-{seed}", browser=browser)
                    actor.close()
                    summary = evidence["summary"]
                    score = summary["score"] or 0
                    totals[actor_name] += score
                    board_ok = (summary["latticeDimensions"] == {"rows": side, "columns": side}
                                and summary["swapCandidates"] == swaps)
                    ok &= board_ok
                    line.append(f"{actor_name} {score:6}{'' if board_ok else ' (board NOT found)'}"
                                f" {time.perf_counter() - started:4.1f}s")
                print("  ".join(line), flush=True)
            greedy, rand = totals["greedy-match3"], totals["random"]
            ratio = greedy / rand if rand else float("inf")
            ok &= ratio >= 3
            print(f"{label:6} total greedy {greedy:.0f}  random {rand:.0f}  ratio {ratio:.1f}x",
                  flush=True)
    print("OK" if ok else "FAILED: greedy < 3x random or board not found")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
