"""Adapter to ``lingxi.actor.vision.find_lattice`` for boards drawn on a canvas."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from lingxi.playtest.catalog import PixelLatticeFinder
from lingxi.playtest.dom_lattice import MAX_DIM, MIN_DIM
from lingxi.playtest.geometry import Grid

FrameFinder = Callable[[bytes], PixelLatticeFinder]


def vision_finder() -> FrameFinder | None:
    """``png -> (region -> Grid | None)`` backed by lingxi.actor.vision, or None if absent."""
    try:
        from lingxi.actor.vision import find_lattice
    except ImportError:
        return None

    def for_frame(png: bytes) -> PixelLatticeFinder:
        def find(region: tuple[int, int, int, int] | None) -> Grid | None:
            lattice = find_lattice(png, region=region)
            if lattice is None:
                return None
            rows, columns = int(lattice.rows), int(lattice.columns)
            if not (MIN_DIM <= rows <= MAX_DIM and MIN_DIM <= columns <= MAX_DIM):
                return None
            return Grid(float(lattice.x), float(lattice.y), lattice.width / columns,
                        lattice.height / rows, rows, columns)
        return find

    return for_frame


def vision_kinds() -> Callable[[np.ndarray, Grid], list[int]] | None:
    """``(image, grid) -> kind sizes`` from lingxi.actor.vision.classify_cells, or None."""
    try:
        from lingxi.actor.vision import Lattice, classify_cells
    except ImportError:
        return None

    def kinds(image: np.ndarray, grid: Grid) -> list[int]:
        lattice = Lattice(int(round(grid.x)), int(round(grid.y)),
                          int(round(grid.cell_width * grid.columns)),
                          int(round(grid.cell_height * grid.rows)), grid.rows, grid.columns)
        counts = Counter(kind for row in classify_cells(image, lattice) for kind in row)
        return sorted(counts.values(), reverse=True)

    return kinds
