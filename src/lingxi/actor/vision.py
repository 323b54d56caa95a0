"""Pixel analysis for grid boards: find a regular lattice of cells in a frame.

Used by the greedy Match-3 actor (which sees only the frame and the view) and by
the harness for boards drawn on a <canvas>. Nothing here knows a particular
game: a board is found as a regular, periodic arrangement of similar-sized
blobs, then each cell's colours are clustered into anonymous kinds.

How a lattice is found (see docs/actors.md):

1. Two segmentations of the frame: connected regions of nearly uniform colour
   (pixels away from colour edges), and connected regions that differ from each
   of the dominant background colours. Tiles with gaps, tiles touching, rounded
   tiles, glyphs or emoji inside tiles all produce, in one of the two, a blob
   per cell (or per group of same-coloured neighbours).
2. Blobs of a plausible cell size are grouped by size; for each size group the
   pitch and phase are fitted from neighbour distances, and blobs sitting on
   the fitted grid vote for their cell. Blobs of merged neighbours vote for
   every cell they span when their edges sit on grid lines.
3. The largest contiguous block of voted cells is the lattice; the size group
   whose lattice has the most support wins. ``rows``/``columns`` hints pick a
   window of exactly that size.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from scipy import ndimage

__all__ = [
    "Lattice",
    "load_image",
    "share_decoded",
    "find_lattice",
    "cell_features",
    "classify_cells",
]

EDGE_THRESHOLD = 28        # max channel step that counts as a colour edge
BACKGROUND_DISTANCE = 36   # colour distance that separates a blob from a background
MIN_CELL = 10              # px: smaller blobs are text, icons, noise
MIN_DIM, MAX_DIM = 3, 12   # lattice rows/columns the ActorView contract allows
WELL_DISTANCE = 24         # colour distance under which a piece's pixel is its well's background
KIND_THRESHOLD = 20.0      # RMS colour distance under which two cells are the same kind


@dataclass(frozen=True)
class Lattice:
    """A board of ``rows`` × ``columns`` equal cells inside an axis-aligned box (px)."""

    x: int
    y: int
    width: int
    height: int
    rows: int
    columns: int

    @property
    def pitch_x(self) -> float:
        return self.width / self.columns

    @property
    def pitch_y(self) -> float:
        return self.height / self.rows

    def cell_box(self, row: int, column: int) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of a 1-based cell."""
        self._check(row, column)
        left = self.x + (column - 1) * self.pitch_x
        top = self.y + (row - 1) * self.pitch_y
        return left, top, left + self.pitch_x, top + self.pitch_y

    def cell_center(self, row: int, column: int) -> tuple[int, int]:
        """Integer pixel centre of a 1-based cell."""
        left, top, right, bottom = self.cell_box(row, column)
        # floor(v + 0.5), not round(): banker's rounding would shift every other cell by 1 px.
        return int(np.floor((left + right) / 2 + 0.5)), int(np.floor((top + bottom) / 2 + 0.5))

    def cell_colors(self, image: Any) -> np.ndarray:
        """rows × columns × 3 mean RGB of each cell's central area."""
        feats = cell_features(image, self, grid=1, ignore_well=False)
        return feats.reshape(self.rows, self.columns, 3)

    def to_dict(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height,
                "rows": self.rows, "columns": self.columns}

    def _check(self, row: int, column: int) -> None:
        if not (1 <= row <= self.rows and 1 <= column <= self.columns):
            raise IndexError(f"cell ({row}, {column}) is outside a {self.rows}x{self.columns} lattice")


# The pixels of the PNG a caller decoded already (see share_decoded): the harness decodes
# every frame it takes, and an actor reading the same frame would decode it again.
_shared: tuple[bytes, np.ndarray] | None = None


def share_decoded(png: bytes, pixels: np.ndarray) -> None:
    """Let :func:`load_image` answer ``png`` (that very object) with ``pixels``, its H × W × 3
    uint8 RGB decode, instead of decoding it again. Only an 8-bit RGB PNG is taken (its
    colour type in the header): with no alpha to composite, its plain decode is what
    load_image would give. The last one given is kept."""
    global _shared
    rgb = len(png) > 25 and png[:8] == b"\x89PNG\r\n\x1a\n" and png[24] == 8 and png[25] == 2
    _shared = (png, pixels) if rgb and pixels.ndim == 3 and pixels.dtype == np.uint8 else None


