"""The built-in spec templates behind ``lingxi protocol create``."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from lingxi.errors import InputError

TEMPLATES: dict[str, str] = {
    "turn-based-game": "session_loop game: guest moves, host answers with the new state",
    "simultaneous-choice": "simultaneous_round with SHA256 commit-reveal, best of N",
    "request-response": "request_response service: request, accept, deliver, confirm",
    "free-chat": "free mode chat; either side ends it",
    "card-game": "mental_poker 1v1 hidden-hand card game",
    "group-poker": "group (2-6 seats): fixed-limit Hold'em on N-party mental poker",
    "group-vote": "group (3-16 seats): discuss a motion, vote by commit-reveal, tally from the log",
}


def template_names() -> list[str]:
    return list(TEMPLATES)


def template_text(name: str) -> str:
    """The JSON text of template ``name``; InputError listing the names if unknown."""
    if name not in TEMPLATES:
        raise InputError("template.unknown", f"unknown template {name!r}; choose one of: "
                         f"{', '.join(TEMPLATES)}")
    return (resources.files("lingxi.contract") / "templates" / f"{name}.json").read_text(
        encoding="utf-8")


def template_document(name: str, *, title: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(template_text(name))
    if title is not None:
        doc["name"] = title
    return doc
