"""Play-loop benchmark: actions per second through the harness vs a bare Playwright loop.

Run: .venv/bin/python benchmarks/play.py [--actions N] [--game DIR]

Both sides use the same Chromium, the same served page (the DOM Match-3 by
default) and the same 390×844 viewport, in this one run:

- baseline: a bare Playwright loop — ``page.mouse.click`` on a board cell, then
  ``page.screenshot()`` — in real time, no virtual time, no analysis;
- harness: ``lingxi.playtest.launch.play`` with the greedy-match3 actor: per
  action a pre frame, DOM snapshot, catalog, Match-3 check, validated view,
  the actor's pixel analysis, validated selection, input, 600 ms of virtual
  time, event drain, post frame, frame diff, evidence; bundle written at the end;
- harness with a constant actor (``wait 100``) to separate the actor's own cost.

Prints actions/s for each, and harness/baseline ratios.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class WaitActor:
    def select(self, view, frame_png):
        return {"type": "wait", "ms": 100}

    def close(self):
        pass


def bare_loop(browser, url: str, actions: int) -> float:
    """Click + screenshot per action with plain Playwright; returns actions/s."""
    context = browser._browser.new_context(viewport={"width": 390, "height": 844},
                                           device_scale_factor=1)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_timeout(600)
    points = [(60 + 44 * (i % 7), 300 + 44 * ((i // 7) % 7)) for i in range(actions)]
    started = time.perf_counter()
    for x, y in points:
        page.mouse.click(x, y)
        page.screenshot()
    elapsed = time.perf_counter() - started
    context.close()
    return actions / elapsed


def harness_loop(browser, game: str, actor, name: str, actions: int, tmp: Path) -> float:
    from lingxi.playtest.launch import play
    from lingxi.playtest.objectives import load_brief

    started = time.perf_counter()
    play(game, actor, actor_name=name, actor_options={}, seed=1, budget=actions,
         brief=load_brief(None), out=tmp / name, run_id=f"bench-{name}", browser=browser)
    return actions / (time.perf_counter() - started)


def main() -> int:
    from lingxi.actor.actors import create_actor
    from lingxi.playtest.browser import Browser
    from lingxi.playtest.launch import with_seed
    from lingxi.playtest.server import StaticServer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=30)
    parser.add_argument("--game", default=str(ROOT / "examples/games/match3"))
    args = parser.parse_args()
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp, \
            StaticServer(Path(args.game)) as server:
        tmp_path = Path(tmp)
        baseline = bare_loop(browser, with_seed(server.url, 1), args.actions)
        greedy = harness_loop(browser, args.game, create_actor("greedy-match3", seed=1, options={}),
                              "greedy-match3", args.actions, tmp_path)
        waiting = harness_loop(browser, args.game, WaitActor(), "wait", args.actions, tmp_path)
    print(f"game: {args.game}  actions per run: {args.actions}")
    print(f"  baseline: bare Playwright click + screenshot  {baseline:6.2f} actions/s")
    print(f"  harness, greedy-match3 actor                 {greedy:6.2f} actions/s"
          f"   ratio {greedy / baseline:.3f}")
    print(f"  harness, constant wait actor                 {waiting:6.2f} actions/s"
          f"   ratio {waiting / baseline:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
