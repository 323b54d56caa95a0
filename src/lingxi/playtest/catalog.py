"""The visual target catalog of one frame (VisualTargetSet/1).

Targets, in this order: lattices ``l00…`` (grid boards found in the DOM, or in
the pixels of a canvas), regions ``r00…`` (other visible interactive elements
and canvases), and the 17×8 spatial grid ``g01`` as the fallback that always
exists. At most 29 targets. ``targetSetHash`` is the SHA-256 of the canonical
JSON of the full target list *with* geometry (what evidence.json stores as
``steps[].targets``), so the hash changes when a board moves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.playtest.dom_lattice import find_dom_lattices, same_board
from lingxi.playtest.geometry import (
    SUB_ANCHORS,
    VIEWPORT_GRID,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
    Box,
    Grid,
)

MAX_TARGETS = 29
MAX_LATTICES = 4
MIN_CANVAS_SIDE = 60

# find(region) -> Grid | None; region None means the whole frame.
PixelLatticeFinder = Callable[[tuple[int, int, int, int] | None], Grid | None]


@dataclass(frozen=True)
class Target:
    id: str
    kind: str  # region | lattice | spatial_grid
    box: Box
    gestures: tuple[str, ...]
    grid: Grid | None = None
    source: str = "dom"  # dom | pixels | viewport

    def public(self) -> dict[str, Any]:
        """What the actor sees of this target in ActorView/4."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind,
                               "allowedGestures": list(self.gestures)}
        if self.kind in ("lattice", "spatial_grid") and self.grid is not None:
            out["dimensions"] = {"rows": self.grid.rows, "columns": self.grid.columns}
            out["subAnchors"] = list(SUB_ANCHORS)
            if self.kind == "spatial_grid":
                out["fallbackOnly"] = True
        return out

    def evidence(self) -> dict[str, Any]:
        """The target with the geometry the harness used."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "box": self.box.to_dict(),
                               "source": self.source}
        if self.grid is not None:
            out["rows"] = self.grid.rows
            out["columns"] = self.grid.columns
        return out


@dataclass
class Catalog:
    targets: list[Target]
    by_id: dict[str, Target] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {t.id: t for t in self.targets}

    @property
    def lattices(self) -> list[Target]:
        return [t for t in self.targets if t.kind == "lattice"]

    def evidence(self) -> list[dict[str, Any]]:
        return [t.evidence() for t in self.targets]

    @property
    def target_set_hash(self) -> str:
        return sha256_hex(canonical_bytes(self.evidence()))

    def view(self, frame_ref: str, frame_hash: str) -> dict[str, Any]:
        """The ``visualTargetCatalog`` object of a view."""
        return {
            "schemaVersion": "VisualTargetSet/1",
            "sourceFrameRef": frame_ref,
            "sourceFrameHash": frame_hash,
            "targetSetHash": self.target_set_hash,
            "targets": [t.public() for t in self.targets],
        }


def _visible_box(rect: Sequence[float]) -> Box | None:
    x, y, w, h = (float(v) for v in rect[:4])
    x0, y0 = max(x, 0.0), max(y, 0.0)
    x1, y1 = min(x + w, VIEWPORT_WIDTH), min(y + h, VIEWPORT_HEIGHT)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    return Box(x0, y0, x1 - x0, y1 - y0)


def _inside(box: Box, grids: list[Grid]) -> bool:
    cx, cy = box.x + box.width / 2, box.y + box.height / 2
    return any(g.box.contains_point(cx, cy) for g in grids)


def _covers(grid: Grid, box: Box) -> bool:
    """True when a lattice takes up most of ``box`` (a canvas that is the board)."""
    gb = grid.box
    ix = min(gb.x + gb.width, box.x + box.width) - max(gb.x, box.x)
    iy = min(gb.y + gb.height, box.y + box.height) - max(gb.y, box.y)
    return ix > 0 and iy > 0 and ix * iy >= 0.5 * box.width * box.height


def _pixel_lattices(canvases: list[Box], grids: list[tuple[Grid, str]],
                    find_pixel_lattice: PixelLatticeFinder) -> list[tuple[Grid, str]]:
    """Lattices drawn on canvases no DOM lattice covers; the whole frame when none found."""
    found: list[tuple[Grid, str]] = []
    for canvas in canvases:
        if any(_covers(g, canvas) for g, _ in grids):
            continue
        region = (int(canvas.x), int(canvas.y), int(canvas.width), int(canvas.height))
        grid = find_pixel_lattice(region)
        # a full-page canvas behind a DOM board would give the same board twice
        if grid is not None and not any(same_board(grid, g) for g, _ in grids + found):
            found.append((grid, "pixels"))
    if not grids and not found:
        grid = find_pixel_lattice(None)
        if grid is not None:
            found.append((grid, "pixels"))
    return found


def _regions(snapshot: dict[str, Any], canvases: list[Box], lattices: list[Grid]
             ) -> list[tuple[Box, tuple[str, ...]]]:
    """Tappable elements and uncovered canvases outside every lattice, top to bottom."""
    regions: list[tuple[Box, tuple[str, ...]]] = []
    for rect in snapshot.get("interactive", []):
        box = _visible_box(rect)
        if box is not None and not _inside(box, lattices):
            regions.append((box, ("tap",)))
    for canvas in canvases:
        if not any(_covers(g, canvas) for g in lattices):
            regions.append((canvas, ("tap", "drag")))
    regions.sort(key=lambda item: (round(item[0].y), round(item[0].x)))
    return regions


def build_catalog(snapshot: dict[str, Any],
                  find_pixel_lattice: PixelLatticeFinder | None = None) -> Catalog:
    """The catalog of a frame from its DOM snapshot and, for canvases, its pixels.

    ``snapshot``: ``{"interactive": [[x,y,w,h],…], "boxes": [[x,y,w,h],…],
    "canvases": [[x,y,w,h],…]}`` in viewport pixels (see ``browser.SNAPSHOT_JS``).
    """
    grids: list[tuple[Grid, str]] = [(g, "dom") for g in find_dom_lattices(snapshot.get("boxes", []))]
    canvases = [b for b in (_visible_box(r) for r in snapshot.get("canvases", [])) if b]
    canvases = [b for b in canvases if b.width >= MIN_CANVAS_SIDE and b.height >= MIN_CANVAS_SIDE]
    if find_pixel_lattice is not None:
        grids += _pixel_lattices(canvases, grids, find_pixel_lattice)
    grids = grids[:MAX_LATTICES]
    targets = [Target(f"l{index:02d}", "lattice", grid.box, ("tap", "drag"), grid, source)
               for index, (grid, source) in enumerate(grids)]
    regions = _regions(snapshot, canvases, [g for g, _ in grids])
    room = MAX_TARGETS - len(targets) - 1
    for index, (box, gestures) in enumerate(regions[:room]):
        targets.append(Target(f"r{index:02d}", "region", box, gestures))
    targets.append(Target("g01", "spatial_grid", VIEWPORT_GRID.box, ("tap", "drag"),
                          VIEWPORT_GRID, "viewport"))
    return Catalog(targets)
