"""What snapshot.json says about a machine right now (state, position, pending decision)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lingxi.session.core.events import RequestDecision
from lingxi.session.core.machine import SessionMachine
from lingxi.session.errors import SessionError
from lingxi.wire.timefmt import format_rfc3339


def snapshot_of(machine: SessionMachine, session_id: str, identity: Any, peer_key: str,
                pending: RequestDecision | None = None,
                deadline: float | None = None) -> dict[str, Any]:
    """What snapshot.json says about a machine right now."""
    outcome = machine.outcome.to_dict() if machine.outcome else None
    return {
        "session_id": session_id, "role": machine.role, "mode": machine.mode,
        "protocol_id": machine.spec.protocol_id, "protocol": machine.spec.name,
        "state": "finished" if machine.finished else machine.state,
        "options": machine.options, "position": machine.position() if not machine.finished else {},
        "sent": machine.sent_count, "received": machine.received_count,
        "public_key": identity.public_hex, "peer_public_key": peer_key,
        "outcome": outcome,
        "pending_decision": None if pending is None else {
            "point_id": pending.point_id, "legal": pending.legal, "view": pending.view,
            "bounds": list(pending.bounds) if pending.bounds else None,
            "timeout_seconds": pending.timeout_seconds, "message": pending.message,
            "peer_text": pending.peer_text,
            "deadline": format_rfc3339(deadline) if deadline is not None else None},
    }


def read_object(path: Path) -> dict[str, Any]:
    """A state file that must hold a JSON object (snapshot.json, receipts.json); typed errors."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SessionError("session.missing_file", f"{path} does not exist") from None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as error:
        raise SessionError("session.bad_state", f"{path}: not readable JSON ({error})") from None
    if not isinstance(data, dict):
        raise SessionError("session.bad_state",
                           f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def pending_decision(snapshot: dict[str, Any]) -> dict[str, Any] | None:
    """The snapshot's pending decision, checked for shape (None when there is none)."""
    pending = snapshot.get("pending_decision")
    if pending is None:
        return None
    if not isinstance(pending, dict) or not isinstance(pending.get("point_id"), str) \
            or not isinstance(pending.get("legal") or [], list) \
            or not isinstance(pending.get("bounds") or [], list):
        raise SessionError("session.bad_state", "snapshot.json: pending_decision is malformed")
    return pending
