"""Frames on disk: PNG bytes under ``frames/``, each known by its SHA-256."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lingxi.canonical import sha256_hex

PIXEL_THRESHOLD = 24  # summed RGB difference under which a pixel counts as unchanged


DECODED_KEPT = 8  # PNGs whose decoded array is kept (the frames of one step)
_decoded: dict[bytes, np.ndarray] = {}


def decode(png: bytes) -> np.ndarray:
    """height×width×3 uint8 RGB array of a PNG (read-only).

    A PNG decoded lately is not decoded again: the same bytes give the same array object,
    so a settle's frames, the step's pre and post frames and the diffs share one decode
    (nobody writes into it), and comparing a frame with an identical one costs nothing (the diffs
    see the same object). The last DECODED_KEPT are kept."""
    pixels = _decoded.get(png)
    if pixels is None:
        with Image.open(io.BytesIO(png)) as image:
            pixels = np.asarray(image.convert("RGB"))
        pixels.flags.writeable = False
        if len(_decoded) >= DECODED_KEPT:
            del _decoded[next(iter(_decoded))]
    else:
        del _decoded[png]  # the newest use goes last
    _decoded[png] = pixels
    return pixels


def changed_mask(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """H×W bool: pixels whose summed RGB difference exceeds PIXEL_THRESHOLD (same shapes).

    Only the band of rows where some byte differs is compared in full (a swap changes the
    board's rows, a counter a few): cheaper than the whole frame, the same mask."""
    height = after.shape[0]
    out = np.zeros(after.shape[:2], dtype=bool)
    if before is after:
        return out
    rows = np.flatnonzero((before != after).reshape(height, -1).any(axis=1))
    if rows.size == 0:
        return out
    top, bottom = int(rows[0]), int(rows[-1]) + 1
    band = np.abs(before[top:bottom].astype(np.int16) - after[top:bottom].astype(np.int16))
    out[top:bottom] = band.sum(axis=2) > PIXEL_THRESHOLD
    return out


def frame_change(before: np.ndarray, after: np.ndarray) -> dict[str, Any] | None:
    """How ``after`` differs from ``before``: changed share and bounding box, or None."""
    if before.shape != after.shape:
        return {"changedFraction": 1.0, "box": None}
    diff = changed_mask(before, after)
    if not diff.any():
        return None
    ys, xs = np.nonzero(diff)
    return {"changedFraction": round(float(diff.mean()), 4),
            "box": {"x": int(xs.min()), "y": int(ys.min()), "width": int(xs.max() - xs.min() + 1),
                    "height": int(ys.max() - ys.min() + 1)}}


@dataclass
class Frame:
    ref: str
    png: bytes
    sha256: str
    _pixels: np.ndarray | None = field(default=None, repr=False)

    @property
    def pixels(self) -> np.ndarray:
        if self._pixels is None:
            self._pixels = decode(self.png)
        return self._pixels


class FrameStore:
    """Writes frames into ``<out>/frames/`` and remembers their hashes in order."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        (self.out_dir / "frames").mkdir(parents=True, exist_ok=True)
        self.index: list[dict[str, str]] = []

    def save(self, ref: str, png: bytes) -> Frame:
        digest = sha256_hex(png)
        (self.out_dir / ref).write_bytes(png)
        self.index.append({"ref": ref, "sha256": digest})
        return Frame(ref, png, digest)
