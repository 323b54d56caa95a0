"""Message validation: payloads checked against compiled message schemas.

Each message schema is compiled once into two forms: a generated verdict
function (:mod:`lingxi.contract.codegen`) that says whether a payload is
valid, and a dict of field checkers (:mod:`lingxi.contract.fields`) that say
why not. :class:`MessageIndex` picks the schema by ``payload["action"]`` and
direction; a payload the verdict accepts costs one lookup and one call, any
other goes through every checker so that all problems are reported at once.
"""

from __future__ import annotations

from typing import Any

from lingxi.contract.codegen import PayloadVerdict, payload_verdict
from lingxi.contract.fields import Checker, compile_field
from lingxi.contract.findings import FindingMemo
from lingxi.contract.model import BOTH, DIRECTIONS, ROUTE_DIRECTIONS, MessageSchema
from lingxi.contract.source import json_kind
from lingxi.errors import Finding, InputError

PREFIX = "message"


class CompiledMessage:
    """A message schema with its verdict and field checkers built once."""

    __slots__ = ("schema", "checks", "required", "implicit_action", "verdict", "position",
                 "explainers", "missing", "unknown")

    def __init__(self, schema: MessageSchema) -> None:
        self.schema = schema
        self.checks: dict[str, Checker] = {
            name: compile_field(defn, PREFIX) for name, defn in schema.fields.items()}
        self.required = tuple(name for name, defn in schema.fields.items()
                              if defn.get("required") is True)
        # A schema without an action field still accepts "action": <its name>.
        self.implicit_action = "action" not in schema.fields
        self.verdict: PayloadVerdict
        self.verdict, order = payload_verdict(
            schema.fields, schema.name if self.implicit_action else None)
        # key -> its place in the order the verdict checks fields in (required first)
        self.position = {key: index for index, key in enumerate(order)}
        self.explainers = dict(self.checks)
        if self.implicit_action:
            self.explainers["action"] = self._check_implicit_action
        # required keys in the verdict's order, each with its (immutable) finding
        self.missing = tuple(
            (key, Finding("message.missing_field",
                          f"required field of {schema.name!r} is missing", key))
            for key in order if key in self.required)
        self.unknown = FindingMemo()

    def _check_implicit_action(self, value: Any, path: str, out: list[Finding]) -> None:
        if value != self.schema.name:
            out.append(Finding("message.bad_value", f"action must be {self.schema.name!r}",
                               "action"))

    def _unknown(self, key: Any) -> Finding:
        finding = self.unknown.made.get(key)
        if finding is None:
            finding = self.unknown.keep(key, Finding(
                "message.unknown_field", f"field {str(key)[:80]!r} is not declared in "
                f"message {self.schema.name!r}", str(key)))
        return finding

    def validate(self, payload: dict[str, Any], out: list[Finding]) -> None:
        """Append every problem of ``payload`` (a dict) to ``out``."""
        good = self.verdict(payload)
        if good >= 0:
            self.explain(payload, good, out)

    def explain(self, payload: dict[str, Any], good: int, out: list[Finding]) -> None:
        """The findings for a payload the verdict refused after ``good`` good fields.

        Fields the verdict already found good cannot produce findings, so
        only the others are checked; findings follow the payload's key order,
        then the missing required fields.
        """
        position = self.position
        if good == len(position):  # every declared field is good: only extra keys remain
            for key in payload:
                if key not in position:
                    out.append(self._unknown(key))
            return
        explainers = self.explainers
        for key, value in payload.items():
            where = position.get(key)
            if where is None:
                out.append(self._unknown(key))
            elif where >= good:
                explainers[key](value, key, out)
        if good < len(self.missing):  # required fields come first in the verdict's order
            for key, finding in self.missing[good:]:
                if key not in payload:
                    out.append(finding)


def check_direction(direction: str | None) -> None:
    if direction is not None and direction not in ROUTE_DIRECTIONS:
        raise InputError("message.bad_direction",
                         f"direction must be host_to_guest or guest_to_host (to_group or "
                         f"to_member in a group spec), got {direction!r}")


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
        # direction (None: either) -> action -> schema: one lookup on the fast path
        self.routes: dict[str | None, dict[str, CompiledMessage]] = {
            side: {action: slot[side] for action, slot in self.by_action.items()
                   if side in slot} for side in ROUTE_DIRECTIONS}
        self.routes[None] = {action: next(iter(slot.values()))
                             for action, slot in self.by_action.items()}
        self.unknown_actions = FindingMemo()

    def route(self, payload: Any, direction: Any) -> CompiledMessage | None:
        """The schema ``payload`` is checked against, when it can be picked without a finding.

        None for anything else (not a dict, no string action, an unknown
        action or direction, the wrong direction): :meth:`validate` says why.
        """
        if type(payload) is not dict or (direction is not None and type(direction) is not str):
            return None
        route = self.routes.get(direction)
        action = payload.get("action")
        if route is None or type(action) is not str:
            return None
        return route.get(action)

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
            finding = self.unknown_actions.made.get(action)
            if finding is None:
                finding = self.unknown_actions.keep(action, Finding(
                    "message.unknown_action", f"no message with action {action[:80]!r} in "
                    "this spec", "action"))
            out.append(finding)
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
