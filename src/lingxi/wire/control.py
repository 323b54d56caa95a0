"""Session-control envelopes: abort, receipt, ping, pong, close.

They are ordinary signed envelopes whose payload action is ``control.<kind>``
and whose type is therefore ``<prefix>:control.<kind>``, so the same binding
rule (type = prefix:action) covers them. Protocol specs must not declare
actions starting with ``control.``; that namespace is reserved here.

Payloads:
- ``control.abort``: ``reason`` (a dotted error code), ``message`` (text),
  optional ``evidence`` (object, e.g. the offending envelope's id and signature).
- ``control.receipt``: ``of`` (id of the envelope acknowledged), ``signature``
  (its signature), optional ``note``.
- ``control.ping`` / ``control.pong``: ``nonce`` (pong echoes the ping's).
- ``control.close``: optional ``reason``.
"""

from __future__ import annotations

from typing import Any

from lingxi.wire.envelope import Envelope

CONTROL_PREFIX = "control."
CONTROL_KINDS = ("abort", "receipt", "ping", "pong", "close")


def control_action(kind: str) -> str:
    if kind not in CONTROL_KINDS:
        raise ValueError(f"unknown control kind {kind!r}; one of {CONTROL_KINDS}")
    return CONTROL_PREFIX + kind


def control_payload(kind: str, **fields: Any) -> dict[str, Any]:
    """The payload of a control envelope of ``kind``."""
    payload = {"action": control_action(kind)}
    payload.update({k: v for k, v in fields.items() if v is not None})
    return payload


def abort_payload(reason: str, message: str = "", evidence: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    return control_payload("abort", reason=reason, message=message, evidence=evidence)


def control_kind(env: Envelope) -> str | None:
    """``"abort"``, ``"ping"``… for a control envelope, else ``None``."""
    action = env.action
    if action is not None and action.startswith(CONTROL_PREFIX):
        kind = action[len(CONTROL_PREFIX):]
        return kind if kind in CONTROL_KINDS else None
    return None


def is_control(env: Envelope) -> bool:
    return control_kind(env) is not None
