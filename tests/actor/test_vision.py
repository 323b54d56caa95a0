"""find_lattice / classify_cells on synthetic boards of many styles and sizes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from lingxi.actor.vision import Lattice, classify_cells, find_lattice, load_image

from .synth import EMOJI_FONT, Style, random_kinds, render

STYLES = {
    "tiles-gap": Style(),
    "tiles-touching": Style(gap=0, radius=0),
    "touching-dark-page": Style(gap=0, radius=0, panel=None, page=(20, 20, 30)),
    "circles-light-panel": Style(shape="circle", panel=(240, 230, 200), page=(60, 120, 80), palette="candy"),
    "gems-in-wells": Style(shape="gem", cell_bg=(52, 42, 92), panel=(27, 20, 51), page=(18, 13, 36)),
    "emoji-in-wells": Style(shape="emoji", cell_bg=(250, 245, 235), panel=(200, 180, 150), gap=4),
    "emoji-bare": Style(shape="emoji", panel=(40, 40, 60), gap=2, score_bar=False),
    "letters-on-tiles": Style(shape="glyph", palette="muted", gap=3, radius=4),
    "round-white-page": Style(radius=14, gap=8, palette="candy", page=(255, 255, 255), panel=None),
    "gems-on-checker": Style(shape="gem", cell_bg=(30, 30, 60), checker=(200, 60, 60), gap=0, radius=0),
    "emoji-on-checker": Style(shape="emoji", cell_bg=(255, 255, 255), checker=(120, 120, 120), gap=0,
                              radius=0),
}

CASES = [
    ("tiles-gap", 8, 8, 6), ("tiles-gap", 5, 5, 4), ("tiles-touching", 8, 8, 6),
    ("tiles-touching", 10, 10, 5), ("touching-dark-page", 7, 6, 6), ("circles-light-panel", 9, 9, 6),
    ("circles-light-panel", 6, 7, 5), ("gems-in-wells", 8, 8, 6), ("gems-in-wells", 10, 10, 6),
    ("emoji-in-wells", 8, 8, 6), ("emoji-bare", 6, 7, 6), ("letters-on-tiles", 8, 8, 6),
    ("round-white-page", 5, 5, 5), ("round-white-page", 7, 9, 6), ("gems-on-checker", 8, 8, 6),
    ("emoji-on-checker", 8, 8, 6), ("emoji-on-checker", 6, 6, 6),
]


def _board(style: str, rows: int, columns: int, kinds: int):
    if STYLES[style].shape == "emoji" and not EMOJI_FONT.exists():
        pytest.skip("fonts-noto-color-emoji is not installed (make browser installs it)")
    pitch = min(360 // columns, 420 // rows)
    truth_kinds = random_kinds(rows, columns, kinds, seed=rows * 100 + columns * 10 + kinds)
    png, truth = render(truth_kinds, pitch=pitch, origin=((390 - columns * pitch) // 2, 130),
                        style=STYLES[style])
    return png, truth, truth_kinds


def _same_partition(got: list[list[int]], want: list[list[int]]) -> bool:
    forward: dict[int, int] = {}
    backward: dict[int, int] = {}
    for g_row, w_row in zip(got, want, strict=True):
        for g, w in zip(g_row, w_row, strict=True):
            if forward.setdefault(g, w) != w or backward.setdefault(w, g) != g:
                return False
    return True


@pytest.mark.parametrize(("style", "rows", "columns", "kinds"), CASES)
def test_finds_board_and_kinds_without_hints(style, rows, columns, kinds):
    png, truth, truth_kinds = _board(style, rows, columns, kinds)
    lattice = find_lattice(png)
    assert lattice is not None
    assert (lattice.rows, lattice.columns) == (rows, columns)
    assert abs(lattice.x - truth.x) <= 3 and abs(lattice.y - truth.y) <= 3
    assert abs(lattice.pitch_x - truth.pitch) <= 0.5 and abs(lattice.pitch_y - truth.pitch) <= 0.5
    assert _same_partition(classify_cells(png, lattice), truth_kinds)


def test_hints_force_the_size_and_keep_the_position():
    png, truth, _ = _board("tiles-touching", 8, 8, 6)
    lattice = find_lattice(png, rows=8, columns=8)
    assert lattice is not None and (lattice.rows, lattice.columns) == (8, 8)
    assert abs(lattice.x - truth.x) <= 3


def test_hint_picks_a_window_when_two_boards_stack():
    # A 3-row "shelf" of pieces right under the board, aligned with its columns:
    # without hints it is part of the grid; the hint keeps only the 8 board rows.
    kinds = random_kinds(11, 8, 6, seed=5)
    png, truth = render(kinds, pitch=44, origin=(19, 100), style=Style())
    lattice = find_lattice(png, rows=8, columns=8)
    assert lattice is not None and (lattice.rows, lattice.columns) == (8, 8)


def test_region_limits_the_search_and_offsets_coordinates():
    png, truth, _ = _board("gems-in-wells", 8, 8, 6)
    region = (0, int(truth.y) - 20, 390, 8 * int(truth.pitch) + 40)
    lattice = find_lattice(png, region=region)
    assert lattice is not None and (lattice.rows, lattice.columns) == (8, 8)
    assert abs(lattice.y - truth.y) <= 3
    # A region that contains only the score bar has no board.
    assert find_lattice(png, region=(0, 0, 390, 90)) is None


def _png(draw_fn) -> bytes:
    img = Image.new("RGB", (390, 844), (250, 250, 250))
    draw_fn(ImageDraw.Draw(img))
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("name", ["blank", "text", "buttons", "noise"])
def test_no_board_means_none(name):
    def paint(d: ImageDraw.ImageDraw) -> None:
        if name == "text":
            for i in range(30):
                d.text((20, 20 + 25 * i), "Lorem ipsum dolor sit amet, consectetur", fill=(0, 0, 0))
        elif name == "buttons":
            for i in range(4):
                d.rounded_rectangle((20 + 90 * i, 700, 90 + 90 * i, 740), radius=8, fill=(40, 120, 220))
            d.rectangle((20, 100, 370, 300), fill=(200, 60, 60))
    png = _png(paint)
    if name == "noise":
        rng = np.random.default_rng(3)
        img = rng.integers(0, 255, size=(844, 390, 3), dtype=np.uint8)
        assert find_lattice(img) is None
    else:
        assert find_lattice(png) is None


def test_lattice_geometry_is_one_based():
    lattice = Lattice(x=10, y=100, width=80, height=40, rows=2, columns=4)
    assert lattice.cell_center(1, 1) == (20, 110)
    assert lattice.cell_center(2, 4) == (80, 130)
    with pytest.raises(IndexError):
        lattice.cell_center(0, 1)
    with pytest.raises(IndexError):
        lattice.cell_center(1, 5)


def test_cell_colors_reads_tile_colours():
    kinds = [[0, 1, 2], [3, 4, 5], [0, 1, 2]]
    png, truth = render(kinds, pitch=60, origin=(100, 200), style=Style(score_bar=False, footer_text=False))
    lattice = Lattice(x=100, y=200, width=180, height=180, rows=3, columns=3)
    colours = lattice.cell_colors(png)
    assert colours.shape == (3, 3, 3)
    assert np.allclose(colours[0, 0], (231, 76, 60), atol=2)
    assert np.allclose(colours[1, 1], (155, 89, 182), atol=2)


def test_load_image_accepts_bytes_path_pil_and_rgba(tmp_path):
    img = Image.new("RGBA", (4, 3), (0, 0, 0, 0))
    out = io.BytesIO()
    img.save(out, format="PNG")
    arr = load_image(out.getvalue())
    assert arr.shape == (3, 4, 3) and (arr == 255).all()   # transparency reads as white
    path = tmp_path / "x.png"
    path.write_bytes(out.getvalue())
    assert load_image(path).shape == (3, 4, 3)
    assert load_image(img).shape == (3, 4, 3)
    with pytest.raises(TypeError):
        load_image(42)


@pytest.mark.parametrize(("n", "pitch"), [(5, 72), (6, 60), (8, 45)])
def test_small_pieces_in_large_cells(n, pitch):
    # Dots of 38 % of the pitch, no tiles or wells: the pieces alone make the lattice.
    import random

    rng = random.Random(n)
    palette = [(230, 60, 60), (60, 160, 60), (60, 90, 220), (230, 180, 30), (150, 60, 190)]
    kinds = [[rng.randrange(5) for _ in range(n)] for _ in range(n)]
    ox, oy = (390 - n * pitch) // 2, 150

    def paint(d: ImageDraw.ImageDraw) -> None:
        for r in range(n):
            for c in range(n):
                cx, cy, rad = ox + c * pitch + pitch / 2, oy + r * pitch + pitch / 2, pitch * 0.19
                d.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), fill=palette[kinds[r][c]])

    png = _png(paint)
    lattice = find_lattice(png)
    assert lattice is not None and (lattice.rows, lattice.columns) == (n, n)
    assert abs(lattice.x - ox) <= 3 and abs(lattice.y - oy) <= 3
    assert _same_partition(classify_cells(png, lattice), kinds)


@pytest.mark.parametrize(("style", "rows", "columns", "kinds"), CASES[:6])
def test_cell_features_blur_only_the_board_and_read_the_same(style, rows, columns, kinds,
                                                            monkeypatch):
    # the blur of the board's box alone gives the features of the whole frame's blur
    from scipy import ndimage

    from lingxi.actor import vision

    png, _, _ = _board(style, rows, columns, kinds)
    image = load_image(png)
    lattice = find_lattice(image)
    assert lattice is not None
    got = vision.cell_features(image, lattice)
    kinds_got = classify_cells(image, lattice)
    monkeypatch.setattr(vision, "_blurred", lambda pix, _lattice: ndimage.uniform_filter(
        pix.astype(np.float32), size=(3, 3, 1)))
    want = vision.cell_features(image, lattice)
    assert np.array_equal(got, want)
    assert vision.classify_cells(image, lattice) == kinds_got


def _features_cell_by_cell(image, lattice, grid=3, inner=0.5, ignore_well=True):
    """cell_features as it was written first: one cell at a time, numpy's array_split."""
    from lingxi.actor import vision

    img = vision._blurred(load_image(image), lattice)
    height, width = img.shape[:2]
    wells = vision._well_colours(img, lattice) if ignore_well else []
    feats = []
    for r in range(1, lattice.rows + 1):
        for c in range(1, lattice.columns + 1):
            cx, cy = lattice.cell_center(r, c)
            half_w = max(1, int(lattice.pitch_x * inner / 2))
            half_h = max(1, int(lattice.pitch_y * inner / 2))
            patch = img[max(cy - half_h, 0):min(cy + half_h, height),
                        max(cx - half_w, 0):min(cx + half_w, width)]
            if patch.size == 0:
                feats.append(np.zeros(grid * grid * 3, dtype=np.float32))
                continue
            if wells:
                background = np.zeros(patch.shape[:2], dtype=bool)
                for well in wells:
                    background |= np.abs(patch - well).max(axis=2) < vision.WELL_DISTANCE
                if background.mean() <= 0.85:
                    patch = np.where(background[..., None], np.float32(128.0), patch)
            parts = [block.reshape(-1, 3).mean(axis=0) if block.size else np.zeros(3)
                     for band in np.array_split(patch, grid, axis=0)
                     for block in np.array_split(band, grid, axis=1)]
            feats.append(np.concatenate(parts))
    return np.asarray(feats, dtype=np.float32)


