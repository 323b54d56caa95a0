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

Then, per actor, where a step's time goes (issue 22.5): ms per step in each phase, for
each mode (median of the runs, start-up taken off the same way). The phases are timed
by wrapping the harness's functions (:class:`Phases`); a call's time goes to the
innermost phase running, so the phases add up to the step (``other`` is the rest:
Playwright's loop outside these calls, the loop's own Python). The baseline is split
into its click and its screenshot. ``input: forced frames`` is the compositor frames a
gesture forces (one per mouse move), ``input delivery`` the rest of it. Then the harness
process's own CPU time per step (not a phase: the wall phases above include waiting for
Chromium), the CPU time of the processes it started (Chromium and Playwright's driver,
which draw the frames and carry every command: read from /proc, Linux only) per step,
and how many calls a step makes of the dearest phases (virtual time advances, forced
frames, captures, page reads — a read answered from reads taken ahead counts there too —
and the page round trips those reads and the gestures made, ``Runtime.evaluate`` calls).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

MODES = {
    "before settling (fixed 600 ms, pre captured)": {"settle": False, "reuse_frames": False},
    "settled, pre frame captured": {"settle": True, "reuse_frames": False},
    "settled, pre frame reused (default)": {"settle": True, "reuse_frames": True},
}
SHORT = dict(zip(MODES, ("fixed 600", "settled", "reused"), strict=True))


