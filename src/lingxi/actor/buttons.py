"""Button-like regions in a frame: what a person would press on a start screen.

Works on pixels only (actors never see the DOM): connected regions of nearly
uniform colour that are wider than tall, fill their outline (rectangles and
rounded rectangles), stand out from what surrounds them and usually carry
text or an icon (holes in the region). Scored so the most button-like comes
first; nothing is game-specific.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import ndimage

from lingxi.actor.vision import EDGE_THRESHOLD, load_image

MIN_WIDTH, MAX_WIDTH = 40, 380
MIN_HEIGHT, MAX_HEIGHT = 20, 140
MIN_CONTRAST = 40.0


@dataclass(frozen=True)
class Button:
    x: float
    y: float
    width: float
    height: float
    score: float

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2


def _flat(pix: np.ndarray) -> np.ndarray:
    gx = np.abs(np.diff(pix, axis=1)).max(axis=2) > EDGE_THRESHOLD
    gy = np.abs(np.diff(pix, axis=0)).max(axis=2) > EDGE_THRESHOLD
    edge = np.zeros(pix.shape[:2], dtype=bool)
    edge[:, 1:] |= gx
    edge[:, :-1] |= gx
    edge[1:, :] |= gy
    edge[:-1, :] |= gy
    return ~edge


def find_buttons(image: Any, limit: int = 8) -> list[Button]:
    """Button-like regions of ``image`` (PNG bytes, path, PIL image or array), best first."""
    pix = load_image(image).astype(np.int16)
    height, width = pix.shape[:2]
    labels, count = ndimage.label(_flat(pix))
    found: list[Button] = []
    for index, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None:
            continue
        y0, y1, x0, x1 = sl[0].start, sl[0].stop, sl[1].start, sl[1].stop
        w, h = x1 - x0, y1 - y0
        if not (MIN_WIDTH <= w <= MAX_WIDTH and MIN_HEIGHT <= h <= MAX_HEIGHT):
            continue
        if not 1.2 <= w / h <= 10 or w > 0.92 * width:
            continue
        region = labels[sl] == index
        solid = ndimage.binary_fill_holes(region)
        if solid.mean() < 0.8:  # not a filled shape (an outline, a diagonal, scattered text)
            continue
        holes = float((solid & ~region).mean())
        colour = pix[sl][region].mean(axis=0)
        ring = np.zeros((height, width), dtype=bool)
        ring[max(0, y0 - 5):min(height, y1 + 5), max(0, x0 - 5):min(width, x1 + 5)] = True
        ring[y0:y1, x0:x1] = False
        if not ring.any():
            continue
        contrast = float(np.abs(pix[ring].mean(axis=0) - colour).max())
        if contrast < MIN_CONTRAST:
            continue
        saturation = float(colour.max() - colour.min()) / 255.0
        has_label = 0.01 <= holes <= 0.5
        centred = 1.0 - abs((x0 + x1) / 2 - width / 2) / (width / 2)
        score = contrast / 255.0 + 0.6 * has_label + 0.4 * saturation + 0.2 * centred
        found.append(Button(float(x0), float(y0), float(w), float(h), round(score, 4)))
    found.sort(key=lambda b: (-b.score, b.y, b.x))
    return found[:limit]
