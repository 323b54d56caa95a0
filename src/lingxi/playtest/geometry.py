"""Boxes, sub-anchors and the fallback spatial grid, in viewport pixels."""

from __future__ import annotations

import math
from dataclasses import dataclass

VIEWPORT_WIDTH = 390
VIEWPORT_HEIGHT = 844
GRID_ROWS = 17
GRID_COLUMNS = 8

SUB_ANCHORS = ("center", "north", "south", "east", "west", "northwest", "northeast",
               "southwest", "southeast")
# Offsets from the centre as a fraction of the box size: anchors stay inside the box.
_ANCHOR_OFFSETS = {
    "center": (0.0, 0.0), "north": (0.0, -0.3), "south": (0.0, 0.3), "east": (0.3, 0.0),
    "west": (-0.3, 0.0), "northwest": (-0.3, -0.3), "northeast": (0.3, -0.3),
    "southwest": (-0.3, 0.3), "southeast": (0.3, 0.3),
}


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float

    def anchor(self, sub_anchor: str = "center") -> tuple[int, int]:
        """The integer point of ``sub_anchor`` inside the box, clamped to the viewport."""
        dx, dy = _ANCHOR_OFFSETS[sub_anchor]
        px = self.x + self.width * (0.5 + dx)
        py = self.y + self.height * (0.5 + dy)
        # floor(v + 0.5): round() would round half to even and shift every other cell by 1 px
        return (min(max(math.floor(px + 0.5), 0), VIEWPORT_WIDTH - 1),
                min(max(math.floor(py + 0.5), 0), VIEWPORT_HEIGHT - 1))

    def to_dict(self) -> dict[str, float]:
        return {"x": round(self.x, 2), "y": round(self.y, 2), "width": round(self.width, 2),
                "height": round(self.height, 2)}

    def contains_point(self, x: float, y: float) -> bool:
        return self.x <= x <= self.x + self.width and self.y <= y <= self.y + self.height


@dataclass(frozen=True)
class Grid:
    """A rows×columns lattice of equal cells starting at (x, y) with pitch (cell_width, cell_height)."""

    x: float
    y: float
    cell_width: float
    cell_height: float
    rows: int
    columns: int

    @property
    def box(self) -> Box:
        return Box(self.x, self.y, self.cell_width * self.columns, self.cell_height * self.rows)

    def cell_box(self, row: int, column: int) -> Box:
        """The box of the 1-based cell (row, column)."""
        return Box(self.x + (column - 1) * self.cell_width, self.y + (row - 1) * self.cell_height,
                   self.cell_width, self.cell_height)

    def has_cell(self, row: int, column: int) -> bool:
        return 1 <= row <= self.rows and 1 <= column <= self.columns


VIEWPORT_GRID = Grid(0.0, 0.0, VIEWPORT_WIDTH / GRID_COLUMNS, VIEWPORT_HEIGHT / GRID_ROWS,
                     GRID_ROWS, GRID_COLUMNS)
