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
