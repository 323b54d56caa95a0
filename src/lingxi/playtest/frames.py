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


def decode(png: bytes) -> np.ndarray:
    """height×width×3 uint8 RGB array of a PNG."""
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


def frame_change(before: np.ndarray, after: np.ndarray) -> dict[str, Any] | None:
    """How ``after`` differs from ``before``: changed share and bounding box, or None."""
    if before.shape != after.shape:
        return {"changedFraction": 1.0, "box": None}
    diff = np.abs(before.astype(np.int16) - after.astype(np.int16)).sum(axis=2) > PIXEL_THRESHOLD
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