def load_image(source: Any) -> np.ndarray:
    """PNG bytes, a path, a PIL image or an array -> H × W × 3 uint8 RGB array."""
    shared = _shared
    if shared is not None and source is shared[0]:
        return shared[1]
    if isinstance(source, np.ndarray):
        arr = source
        if arr.ndim == 2:
            arr = np.stack([arr] * 3, axis=-1)
        return np.ascontiguousarray(arr[..., :3]).astype(np.uint8, copy=False)
    img: Image.Image
    if isinstance(source, (bytes, bytearray, memoryview)):
        img = Image.open(io.BytesIO(bytes(source)))
    elif isinstance(source, (str, Path)):
        img = Image.open(source)
    elif isinstance(source, Image.Image):
        img = source
    else:
        raise TypeError(f"cannot read an image from {type(source).__name__}")
    if img.mode != "RGB":
        # Composite transparency on white so transparent pixels do not read as black.
        rgba = img.convert("RGBA")
        base = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        img = Image.alpha_composite(base, rgba).convert("RGB")
    return np.asarray(img, dtype=np.uint8)


# --------------------------------------------------------------------------- blobs

@dataclass(frozen=True)
class _Blob:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def w(self) -> float:
        return self.x1 - self.x0

    @property
    def h(self) -> float:
        return self.y1 - self.y0

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


def _components(mask: np.ndarray, max_side: float,
                labelled: tuple[np.ndarray, int] | None = None) -> list[_Blob]:
    labels, count = labelled if labelled is not None else ndimage.label(mask)
    if count == 0:
        return []
    sizes = np.bincount(labels.ravel(), minlength=count + 1)
    blobs = []
    for index, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None:
            continue
        h = sl[0].stop - sl[0].start
        w = sl[1].stop - sl[1].start
        if w < MIN_CELL or h < MIN_CELL or w > max_side or h > max_side:
            continue
        if sizes[index] < 0.2 * w * h:   # thin outlines and scattered text are not cells
            continue
        blobs.append(_Blob(sl[1].start, sl[0].start, sl[1].stop, sl[0].stop))
    return blobs


def _channel_max(a: np.ndarray) -> np.ndarray:
    """max over the colour axis (faster than ``a.max(axis=2)`` for 3 channels)."""
    return np.maximum(np.maximum(a[..., 0], a[..., 1]), a[..., 2])


def _flat_mask(pix: np.ndarray) -> np.ndarray:
    """Pixels that are not next to a colour step larger than EDGE_THRESHOLD."""
    gx = _channel_max(np.abs(np.diff(pix, axis=1))) > EDGE_THRESHOLD
    gy = _channel_max(np.abs(np.diff(pix, axis=0))) > EDGE_THRESHOLD
    edge = np.zeros(pix.shape[:2], dtype=bool)
    edge[:, 1:] |= gx
    edge[:, :-1] |= gx
    edge[1:, :] |= gy
    edge[:-1, :] |= gy
    return ~edge


def _segment(pix: np.ndarray, flat: np.ndarray, labels: np.ndarray, count: int,
             max_side: float) -> list[_Blob]:
    blobs = _components(flat, max_side, (labels, count))

    # The dominant uniform regions are backgrounds (page, board panel, cell wells).
    if count:
        sizes = np.bincount(labels.ravel(), minlength=count + 1)
        sizes[0] = 0
        area = pix.shape[0] * pix.shape[1]
        seen: list[np.ndarray] = []
        for index in np.argsort(sizes)[::-1][:4]:
            if sizes[index] < 0.02 * area:
                break
            colour = pix[labels == index].mean(axis=0)
            if any(np.abs(colour - other).max() < 12 for other in seen):
                continue
            seen.append(colour)
            distance = _channel_max(np.abs(pix - colour.astype(np.int16)))
            blobs += _components(distance > BACKGROUND_DISTANCE, max_side)
    return blobs


# --------------------------------------------------------------------------- grid fitting