class Phases:
    """Exclusive wall time per phase: each wrapped call's time goes to the innermost
    wrapped call running (a settle's captures count as capture, not as settling)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.counts: dict[str, int] = {}  # calls per phase (a nested call of one phase: one)
        self._stack: list[str] = []
        self._mark = 0.0

    def _switch(self) -> None:
        now = time.perf_counter()
        if self._stack:
            top = self._stack[-1]
            self.totals[top] = self.totals.get(top, 0.0) + now - self._mark
        self._mark = now

    def wrap(self, fn: Callable[..., Any], phase: str | Callable[[], str]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._switch()
            name = phase() if callable(phase) else phase
            if not self._stack or self._stack[-1] != name:
                self.counts[name] = self.counts.get(name, 0) + 1
            self._stack.append(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self._switch()
                self._stack.pop()
        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def patch(self, owner: Any, name: str, phase: str | Callable[[], str], *,
              optional: bool = False) -> None:
        """Wrap ``owner.name`` (a module function or a class's method); it must exist, so
        a renamed function fails the benchmark instead of leaving a phase empty
        (``optional``: a function older trees lack, skipped there)."""
        if optional and not hasattr(owner, name):
            return
        setattr(owner, name, self.wrap(getattr(owner, name), phase))

    def count(self, owner: Any, name: str, counted: str) -> None:
        """Count the calls of ``owner.name`` as ``counted`` without timing them (their time
        stays in the phase of the call they are made in)."""
        fn = getattr(owner, name)

        def counting(*args: Any, **kwargs: Any) -> Any:
            self.counts[counted] = self.counts.get(counted, 0) + 1
            return fn(*args, **kwargs)
        counting.__wrapped__ = fn  # type: ignore[attr-defined]
        setattr(owner, name, counting)

    def vision_phase(self) -> str:
        return "actor vision" if "actor decide" in self._stack else "harness vision"

    def snapshot(self) -> dict[str, float]:
        return dict(self.totals)

    def count_snapshot(self) -> dict[str, int]:
        return dict(self.counts)


PHASES = Phases()
# The harness process's own CPU time per step (its Python, numpy, Playwright's client; not
# Chromium's): what the loop costs itself, less at the mercy of other jobs than wall time.
CPU = "harness process CPU"
BROWSER_CPU = "browser + driver CPU"
COUNT = "calls: "  # per-step call counts of the phases below, kept beside the times
ROUND_TRIPS = "page round trips"  # Runtime.evaluate calls: reads taken together count once
COUNTED = ("virtual time (advance)", "input: forced frames", "capture",
           "page activity/events read", ROUND_TRIPS)
PHASE_ORDER = ("virtual time (advance)", "input: forced frames", "input delivery", "capture",
               "PNG decode/encode",
               "frame diff", "page activity/events read", "layout snapshot + catalog",
               "harness vision", "view build/validation", "actor decide", "actor vision",
               "evidence write", "other")


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def browser_cpu() -> float:
    """CPU seconds so far of the processes this one started (Chromium, Playwright's driver):
    each live one's own time and that of the children it reaped (renderers that ended).
    0 where /proc cannot be read."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue
    return total / tick


def instrument() -> None:
    """Wrap the harness's phases (see :class:`Phases`) once, before any run."""
    from lingxi.actor import vision
    from lingxi.playtest import browser, evidence, frames, motion, runner, settle

    page = browser.GamePage
    P = PHASES
    P.patch(page, "advance", "virtual time (advance)")
    P.patch(page, "perform", "input delivery")
    P.patch(page, "_force_frame", "input: forced frames")
    P.patch(page, "capture", "capture")
    for name in ("activity", "drain_events", "_seen", "_gesture", "risks", "fit_camera"):
        P.patch(page, name, "page activity/events read")
    P.patch(page, "shown_score", "page activity/events read", optional=True)
    P.count(page, "_evaluate", ROUND_TRIPS)
    P.patch(page, "snapshot", "layout snapshot + catalog")
    P.patch(runner, "build_catalog", "layout snapshot + catalog")
    P.patch(runner, "is_standard_board", "layout snapshot + catalog")
    for module in (frames, settle, runner):
        P.patch(module, "decode", "PNG decode/encode")
    P.patch(browser, "_exact_frame", "PNG decode/encode")
    P.patch(vision, "load_image", "PNG decode/encode")
    for name in ("changes", "moving", "learn"):
        P.patch(motion.Motion, name, "frame diff")
    for module in (motion, runner):
        P.patch(module, "significant", "frame diff")
        P.patch(module, "changed_cells", "frame diff")
    for module in (frames, runner):
        P.patch(module, "frame_change", "frame diff")
    for name in ("find_lattice", "classify_cells"):
        P.patch(vision, name, P.vision_phase)
    P.patch(runner, "build_view", "view build/validation")
    P.patch(runner, "canonical_json", "view build/validation")
    P.patch(runner.PlayRun, "_validate", "view build/validation")
    P.patch(frames.FrameStore, "save", "evidence write")
    P.patch(evidence, "write_bundle", "evidence write")


class Timed:
    """An actor whose ``select`` counts as the phase ``actor decide``."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.select = PHASES.wrap(actor.select, "actor decide")

    def close(self) -> None:
        close = getattr(self.actor, "close", None)
        if close is not None:
            close()


class WaitActor:
    def select(self, view, frame_png):
        return {"type": "wait", "ms": 100}

    def close(self):
        pass


def bare_loop(browser, url: str, actions: int) -> tuple[float, dict[str, float]]:
    """Click + screenshot per action with plain Playwright; returns ms per step and its
    split into click and screenshot, with the CPU per step of this process and of the
    browser and driver."""
    context = browser._browser.new_context(viewport={"width": 390, "height": 844},
                                           device_scale_factor=1)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_timeout(600)
    points = [(60 + 44 * (i % 7), 300 + 44 * ((i // 7) % 7)) for i in range(actions)]
    click = shot = 0.0
    cpu, chromium = time.process_time(), browser_cpu()
    started = time.perf_counter()
    for x, y in points:
        t0 = time.perf_counter()
        page.mouse.click(x, y)
        t1 = time.perf_counter()
        page.screenshot()
        click, shot = click + t1 - t0, shot + time.perf_counter() - t1
    elapsed = time.perf_counter() - started
    cpu, chromium = time.process_time() - cpu, browser_cpu() - chromium
    context.close()
    return elapsed * 1000 / actions, {"click": click * 1000 / actions,
                                      "screenshot": shot * 1000 / actions,
                                      CPU: cpu * 1000 / actions,
                                      BROWSER_CPU: chromium * 1000 / actions}


def harness_loop(browser, game: str, actor, actions: int, tmp: Path,
                 **mode) -> tuple[float, dict[str, float]]:
    """ms per step of ``actions`` steps (the run's fixed start-up — load, idle probe —
    is taken out by timing a one-step run and subtracting it), and the same per phase."""
    from lingxi.playtest.launch import play
    from lingxi.playtest.objectives import load_brief

    def timed(budget: int) -> tuple[float, dict[str, float]]:
        before, counted = PHASES.snapshot(), PHASES.count_snapshot()
        cpu, chromium = time.process_time(), browser_cpu()
        started = time.perf_counter()
        play(game, Timed(actor()), actor_name="bench", actor_options={}, seed=1,
             budget=budget, brief=load_brief(None),
             out=tmp / f"b{budget}-{time.perf_counter_ns()}", run_id="bench",
             browser=browser, **mode)
        elapsed = time.perf_counter() - started
        cpu, chromium = time.process_time() - cpu, browser_cpu() - chromium
        after = PHASES.snapshot()
        phases = {k: v - before.get(k, 0.0) for k, v in after.items()}
        phases["other"] = elapsed - sum(phases.values())
        phases[CPU] = cpu
        phases[BROWSER_CPU] = chromium
        for name, n in PHASES.count_snapshot().items():
            phases[COUNT + name] = (n - counted.get(name, 0)) / 1000  # ×1000 below, like ms
        return elapsed, phases

    (long, long_phases), (short, short_phases) = timed(actions + 1), timed(1)
    per_step = {k: (long_phases.get(k, 0.0) - short_phases.get(k, 0.0)) * 1000 / actions
                for k in set(long_phases) | set(short_phases)}
    return (long - short) * 1000 / actions, per_step


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
    instrument()
    results: dict[tuple[str, str], list[float]] = {}
    phases: dict[tuple[str, str], list[dict[str, float]]] = {}
    baseline: list[float] = []
    base_parts: list[dict[str, float]] = []
    with Browser() as browser, tempfile.TemporaryDirectory() as tmp, \
            StaticServer(source.root, source.page, source.base) as server:
        for _ in range(args.repeat):
            ms, parts = bare_loop(browser, with_seed(server.url, 1), args.actions)
            baseline.append(ms)
            base_parts.append(parts)
            for actor_name, actor in actors.items():
                for mode_name, mode in MODES.items():
                    ms, split = harness_loop(browser, args.game, actor, args.actions, Path(tmp),
                                             **mode)
                    results.setdefault((actor_name, mode_name), []).append(ms)
                    phases.setdefault((actor_name, mode_name), []).append(split)
    base = statistics.median(baseline)
    click = statistics.median(p["click"] for p in base_parts)
    shot = statistics.median(p["screenshot"] for p in base_parts)
    print(f"game: {args.game}  steps per run: {args.actions}  median of {args.repeat}")
    base_cpu = {k: statistics.median(p[k] for p in base_parts) for k in (CPU, BROWSER_CPU)}
    print(f"  baseline: bare Playwright click + screenshot        {base:7.1f} ms/step"
          f"   (click {click:.1f}, screenshot {shot:.1f}; CPU: process {base_cpu[CPU]:.1f},"
          f" browser + driver {base_cpu[BROWSER_CPU]:.1f})")
    for actor_name in actors:
        print(f"  actor {actor_name}:")
        for mode_name in MODES:
            ms = statistics.median(results[(actor_name, mode_name)])
            print(f"    {mode_name:46s} {ms:7.1f} ms/step   overhead {ms - base:+7.1f} ms"
                  f"   ratio {ms / base:5.2f}")
    for actor_name in actors:
        print(f"  where a step goes, actor {actor_name} (ms/step per phase):")
        names = list(MODES)
        print("    " + " " * 28 + "".join(f"{SHORT[m]:>12s}" for m in names))
        for phase in (*PHASE_ORDER, CPU, BROWSER_CPU):
            cells = [statistics.median(s.get(phase, 0.0) for s in phases[(actor_name, m)])
                     for m in names]
            print(f"    {phase:28s}" + "".join(f"{v:12.1f}" for v in cells))
        print("    calls per step:")
        for phase in COUNTED:
            cells = [statistics.median(s.get(COUNT + phase, 0.0) for s in phases[(actor_name, m)])
                     for m in names]
            print(f"      {phase:26s}" + "".join(f"{v:12.1f}" for v in cells))
    print("  CPU per step, both processes' sides (ms; ratio to the baseline's):")
    bare_total = base_cpu[CPU] + base_cpu[BROWSER_CPU]
    print(f"    baseline                                       {bare_total:7.1f}")
    for actor_name in actors:
        for mode_name in MODES:
            split = phases[(actor_name, mode_name)]
            total = statistics.median(s.get(CPU, 0.0) + s.get(BROWSER_CPU, 0.0) for s in split)
            print(f"    {actor_name:13s} {SHORT[mode_name]:10s}                       {total:7.1f}"
                  f"   ratio {total / bare_total if bare_total else float('nan'):5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
