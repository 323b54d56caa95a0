"""What moves on its own: the idle mask, and changes measured against it.

Games animate without input (FPS counters, idle sparkles, a cursor blink). To
tell a response from that, the harness keeps a mask of 8×8-pixel blocks that
were seen changing while nobody touched the game (an *idle probe*, or the tail
of a settle that never came to rest). Everything here compares decoded frames
(H×W×3 uint8) and ignores masked blocks.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from lingxi.playtest.frames import changed_mask
from lingxi.playtest.geometry import Box, Grid

BLOCK = 8
# short timers pending, DOM mutations, bridge events (counts); a browser page adds a fourth,
# what is scheduled on the virtual clock at all (settle.nothing_scheduled)
Activity = tuple[int, ...]
TIMERS, MUTATIONS, EVENTS, SCHEDULED = 0, 1, 2, 3
MIN_MOTION_PX = 150  # a connected change smaller than this is a twinkle, not the game moving
CELL_CHANGED = 0.2  # share of a cell's central part that must change for the cell to count


def changed_pixels(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """H×W bool: pixels whose summed RGB difference exceeds the frame threshold."""
    if before.shape != after.shape:
        return np.ones(after.shape[:2], dtype=bool)
    return changed_mask(before, after)


def blocks_of(pixels: np.ndarray) -> np.ndarray:
    """Block-level any() of a pixel mask (blocks at the edge may be partial)."""
    h, w = pixels.shape
    bh, bw = -(-h // BLOCK), -(-w // BLOCK)
    padded = np.zeros((bh * BLOCK, bw * BLOCK), dtype=bool)
    padded[:h, :w] = pixels
    return np.asarray(padded.reshape(bh, BLOCK, bw, BLOCK).any(axis=(1, 3)))


def _active(before: Activity | None, after: Activity | None) -> set[int]:
    """The page signals active over a chunk: timers pending at its end, mutations or
    events during it (nothing when the page gave no reading)."""
    if after is None:
        return set()
    out = {TIMERS} if after[TIMERS] > 0 else set()
    if before is not None:
        out |= {i for i in (MUTATIONS, EVENTS) if after[i] != before[i]}
    return out


def _dilate(blocks: np.ndarray) -> np.ndarray:
    out = blocks.copy()
    out[1:, :] |= blocks[:-1, :]
    out[:-1, :] |= blocks[1:, :]
    rows = out.copy()
    out[:, 1:] |= rows[:, :-1]
    out[:, :-1] |= rows[:, 1:]
    return out


class Motion:
    """The idle mask of one run, and change tests that ignore it."""

    def __init__(self) -> None:
        self.idle: np.ndarray | None = None  # blocks
        self.idle_event_types: set[str] = set()
        # page signals seen without input (timers pending, DOM mutations, bridge events):
        # those cannot tell a busy game from an idle one, so settling ignores them
        self.idle_signals: set[int] = set()
        self._mask: tuple[np.ndarray, tuple[int, int], np.ndarray] | None = None

    def learn_activity(self, before: Activity | None, after: Activity | None) -> None:
        """Note which page signals were active in a chunk without input (idle probe)."""
        for signal in _active(before, after):
            self.idle_signals.add(signal)

    def quiet(self, before: Activity | None, after: Activity | None) -> bool:
        """True when the page did nothing in the chunk that it does not do when idle."""
        return not (_active(before, after) - self.idle_signals)

    def learn(self, frames: Iterable[np.ndarray], event_types: Iterable[str] = ()) -> int:
        """Add what changed between consecutive ``frames`` (no input) to the mask."""
        self.idle_event_types.update(event_types)
        previous = None
        for frame in frames:
            if previous is not None:
                blocks = _dilate(blocks_of(_large_parts(changed_pixels(previous, frame))))
                self.idle = blocks if self.idle is None else (self.idle | blocks)
            previous = frame
        return self.idle_blocks

    @property
    def idle_blocks(self) -> int:
        return 0 if self.idle is None else int(self.idle.sum())

    def idle_fraction(self) -> float:
        return 0.0 if self.idle is None else round(float(self.idle.mean()), 4)

    def mask_pixels(self, shape: tuple[int, ...]) -> np.ndarray | None:
        """The idle mask in pixels (made once per mask and frame size, then reused)."""
        if self.idle is None or not self.idle.any():
            return None
        h, w = shape[:2]
        cached = self._mask
        if cached is not None and cached[0] is self.idle and cached[1] == (h, w):
            return cached[2]
        mask = np.repeat(np.repeat(self.idle, BLOCK, axis=0), BLOCK, axis=1)[:h, :w]
        mask.flags.writeable = False
        self._mask = (self.idle, (h, w), mask)
        return mask

    def changes(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Changed pixels outside the idle mask."""
        diff = changed_pixels(before, after)
        mask = self.mask_pixels(diff.shape)
        return diff if mask is None else diff & ~mask

    def moving(self, before: np.ndarray, after: np.ndarray) -> bool:
        return significant(self.changes(before, after))


