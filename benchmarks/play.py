"""Play-loop benchmark: per-step cost of the harness vs a bare Playwright loop, before and
after settling.

Run: .venv/bin/python benchmarks/play.py [--actions N] [--game PATH] [--repeat R]

All loops use the same Chromium, the same served page (the DOM Match-3 by default)
and the same 390×844 viewport, in this one run:

- baseline: a bare Playwright loop — ``page.mouse.click`` on a board cell, then
  ``page.screenshot()`` — in real time, no virtual time, no analysis;
- harness *before settling*: ``RunConfig(settle=False, reuse_frames=False)`` — a fixed
  600 ms of virtual time after each input and one post frame, and a fresh pre frame
  captured before each step (the loop as it was);
- harness *settled, pre frame captured*: settling (100 ms chunks until two still
  ones, a frame per chunk) but still capturing the pre frame;
- harness *settled, pre frame reused* (the default): the post frame of one step is
  the next step's pre frame.

Every harness loop plays the constant actor ``wait 100`` (so the actor's own cost is
not in the figures) and then greedy-match3 (what a real run costs). Prints ms per
step, the overhead over the baseline (harness ms − baseline ms) and the ratio, the
median of ``--repeat`` runs of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODES = {
    "before settling (fixed 600 ms, pre captured)": {"settle": False, "reuse_frames": False},
    "settled, pre frame captured": {"settle": True, "reuse_frames": False},
    "settled, pre frame reused (default)": {"settle": True, "reuse_frames": True},
}


class WaitActor:
    def select(self, view, frame_png):
        return {"type": "wait", "ms": 100}

    def close(self):
        pass


def bare_loop(browser, url: str, actions: int) -> float:
    """Click + screenshot per action with plain Playwright; returns ms per step."""
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
    return elapsed * 1000 / actions


def harness_loop(browser, game: str, actor, actions: int, tmp: Path, **mode) -> float:
    """ms per step of ``actions`` steps (the run's fixed start-up — load, idle probe —
    is taken out by timing a one-step run and subtracting it)."""
    from lingxi.playtest.launch import play
    from lingxi.playtest.objectives import load_brief

    def timed(budget: int) -> float:
        started = time.perf_counter()
        play(game, actor(), actor_name="bench", actor_options={}, seed=1, budget=budget,
             brief=load_brief(None), out=tmp / f"b{budget}-{time.perf_counter_ns()}",
             run_id="bench", browser=browser, **mode)
        return time.perf_counter() - started

    return (timed(actions + 1) - timed(1)) * 1000 / actions


def main() -> int:
    from lingxi.actor.actors import create_actor
    from lingxi.playtest.browser import Browser
    from lingxi.playtest.launch import resolve_game, with_seed
    from lingxi.playtest.server import StaticServer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--game", default=str(ROOT / "examples/games/match3"))
    args = parser.parse_args()
    source = resolve_game(args.game)
    actors = {"wait": WaitActor,
              "greedy-match3": lambda: create_actor("greedy-match3", seed=1, options={})}
    results: dict[tuple[str, str], list[float]] = {}
    baseline: list[float] = []
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp, \
            StaticServer(source.root, source.page) as server:
        for _ in range(args.repeat):
            baseline.append(bare_loop(browser, with_seed(server.url, 1), args.actions))
            for actor_name, actor in actors.items():
                for mode_name, mode in MODES.items():
                    results.setdefault((actor_name, mode_name), []).append(
                        harness_loop(browser, args.game, actor, args.actions, Path(tmp), **mode))
    base = statistics.median(baseline)
    print(f"game: {args.game}  steps per run: {args.actions}  median of {args.repeat}")
    print(f"  baseline: bare Playwright click + screenshot        {base:7.1f} ms/step")
    for actor_name in actors:
        print(f"  actor {actor_name}:")
        for mode_name in MODES:
            ms = statistics.median(results[(actor_name, mode_name)])
            print(f"    {mode_name:46s} {ms:7.1f} ms/step   overhead {ms - base:+7.1f} ms"
                  f"   ratio {ms / base:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
