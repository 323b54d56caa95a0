"""Greedy-match3 vs random on the real games of issue 13: rembound and the zoo.

Run: .venv/bin/python benchmarks/play_real.py [--seeds 1,2,3] [--budget 5] [--games a,b]

For every game (``../shared/games/rembound-match3`` in place, and each folder of
``tests/playtest/zoo``) and seed, both actors play ``budget`` actions through the
full harness on one shared Chromium; greedy's seed-1 run is made with a replay
check. Prints per game: greedy and random scores per seed, whether greedy reached
the board on every seed, the input model detected, the camera scale, and whether
two runs with the same seed were identical. rembound reports no score; the number
it draws after "Score:" is read by the same test-only init script the browser
tests use (tests/playtest/test_real_games.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REMBOUND = ROOT.parent / "shared" / "games" / "rembound-match3" / "match3.html"
ZOO = ROOT / "tests" / "playtest" / "zoo"


def games() -> dict[str, tuple[Path, tuple[str, ...]]]:
    sys.path.insert(0, str(ROOT))
    from tests.playtest.test_real_games import DRAWN_SCORE

    out = {}
    if REMBOUND.exists():
        out["rembound"] = (REMBOUND, (DRAWN_SCORE,))
    if ZOO.is_dir():
        for folder in sorted(p for p in ZOO.iterdir() if (p / "index.html").is_file()):
            out[folder.name] = (folder, ())
    return out


def main() -> int:
    from lingxi.actor.actors import create_actor
    from lingxi.playtest.browser import Browser
    from lingxi.playtest.launch import play
    from lingxi.playtest.objectives import load_brief

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--budget", type=int, default=5)
    parser.add_argument("--games", default="")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    chosen = games()
    if args.games:
        chosen = {k: v for k, v in chosen.items() if k in args.games.split(",")}
    print(f"budget {args.budget}, seeds {seeds}")
    print(f"{'game':12s} {'greedy per seed':24s} {'random per seed':24s} board  model      "
          "camera replay")
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp:
        for label, (game, scripts) in chosen.items():
            scores: dict[str, list[float]] = {"greedy-match3": [], "random": []}
            reached, model, camera, replay = True, None, None, None
            for name in scores:
                for seed in seeds:
                    def fresh(name=name, seed=seed):
                        return create_actor(name, seed=seed, options={})
                    check = name == "greedy-match3" and seed == seeds[0]
                    evidence = play(str(game), fresh(), actor_name=name, actor_options={},
                                    seed=seed, budget=args.budget, brief=load_brief(None),
                                    out=Path(tmp) / f"{label}-{name}-{seed}", run_id="real",
                                    browser=browser, init_scripts=scripts,
                                    replay_actor=fresh if check else None)
                    summary = evidence["summary"]
                    scores[name].append(summary["score"] or 0)
                    if name == "greedy-match3":
                        reached = reached and summary["boardReached"]
                        model = model or summary["inputModel"]
                        camera = camera or summary.get("cameraScale")
                        if check:
                            replay = summary["replay"]["replayable"]
            greedy = "/".join(f"{s:g}" for s in scores["greedy-match3"])
            rand = "/".join(f"{s:g}" for s in scores["random"])
            print(f"{label:12s} {greedy:24s} {rand:24s} {'yes' if reached else 'NO':6s} "
                  f"{model or '-':10s} {camera or 1:<6} {replay}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
