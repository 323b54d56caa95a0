"""greedy-match3: looks at the frame's pixels, finds the swap that clears the most.

The view tells it only the lattice's size and anonymous swap candidates; it finds
the board in the frame itself (:func:`lingxi.actor.vision.find_lattice`),
clusters cell colours into kinds, and answers ``swap_pair`` with the candidate
whose swap makes the largest immediate line of ≥3. Falls back to another
untried candidate when it sees no match, and to the random baseline when there
is no board at all. A swap is not tried twice on the same board (the same grid
of kinds, or the same frame hash when no board is read), so a misread board
cannot loop forever even if a revert repaints a few pixels differently.
"""

from __future__ import annotations

import random
from typing import Any

from .base import (
    Actor,
    check_options,
    legal_types,
    random_selection,
    swap_candidates,
    target_ref,
    targets,
)
from .match3 import adjacent_pairs, swap_gain


class GreedyMatch3Actor(Actor):
    name = "greedy-match3"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None) -> None:
        check_options(self.name, dict(options or {}), set())
        self._rng = random.Random(seed)
        self._tried: dict[Any, set[tuple[tuple[int, int], tuple[int, int]]]] = {}
        self.last_board: list[list[int]] | None = None   # for inspection in tests and reports

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        from lingxi.actor.vision import classify_cells, find_lattice

        lattice_target = self._lattice_target(view)
        if lattice_target is None:
            return random_selection(view, self._rng)
        dims = lattice_target["dimensions"]
        rows, columns = int(dims["rows"]), int(dims["columns"])
        lattice = find_lattice(frame_png, rows=rows, columns=columns)
        if lattice is None:
            return self._fallback(view, lattice_target, rows, columns, "no board found in the frame",
                                  view.get("currentFrameHash", ""))
        board = classify_cells(frame_png, lattice)
        self.last_board = board
        board_key = tuple(tuple(row) for row in board)

        tried = self._tried.setdefault(board_key, set())
        scored = []
        for candidate_id, a, b in self._pairs(view, lattice_target, rows, columns):
            if (a, b) in tried:
                continue
            gain = swap_gain(board, a, b)
            if gain >= 3:
                scored.append((gain, max(a[0], b[0]), candidate_id, a, b))
        if not scored:
            return self._fallback(view, lattice_target, rows, columns, "no matching swap seen", board_key)
        # Largest immediate match first; then lower on the board (more cascades); then id.
        gain, _, candidate_id, a, b = min(scored, key=lambda s: (-s[0], -s[1], s[2] or "", s[3], s[4]))
        tried.add((a, b))
        reason = f"swap {a}-{b} clears {gain}"
        return self._swap(view, lattice_target, a, b, candidate_id, reason)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _lattice_target(view: dict[str, Any]) -> dict[str, Any] | None:
        lattices = {t["id"]: t for t in targets(view) if t.get("kind") == "lattice"}
        for cand in swap_candidates(view):
            if cand.get("latticeId") in lattices:
                return lattices[cand["latticeId"]]
        return next(iter(lattices.values()), None)

    @staticmethod
    def _pairs(view: dict[str, Any], target: dict[str, Any], rows: int, columns: int):
        cands = [c for c in swap_candidates(view) if c.get("latticeId") == target["id"]]
        if cands and "swap_pair" in legal_types(view):
            for cand in cands:
                a, b = cand["pair"]
                yield (cand["candidateId"],
                       (a["cell"]["row"], a["cell"]["column"]),
                       (b["cell"]["row"], b["cell"]["column"]))
            return
        for a, b in adjacent_pairs(rows, columns):
            yield None, a, b

    def _swap(self, view: dict[str, Any], target: dict[str, Any], a, b,
              candidate_id: str | None, reason: str) -> dict[str, Any]:
        if candidate_id is not None:
            return {"type": "swap_pair", "candidateId": candidate_id, "reason": reason}
        if "drag" in legal_types(view) and "drag" in target.get("allowedGestures", []):
            return {"type": "drag", "from": target_ref(target, *a), "to": target_ref(target, *b),
                    "reason": reason}
        return random_selection(view, self._rng)

    def _fallback(self, view: dict[str, Any], target: dict[str, Any], rows: int, columns: int,
                  why: str, key: Any) -> dict[str, Any]:
        tried = self._tried.setdefault(key, set())
        fresh = [p for p in self._pairs(view, target, rows, columns) if (p[1], p[2]) not in tried]
        if not fresh:
            return random_selection(view, self._rng)
        candidate_id, a, b = self._rng.choice(fresh)
        tried.add((a, b))
        return self._swap(view, target, a, b, candidate_id, f"{why}; exploring {a}-{b}")
