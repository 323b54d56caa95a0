"""Cheating peers: honest machines behind a rewriter of what they send.

An :class:`Adversary` sits between a machine and the wire in the in-memory
driver; a :class:`Case` names a cheat, who commits it and the codes the honest
side must end the session with. The generic cases live in
``lingxi.session.adversarial``; each flow mode's descriptor adds its own.
Pure code: no driver, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from lingxi.records import Record, record

ROLES = ("host", "guest")
RANGE_CODES = ("message.out_of_range", "message.bad_value", "message.too_long",
               "message.too_large")


def is_control(payload: dict[str, Any]) -> bool:
    action = payload.get("action")
    return isinstance(action, str) and (action.startswith("control.")
                                        or action.startswith("session."))


class Adversary:
    """A cheating side: rewrites what an honest machine sends. Identity by default.

    ``cheated`` says whether the cheat was actually played in the run: None for
    adversaries that always act (silence, a forged envelope), False until an
    adversary that waits for its moment (the n-th message, a game step) has
    sent a message that differs from the honest one. A run whose adversary
    never cheated is reported as not applicable, never as a missed cheat.
    """

    cheated: bool | None = None

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        return [(payload, correlation_id)]

    def wire(self, side: Any, envelope: dict[str, Any]) -> list[dict[str, Any]]:
        return [envelope]


def sample_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("min"), schema.get("max")
        value = low if low is not None else 1
        return min(value, high) if high is not None else value
    if kind == "boolean":
        return False
    if kind == "enum":
        return (schema.get("values") or ["x"])[0]
    if kind in ("hash", "key"):
        return "0" * 64
    if kind == "signature":
        return "0" * 128
    if kind == "nonce":
        return "0" * 16
    if kind == "ciphertext":
        return "00"
    if kind == "array":
        return [sample_value(schema.get("items") or {})] * int(schema.get("min_items") or 0)
    if kind == "json":
        return [] if schema.get("container") == "array" else {}
    if kind == "id":
        return "x1"
    return "x"


def sample_message(message: dict[str, Any]) -> dict[str, Any]:
    """A valid payload for ``message`` with its required fields only."""
    fields = message.get("fields") or {}
    action = fields.get("action", {})
    values = action.get("values") or [message.get("name")]
    payload = {"action": values[0] if message.get("name") not in values else message["name"]}
    for name, schema in fields.items():
        if name != "action" and schema.get("required"):
            payload[name] = sample_value(schema)
    return payload


HEX_TYPES = ("hash", "key", "signature", "nonce", "ciphertext")
ID_CHARS = "xy"


def _other_boolean(value: Any, schema: dict[str, Any]) -> Any:
    return (not value) if isinstance(value, bool) else None


def _other_integer(value: Any, schema: dict[str, Any]) -> Any:
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    low, high = schema.get("min"), schema.get("max")
    return next((c for c in (value + 1, value - 1)
                 if (low is None or c >= low) and (high is None or c <= high)), None)


def _other_enum(value: Any, schema: dict[str, Any]) -> Any:
    return next((v for v in schema.get("values") or [] if v != value), None)


def _other_text(value: str, schema: dict[str, Any]) -> str | None:
    if len(value.encode("utf-8")) + 1 <= int(schema.get("max_length") or 2000):
        return value + "x"
    return value[:-1] if value else None


def _other_id(value: str, schema: dict[str, Any]) -> str | None:
    if not value:
        return None
    return value[:-1] + (ID_CHARS[1] if value[-1] == ID_CHARS[0] else ID_CHARS[0])


def _other_hex(value: str, schema: dict[str, Any]) -> str | None:
    return value[:-1] + ("1" if value[-1] != "1" else "2") if value else None


_ANY_VALUE: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "boolean": _other_boolean, "integer": _other_integer, "enum": _other_enum}
_TEXT_VALUE: dict[str, Callable[[str, dict[str, Any]], str | None]] = {
    "text": _other_text, "id": _other_id, **{kind: _other_hex for kind in HEX_TYPES}}


def different_value(value: Any, schema: dict[str, Any], choices: list[Any] | tuple[Any, ...] = ()
                    ) -> Any:
    """A value other than ``value`` that the field still accepts, or None when there is none.

    From ``choices`` when the round has them; else from the field's type and
    bounds: the next integer inside ``min``/``max``, another enum value, the
    other boolean, one more (or one less) character of text, a hex string with
    its last digit changed. A cheat built from it is a real lie, never the
    honest value sent again.
    """
    if choices:
        return next((c for c in choices if c != value and type(c) is type(value)), None)
    kind = str(schema.get("type"))
    if kind in _ANY_VALUE:
        return _ANY_VALUE[kind](value, schema)
    if kind in _TEXT_VALUE and isinstance(value, str):
        return _TEXT_VALUE[kind](value, schema)
    return None


def can_differ(schema: dict[str, Any], choices: list[Any] | tuple[Any, ...] = ()) -> bool:
    """Whether some value of the field has another accepted value (a lie can be built)."""
    if choices:
        return len(set(map(repr, choices))) > 1
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("min"), schema.get("max")
        return low is None or high is None or high > low
    if kind == "enum":
        return len(set(schema.get("values") or [])) > 1
    if kind == "text":
        return int(schema.get("max_length") or 2000) >= 1
    return kind in ("boolean", "id", *HEX_TYPES)


def wrong_type_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        return "1"
    if kind == "boolean":
        return "true"
    if kind == "array":
        return "not-an-array"
    if kind == "json":
        return None
    return 12345


def out_of_range_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        if schema.get("max") is not None:
            return schema["max"] + 1
        if schema.get("min") is not None:
            return schema["min"] - 1
        return None
    if kind == "enum":
        return "zz-not-a-declared-value"
    if kind == "text":
        return "x" * (int(schema.get("max_length") or 2000) + 1)
    if kind in ("hash", "key", "signature", "nonce", "ciphertext", "id"):
        return "Z!" * 40
    return None


# -------------------------------------------------------------- adversaries


class ReplaceFirst(Adversary):
    """Replace the cheater's first protocol message with ``make()``."""

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self.make = make
        self.done = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if self.done or is_control(payload):
            return [(payload, correlation_id)]
        self.done = True
        return [(self.make(), correlation_id)]


