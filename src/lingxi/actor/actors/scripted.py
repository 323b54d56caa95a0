"""scripted: replays a JSON list of selections, then waits.

The script is validated when the actor is created, so a typo fails before the
browser starts, with the index of the bad entry in the error's path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .base import Actor, ActorError, check_options

EXHAUSTED = {"type": "wait", "ms": 600, "reason": "script exhausted"}


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a script file: a JSON list of actor-selection-v2 objects."""
    from lingxi.actor.contracts import ContractViolation, validate_selection

    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ActorError("actor.script_invalid", f"script {p} is not UTF-8 (byte {exc.start})"
                         ) from None
    except OSError as exc:
        raise ActorError("actor.script_unreadable", f"cannot read script {p}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ActorError("actor.script_invalid", f"script {p} is not JSON: {exc.msg} "
                         f"(line {exc.lineno}, column {exc.colno})") from exc
    except RecursionError:
        raise ActorError("actor.script_invalid", f"script {p} is nested too deeply") from None
    if not isinstance(data, list):
        raise ActorError("actor.script_invalid", f"script {p} must be a JSON list of selections", path="$")
    for index, selection in enumerate(data):
        try:
            validate_selection(selection)
        except ContractViolation as exc:
            inner = (exc.path or "$")[1:]
            raise ActorError("actor.script_invalid", f"script {p} entry {index}: {exc.message}",
                             path=f"$[{index}]{inner}") from exc
    return data


class ScriptedActor(Actor):
    name = "scripted"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None) -> None:
        options = dict(options or {})
        check_options(self.name, options, {"script"}, {"script"})
        self._script = load_script(options["script"])
        self._next = 0

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        if self._next >= len(self._script):
            return dict(EXHAUSTED)
        selection = self._script[self._next]
        self._next += 1
        return json.loads(json.dumps(selection))   # callers may mutate their copy