@dataclass
class _Fit:
    ox: float
    px: float
    oy: float
    py: float
    cols: tuple[int, int]
    rows: tuple[int, int]
    support: dict[tuple[int, int], float]
    sparse: bool = False   # blobs fill less than ~45 % of the pitch (small pieces, or gaps between pieces)

    @property
    def n_rows(self) -> int:
        return self.rows[1] - self.rows[0] + 1

    @property
    def n_cols(self) -> int:
        return self.cols[1] - self.cols[0] + 1

    def score(self) -> float:
        return sum(v for (r, c), v in self.support.items()
                   if self.rows[0] <= r <= self.rows[1] and self.cols[0] <= c <= self.cols[1])


def _dedupe(blobs: Sequence[_Blob], tol: float = 3.0) -> list[_Blob]:
    out: list[_Blob] = []
    for b in sorted(blobs, key=lambda b: (-(b.w * b.h), b.cy, b.cx)):
        if any(abs(b.cx - o.cx) <= tol and abs(b.cy - o.cy) <= tol for o in out):
            continue
        out.append(b)
    return out


def _pitch(along: np.ndarray, across: np.ndarray, size: float, across_size: float) -> float | None:
    """Neighbour spacing along one axis among blobs that share a line on the other."""
    gaps = []
    for i in range(len(along)):
        same_line = np.abs(across - across[i]) < across_size / 2
        d = along[same_line] - along[i]
        d = d[d > 0.8 * size]
        if d.size:
            gaps.append(d.min())
    if len(gaps) < 2:
        return None
    first = float(np.percentile(gaps, 30))
    refined = [g / round(g / first) for g in gaps if 0.5 < g / first < 4.5 and round(g / first) >= 1]
    return float(np.median(refined)) if refined else first


def _phase(values: np.ndarray, pitch: float) -> float:
    angles = 2 * np.pi * values / pitch
    mean = np.arctan2(np.sin(angles).mean(), np.cos(angles).mean())
    return float(mean * pitch / (2 * np.pi))


def _best_run(indices: dict[int, float], max_gap: int = 2) -> tuple[int, int] | None:
    """Contiguous (allowing short gaps) run of indices with the most weight."""
    if not indices:
        return None
    keys = sorted(indices)
    best, best_w = None, -1.0
    start = keys[0]
    weight = indices[start]
    prev = start
    for k in keys[1:] + [None]:
        if k is not None and k - prev <= max_gap + 1:
            weight += indices[k]
            prev = k
            continue
        if weight > best_w:
            best, best_w = (start, prev), weight
        if k is not None:
            start, prev, weight = k, k, indices[k]
    return best


def _refine(cx: np.ndarray, cy: np.ndarray, px: float,
            py: float) -> tuple[float, float, float, float] | None:
    """Phase from the circular mean, inliers within 0.2 pitch, then least-squares pitch and
    phase over the inliers (twice); (ox, px, oy, py) or None when fewer than six fit."""
    ox = oy = 0.0
    for _ in range(2):
        ox, oy = _phase(cx, px), _phase(cy, py)
        ci = np.round((cx - ox) / px)
        ri = np.round((cy - oy) / py)
        ok = (np.abs(cx - ox - ci * px) < 0.2 * px) & (np.abs(cy - oy - ri * py) < 0.2 * py)
        if ok.sum() < 6:
            return None
        if len(set(ci[ok])) >= 2:
            px, ox = np.polyfit(ci[ok], cx[ok], 1)
        if len(set(ri[ok])) >= 2:
            py, oy = np.polyfit(ri[ok], cy[ok], 1)
        px, py, ox, oy = float(px), float(py), float(ox), float(oy)
        if px <= 0 or py <= 0:
            return None
    return ox, px, oy, py


def _on_grid(v: float, pitch: float, origin: float) -> int | None:
    """The grid index of coordinate ``v`` when it lies within 0.2 pitch of a node."""
    k = round((v - origin) / pitch)
    return k if abs(v - origin - k * pitch) < 0.2 * pitch else None


