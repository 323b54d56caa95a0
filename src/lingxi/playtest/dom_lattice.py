"""Find grid boards among DOM elements: same-size boxes on a regular lattice.

Works from element rectangles only (no class names, no game knowledge), so a
board built from divs, buttons, images or SVG shapes is found the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import median

from lingxi.playtest.geometry import Grid

MIN_DIM = 3
MAX_DIM = 12
SIZE_TOLERANCE = 2.5  # px: boxes of one board differ by rounding only
POSITION_TOLERANCE = 3.0  # px: centres on one row/column
MIN_FILL = 0.75  # share of lattice positions that must hold an element


def _clusters(values: Sequence[float], tolerance: float) -> list[float]:
    """Centres of 1-D clusters of sorted values closer than ``tolerance``."""
    out: list[list[float]] = []
    for value in sorted(values):
        if out and value - out[-1][-1] <= tolerance:
            out[-1].append(value)
        else:
            out.append([value])
    return [sum(c) / len(c) for c in out]


def _regular_pitch(centres: Sequence[float], size: float) -> float | None:
    """The common spacing of ``centres`` if it is regular and fits cells of ``size``."""
    if len(centres) < 2:
        return None
    steps = [b - a for a, b in zip(centres, centres[1:], strict=False)]
    pitch = (centres[-1] - centres[0]) / (len(centres) - 1)
    if pitch < size * 0.9 or pitch > size * 1.7:
        return None
    if any(abs(step - pitch) > max(2.0, pitch * 0.12) for step in steps):
        return None
    return pitch


def _size_groups(rects: Iterable[tuple[float, float, float, float]]):
    groups: list[list[tuple[float, float, float, float]]] = []
    for rect in sorted(rects, key=lambda r: (r[2], r[3])):
        for group in groups:
            gw, gh = group[0][2], group[0][3]
            if abs(rect[2] - gw) <= SIZE_TOLERANCE and abs(rect[3] - gh) <= SIZE_TOLERANCE:
                group.append(rect)
                break
        else:
            groups.append([rect])
    return groups


def _lattice_of(group: list[tuple[float, float, float, float]]) -> tuple[Grid, int] | None:
    width = median(r[2] for r in group)
    height = median(r[3] for r in group)
    centres = {(r[0] + r[2] / 2, r[1] + r[3] / 2) for r in group}
    xs = _clusters([c[0] for c in centres], POSITION_TOLERANCE)
    ys = _clusters([c[1] for c in centres], POSITION_TOLERANCE)
    if not (MIN_DIM <= len(xs) <= MAX_DIM and MIN_DIM <= len(ys) <= MAX_DIM):
        return None
    pitch_x = _regular_pitch(xs, width)
    pitch_y = _regular_pitch(ys, height)
    if pitch_x is None or pitch_y is None:
        return None
    occupied = set()
    for cx, cy in centres:
        column = round((cx - xs[0]) / pitch_x)
        row = round((cy - ys[0]) / pitch_y)
        occupied.add((row, column))
    if len(occupied) < MIN_FILL * len(xs) * len(ys):
        return None
    grid = Grid(xs[0] - pitch_x / 2, ys[0] - pitch_y / 2, pitch_x, pitch_y, len(ys), len(xs))
    return grid, len(occupied)


def find_dom_lattices(rects: Iterable[Sequence[float]]) -> list[Grid]:
    """Lattices (3–12 rows and columns) formed by same-size element boxes ``(x, y, w, h)``.

    Largest first; a lattice whose cells coincide with a larger one (an inner
    image of each tile, say) is dropped.
    """
    usable = [(float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in rects
              if r[2] >= 8 and r[3] >= 8]
    found: list[tuple[Grid, int]] = []
    for group in _size_groups(usable):
        if len(group) < MIN_DIM * MIN_DIM:
            continue
        lattice = _lattice_of(group)
        if lattice is not None:
            found.append(lattice)
    found.sort(key=lambda item: (-item[0].box.width * item[0].box.height, -item[1]))
    kept: list[Grid] = []
    for grid, _ in found:
        if any(same_board(grid, other) for other in kept):
            continue
        kept.append(grid)
    return kept


def same_board(a: Grid, b: Grid) -> bool:
    """True when two lattices overlap (one board's tiles and their children)."""
    ab, bb = a.box, b.box
    ix = min(ab.x + ab.width, bb.x + bb.width) - max(ab.x, bb.x)
    iy = min(ab.y + ab.height, bb.y + bb.height) - max(ab.y, bb.y)
    if ix <= 0 or iy <= 0:
        return False
    smaller = min(ab.width * ab.height, bb.width * bb.height)
    return ix * iy >= 0.5 * smaller
