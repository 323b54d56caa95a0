"""The play loop on every zoo game and rembound: what a QA tester would check (issue 24).

Run: .venv/bin/python benchmarks/play_real.py [--seed 1] [--budget 10] [--games a,b]
                                                [--settling-game PATH] [--settling-steps 30]
     .venv/bin/python benchmarks/play_real.py --replay-table [--budget 20] [--seeds 1,2]
                                                [--actors random,greedy-match3] [--games a,b]

For every game (``../shared/games/rembound-match3`` in place, and each folder of
``tests/playtest/zoo``), on one shared Chromium, in this one run:

- greedy-match3 (which hands a game that is not Match-3 over to the explorer) plays
  ``budget`` actions with a replay check (a second, identically seeded run compared
  frame by frame, view by view, event by event), and random plays the same budget;
- a bare Playwright loop on the same page — ``page.mouse.click`` at the viewport's
  centre, then ``page.screenshot()`` — gives the baseline step time.

Prints per game: board reached, actions received / taken, score gained by greedy vs
random, replay identical (and where the first difference is), harness wall ms per step
and its ratio to the bare click+screenshot. Then, on ``--settling-game`` (the DOM demo by
default), a ``--settling-steps`` greedy run with settling and the same run before
settling (a fixed 600 ms, ``RunConfig(settle=False)``): wall seconds of each, in this run
(``--settling-steps 0`` skips it). A game folder built for a base path (zoo ``phaser-build``)
is served under the base its page shows, for the harness and the baseline alike. Exits 1 when a baseline could not be measured.

``--replay-table`` (issue 24.2) instead plays every game above, every fixture page of
``tests/playtest/fixtures`` (``fixture-<name>``) and every example game
(``example-<name>``) with each of ``--actors`` and ``--seeds``, each with a replay check,
and prints one line per run: replayable, where the two runs first differ, the wall
seconds of both runs. Exits 1 when a run was not replayable or stopped on an error.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REMBOUND = ROOT.parent / "shared" / "games" / "rembound-match3" / "match3.html"
ZOO = ROOT / "tests" / "playtest" / "zoo"
DEMO = ROOT / "examples" / "games" / "match3"
FIXTURES = ROOT / "tests" / "playtest" / "fixtures"
EXAMPLES = ROOT / "examples" / "games"
BARE_STEPS = 10


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


def all_pages() -> dict[str, tuple[Path, tuple[str, ...]]]:
    """Every game of ``games()``, then the fixture pages and the example games."""
    out = games()
    for prefix, folder in (("fixture", FIXTURES), ("example", EXAMPLES)):
        for page in sorted(p for p in folder.iterdir() if (p / "index.html").is_file()):
            out[f"{prefix}-{page.name}"] = (page, ())
    return out


def replay_table(args) -> int:
    """One replay-checked run per page, actor and seed; 1 when any was not replayable."""
    from lingxi.errors import LingxiError
    from lingxi.playtest.browser import Browser

    chosen = all_pages()
    if args.games:
        chosen = {k: v for k, v in chosen.items() if k in args.games.split(",")}
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"budget {args.budget}, seeds {args.seeds}, a replay check on every run")
    print(f"{'game':24s} {'actor':14s} {'seed':>4s}  {'replayable':10s} {'wall s':>6s}  "
          "first divergence")
    failed = 0
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp:
        for label, (game, scripts) in chosen.items():
            for name in args.actors.split(","):
                for seed in seeds:
                    out = Path(tmp) / f"{label}-{name}-{seed}"
                    try:
                        evidence, wall = run(browser, game, scripts, name, seed, args.budget,
                                             out, replay=True)
                    except LingxiError as error:
                        failed += 1
                        print(f"{label:24s} {name:14s} {seed:>4}  {'error':10s} {'':>6s}  "
                              f"{error.code}", flush=True)
                        continue
                    summary = evidence["summary"]
                    verdict = summary["replay"]
                    where = verdict.get("firstDivergence") or "-"
                    if summary.get("stopReason", "budget").startswith("error"):
                        where = f"{where} (stopped: {summary['stopReason']})"
                        failed += 1
                    elif verdict["replayable"] != "yes":
                        failed += 1
                    print(f"{label:24s} {name:14s} {seed:>4}  {verdict['replayable']:10s} "
                          f"{wall:6.1f}  {where}", flush=True)
    print(f"\n{failed} of the runs not replayable or stopped on an error")
    return 1 if failed else 0


def bare_step_ms(browser, game: Path) -> float:
    """Wall ms per bare click + screenshot on ``game`` (Playwright, real time)."""
    from lingxi.playtest.launch import detect_base
    from lingxi.playtest.server import StaticServer

    root, page_name = (game, "index.html") if game.is_dir() else (game.parent, game.name)
    with StaticServer(root, page_name, detect_base(root, page_name)) as server:
        context = browser._browser.new_context(viewport={"width": 390, "height": 844},
                                               device_scale_factor=1)
        try:
            page = context.new_page()
            page.goto(server.url + "?seed=1")
            page.screenshot()
            start = time.perf_counter()
            for _ in range(BARE_STEPS):
                page.mouse.click(195, 422)
                page.screenshot()
            return (time.perf_counter() - start) * 1000 / BARE_STEPS
        finally:
            context.close()


def run(browser, game, scripts, name, seed, budget, out, *, replay=False, settle=True):
    from lingxi.actor.actors import create_actor
    from lingxi.playtest.launch import play
    from lingxi.playtest.objectives import load_brief

    def fresh():
        return create_actor(name, seed=seed, options={})

    start = time.perf_counter()
    evidence = play(str(game), fresh(), actor_name=name, actor_options={}, seed=seed,
                    budget=budget, brief=load_brief(None), out=out, run_id="real",
                    browser=browser, init_scripts=scripts,
                    replay_actor=fresh if replay else None, settle=settle)
    return evidence, time.perf_counter() - start


def main() -> int:
    from lingxi.playtest.browser import Browser

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--games", default="")
    parser.add_argument("--settling-game", default=str(DEMO))
    parser.add_argument("--settling-steps", type=int, default=30)
    parser.add_argument("--replay-table", action="store_true",
                        help="replay-check every game, fixture and example (issue 24.2)")
    parser.add_argument("--seeds", default="1,2", help="with --replay-table")
    parser.add_argument("--actors", default="random,greedy-match3", help="with --replay-table")
    args = parser.parse_args()
    if args.replay_table:
        return replay_table(args)
    chosen = games()
    if args.games:
        chosen = {k: v for k, v in chosen.items() if k in args.games.split(",")}
    print(f"budget {args.budget}, seed {args.seed}; greedy = greedy-match3 (hands over to the "
          "explorer on a game that is not Match-3)")
    print(f"{'game':13s} {'board':5s} {'received':9s} {'greedy':>7s} {'random':>7s}  "
          f"{'replay':22s} {'ms/step':>7s} {'bare':>5s} {'ratio':>6s}")
    failed = False
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp:
        for label, (game, scripts) in chosen.items():
            greedy, wall = run(browser, game, scripts, "greedy-match3", args.seed, args.budget,
                               Path(tmp) / f"{label}-g", replay=True)
            rand, _ = run(browser, game, scripts, "random", args.seed, args.budget,
                          Path(tmp) / f"{label}-r")
            bare = bare_step_ms(browser, Path(game))
            if not bare > 0:
                failed = True
            s, r = greedy["summary"], rand["summary"]
            verdict = s["replay"]
            replay = ("identical" if verdict["replayable"] == "yes"
                      else f"differs at {verdict.get('firstDivergence')}")
            # wall per step of one run (the replay check doubled the run: halve it)
            step = wall / 2 * 1000 / max(s["actions"], 1)
            print(f"{label:13s} {'yes' if s['boardReached'] else 'no':5s} "
                  f"{s['responses']:>3}/{s['actions']:<5} {s.get('scoreGained') or 0:>7g} "
                  f"{r.get('scoreGained') or 0:>7g}  {replay:22s} {step:7.0f} {bare:5.0f} "
                  f"{step / bare if bare else float('nan'):6.1f}", flush=True)
        game = Path(args.settling_game)
        if args.settling_steps <= 0:  # the settling comparison skipped
            return 1 if failed else 0
        _, settled = run(browser, game, (), "greedy-match3", args.seed, args.settling_steps,
                         Path(tmp) / "settled")
        _, fixed = run(browser, game, (), "greedy-match3", args.seed, args.settling_steps,
                       Path(tmp) / "fixed", settle=False)
        print(f"\n{args.settling_steps}-step greedy run on {game.name}: settled {settled:.1f} s, "
              f"before settling (fixed 600 ms) {fixed:.1f} s, ratio {settled / fixed:.2f}")
    if failed:
        print("error: a bare click+screenshot baseline could not be measured", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
