"""Synthetic Match-3 frames rendered with Pillow, in many visual styles.

The vision code must work on boards it has never seen; these frames vary the
board size, cell pitch, gaps, tile shapes, glyphs, emoji, colours and page
furniture (a score bar above, text below) while we know the ground truth.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

EMOJI_FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
EMOJI = ["\U0001F34E", "\U0001F347", "\U0001F34B", "\U0001F966", "\U0001F48E", "\U0001F31F",
         "\U0001F95D"]  # apple, grapes, lemon, broccoli, gem, star, kiwi

PALETTES = {
    "classic": [(231, 76, 60), (241, 196, 15), (46, 204, 113), (52, 152, 219), (155, 89, 182),
                (236, 240, 241), (230, 126, 34)],
    "candy": [(255, 105, 180), (255, 223, 0), (0, 206, 209), (124, 252, 0), (255, 69, 0),
              (138, 43, 226), (250, 250, 250)],
    "muted": [(200, 80, 80), (80, 160, 90), (70, 110, 190), (210, 170, 60), (150, 90, 160),
              (90, 180, 180), (120, 70, 40)],
}


@dataclass
class Style:
    page: tuple[int, int, int] = (245, 240, 230)
    panel: tuple[int, int, int] | None = (31, 42, 68)
    gap: int = 5
    radius: int = 8
    shape: str = "square"          # square | circle | gem | emoji | glyph
    palette: str = "classic"
    cell_bg: tuple[int, int, int] | None = None   # a well drawn behind every piece
    checker: tuple[int, int, int] | None = None   # every other well in this colour instead
    score_bar: bool = True
    footer_text: bool = True
    extras: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Truth:
    x: float
    y: float
    pitch: float
    rows: int
    columns: int


def random_kinds(rows: int, columns: int, kinds: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(kinds) for _ in range(columns)] for _ in range(rows)]


def _emoji_tiles(size: int) -> list[Image.Image]:
    font = ImageFont.truetype(str(EMOJI_FONT), 109)
    tiles = []
    for ch in EMOJI:
        canvas = Image.new("RGBA", (140, 140), (0, 0, 0, 0))
        ImageDraw.Draw(canvas).text((4, 4), ch, font=font, embedded_color=True)
        box = canvas.getbbox() or (0, 0, 140, 140)
        tiles.append(canvas.crop(box).resize((size, size), Image.LANCZOS))
    return tiles


def render(kinds: list[list[int]], *, pitch: int = 44, origin: tuple[int, int] = (15, 120),
           style: Style | None = None, size: tuple[int, int] = (390, 844)) -> tuple[bytes, Truth]:
    """Draw a board; returns PNG bytes and the true lattice (cell pitch includes the gap)."""
    style = style or Style()
    rows, columns = len(kinds), len(kinds[0])
    img = Image.new("RGB", size, style.page)
    draw = ImageDraw.Draw(img)
    ox, oy = origin
    if style.score_bar:
        draw.rounded_rectangle((12, 14, size[0] - 12, 70), radius=12, fill=(60, 50, 110))
        draw.text((40, 34), "Score 1200    Moves 7", fill=(255, 230, 120))
    if style.panel is not None:
        draw.rounded_rectangle((ox - 8, oy - 8, ox + columns * pitch + 8, oy + rows * pitch + 8),
                               radius=14, fill=style.panel)
    if style.footer_text:
        draw.text((30, oy + rows * pitch + 30), "Swap two neighbours to match three.", fill=(90, 90, 90))
    palette = PALETTES[style.palette]
    g = style.gap / 2
    emoji = _emoji_tiles(int(pitch - style.gap - 6)) if style.shape == "emoji" else None
    for r in range(rows):
        for c in range(columns):
            k = kinds[r][c]
            x0, y0 = ox + c * pitch + g, oy + r * pitch + g
            x1, y1 = ox + (c + 1) * pitch - g - 1, oy + (r + 1) * pitch - g - 1
            if style.cell_bg is not None:
                well = style.checker if style.checker is not None and (r + c) % 2 else style.cell_bg
                draw.rounded_rectangle((x0, y0, x1, y1), radius=style.radius, fill=well)
            colour = palette[k % len(palette)]
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            rad = (x1 - x0) / 2
            if style.shape == "square":
                draw.rounded_rectangle((x0, y0, x1, y1), radius=style.radius, fill=colour)
            elif style.shape == "circle":
                draw.ellipse((cx - rad * 0.85, cy - rad * 0.85, cx + rad * 0.85, cy + rad * 0.85), fill=colour)
            elif style.shape == "gem":
                # A faceted gem: darker body, lighter crown, small white shine.
                draw.regular_polygon((cx, cy, rad * 0.85), n_sides=4 + k % 3, fill=colour)
                light = tuple(min(255, v + 60) for v in colour)
                draw.regular_polygon((cx, cy - rad * 0.1, rad * 0.45), n_sides=4 + k % 3, fill=light)
                draw.ellipse((cx - rad * 0.5, cy - rad * 0.6, cx - rad * 0.3, cy - rad * 0.4), fill=(255, 255, 255))
            elif style.shape == "glyph":
                draw.rounded_rectangle((x0, y0, x1, y1), radius=style.radius, fill=colour)
                draw.text((cx - 4, cy - 6), "ABCDEFG"[k], fill=(20, 20, 20))
            elif style.shape == "emoji":
                assert emoji is not None
                tile = emoji[k % len(emoji)]
                img.paste(tile, (int(cx - tile.width / 2), int(cy - tile.height / 2)), tile)
            else:
                raise ValueError(style.shape)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue(), Truth(ox, oy, pitch, rows, columns)