def _support(group: Sequence[_Blob], others: Sequence[_Blob], grid: tuple[float, float, float, float],
             w: float, h: float) -> dict[tuple[int, int], float]:
    """Votes per cell: 1 for an inlier blob of the group; 0.5 for each cell spanned by a blob
    of merged same-coloured neighbours whose edges sit on grid lines."""
    ox, px, oy, py = grid
    support: dict[tuple[int, int], float] = {}
    for b in group:
        c, r = _on_grid(b.cx, px, ox), _on_grid(b.cy, py, oy)
        if c is not None and r is not None:
            support[(r, c)] = 1.0
    for b in others:
        if b.w > 5 * px or b.h > 5 * py or (b.w < 1.5 * px and b.h < 1.5 * py):
            continue
        c0, c1 = (b.x0 + w / 2 - ox) / px, (b.x1 - w / 2 - ox) / px
        r0, r1 = (b.y0 + h / 2 - oy) / py, (b.y1 - h / 2 - oy) / py
        if max(abs(v - round(v)) for v in (c0, c1, r0, r1)) > 0.15:
            continue
        for r in range(round(r0), round(r1) + 1):
            for c in range(round(c0), round(c1) + 1):
                support.setdefault((r, c), 0.5)
    return support


def _extent(support: dict[tuple[int, int], float]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The heaviest contiguous block of voted columns and rows (each pass restricted to the
    other axis's run of the pass before); (cols, rows) or None."""
    cols: tuple[int, int] | None = None
    rows: tuple[int, int] | None = None
    for _ in range(2):
        col_w: dict[int, float] = {}
        row_w: dict[int, float] = {}
        for (r, c), v in support.items():
            if rows is None or rows[0] <= r <= rows[1]:
                col_w[c] = col_w.get(c, 0.0) + v
            if cols is None or cols[0] <= c <= cols[1]:
                row_w[r] = row_w.get(r, 0.0) + v
        cols, rows = _best_run(col_w), _best_run(row_w)
        if cols is None or rows is None:
            return None
    assert cols is not None and rows is not None  # set by the last pass
    return cols, rows


def _fit(group: Sequence[_Blob], others: Sequence[_Blob]) -> _Fit | None:
    """The grid a size group sits on: pitch and phase, the votes of its cells, its extent."""
    if len(group) < 6:
        return None
    w = float(np.median([b.w for b in group]))
    h = float(np.median([b.h for b in group]))
    cx = np.array([b.cx for b in group])
    cy = np.array([b.cy for b in group])
    px, py = _pitch(cx, cy, w, h), _pitch(cy, cx, h, w)
    if px is None or py is None or not (w * 0.9 <= px <= 3.0 * w and h * 0.9 <= py <= 3.0 * h):
        return None
    grid = _refine(cx, cy, px, py)
    if grid is None:
        return None
    support = _support(group, others, grid, w, h)
    extent = _extent(support)
    if extent is None:
        return None
    ox, px, oy, py = grid
    return _Fit(ox, px, oy, py, extent[0], extent[1], support,
                sparse=px > 2.2 * w or py > 2.2 * h)


def _size_groups(blobs: Sequence[_Blob], limit: int = 4) -> list[list[_Blob]]:
    """Up to ``limit`` disjoint groups of blobs of about the same size, largest first."""
    if not blobs:
        return []
    order = sorted(range(len(blobs)), key=lambda i: (blobs[i].cy, blobs[i].cx))
    w = np.array([blobs[i].w for i in order])
    h = np.array([blobs[i].h for i in order])
    squareish = (w / h >= 0.5) & (w / h <= 2.0)
    similar = ((np.abs(w[None, :] - w[:, None]) <= 0.15 * w[:, None] + 1)
               & (np.abs(h[None, :] - h[:, None]) <= 0.15 * h[:, None] + 1)
               & squareish[None, :])
    support = similar.sum(axis=1)
    groups: list[list[_Blob]] = []
    used = np.zeros(len(order), dtype=bool)
    for i in sorted(range(len(order)), key=lambda i: (-support[i], i)):
        if support[i] < 6 or len(groups) >= limit:
            break
        if used[i]:
            continue
        fresh = similar[i] & ~used
        if fresh.sum() < 6:
            continue
        used |= fresh
        groups.append([blobs[order[j]] for j in np.nonzero(fresh)[0]])
    return groups


def _fit_window(span: tuple[int, int], want: int | None, weights: dict[int, float]) -> tuple[int, int]:
    """The ``want``-long window near ``span`` with the most support (the span itself if no hint)."""
    lo, hi = span
    if want is None or hi - lo + 1 == want:
        return span
    starts = range(min(lo, hi - want + 1), max(lo, hi - want + 1) + 1)

    def rank(start: int) -> tuple[float, int, int]:
        total = sum(weights.get(k, 0.0) for k in range(start, start + want))
        overlap = min(hi, start + want - 1) - max(lo, start)
        return total, overlap, -start

    best = max(starts, key=rank)
    return best, best + want - 1


def find_lattice(png_or_image: Any, *, rows: int | None = None, columns: int | None = None,
                 region: tuple[int, int, int, int] | None = None) -> Lattice | None:
    """Find the dominant regular board of cells in a frame, or ``None``.

    ``region`` = (x, y, width, height) limits the search (e.g. a canvas element's
    box); ``rows``/``columns`` force the lattice's size when already known (the
    view's lattice dimensions). Coordinates are frame pixels.
    """
    img = load_image(png_or_image)
    off_x = off_y = 0
    if region is not None:
        rx, ry, rw, rh = (int(round(v)) for v in region)
        rx, ry = max(rx, 0), max(ry, 0)
        img = img[ry:ry + max(rh, 0), rx:rx + max(rw, 0)]
        off_x, off_y = rx, ry
    if img.shape[0] < 3 * MIN_CELL or img.shape[1] < 3 * MIN_CELL:
        return None
    max_side = min(img.shape[0], img.shape[1]) / 2.5
    pix = img.astype(np.int16)
    flat = _flat_mask(pix)
    labels, count = ndimage.label(flat)
    blobs = _dedupe(_segment(pix, flat, labels, count, max_side))
    # Uniform regions of any size: merged same-coloured neighbours vote for their cells.
    others = _dedupe(_components(flat, min(img.shape[0], img.shape[1]), (labels, count)))

    best: _Fit | None = None
    for group in _size_groups(blobs):
        fit = _fit(group, others)
        if fit is None:
            continue
        if not (MIN_DIM <= fit.n_rows <= MAX_DIM and MIN_DIM <= fit.n_cols <= MAX_DIM):
            if rows is None and columns is None:
                continue
        # Blobs that fill their cells beat sparse ones (the gaps between round pieces
        # also form a lattice, half a pitch off); then the most supported lattice wins.
        if best is None or (not fit.sparse, fit.score()) > (not best.sparse, best.score()):
            best = fit
    if best is None:
        return None

    row_w: dict[int, float] = {}
    col_w: dict[int, float] = {}
    for (r, c), v in best.support.items():
        if best.cols[0] <= c <= best.cols[1]:
            row_w[r] = row_w.get(r, 0.0) + v
        if best.rows[0] <= r <= best.rows[1]:
            col_w[c] = col_w.get(c, 0.0) + v
    r0, r1 = _fit_window(best.rows, rows, row_w)
    c0, c1 = _fit_window(best.cols, columns, col_w)
    n_rows, n_cols = r1 - r0 + 1, c1 - c0 + 1
    if not (MIN_DIM <= n_rows <= MAX_DIM and MIN_DIM <= n_cols <= MAX_DIM):
        return None
    left = best.ox + (c0 - 0.5) * best.px
    top = best.oy + (r0 - 0.5) * best.py
    return Lattice(
        x=int(round(left)) + off_x,
        y=int(round(top)) + off_y,
        width=int(round(n_cols * best.px)),
        height=int(round(n_rows * best.py)),
        rows=n_rows,
        columns=n_cols,
    )


# --------------------------------------------------------------------------- cell kinds

def cell_features(image: Any, lattice: Lattice, *, grid: int = 3, inner: float = 0.5,
                  ignore_well: bool = True) -> np.ndarray:
    """Per cell: mean colours of a ``grid`` × ``grid`` split of its central area.

    Returns an array of shape (rows * columns, grid * grid * 3), row-major cells.
    The central area (``inner`` of the pitch) avoids gaps, borders and highlights.
    With ``ignore_well``, when most cells sit in wells of one or two colours (a
    plain or checkerboard background behind the pieces), pixels of those colours
    are replaced by a neutral grey so the same piece reads the same on every
    well; a cell whose centre is nearly all well colour keeps its colours.
    """
    # A light blur makes the features robust to the 1 px sampling shifts of fractional pitches.
    img = _blurred(load_image(image), lattice)
    height, width = img.shape[:2]
    wells = _well_colours(img, lattice) if ignore_well else []
    boxes, (half_w, half_h) = _centre_areas(lattice, inner, width, height)
    feats = np.zeros((len(boxes), grid * grid * 3), dtype=np.float32)
    whole = [i for i, (x0, x1, y0, y1) in enumerate(boxes)
             if (x1 - x0, y1 - y0) == (2 * half_w, 2 * half_h)]
    if whole:  # the cells inside the frame, all at once: their central areas are one size
        x0s = np.array([boxes[i][0] for i in whole])[:, None] + np.arange(2 * half_w)
        y0s = np.array([boxes[i][2] for i in whole])[:, None] + np.arange(2 * half_h)
        feats[whole] = _patch_features(img[y0s[:, :, None], x0s[:, None, :]], wells, grid)
    inside = set(whole)
    for i, (x0, x1, y0, y1) in enumerate(boxes):  # cut by the frame's edge, one by one
        if i not in inside and x1 > x0 and y1 > y0:
            feats[i] = _patch_features(img[None, y0:y1, x0:x1], wells, grid)[0]
    return feats


def _centre_areas(lattice: Lattice, inner: float, width: int,
                  height: int) -> tuple[list[tuple[int, int, int, int]], tuple[int, int]]:
    """Each cell's central area (``inner`` of the pitch) as (x0, x1, y0, y1) within the
    frame, row-major, and the half sizes of an area the frame does not cut."""
    half_w = max(1, int(lattice.pitch_x * inner / 2))
    half_h = max(1, int(lattice.pitch_y * inner / 2))
    boxes = []
    for r in range(1, lattice.rows + 1):
        for c in range(1, lattice.columns + 1):
            cx, cy = lattice.cell_center(r, c)
            boxes.append((max(cx - half_w, 0), min(cx + half_w, width),
                          max(cy - half_h, 0), min(cy + half_h, height)))
    return boxes, (half_w, half_h)


def _patch_features(patches: np.ndarray, wells: list[np.ndarray], grid: int) -> np.ndarray:
    """Per patch (an n × h × w × 3 stack of cells' central areas): the mean colours of its
    ``grid`` × ``grid`` split (numpy's array_split bounds), well colours greyed out where a
    patch is not nearly all well (a plain tile's colour is its content)."""
    if wells:
        background = np.zeros(patches.shape[:3], dtype=bool)
        for well in wells:
            background |= _channel_max(np.abs(patches - well)) < WELL_DISTANCE
        grey = background & (background.mean(axis=(1, 2)) <= 0.85)[:, None, None]
        patches = np.where(grey[..., None], np.float32(128.0), patches)
    n, h, w = patches.shape[:3]
    parts = []
    for y0, y1 in _split_bounds(h, grid):
        for x0, x1 in _split_bounds(w, grid):
            block = patches[:, y0:y1, x0:x1].reshape(n, -1, 3)
            parts.append(block.mean(axis=1) if block.shape[1] else np.zeros((n, 3)))
    return np.concatenate(parts, axis=1)


def _split_bounds(length: int, parts: int) -> list[tuple[int, int]]:
    """The (start, end) of each of ``parts`` pieces of ``length``, as numpy's array_split
    cuts them (the first ``length % parts`` one longer)."""
    size, extra = divmod(length, parts)
    bounds, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


BLUR_MARGIN = 3  # px round the lattice that are blurred too (the 3×3 blur reads one more)


def _blurred(pix: np.ndarray, lattice: Lattice) -> np.ndarray:
    """The 3×3 box blur of ``pix`` (float32) where the cells are read: only the lattice's
    box and BLUR_MARGIN px round it are blurred (the rest of the frame stays 0 and is
    never read), so a board a third of the frame costs a third. Inside that area the values
    are the full frame's blur: each blurred pixel reads only its 3×3 neighbourhood, and at
    the frame's edge the crop's edge is the frame's."""
    height, width = pix.shape[:2]
    x0, y0 = max(lattice.x - BLUR_MARGIN, 0), max(lattice.y - BLUR_MARGIN, 0)
    x1 = min(lattice.x + lattice.width + BLUR_MARGIN, width)
    y1 = min(lattice.y + lattice.height + BLUR_MARGIN, height)
    if x0 == 0 and y0 == 0 and x1 == width and y1 == height:
        return np.asarray(ndimage.uniform_filter(pix.astype(np.float32), size=(3, 3, 1)))
    out = np.zeros(pix.shape, dtype=np.float32)
    if x1 > x0 and y1 > y0:
        out[y0:y1, x0:x1] = ndimage.uniform_filter(pix[y0:y1, x0:x1].astype(np.float32),
                                                   size=(3, 3, 1))
    return out


def _well_colours(img: np.ndarray, lattice: Lattice) -> list[np.ndarray]:
    """The one or two colours most cells' outer rings share, or [] (plain tiles, no wells)."""
    ring_w = max(1, int(0.1 * min(lattice.pitch_x, lattice.pitch_y)))
    # Each cell's box in the frame, row-major; the cells of one size are read as one stack
    # (their rings' medians in one call, the same values as cell by cell).
    by_size: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for r in range(1, lattice.rows + 1):
        for c in range(1, lattice.columns + 1):
            left, top, right, bottom = (int(np.floor(v + 0.5)) for v in lattice.cell_box(r, c))
            top, left = max(top, 0), max(left, 0)
            bottom = min(max(bottom, 0), img.shape[0])
            right = min(max(right, 0), img.shape[1])
            h, w = max(bottom - top, 0), max(right - left, 0)
            if h <= 2 * ring_w or w <= 2 * ring_w:
                continue
            by_size.setdefault((h, w), []).append(((r - 1) * lattice.columns + c - 1, top, left))
    found: dict[int, np.ndarray] = {}
    for (h, w), cells in by_size.items():
        ys = np.array([top for _, top, _ in cells])[:, None] + np.arange(h)
        xs = np.array([left for _, _, left in cells])[:, None] + np.arange(w)
        stack = img[ys[:, :, None], xs[:, None, :]]  # n × h × w × 3
        n = len(cells)
        ring = np.concatenate([stack[:, :ring_w].reshape(n, -1, 3),
                               stack[:, -ring_w:].reshape(n, -1, 3),
                               stack[:, :, :ring_w].reshape(n, -1, 3),
                               stack[:, :, -ring_w:].reshape(n, -1, 3)], axis=1)
        for (index, _, _), median in zip(cells, np.median(ring, axis=1), strict=True):
            found[index] = median
    medians = [found[index] for index in sorted(found)]
    centres: list[np.ndarray] = []
    members: list[int] = []
    for colour in medians:
        for i, centre in enumerate(centres):
            if _channel_max(np.abs(colour - centre)) < WELL_DISTANCE:
                members[i] += 1
                break
        else:
            centres.append(colour)
            members.append(1)
    order = sorted(range(len(centres)), key=lambda i: -members[i])[:2]
    if not medians or sum(members[i] for i in order) < 0.8 * len(medians):
        return []
    return [centres[i] for i in order if members[i] >= 0.15 * len(medians)]


def classify_cells(image: Any, lattice: Lattice, *, threshold: float = KIND_THRESHOLD) -> list[list[int]]:
    """rows × columns anonymous kind ids (0, 1, …) by clustering the cells' colours.

    Average-linkage clustering stops when the closest two clusters differ by more
    than ``threshold`` (RMS over colour channels); ids follow first appearance in
    row-major order so the result is deterministic.
    """
    feats = cell_features(image, lattice).astype(np.float64)
    n = len(feats)
    dist = np.sqrt(((feats[:, None, :] - feats[None, :, :]) ** 2).mean(axis=2))
    np.fill_diagonal(dist, np.inf)
    members: list[list[int]] = [[i] for i in range(n)]
    alive = np.ones(n, dtype=bool)
    while alive.sum() > 1:
        masked = np.where(alive[:, None] & alive[None, :], dist, np.inf)
        a, b = np.unravel_index(int(np.argmin(masked)), masked.shape)
        if masked[a, b] > threshold:
            break
        na, nb = len(members[a]), len(members[b])
        merged = (na * dist[a] + nb * dist[b]) / (na + nb)   # average linkage
        dist[a, :] = merged
        dist[:, a] = merged
        dist[a, a] = np.inf
        members[a] += members[b]
        alive[b] = False
    clusters = [members[i] for i in range(n) if alive[i]]
    label = np.empty(n, dtype=int)
    for i, cluster in enumerate(clusters):
        label[cluster] = i
    remap: dict[int, int] = {}
    out = []
    for r in range(lattice.rows):
        row = []
        for c in range(lattice.columns):
            raw = int(label[r * lattice.columns + c])
            row.append(remap.setdefault(raw, len(remap)))
        out.append(row)
    return out