def _extent(diff: np.ndarray) -> tuple[slice, slice]:
    """The bounding rows and columns of the set pixels of ``diff`` (some are set): regions
    found there are those of the whole mask, for less labelling."""
    rows = np.flatnonzero(diff.any(axis=1))
    columns = np.flatnonzero(diff.any(axis=0))
    return slice(int(rows[0]), int(rows[-1]) + 1), slice(int(columns[0]), int(columns[-1]) + 1)


def _large_parts(diff: np.ndarray) -> np.ndarray:
    """``diff`` without its connected regions smaller than MIN_MOTION_PX (twinkles are
    ignored anyway, and masking them would blind the harness where they fell)."""
    if int(diff.sum()) < MIN_MOTION_PX:
        return np.zeros_like(diff)
    from scipy import ndimage

    where = _extent(diff)
    labels, count = ndimage.label(diff[where])
    sizes = np.bincount(labels.ravel())
    sizes[0] = 0
    out = np.zeros_like(diff)
    out[where] = sizes[labels] >= MIN_MOTION_PX
    return out


def significant(diff: np.ndarray) -> bool:
    """True when some connected region of changed pixels has at least MIN_MOTION_PX pixels.

    Sparkles, a blinking caret or a digit of a counter change a few dozen pixels; a tile
    that slides, a highlight round a cell or a new screen change far more."""
    if int(diff.sum()) < MIN_MOTION_PX:
        return False
    from scipy import ndimage

    labels, count = ndimage.label(diff[_extent(diff)])
    return count > 0 and int(np.bincount(labels.ravel())[1:].max()) >= MIN_MOTION_PX


def changed_cells(diff: np.ndarray, grid: Grid) -> set[tuple[int, int]]:
    """1-based cells of ``grid`` whose central half changed in the pixel mask ``diff``."""
    out = set()
    h, w = diff.shape
    for row in range(1, grid.rows + 1):
        for column in range(1, grid.columns + 1):
            box = grid.cell_box(row, column)
            x0, x1 = int(max(0, box.x + box.width * 0.25)), int(min(w, box.x + box.width * 0.75))
            y0, y1 = int(max(0, box.y + box.height * 0.25)), int(min(h, box.y + box.height * 0.75))
            if x1 > x0 and y1 > y0 and diff[y0:y1, x0:x1].mean() >= CELL_CHANGED:
                out.add((row, column))
    return out


def marked_cells(diff: np.ndarray, grid: Grid) -> set[tuple[int, int]]:
    """Cells of ``grid`` a selection marks in ``diff``: those whose central half changed
    (a fill, a glow, a lifted tile), or else the one cell whose box, grown by a quarter of
    a cell, holds every changed pixel (an outline drawn on the cell's border, which leaves
    its centre as it was: a third-party canvas game strokes the selected cell's edge)."""
    cells = changed_cells(diff, grid)
    if cells or not significant(diff):
        return cells
    ys, xs = np.nonzero(diff)
    cx = (float(xs.min()) + float(xs.max())) / 2
    cy = (float(ys.min()) + float(ys.max())) / 2
    row = int((cy - grid.y) // grid.cell_height) + 1
    column = int((cx - grid.x) // grid.cell_width) + 1
    if not grid.has_cell(row, column):
        return set()
    box = grid.cell_box(row, column)
    if inside(diff, box, margin=max(box.width, box.height) / 4):
        return {(row, column)}
    return set()


def inside(diff: np.ndarray, box: Box, margin: float = 4.0) -> bool:
    """True when every changed pixel of ``diff`` lies within ``box`` (grown by ``margin``)."""
    ys, xs = np.nonzero(diff)
    if xs.size == 0:
        return True
    return bool(xs.min() >= box.x - margin and xs.max() <= box.x + box.width + margin
                and ys.min() >= box.y - margin and ys.max() <= box.y + box.height + margin)
