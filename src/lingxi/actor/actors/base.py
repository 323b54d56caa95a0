"""The actor interface, its typed error, and helpers that read an ActorView/4.

An actor is anything that turns ``(view, frame_png)`` into one selection
(actor-selection-v2). It must not look at anything else: no DOM, no page text,
no game internals. Helpers here only read the view dict.
"""

from __future__ import annotations

import random
from typing import Any

from lingxi.errors import LingxiError

SUB_ANCHORS = ("center", "north", "south", "east", "west",
               "northwest", "northeast", "southwest", "southeast")
SPATIAL_GRID = (17, 8)     # g01 rows × columns


class ActorError(LingxiError):
    """An actor could not be created or could not answer (codes ``actor.*``, exit 2)."""


class Actor:
    """Base class: ``select(view, frame_png) -> selection``; ``close()`` frees resources."""

    name = "actor"

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (HTTP clients, files). Safe to call twice."""

    def __enter__(self) -> Actor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_options(name: str, options: dict[str, str], allowed: set[str] | frozenset[str],
                  required: set[str] | frozenset[str] = frozenset()) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ActorError("actor.bad_option",
                         f"actor {name!r} does not take option(s) {', '.join(unknown)}; "
                         f"it takes: {', '.join(sorted(allowed)) or 'none'}")
    missing = sorted(required - set(options))
    if missing:
        raise ActorError("actor.bad_option", f"actor {name!r} needs option(s) {', '.join(missing)}")


# --------------------------------------------------------------------------- reading a view

def legal_types(view: dict[str, Any]) -> list[str]:
    return list(view.get("legalSelections", {}).get("types", []))


def safe_keys(view: dict[str, Any]) -> list[str]:
    return list(view.get("legalSelections", {}).get("safeKeys", []))


def targets(view: dict[str, Any]) -> list[dict[str, Any]]:
    return list(view.get("visualTargetCatalog", {}).get("targets", []))


def swap_candidates(view: dict[str, Any]) -> list[dict[str, Any]]:
    swaps = (view.get("interactionCandidates") or {}).get("match3Swaps") or {}
    return list(swaps.get("candidates", []))


def target_dimensions(target: dict[str, Any]) -> tuple[int, int] | None:
    """(rows, columns) of a lattice or spatial grid target; None for a region."""
    if target.get("kind") == "spatial_grid":
        return SPATIAL_GRID
    dims = target.get("dimensions")
    if not dims:
        return None
    return int(dims["rows"]), int(dims["columns"])


def target_ref(target: dict[str, Any], row: int | None = None, column: int | None = None,
               sub_anchor: str = "center") -> dict[str, Any]:
    """A TargetRef for ``target`` (a cell is required for lattices and g01, forbidden for regions)."""
    ref: dict[str, Any] = {"targetId": target["id"]}
    if target_dimensions(target) is not None:
        if row is None or column is None:
            raise ValueError(f"target {target['id']} needs a cell")
        ref["cell"] = {"row": row, "column": column}
    if sub_anchor != "center":
        ref["subAnchor"] = sub_anchor
    return ref


def random_ref(target: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    dims = target_dimensions(target)
    if dims is None:
        return target_ref(target)
    return target_ref(target, rng.randint(1, dims[0]), rng.randint(1, dims[1]))


def random_selection(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Uniform over the selection types that are legal AND usable, then a uniform parameter."""
    options: dict[str, Any] = {}
    types = legal_types(view)
    tap_targets = [t for t in targets(view) if "tap" in t.get("allowedGestures", [])]
    drag_targets = [t for t in targets(view) if "drag" in t.get("allowedGestures", [])]
    if "tap" in types and tap_targets:
        options["tap"] = lambda: {"type": "tap", "target": random_ref(rng.choice(tap_targets), rng)}
    if "drag" in types and drag_targets:
        def drag() -> dict[str, Any]:
            target = rng.choice(drag_targets)
            return {"type": "drag", "from": random_ref(target, rng), "to": random_ref(target, rng)}
        options["drag"] = drag
    if "key" in types and safe_keys(view):
        options["key"] = lambda: {"type": "key", "key": rng.choice(safe_keys(view))}
    if "swap_pair" in types and swap_candidates(view):
        options["swap_pair"] = lambda: {"type": "swap_pair",
                                        "candidateId": rng.choice(swap_candidates(view))["candidateId"]}
    if "wait" in types or not options:
        options["wait"] = lambda: {"type": "wait", "ms": rng.randint(100, 600)}
    kind = rng.choice(sorted(options))
    return options[kind]()


def legality_problem(view: dict[str, Any], selection: dict[str, Any]) -> str | None:
    """Why a schema-valid selection cannot be played on this view, or None.

    Checks what the schema cannot: the type is legal now, the targets exist and
    allow the gesture, cells are inside the target, the candidate exists.
    """
    kind = selection.get("type")
    if kind not in legal_types(view):
        return f"{kind!r} is not legal now (legal: {', '.join(legal_types(view))})"
    by_id = {t["id"]: t for t in targets(view)}
    refs = [selection["target"]] if kind == "tap" else (
        [selection["from"], selection["to"]] if kind == "drag" else [])
    for ref in refs:
        target = by_id.get(ref.get("targetId"))
        if target is None:
            return f"no target {ref.get('targetId')!r} in this frame (have: {', '.join(by_id)})"
        if kind not in target.get("allowedGestures", []):
            return f"target {target['id']} does not allow {kind}"
        dims = target_dimensions(target)
        cell = ref.get("cell")
        if dims is not None and cell is not None and not (
                1 <= cell["row"] <= dims[0] and 1 <= cell["column"] <= dims[1]):
            return f"cell ({cell['row']}, {cell['column']}) is outside {target['id']} ({dims[0]}x{dims[1]})"
    if kind == "key" and selection.get("key") not in safe_keys(view):
        return f"key {selection.get('key')!r} is not a safe key here"
    if kind == "swap_pair" and selection.get("candidateId") not in {
            c["candidateId"] for c in swap_candidates(view)}:
        return f"no swap candidate {selection.get('candidateId')!r}"
    return None
