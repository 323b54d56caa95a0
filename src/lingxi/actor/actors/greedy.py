"""greedy-match3: looks at the frame's pixels, finds the swap that clears the most.

The view tells it only the lattice's size and anonymous swap candidates; it finds
the board in the frame itself (:func:`lingxi.actor.vision.find_lattice`),
clusters cell colours into kinds, and answers ``swap_pair`` with the candidate
whose swap makes the largest immediate line of at least the match length the
game accepts (3 at first; learnt from the game's answers: when swaps making a
line of exactly that length keep coming back unchanged, it asks for one more,
and an accepted shorter line brings it back down). Falls back to another
untried candidate when it sees no match. A swap is not tried twice on the same
board (the same grid of kinds, or the same frame hash when no board is read),
so a misread board cannot loop; a swap the game never received
(``causalGameResponse`` false) does not count as tried, once.

With no board in view (a start screen, a game-over panel) it presses the most
button-like region of the frame (:mod:`lingxi.actor.buttons`) through the
spatial grid, remembers which presses led to a board and prefers those next
time, and never presses the same spot twice on the same frame.

It says when a game is not Match-3: after ``HANDOVER_AFTER`` views in a row without
swap candidates (no standard board: a 2048 grid, a memory game's cards, a start
screen that did not give way), it hands the game over to the explorer actor
(:mod:`.explorer`), each answer's reason saying so, and takes it back as soon as a
view offers swap candidates again.
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
from .match3 import adjacent_pairs, longest_line, swap_gain

MAX_LINE = 6
HANDOVER_AFTER = 3  # views in a row without swap candidates before the explorer plays
REJECTIONS_TO_LENGTHEN = 3  # swaps of exactly the assumed length that changed nothing
ANCHOR_OFFSETS = {"center": (0.0, 0.0), "north": (0.0, -0.3), "south": (0.0, 0.3),
                  "east": (0.3, 0.0), "west": (-0.3, 0.0), "northwest": (-0.3, -0.3),
                  "northeast": (0.3, -0.3), "southwest": (-0.3, 0.3), "southeast": (0.3, 0.3)}


class GreedyMatch3Actor(Actor):
    name = "greedy-match3"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None) -> None:
        check_options(self.name, dict(options or {}), set())
        self._rng = random.Random(seed)
        self._tried: dict[Any, set[tuple[tuple[int, int], tuple[int, int]]]] = {}
        self.last_board: list[list[int]] | None = None   # for inspection in tests and reports
        self.min_line = 3  # the match length the game is believed to accept
        self.outcomes: dict[int, list[int]] = {}  # line length -> [accepted, unchanged]
        self.led_to_board: list[tuple[int, int]] = []  # presses after which a board appeared
        self._pressed: dict[str, set[tuple[int, int]]] = {}
        self._unreceived: dict[Any, int] = {}
        self._last: dict[str, Any] | None = None
        self._seed = seed
        self._without_swaps = 0
        self.explorer: Any = None  # the ExplorerActor playing a game that is not Match-3
        self._fit: tuple[Any, Any, Any] | None = None  # (layout key, lattice, frame fitted on)
        self.fits = 0  # lattice searches made (the rest of the views reused the last fit)

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        if swap_candidates(view):
            self._without_swaps = 0
            if self.explorer is not None:
                self.explorer = None  # a Match-3 board after all: greedy plays again
                self._last = None
        else:
            self._without_swaps += 1
            if self._without_swaps > HANDOVER_AFTER:
                return self._hand_over(view, frame_png)
        return self._select(view, frame_png)

    def _hand_over(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        """Let the explorer play a game that shows no Match-3 board, and say so."""
        if self.explorer is None:
            from .explorer import ExplorerActor

            self.explorer = ExplorerActor(seed=self._seed)
        selection = self.explorer.select(view, frame_png)
        why = selection.get("reason", "explorer")
        selection["reason"] = (f"not a Match-3 game (no swap candidates in "
                               f"{self._without_swaps} views): {why}")[:280]
        return selection

    def _select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        from lingxi.actor.vision import classify_cells, load_image

        lattice_target = self._lattice_target(view)
        last, self._last = self._last, None
        answered = _last_answered(view)
        if lattice_target is None:
            if last is not None and last["kind"] == "press" and answered is not None:
                self._pressed.setdefault(last["frame"], set()).add(last["point"])
            return self._press(view, frame_png)
        if last is not None and last["kind"] == "press" and swap_candidates(view):
            if last["point"] not in self.led_to_board:
                self.led_to_board.append(last["point"])
        dims = lattice_target["dimensions"]
        rows, columns = int(dims["rows"]), int(dims["columns"])
        image = load_image(frame_png)  # decoded once, for the fit and the kinds
        lattice = self._lattice(view, image, rows, columns)
        if lattice is None:
            return self._fallback(view, lattice_target, rows, columns, "no board found in the frame",
                                  view.get("currentFrameHash", ""))
        board = classify_cells(image, lattice)
        self.last_board = board
        board_key = tuple(tuple(row) for row in board)
        if last is not None and last["kind"] == "swap" and answered is not None:
            self._learn(last, board_key, answered)

        tried = self._tried.setdefault(board_key, set())
        scored = []
        for candidate_id, a, b in self._pairs(view, lattice_target, rows, columns):
            if (a, b) in tried:
                continue
            gain = swap_gain(board, a, b, self.min_line)
            if gain >= self.min_line:
                scored.append((gain, max(a[0], b[0]), candidate_id, a, b))
        if not scored:
            return self._fallback(view, lattice_target, rows, columns, "no matching swap seen",
                                  board_key, board)
        # Largest immediate match first; then lower on the board (more cascades); then id.
        gain, _, candidate_id, a, b = min(scored, key=lambda s: (-s[0], -s[1], s[2] or "", s[3], s[4]))
        tried.add((a, b))
        self._last = {"kind": "swap", "board": board_key, "pair": (a, b),
                      "line": longest_line(board, a, b)}
        reason = f"swap {a}-{b} clears {gain} (lines of {self.min_line}+)"
        return self._swap(view, lattice_target, a, b, candidate_id, reason)

    # ------------------------------------------------------------------ the board's place

    def _lattice(self, view: dict[str, Any], image: Any, rows: int, columns: int) -> Any:
        """The board's lattice in ``image``: the last fit while the layout is the same, else
        a new fit (:func:`lingxi.actor.vision.find_lattice`, the costly part of a view).

        The layout is the same when the view's target set (the harness's geometry of every
        target: a board that moves, a camera move, a panel that opens change it) and the
        lattice's size are those of the fit, and the frame outside the board is still that
        of the fit (:func:`layout_kept`): a swap changes only the pieces inside the board.
        """
        from lingxi.actor.vision import find_lattice

        key = (_target_set(view), rows, columns, image.shape)
        if self._fit is not None and self._fit[0] == key and layout_kept(
                self._fit[2], image, self._fit[1]):
            return self._fit[1]
        lattice = find_lattice(image, rows=rows, columns=columns)
        self.fits += 1
        self._fit = (key, lattice, image) if lattice is not None else None
        return lattice

    # ------------------------------------------------------------------ learning

    def _learn(self, last: dict[str, Any], board_key: Any, received: bool) -> None:
        """What the game did with our last swap: not received, unchanged board, or a match."""
        key = (last["board"], last["pair"])
        if not received:
            self._unreceived[key] = self._unreceived.get(key, 0) + 1
            if self._unreceived[key] <= 1:  # not tried after all; once, so it cannot loop
                self._tried.get(last["board"], set()).discard(last["pair"])
            return
        line = last["line"]
        if line < 3:
            return
        counts = self.outcomes.setdefault(line, [0, 0])
        if board_key != last["board"]:
            counts[0] += 1
            if line < self.min_line:
                self.min_line = line  # a shorter line was accepted after all
        else:
            counts[1] += 1
            if (line == self.min_line and counts[0] == 0
                    and counts[1] >= REJECTIONS_TO_LENGTHEN and self.min_line < MAX_LINE):
                self.min_line += 1

    # ------------------------------------------------------------------ start screens

    def _press(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        """No board: press the most button-like region (remembered winners first)."""
        from lingxi.actor.buttons import find_buttons

        grid = next((t for t in targets(view) if t.get("kind") == "spatial_grid"
                     and "tap" in t.get("allowedGestures", [])), None)
        if grid is None or "tap" not in legal_types(view):
            return random_selection(view, self._rng)
        frame = view.get("currentFrameHash", "")
        pressed = self._pressed.get(frame, set())
        buttons = find_buttons(frame_png)
        points: list[tuple[int, int]] = []
        for point in self.led_to_board:
            if any(b.x <= point[0] <= b.x + b.width and b.y <= point[1] <= b.y + b.height
                   for b in buttons):
                points.append(point)
        points += [(round(b.center[0]), round(b.center[1])) for b in buttons]
        for point in points:
            if point not in pressed:
                self._last = {"kind": "press", "point": point, "frame": frame}
                return {"type": "tap", "target": _grid_ref(view, grid, point),
                        "reason": f"no board: press the button-like region at {point}"}
        return random_selection(view, self._rng)

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
                  why: str, key: Any, board: list[list[int]] | None = None) -> dict[str, Any]:
        tried = self._tried.setdefault(key, set())
        fresh = [p for p in self._pairs(view, target, rows, columns) if (p[1], p[2]) not in tried]
        if not fresh:
            return random_selection(view, self._rng)
        if board is not None:  # a shorter line than assumed beats a swap that makes none
            lines = [(longest_line(board, p[1], p[2]), p) for p in fresh]
            best = max(line for line, _ in lines)
            if best >= 3:
                fresh = [p for line, p in lines if line == best]
        candidate_id, a, b = self._rng.choice(fresh)
        tried.add((a, b))
        if board is not None:
            self._last = {"kind": "swap", "board": key, "pair": (a, b),
                          "line": longest_line(board, a, b)}
        return self._swap(view, target, a, b, candidate_id, f"{why}; exploring {a}-{b}")


PIXEL_CHANGE = 24  # summed RGB difference above which a pixel counts as changed
OUTSIDE_CHANGED = 0.02  # share of the frame outside the board that may change (a score)
RIM_CHANGED = 0.05  # share of a thin rim round the board that may change (it moved if more)


def layout_kept(fitted: Any, image: Any, lattice: Any) -> bool:
    """True when ``image`` shows the board where ``fitted`` (the frame its lattice was fitted
    on) did: outside the board at most OUTSIDE_CHANGED of the pixels changed (a score, a
    counter), and of the rim just round it (a quarter of a cell wide, where a board that
    moved or grew would show first) at most RIM_CHANGED."""
    import numpy as np

    if fitted.shape != image.shape:
        return False
    if fitted is image:
        return True
    height, width = image.shape[:2]
    changed = np.zeros((height, width), dtype=bool)
    rows = np.flatnonzero((fitted != image).reshape(height, -1).any(axis=1))
    if rows.size:  # only the rows where some byte differs are compared in full
        top, bottom = int(rows[0]), int(rows[-1]) + 1
        band = np.abs(fitted[top:bottom].astype(np.int16) - image[top:bottom].astype(np.int16))
        changed[top:bottom] = band.sum(axis=2) > PIXEL_CHANGE
    x0, y0 = max(lattice.x, 0), max(lattice.y, 0)
    x1, y1 = min(lattice.x + lattice.width, width), min(lattice.y + lattice.height, height)
    rim = max(3, int(min(lattice.pitch_x, lattice.pitch_y) / 4))
    rx0, ry0 = max(x0 - rim, 0), max(y0 - rim, 0)
    rx1, ry1 = min(x1 + rim, width), min(y1 + rim, height)
    inside = int(changed[y0:y1, x0:x1].sum()) if x1 > x0 and y1 > y0 else 0
    grown = int(changed[ry0:ry1, rx0:rx1].sum())
    rim_area = (ry1 - ry0) * (rx1 - rx0) - max(x1 - x0, 0) * max(y1 - y0, 0)
    outside_area = height * width - max(x1 - x0, 0) * max(y1 - y0, 0)
    outside = int(changed.sum()) - inside
    if rim_area > 0 and (grown - inside) > RIM_CHANGED * rim_area:
        return False
    return outside_area <= 0 or outside <= OUTSIDE_CHANGED * outside_area


def _target_set(view: dict[str, Any]) -> Any:
    catalog = view.get("visualTargetCatalog") or {}
    return catalog.get("targetSetHash")


def _last_answered(view: dict[str, Any]) -> bool | None:
    """``causalGameResponse`` of the newest history entry, or None without history."""
    history = view.get("history") or []
    return bool(history[-1].get("causalGameResponse")) if history else None


def _grid_ref(view: dict[str, Any], grid: dict[str, Any], point: tuple[int, int]) -> dict[str, Any]:
    """The spatial-grid cell and sub-anchor nearest to a frame point."""
    rows, columns = int(grid["dimensions"]["rows"]), int(grid["dimensions"]["columns"])
    width = view.get("viewport", {}).get("width", 390)
    height = view.get("viewport", {}).get("height", 844)
    cw, ch = width / columns, height / rows
    best = None
    row0 = min(rows, max(1, int(point[1] // ch) + 1))
    col0 = min(columns, max(1, int(point[0] // cw) + 1))
    for row in range(max(1, row0 - 1), min(rows, row0 + 1) + 1):
        for column in range(max(1, col0 - 1), min(columns, col0 + 1) + 1):
            for anchor, (dx, dy) in ANCHOR_OFFSETS.items():
                x = (column - 1 + 0.5 + dx) * cw
                y = (row - 1 + 0.5 + dy) * ch
                distance = (x - point[0]) ** 2 + (y - point[1]) ** 2
                if best is None or distance < best[0]:
                    best = (distance, row, column, anchor)
    assert best is not None  # a lattice has at least one cell
    _, row, column, anchor = best
    return target_ref(grid, row, column, anchor)