@pytest.mark.parametrize(("style", "rows", "columns", "kinds"),
                         [CASES[0], CASES[5], CASES[7], CASES[9], CASES[14]])
@pytest.mark.parametrize("shift", [0, -30])
def test_cell_features_of_all_cells_at_once_are_those_of_each_cell(style, rows, columns, kinds,
                                                                  shift):
    """The cells' central areas are read as one stack (and a cell the frame's edge cuts on
    its own): bit for bit the features of reading each cell by itself, with wells or not;
    ``shift`` moves the lattice so the first column's areas are cut by the frame's edge."""
    from lingxi.actor import vision

    png, _, _ = _board(style, rows, columns, kinds)
    image = load_image(png)
    lattice = find_lattice(image)
    assert lattice is not None
    lattice = Lattice(x=lattice.x + shift, y=lattice.y, width=lattice.width,
                      height=lattice.height, rows=lattice.rows, columns=lattice.columns)
    for wells in (True, False):
        got = vision.cell_features(image, lattice, ignore_well=wells)
        want = _features_cell_by_cell(image, lattice, ignore_well=wells)
        assert got.shape == want.shape and np.array_equal(got, want)
    cut = lattice.cell_center(1, 1)[0] - int(lattice.pitch_x * 0.5 / 2) < 0
    assert cut == (shift != 0)  # the first column's areas are cut when shifted
