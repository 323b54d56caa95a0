"""The loop's per-step savings keep what it computes: a PNG decoded once is the same
array, a diff of the changed rows is the whole frame's diff, the layout read as text is
the layout (issue 22.5)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from lingxi.playtest.browser import _snapshot_value
from lingxi.playtest.frames import PIXEL_THRESHOLD, decode, frame_change
from lingxi.playtest.motion import Motion, changed_pixels, significant


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def _frame(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (844, 390, 3), dtype=np.uint8)


def test_the_same_png_bytes_decode_to_one_read_only_array():
    pixels = _frame(1)
    png = _png(pixels)
    first = decode(png)
    assert np.array_equal(first, pixels)
    assert decode(bytes(bytearray(png))) is first  # equal bytes, another object
    with pytest.raises(ValueError):
        first[0, 0, 0] = 1  # shared: nobody may write into it


def test_another_png_is_decoded_anew():
    a, b = _png(_frame(2)), _png(_frame(3))
    assert decode(a) is not decode(b)
    assert np.array_equal(decode(b), np.asarray(Image.open(io.BytesIO(b)).convert("RGB")))


def _full_diff(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.abs(before.astype(np.int16) - after.astype(np.int16)).sum(axis=2) > PIXEL_THRESHOLD


@pytest.mark.parametrize("rows", [(0, 1), (300, 420), (843, 844), (0, 844), (10, 11)])
def test_the_diff_of_the_changed_rows_is_the_whole_frames_diff(rows):
    before = _frame(4)
    after = before.copy()
    top, bottom = rows
    after[top:bottom, 40:200] = 255 - after[top:bottom, 40:200]
    after[top:bottom, 300] = after[top:bottom, 300] // 2 + 3  # small changes, some under
    assert np.array_equal(changed_pixels(before, after), _full_diff(before, after))
    assert frame_change(before, after) is not None


def test_identical_frames_have_no_change():
    before = _frame(5)
    assert not changed_pixels(before, before.copy()).any()
    assert frame_change(before, before.copy()) is None
    assert not Motion().moving(before, before)


def test_significance_reads_the_same_regions_in_the_changed_extent():
    diff = np.zeros((844, 390), dtype=bool)
    diff[500:510, 100:114] = True  # 140 px: a twinkle
    diff[10, 10] = True
    assert not significant(diff)
    diff[500:510, 114] = True  # 150 px in one region
    assert significant(diff)
    spread = np.zeros((844, 390), dtype=bool)
    spread[::4, ::4] = True  # many one-pixel changes: no region of 150
    assert not significant(spread)


def test_the_layout_text_reads_back_as_numbers():
    text = ('{"interactive":[[0,"-0",12.5,44]],"boxes":[[1.5,2,3,4],["-0",0,8,8]],'
            '"canvases":[]}')
    snap = _snapshot_value(text)
    assert snap == {"interactive": [[0, 0.0, 12.5, 44]], "boxes": [[1.5, 2, 3, 4], [0.0, 0, 8, 8]],
                    "canvases": []}
    minus = snap["boxes"][1][0]
    assert isinstance(minus, float) and np.signbit(minus)
    assert isinstance(snap["boxes"][0][1], int)


@pytest.mark.parametrize("value", [None, 3, {"boxes": []}, "not json", "[1, 2"])
def test_a_layout_that_is_not_the_scripts_text_is_no_layout(value):
    assert _snapshot_value(value) is None
