"""Between machine actions/events and Synapse envelope payloads.

Protocol messages travel as their own payload (type ``p2p:<action>``).
Session control uses two namespaces: the wire's reserved ``control.*``
(``control.abort`` with reason/message/evidence, ``control.close``) and this
layer's ``session.*`` actions (``session.offer``, ``session.accept``,
``session.receipt``). Specs should not declare actions in either namespace.
"""

from __future__ import annotations

from typing import Any

from lingxi.session import errors as codes
from lingxi.session.core.events import (
    ControlReceived,
    EnvelopeRejected,
    PayloadReceived,
    PeerAborted,
    SendControl,
)
from lingxi.wire import abort_payload, control_payload

SESSION_PREFIX = "session."
SESSION_KINDS = ("offer", "accept", "receipt", "deciding")

# The registry checkpoint a side saw last (a signed note), carried in its offer or accept so
# two agents that meet can tell whether the registry showed them one log (issue 18.3). It
# is the peer's claim, signed inside its envelope; the edge checks it against the registry.
CHECKPOINT_FIELD = "registry_checkpoint"
CHECKPOINT_LIMIT = 8192  # characters: a checkpoint with a dozen witness cosignatures
OPENING_ACTIONS = frozenset({SESSION_PREFIX + "offer", SESSION_PREFIX + "accept"})


def with_checkpoint(payload: dict[str, Any], note: str | None) -> dict[str, Any]:
    """An offer or accept payload carrying ``note`` (other payloads unchanged)."""
    if note is None or payload.get("action") not in OPENING_ACTIONS:
        return payload
    return {**payload, CHECKPOINT_FIELD: note}


def checkpoint_in(payload: dict[str, Any]) -> str | None:
    """The checkpoint a peer's offer or accept carries, if it is text of a sane size."""
    if payload.get("action") not in OPENING_ACTIONS:
        return None
    note = payload.get(CHECKPOINT_FIELD)
    return note if isinstance(note, str) and 0 < len(note) <= CHECKPOINT_LIMIT else None


def control_to_payload(action: SendControl) -> dict[str, Any]:
    """The envelope payload for a machine's SendControl."""
    if action.kind == "abort":
        body = action.body
        return abort_payload(str(body.get("code")), str(body.get("message", "")),
                             body.get("evidence") or {})
    if action.kind == "close":
        return control_payload("close", reason=action.body.get("reason"))
    if action.kind in SESSION_KINDS:
        return {"action": SESSION_PREFIX + action.kind, **action.body}
    raise ValueError(f"unknown control kind {action.kind!r}")


def payload_to_event(payload: dict[str, Any], correlation_id: str | None = None,
                     size: int = 0) -> Any:
    """The machine event for an accepted envelope's payload (None: not for the machine)."""
    action = payload.get("action")
    if isinstance(action, str):
        if action == "control.abort":
            evidence = payload.get("evidence")
            return PeerAborted(str(payload.get("reason") or "session.aborted")[:120],
                               str(payload.get("message") or "")[:2000],
                               evidence if isinstance(evidence, dict) else {})
        if action == "control.close":
            return ControlReceived("close", {"reason": payload.get("reason")})
        if action.startswith("control."):
            return None  # heartbeats and wire-level receipts
        if action.startswith(SESSION_PREFIX):
            kind = action[len(SESSION_PREFIX):]
            body = {k: v for k, v in payload.items() if k != "action"}
            return ControlReceived(kind, body)
    return PayloadReceived(payload, correlation_id, size)


def over_state_limit(machine: Any, recorder: Any) -> EnvelopeRejected | None:
    """The event that ends a session whose state folder outgrew its limit, if it did."""
    limit = machine.limits["max_state_bytes"]
    if recorder.written <= limit or machine.finished:
        return None
    return EnvelopeRejected(codes.TOO_LARGE, "the session's state outgrew its limit",
                            {"max_state_bytes": limit, "written": recorder.written})


def is_receipt(payload: dict[str, Any]) -> bool:
    return payload.get("action") == SESSION_PREFIX + "receipt"
