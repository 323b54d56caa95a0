"""Check a schema-valid selection against the current view and turn it into a concrete action.

The JSON Schema says what a selection may look like; this module says whether
it makes sense *now*: the target exists in this frame's catalog, the cell is on
that lattice, the gesture is allowed there, a swap candidate exists. The result
is a ``playtest-evidence#/$defs/action`` dict in viewport pixels.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from lingxi.playtest.catalog import Catalog, Target
from lingxi.playtest.errors import SelectionRejected

DRAG_POINTS = 6
# A swap's drag: the press, a move halfway (past any drag threshold, in the swap's direction)
# and a move onto the other cell. Each point costs a forced frame; the four points between
# of a plain drag's path told no game anything more (the zoo's drag games, tests/playtest).
SWAP_DRAG_POINTS = 3
DRAG_DURATION_MS = 0  # the gesture is sent at one virtual instant (browser._drag)


def _reject(code: str, message: str) -> SelectionRejected:
    return SelectionRejected(f"selection.{code}", message)


def _target(catalog: Catalog, ref: Mapping[str, Any], gesture: str) -> Target:
    target_id = ref["targetId"]
    target = catalog.by_id.get(target_id)
    if target is None:
        known = ", ".join(t.id for t in catalog.targets)
        raise _reject("unknown_target", f"target {target_id} is not in this frame's catalog ({known})")
    if gesture not in target.gestures:
        raise _reject("gesture_not_allowed", f"target {target_id} does not allow {gesture}")
    return target


def point_of(catalog: Catalog, ref: Mapping[str, Any], gesture: str) -> tuple[int, int]:
    """The viewport point a target reference designates."""
    target = _target(catalog, ref, gesture)
    anchor = ref.get("subAnchor", "center")
    if target.grid is None:
        return target.box.anchor(anchor)
    cell = ref["cell"]
    row, column = cell["row"], cell["column"]
    if not target.grid.has_cell(row, column):
        raise _reject("cell_out_of_range",
                      f"cell ({row},{column}) is outside {target.id} "
                      f"({target.grid.rows} rows × {target.grid.columns} columns)")
    return target.grid.cell_box(row, column).anchor(anchor)


def drag_path(start: tuple[int, int], end: tuple[int, int], points: int = DRAG_POINTS):
    """Evenly spaced integer points from ``start`` to ``end`` inclusive."""
    return [{"x": round(start[0] + (end[0] - start[0]) * i / (points - 1)),
             "y": round(start[1] + (end[1] - start[1]) * i / (points - 1))}
            for i in range(points)]


def normalize(selection: Mapping[str, Any], catalog: Catalog, *, legal_types: Collection[str],
              candidates: Mapping[str, dict[str, Any]] | None = None,
              swap_via: str = "drag") -> dict[str, Any]:
    """The concrete action for a schema-valid ``selection``; raises SelectionRejected."""
    kind = selection["type"]
    if kind not in legal_types:
        raise _reject("not_legal", f"{kind} is not a legal selection in this view "
                                   f"(legal: {', '.join(legal_types)})")
    if kind == "tap":
        x, y = point_of(catalog, selection["target"], "tap")
        return {"kind": "tap", "x": x, "y": y}
    if kind == "drag":
        start = point_of(catalog, selection["from"], "drag")
        end = point_of(catalog, selection["to"], "drag")
        return {"kind": "drag", "path": drag_path(start, end), "durationMs": DRAG_DURATION_MS}
    if kind == "key":
        return {"kind": "key", "key": selection["key"]}
    if kind == "wait":
        return {"kind": "wait", "ms": selection["ms"]}
    if kind == "swap_pair":
        if not candidates:
            raise _reject("no_lattice", "swap_pair needs a Match-3 board and there is none")
        candidate = candidates.get(selection["candidateId"])
        if candidate is None:
            raise _reject("unknown_candidate",
                          f"{selection['candidateId']} is not one of this view's swap candidates")
        lattice = candidate["latticeId"]
        first, second = (dict(end["cell"]) for end in candidate["pair"])
        start = point_of(catalog, {"targetId": lattice, "cell": first}, "drag")
        end = point_of(catalog, {"targetId": lattice, "cell": second}, "drag")
        return {"kind": "swap", "from": {"x": start[0], "y": start[1]},
                "to": {"x": end[0], "y": end[1]}, "via": swap_via}
    raise _reject("unknown_type", f"unknown selection type {kind!r}")