class InjectBeforeStart(Adversary):
    """Send a protocol message before the session's offer/accept."""

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self.make = make
        self.done = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if not self.done and payload.get("action") in ("session.offer", "session.accept"):
            self.done = True
            return [(self.make(), None), (payload, correlation_id)]
        return [(payload, correlation_id)]


class MutateNth(Adversary):
    """Rewrite the n-th real ``message`` the cheater sends.

    ``cheated`` turns True only when the rewritten payload differs from the
    honest one: a mutation that finds no other value leaves the message as it
    was, and the case is then not applicable rather than missed.
    """

    def __init__(self, message: str, mutate: Callable[[dict[str, Any]], dict[str, Any]],
                 nth: int = 1) -> None:
        self.message, self.mutate, self.nth, self.seen = message, mutate, nth, 0
        self.cheated = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if payload.get("action") == self.message:
            self.seen += 1
            if self.seen == self.nth:
                changed = self.mutate(copy.deepcopy(payload))
                if changed != payload:
                    self.cheated = True
                    return [(changed, correlation_id)]
        return [(payload, correlation_id)]


class ReplayFirst(Adversary):
    """Send the first protocol envelope twice, byte for byte."""

    def __init__(self) -> None:
        self.done = False

    def wire(self, side: Any, envelope: dict[str, Any]) -> list[dict[str, Any]]:
        if self.done or is_control(envelope.get("payload") or {}):
            return [envelope]
        self.done = True
        return [envelope, copy.deepcopy(envelope)]


class ForgeFirst(Adversary):
    """Change the first protocol envelope's payload after it was signed."""

    def __init__(self) -> None:
        self.done = False

    def wire(self, side: Any, envelope: dict[str, Any]) -> list[dict[str, Any]]:
        if self.done or is_control(envelope.get("payload") or {}):
            return [envelope]
        self.done = True
        forged = copy.deepcopy(envelope)
        forged["payload"]["zz_forged"] = True
        return [forged]


class Silent(Adversary):
    """Start the session, then never send anything again (not even an abort)."""

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        action = payload.get("action")
        if action in ("session.offer", "session.accept"):
            return [(payload, correlation_id)]
        return []


# ------------------------------------------------------------------- cases


@record
class Case(Record):
    """A cheat, who commits it, and what the honest side must end with.

    By default the victim must abort the session itself with one of
    ``expect``; ``detect``, when given, reads what was detected from the
    victim's outcome instead (a resignation ends ``completed``, with the
    verdict in the outcome's summary).
    """

    name: str
    cheater: str
    expect: tuple[str, ...]
    make: Callable[[], Adversary] | None
    note: str = ""
    detect: Callable[[Any], str | None] | None = None

    @property
    def victim(self) -> str:
        return "guest" if self.cheater == "host" else "host"
