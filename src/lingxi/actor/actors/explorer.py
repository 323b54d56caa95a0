"""explorer: plays any game by learning, from the view's history, what responds and scores.

It reads only the view (no pixels): every kind of input the view offers is an *arm* —
each safe key (the keyboard-aware projection: ActorView's keys are actions like any
target), each region, taps on a lattice's cells, drags between a lattice's neighbours,
swap candidates, taps on the spatial grid. It tries each arm once (on a board: board
arms and keys before regions, which are often menus; without one: regions first, to get
past a start screen), then prefers what gained the most score per try, then what the
game answered most often (once an arm works, one action in five still tries a new
one). An arm after which the game's score went down (a "New Game"
button) is a *reset* and is never pressed again; an arm the game did not answer is not
repeated on the same frame. Seeded: the same seed and views give the same selections.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .base import (
    Actor,
    check_options,
    legal_types,
    safe_keys,
    swap_candidates,
    target_dimensions,
    target_ref,
    targets,
)

ARROWS = ("ArrowUp", "ArrowLeft", "ArrowDown", "ArrowRight")
EXPLORE_EVERY = 5  # once something works, one action in five still tries a new arm
RESET_DROP = 0  # a score lower than before by more than this after an arm: the arm resets


@dataclass
class ArmStats:
    tries: int = 0
    responses: int = 0
    gained: float = 0.0
    reset: bool = False

    def rank(self) -> tuple[float, float]:
        return (self.gained / self.tries if self.tries else 0.0,
                (self.responses + 1) / (self.tries + 2))


class ExplorerActor(Actor):
    """Tries each input the view offers, avoids resets, repeats what responds and scores."""

    name = "explorer"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None) -> None:
        check_options(self.name, dict(options or {}), set())
        self._rng = random.Random(seed)
        self.stats: dict[str, ArmStats] = {}
        self._last: tuple[str, str, str | None] | None = None  # arm, frame, newest entry then
        self._missed: set[tuple[str, str]] = set()  # (arm, frame hash) the game did not answer
        self._score: float | None = None
        self._actions = 0
        self._cells: dict[str, int] = {}  # next cell index per cell arm (a sweep)

    # ------------------------------------------------------------------ learning
    def _learn(self, view: dict[str, Any]) -> None:
        history = view.get("history") or []
        if self._last is None or not history:
            return
        entry = history[-1]
        arm, frame, newest = self._last
        if entry.get("actionId") == newest:
            return  # a retry of a rejected answer: nothing was played
        self._last = None
        stats = self.stats.setdefault(arm, ArmStats())
        stats.tries += 1
        if entry.get("causalGameResponse"):
            stats.responses += 1
        else:
            self._missed.add((arm, frame))
        score = _last_score(entry.get("gameEvents") or [])
        if score is not None:
            before = self._score
            if before is not None and score < before - RESET_DROP:
                stats.reset = True
            stats.gained += score - (before or 0)
            self._score = score

    # ------------------------------------------------------------------ arms
    def _arms(self, view: dict[str, Any]) -> list[tuple[str, Any]]:
        """(arm name, how to make a selection) for everything this view offers, in trial order."""
        types = legal_types(view)
        board, regions = self._target_arms(view, types)
        keys = [k for k in ARROWS if k in safe_keys(view)]
        keys += [k for k in safe_keys(view) if k not in ARROWS]
        key_arms = [(f"key:{k}", self._key(k)) for k in keys] if "key" in types else []
        grid = next((t for t in targets(view) if t.get("kind") == "spatial_grid"), None)
        rest = [("grid", self._cell_tap(grid, target_dimensions(grid)))] if grid and "tap" in types else []
        if board:
            return board + key_arms + regions + rest
        return regions + key_arms + rest

    def _target_arms(self, view: dict[str, Any], types: list[str]
                     ) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
        """The board's arms (swaps, cell taps, neighbour drags) and the other regions' taps."""
        board: list[tuple[str, Any]] = []
        regions: list[tuple[str, Any]] = []
        if "swap_pair" in types and swap_candidates(view):
            board.append(("swap", self._swap))
        for target in targets(view):
            dims = target_dimensions(target)
            gestures = target.get("allowedGestures", [])
            if target.get("kind") == "lattice" and dims is not None:
                if "tap" in gestures:
                    board.append((f"cells:{target['id']}", self._cell_tap(target, dims)))
                if "drag" in gestures:
                    board.append((f"drag:{target['id']}", self._neighbour_drag(target, dims)))
            elif target.get("kind") != "spatial_grid" and "tap" in gestures and "tap" in types:
                regions.append((f"tap:{target['id']}", self._region_tap(target)))
        return board, regions

    def _swap(self, view: dict[str, Any]) -> dict[str, Any]:
        candidate = self._rng.choice(swap_candidates(view))
        return {"type": "swap_pair", "candidateId": candidate["candidateId"]}

    def _cell_tap(self, target: dict[str, Any], dims: Any):
        def make(view: dict[str, Any]) -> dict[str, Any]:
            rows, columns = dims
            arm = f"cells:{target['id']}"
            index = self._cells.get(arm, self._rng.randrange(rows * columns))
            # a sweep with a stride co-prime to the cell count visits every cell
            self._cells[arm] = (index + _stride(rows * columns)) % (rows * columns)
            return {"type": "tap", "target": target_ref(target, index // columns + 1,
                                                        index % columns + 1)}
        return make

    def _neighbour_drag(self, target: dict[str, Any], dims: Any):
        def make(view: dict[str, Any]) -> dict[str, Any]:
            rows, columns = dims
            r, c = self._rng.randint(1, rows), self._rng.randint(1, columns)
            dr, dc = self._rng.choice([(0, 1), (1, 0), (0, -1), (-1, 0)])
            r2, c2 = min(max(r + dr, 1), rows), min(max(c + dc, 1), columns)
            if (r2, c2) == (r, c):
                r2, c2 = (r - dr, c - dc)
            return {"type": "drag", "from": target_ref(target, r, c),
                    "to": target_ref(target, r2, c2)}
        return make

    @staticmethod
    def _region_tap(target: dict[str, Any]):
        return lambda view: {"type": "tap", "target": target_ref(target)}

    @staticmethod
    def _key(key: str):
        return lambda view: {"type": "key", "key": key}

    # ------------------------------------------------------------------ choosing
    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        self._learn(view)
        frame = str(view.get("currentFrameHash", ""))
        arms = [(name, make) for name, make in self._arms(view)
                if not self.stats.get(name, ArmStats()).reset]
        if not arms:
            return {"type": "wait", "ms": 300, "reason": "explorer: nothing but resets to press"}
        fresh = [(n, m) for n, m in arms if (n, frame) not in self._missed]
        self._actions += 1
        name, make, why = self._choose(fresh or arms)
        history = view.get("history") or []
        self._last = (name, frame, history[-1].get("actionId") if history else None)
        selection = make(view)
        selection["reason"] = f"explorer: {name} ({why})"[:280]
        return selection

    def _choose(self, pool: list[tuple[str, Any]]) -> tuple[str, Any, str]:
        """An untried arm while nothing works (and every EXPLORE_EVERY actions), else one of
        the best ranked; with the reason shown to the person reading the run."""
        untried = [(n, m) for n, m in pool if n not in self.stats]
        tried = [(n, m) for n, m in pool if n in self.stats]
        working = any(self.stats[n].responses * 2 >= self.stats[n].tries > 0 for n, _ in tried)
        if untried and (not working or not tried or self._actions % EXPLORE_EVERY == 0):
            name, make = untried[0]
            return name, make, "untried"
        best = max(self.stats[n].rank() for n, _ in tried)
        top = [(n, m) for n, m in tried if self.stats[n].rank() == best]
        name, make = top[self._rng.randrange(len(top))]
        s = self.stats[name]
        return name, make, f"{s.responses}/{s.tries} answered, {s.gained:+g} score"


def _stride(n: int) -> int:
    """A step co-prime to ``n`` near its golden section, for a sweep that is not a scan."""
    from math import gcd

    step = max(1, round(n * 0.618))
    while gcd(step, n) != 1:
        step += 1
    return step


def _last_score(events: list[dict[str, Any]]) -> float | None:
    """The last numeric ``score`` of this action: a bridge event's, or the one the page showed
    (an observed ``score`` event, for a game that sends none)."""
    for event in reversed(events):
        counts = event.get("source") == "bridge" or event.get("type") == "score"
        score = (event.get("data") or {}).get("score") if counts else None
        if isinstance(score, int | float) and not isinstance(score, bool):
            return float(score)
    return None
