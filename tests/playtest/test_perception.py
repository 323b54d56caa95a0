"""DOM lattices, the target catalog, Match-3 boards and swap candidates (no browser)."""

from __future__ import annotations

import random

import numpy as np

from lingxi.playtest.catalog import MAX_TARGETS, build_catalog
from lingxi.playtest.dom_lattice import find_dom_lattices
from lingxi.playtest.geometry import Grid
from lingxi.playtest.match3 import (
    adjacent_pairs,
    candidate_set,
    is_standard_board,
    swap_candidates,
)

from .fakes import board_rects


def grid_rects(rows, columns, x0=20.0, y0=200.0, pitch=44.0, size=40.0):
    return [[x0 + c * pitch, y0 + r * pitch, size, size] for r in range(rows) for c in range(columns)]


def test_finds_8x8_board_with_gaps_and_fractional_sizes():
    rects = grid_rects(8, 8, x0=15.5, pitch=44.25, size=41.5)
    (grid,) = find_dom_lattices(rects)
    assert (grid.rows, grid.columns) == (8, 8)
    assert abs(grid.cell_width - 44.25) < 0.01
    centre = grid.cell_box(8, 8).anchor()
    assert abs(centre[0] - (15.5 + 7 * 44.25 + 20.75)) <= 1


def test_inner_elements_of_tiles_do_not_make_a_second_board():
    rects = grid_rects(6, 7) + grid_rects(6, 7, x0=26, y0=206, size=28)
    lattices = find_dom_lattices(rects)
    assert len(lattices) == 1 and lattices[0].columns == 7


def test_non_square_and_sparse_boards():
    rects = grid_rects(5, 9)
    rects.pop(10)  # a hole (one cleared tile)
    (grid,) = find_dom_lattices(rects)
    assert (grid.rows, grid.columns) == (5, 9)


def test_not_lattices():
    assert find_dom_lattices([[0, 100 + 50 * i, 300, 40] for i in range(10)]) == []  # a list
    assert find_dom_lattices(grid_rects(2, 8)) == []  # too few rows
    assert find_dom_lattices(grid_rects(13, 5, pitch=30, size=28)) == []  # too many rows
    jittered = [[r[0] + random.Random(i).choice([0, 17]), r[1], r[2], r[3]]
                for i, r in enumerate(grid_rects(6, 6))]
    assert find_dom_lattices(jittered) == []
    assert find_dom_lattices([]) == []


def test_catalog_order_cap_and_hash():
    buttons = [[10 + (i % 5) * 70, 600 + (i // 5) * 30, 60, 24] for i in range(40)]
    snap = {"interactive": buttons + [[25, 205, 30, 30]], "boxes": board_rects(), "canvases": []}
    catalog = build_catalog(snap)
    ids = [t.id for t in catalog.targets]
    assert len(ids) == MAX_TARGETS
    assert ids[0] == "l00" and ids[1] == "r00" and ids[-1] == "g01"
    assert ids.count("g01") == 1
    # the interactive element inside the board is covered by the lattice, not a region
    assert all(not (t.kind == "region" and t.box.y < 600) for t in catalog.targets)
    view = catalog.view("frames/action-1-pre.png", "a" * 64)
    assert view["targets"][-1] == {"id": "g01", "kind": "spatial_grid",
                                   "allowedGestures": ["tap", "drag"],
                                   "dimensions": {"rows": 17, "columns": 8},
                                   "subAnchors": view["targets"][-1]["subAnchors"],
                                   "fallbackOnly": True}
    moved = build_catalog({**snap, "boxes": [[x + 3, y, w, h] for x, y, w, h in board_rects()]})
    assert moved.target_set_hash != catalog.target_set_hash
    assert build_catalog(snap).target_set_hash == catalog.target_set_hash


def test_empty_page_still_has_the_fallback_grid():
    catalog = build_catalog({})
    assert [t.id for t in catalog.targets] == ["g01"]


def test_canvas_goes_to_the_pixel_finder_and_becomes_a_lattice():
    seen = []

    def finder(region):
        seen.append(region)
        return Grid(region[0] + 5, region[1] + 5, 40, 40, 8, 8)

    catalog = build_catalog({"canvases": [[10, 150, 370, 400]], "interactive": []}, finder)
    assert seen == [(10, 150, 370, 400)]
    assert [(t.id, t.source) for t in catalog.targets] == [("l00", "pixels"), ("g01", "viewport")]


def test_background_canvas_does_not_duplicate_a_dom_board():
    snap = {"boxes": board_rects(), "canvases": [[0, 0, 390, 844]]}
    catalog = build_catalog(snap, lambda region: Grid(13.5, 198, 45, 45, 8, 8))
    assert [t.id for t in catalog.targets] == ["l00", "r00", "g01"]
    assert catalog.by_id["l00"].source == "dom"


def test_canvas_without_a_board_is_a_drag_region():
    catalog = build_catalog({"canvases": [[0, 0, 390, 844]]}, lambda region: None)
    assert [(t.id, t.gestures) for t in catalog.targets] == [("r00", ("tap", "drag")),
                                                              ("g01", ("tap", "drag"))]


def test_swap_candidates_every_adjacent_pair_once_seeded():
    first = swap_candidates("l00", 8, 8, seed=1)
    assert len(first) == 112
    assert [c["candidateId"] for c in first] == [f"ms{i:03d}" for i in range(112)]
    pairs = {frozenset((e["cell"]["row"], e["cell"]["column"]) for e in c["pair"]) for c in first}
    assert pairs == {frozenset(p) for p in adjacent_pairs(8, 8)}
    assert swap_candidates("l00", 8, 8, seed=1) == first
    assert swap_candidates("l00", 8, 8, seed=2) != first
    assert len(swap_candidates("l00", 12, 12, seed=1)) == 264
    assert candidate_set(first)["candidateSetHash"] == candidate_set(list(first))["candidateSetHash"]


def test_candidate_order_says_nothing_about_position():
    first = swap_candidates("l00", 8, 8, seed=3)
    rows = [c["pair"][0]["cell"]["row"] for c in first[:20]]
    assert rows != sorted(rows)


def _board_image(kinds_grid, colours):
    image = np.full((844, 390, 3), 240, dtype=np.uint8)
    for r, row in enumerate(kinds_grid):
        for c, kind in enumerate(row):
            image[200 + r * 45: 240 + r * 45, 15 + c * 45: 55 + c * 45] = colours[kind]
    return image


def test_standard_board_needs_several_tile_kinds():
    grid = Grid(13, 198, 45, 45, 8, 8)
    colours = [(220, 40, 40), (40, 170, 60), (40, 90, 220), (240, 200, 30), (160, 60, 200)]
    rng = random.Random(4)
    mixed = [[rng.randrange(5) for _ in range(8)] for _ in range(8)]
    assert is_standard_board(_board_image(mixed, colours), grid)
    blank = [[0] * 8 for _ in range(8)]
    assert not is_standard_board(_board_image(blank, colours), grid)
    two = [[(r + c) % 2 for c in range(8)] for r in range(8)]  # a chessboard
    assert not is_standard_board(_board_image(two, colours), grid)
    assert not is_standard_board(_board_image(mixed, colours), Grid(13, 198, 45, 45, 4, 4))
    assert is_standard_board(_board_image(blank, colours), grid, lambda image, g: [20, 20, 24])
