"""Message validation: payloads checked against compiled message schemas.

Each message schema is compiled once into a dict of field checkers (see
:mod:`lingxi.contract.fields`); :class:`MessageIndex` picks the schema by
``payload["action"]`` and direction, then runs every check so that all
problems are reported at once.
"""

from __future__ import annotations

from typing import Any

from lingxi.contract.fields import Checker, compile_field
from lingxi.contract.model import BOTH, DIRECTIONS, MessageSchema
from lingxi.contract.source import json_kind
from lingxi.errors import Finding, InputError

PREFIX = "message"


class CompiledMessage:
    """A message schema with its field checkers built once."""

    __slots__ = ("schema", "checks", "required", "implicit_action")

    def __init__(self, schema: MessageSchema) -> None:
        self.schema = schema
        self.checks: dict[str, Checker] = {
            name: compile_field(defn, PREFIX) for name, defn in schema.fields.items()}
        self.required = tuple(name for name, defn in schema.fields.items()
                              if defn.get("required") is True)
        # A schema without an action field still accepts "action": <its name>.
        self.implicit_action = "action" not in schema.fields

    def validate(self, payload: dict, out: list[Finding]) -> None:
        checks = self.checks
        for key, value in payload.items():
            check = checks.get(key)
            if check is not None:
                check(value, key, out)
            elif key == "action" and self.implicit_action:
                if value != self.schema.name:
                    out.append(Finding("message.bad_value",
                                       f"action must be {self.schema.name!r}", "action"))
            else:
                out.append(Finding("message.unknown_field",
                                   f"field {str(key)[:80]!r} is not declared in message "
                                   f"{self.schema.name!r}", str(key)))
        for key in self.required:
            if key not in payload:
                out.append(Finding("message.missing_field",
                                   f"required field of {self.schema.name!r} is missing", key))


def check_direction(direction: str | None) -> None:
    if direction is not None and direction not in DIRECTIONS:
        raise InputError("message.bad_direction",
                         f"direction must be host_to_guest or guest_to_host, got {direction!r}")


class MessageIndex:
    """Schemas by name and by (action, direction); built once per spec."""

    def __init__(self, schemas: dict[str, MessageSchema],
                 actions: dict[str, list[str]]) -> None:
        self.by_name = {name: CompiledMessage(s) for name, s in schemas.items()}
        self.by_action: dict[str, dict[str, CompiledMessage]] = {}
        for name, compiled in self.by_name.items():
            sides = DIRECTIONS if compiled.schema.direction == BOTH else (
                compiled.schema.direction,)
            for action in actions[name]:
                slot = self.by_action.setdefault(action, {})
                for side in sides:
                    slot.setdefault(side, compiled)

    def select(self, payload: Any, direction: str | None,
               out: list[Finding]) -> CompiledMessage | None:
        """The schema for ``payload``, or None with the reason appended to ``out``."""
        if type(payload) is not dict:
            out.append(Finding("message.not_object",
                               f"a message must be a JSON object, got {json_kind(payload)}"))
            return None
        if "action" not in payload:
            out.append(Finding("message.missing_action", "the message has no action field",
                               "action"))
            return None
        action = payload["action"]
        if type(action) is not str:
            out.append(Finding("message.wrong_type",
                               f"action must be a string, got {json_kind(action)}", "action"))
            return None
        slot = self.by_action.get(action)
        if slot is None:
            out.append(Finding("message.unknown_action",
                               f"no message with action {action[:80]!r} in this spec", "action"))
            return None
        if direction is None:
            return next(iter(slot.values()))
        compiled = slot.get(direction)
        if compiled is None:
            other = next(iter(slot.values())).schema
            out.append(Finding("message.wrong_direction",
                               f"{other.name!r} is {other.direction}, not {direction}",
                               "action"))
        return compiled

    def validate(self, payload: Any, direction: str | None,
                 message: str | None = None) -> list[Finding]:
        out: list[Finding] = []
        if message is not None:
            compiled = self.by_name.get(message)
            if compiled is None:
                raise InputError("message.unknown_message",
                                 f"the spec declares no message named {message!r}")
            if type(payload) is not dict:
                out.append(Finding("message.not_object",
                                   f"a message must be a JSON object, got {json_kind(payload)}"))
                return out
            if direction is not None and not compiled.schema.matches(direction):
                out.append(Finding("message.wrong_direction",
                                   f"{message!r} is {compiled.schema.direction}, not {direction}",
                                   "$"))
        else:
            compiled = self.select(payload, direction, out)
            if compiled is None:
                return out
        compiled.validate(payload, out)
        return out
