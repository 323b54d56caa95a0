"""Standard Match-3 boards and their anonymous swap-pair candidates.

A lattice counts as a standard Match-3 board when it has 5–12 rows and
columns and its cells show 3–8 clearly different tile colours, none covering
most of the board (a blank or single-colour grid is not a Match-3 board).
Candidates are every adjacent pair, shuffled with the run's seed, so their
order and ids say nothing about which swaps match.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from lingxi.actor.actors.match3 import adjacent_pairs
from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.playtest.geometry import Grid

MIN_SIDE = 5
MAX_SIDE = 12
MIN_KINDS = 3
MAX_KINDS = 8
COLOUR_DISTANCE = 48.0  # RGB distance under which two cells count as the same tile kind
MAX_DOMINANT_SHARE = 0.6


def cell_colours(image: np.ndarray, grid: Grid) -> np.ndarray:
    """rows×columns×3 mean RGB of the central part of each cell of ``grid`` in ``image``."""
    out = np.zeros((grid.rows, grid.columns, 3), dtype=float)
    height, width = image.shape[:2]
    for row in range(1, grid.rows + 1):
        for column in range(1, grid.columns + 1):
            box = grid.cell_box(row, column)
            x0 = int(max(0, box.x + box.width * 0.3))
            x1 = int(min(width, box.x + box.width * 0.7))
            y0 = int(max(0, box.y + box.height * 0.3))
            y1 = int(min(height, box.y + box.height * 0.7))
            if x1 <= x0 or y1 <= y0:
                continue
            out[row - 1, column - 1] = image[y0:y1, x0:x1, :3].reshape(-1, 3).mean(axis=0)
    return out


def colour_kinds(colours: np.ndarray) -> list[int]:
    """Group cell colours greedily; the size of each group, largest first."""
    centroids: list[np.ndarray] = []
    counts: list[int] = []
    for colour in colours.reshape(-1, 3):
        for index, centroid in enumerate(centroids):
            if float(np.linalg.norm(colour - centroid)) <= COLOUR_DISTANCE:
                counts[index] += 1
                centroids[index] = centroid + (colour - centroid) / counts[index]
                break
        else:
            centroids.append(colour.astype(float))
            counts.append(1)
    return sorted(counts, reverse=True)


def is_standard_board(image: np.ndarray, grid: Grid,
                      classify: Callable[[np.ndarray, Grid], list[int]] | None = None) -> bool:
    """True when ``grid`` over ``image`` looks like a standard Match-3 board.

    The cells' mean colours are grouped first (cheap); when that does not show a
    board and ``classify`` is given (sizes of tile kinds, largest first, e.g.
    from lingxi.actor.vision), it gets the last word.
    """
    if not (MIN_SIDE <= grid.rows <= MAX_SIDE and MIN_SIDE <= grid.columns <= MAX_SIDE):
        return False
    if _looks_standard(colour_kinds(cell_colours(image, grid)), grid):
        return True
    return classify is not None and _looks_standard(classify(image, grid), grid)


def _looks_standard(kinds: list[int], grid: Grid) -> bool:
    cells = grid.rows * grid.columns
    real = [k for k in kinds if k >= 2]  # a lone odd cell is a highlight, not a tile kind
    return MIN_KINDS <= len(real) <= MAX_KINDS and kinds[0] <= MAX_DOMINANT_SHARE * cells


def swap_candidates(lattice_id: str, rows: int, columns: int, seed: int) -> list[dict[str, Any]]:
    """Anonymous swap candidates ``ms000…`` for a rows×columns board, shuffled with ``seed``."""
    pairs = adjacent_pairs(rows, columns)
    rng = random.Random(f"lingxi.match3:{seed}:{rows}x{columns}")
    rng.shuffle(pairs)
    out = []
    for index, (a, b) in enumerate(pairs):
        if rng.random() < 0.5:
            a, b = b, a
        out.append({
            "candidateId": f"ms{index:03d}",
            "latticeId": lattice_id,
            "pair": [{"cell": {"row": a[0], "column": a[1]}},
                     {"cell": {"row": b[0], "column": b[1]}}],
        })
    return out


def candidate_set(candidates: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``match3Swaps`` object of a view: candidates and their set hash."""
    return {"candidateSetHash": sha256_hex(canonical_bytes(candidates)), "candidates": candidates}
