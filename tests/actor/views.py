"""Build ActorView/4 dicts for actor tests (valid against the shipped schema)."""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

SAFE_KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "KeyW", "KeyA", "KeyS", "KeyD",
             "Enter", "Escape", "Space"]
ANCHORS = ["center", "north", "south", "east", "west", "northwest", "northeast", "southwest", "southeast"]


def _h(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def candidates(rows: int, columns: int, seed: int, lattice_id: str = "l00") -> list[dict[str, Any]]:
    pairs = []
    for r in range(1, rows + 1):
        for c in range(1, columns + 1):
            if c < columns:
                pairs.append(((r, c), (r, c + 1)))
            if r < rows:
                pairs.append(((r, c), (r + 1, c)))
    random.Random(seed).shuffle(pairs)
    return [{"candidateId": f"ms{i:03d}", "latticeId": lattice_id,
             "pair": [{"cell": {"row": a[0], "column": a[1]}}, {"cell": {"row": b[0], "column": b[1]}}]}
            for i, (a, b) in enumerate(pairs)]


def make_view(frame_png: bytes = b"", *, rows: int | None = 8, columns: int | None = 8, seed: int = 1,
              types: list[str] | None = None, regions: int = 1, with_candidates: bool = True,
              keys: list[str] | None = None, frame_ref: str = "frames/frame-initial.png") -> dict[str, Any]:
    frame_hash = hashlib.sha256(frame_png).hexdigest()
    targets: list[dict[str, Any]] = [
        {"id": f"r{i:02d}", "kind": "region", "allowedGestures": ["tap"]} for i in range(regions)]
    has_lattice = rows is not None and columns is not None
    if has_lattice:
        targets.append({"id": "l00", "kind": "lattice", "allowedGestures": ["tap", "drag"],
                        "dimensions": {"rows": rows, "columns": columns}, "subAnchors": ANCHORS})
    targets.append({"id": "g01", "kind": "spatial_grid", "allowedGestures": ["tap", "drag"],
                    "dimensions": {"rows": 17, "columns": 8}, "subAnchors": ANCHORS, "fallbackOnly": True})
    cands = candidates(rows, columns, seed) if has_lattice and with_candidates else []
    if types is None:
        types = ["tap", "drag", "key", "wait"] + (["swap_pair"] if cands else [])
    return {
        "schemaVersion": "playtest/3",
        "projectionVersion": "ActorView/4",
        "brief": "Score as many points as you can.",
        "currentFrameRef": frame_ref,
        "currentFrameHash": frame_hash,
        "viewport": {"width": 390, "height": 844, "dpr": 1},
        "legalSelections": {"types": types, "safeKeys": SAFE_KEYS if keys is None else keys,
                            "actionBudgetMs": 600, "waitMs": [100, 600]},
        "visualTargetCatalog": {"schemaVersion": "VisualTargetSet/1", "sourceFrameRef": frame_ref,
                                "sourceFrameHash": frame_hash, "targetSetHash": _h(targets),
                                "targets": targets},
        "history": [],
        "protocolErrors": [],
        "remainingBudget": 20,
        "virtualTimeMs": 0,
        "objectiveProgress": None,
        "interactionCandidates": ({"match3Swaps": {"candidateSetHash": _h(cands), "candidates": cands}}
                                  if cands else None),
    }
