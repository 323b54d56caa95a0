"""Assemble an ActorView/4 document from the harness's state (pure)."""

from __future__ import annotations

from typing import Any

from lingxi.playtest.geometry import VIEWPORT_HEIGHT, VIEWPORT_WIDTH

SAFE_KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "KeyW", "KeyA", "KeyS", "KeyD",
             "Enter", "Escape", "Space"]
BASE_TYPES = ["tap", "drag", "key", "wait"]
HISTORY_LIMIT = 64
PROTOCOL_ERROR_LIMIT = 16
EVENTS_PER_HISTORY_ENTRY = 32  # newest kept in the view; evidence.json keeps all


def legal_selections(has_swaps: bool) -> dict[str, Any]:
    return {"types": BASE_TYPES + (["swap_pair"] if has_swaps else []),
            "safeKeys": list(SAFE_KEYS), "actionBudgetMs": 600, "waitMs": [100, 600]}


def build_view(*, brief: str, frame_ref: str, frame_hash: str, catalog: dict[str, Any],
               history: list[dict[str, Any]], protocol_errors: list[dict[str, str]],
               remaining_budget: int, virtual_time_ms: int,
               objective_progress: dict[str, Any] | None,
               swaps: dict[str, Any] | None) -> dict[str, Any]:
    """The view an actor sees before choosing its next selection."""
    return {
        "schemaVersion": "playtest/3",
        "projectionVersion": "ActorView/4",
        "brief": brief,
        "currentFrameRef": frame_ref,
        "currentFrameHash": frame_hash,
        "viewport": {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT, "dpr": 1},
        "legalSelections": legal_selections(swaps is not None),
        "visualTargetCatalog": catalog,
        "history": [_trim(entry) for entry in history[-HISTORY_LIMIT:]],
        "protocolErrors": protocol_errors[-PROTOCOL_ERROR_LIMIT:],
        "remainingBudget": remaining_budget,
        "virtualTimeMs": virtual_time_ms,
        "objectiveProgress": objective_progress,
        "interactionCandidates": {"match3Swaps": swaps} if swaps is not None else None,
    }


def _trim(entry: dict[str, Any]) -> dict[str, Any]:
    if len(entry["gameEvents"]) <= EVENTS_PER_HISTORY_ENTRY:
        return entry
    return {**entry, "gameEvents": entry["gameEvents"][-EVENTS_PER_HISTORY_ENTRY:]}
