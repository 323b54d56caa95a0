"""What snapshot.json says about a machine right now (state, position, pending decision)."""

from __future__ import annotations

from typing import Any

from lingxi.session.core.events import RequestDecision
from lingxi.session.core.machine import SessionMachine
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
            "deadline": format_rfc3339(deadline) if deadline is not None else None},
    }
