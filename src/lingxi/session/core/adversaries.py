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
from dataclasses import dataclass
from typing import Any

ROLES = ("host", "guest")
RANGE_CODES = ("message.out_of_range", "message.bad_value", "message.too_long",
               "message.too_large")


def is_control(payload: dict[str, Any]) -> bool:
    action = payload.get("action")
    return isinstance(action, str) and (action.startswith("control.")
                                        or action.startswith("session."))


class Adversary:
    """A cheating side: rewrites what an honest machine sends. Identity by default."""

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

    def outgoing(self, side, payload, correlation_id):
        if self.done or is_control(payload):
            return [(payload, correlation_id)]
        self.done = True
        return [(self.make(), correlation_id)]


class InjectBeforeStart(Adversary):
    """Send a protocol message before the session's offer/accept."""

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self.make = make
        self.done = False

    def outgoing(self, side, payload, correlation_id):
        if not self.done and payload.get("action") in ("session.offer", "session.accept"):
            self.done = True
            return [(self.make(), None), (payload, correlation_id)]
        return [(payload, correlation_id)]


class MutateNth(Adversary):
    """Rewrite the n-th real ``message`` the cheater sends."""

    def __init__(self, message: str, mutate: Callable[[dict[str, Any]], dict[str, Any]],
                 nth: int = 1) -> None:
        self.message, self.mutate, self.nth, self.seen = message, mutate, nth, 0

    def outgoing(self, side, payload, correlation_id):
        if payload.get("action") == self.message:
            self.seen += 1
            if self.seen == self.nth:
                return [(self.mutate(copy.deepcopy(payload)), correlation_id)]
        return [(payload, correlation_id)]


class ReplayFirst(Adversary):
    """Send the first protocol envelope twice, byte for byte."""

    def __init__(self) -> None:
        self.done = False

    def wire(self, side: Any, envelope):
        if self.done or is_control(envelope.get("payload") or {}):
            return [envelope]
        self.done = True
        return [envelope, copy.deepcopy(envelope)]


class ForgeFirst(Adversary):
    """Change the first protocol envelope's payload after it was signed."""

    def __init__(self) -> None:
        self.done = False

    def wire(self, side: Any, envelope):
        if self.done or is_control(envelope.get("payload") or {}):
            return [envelope]
        self.done = True
        forged = copy.deepcopy(envelope)
        forged["payload"]["zz_forged"] = True
        return [forged]


class Silent(Adversary):
    """Start the session, then never send anything again (not even an abort)."""

    def outgoing(self, side, payload, correlation_id):
        action = payload.get("action")
        if action in ("session.offer", "session.accept"):
            return [(payload, correlation_id)]
        return []


# ------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    cheater: str
    expect: tuple[str, ...]
    make: Callable[[], Adversary] | None
    note: str = ""

    @property
    def victim(self) -> str:
        return "guest" if self.cheater == "host" else "host"
