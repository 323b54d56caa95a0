"""Readable per-round lines for a finished session, from the host's events."""

from __future__ import annotations

from typing import Any

from lingxi.canonical import canonical_json


def _compact(payload: dict[str, Any]) -> str:
    rest = {k: v for k, v in payload.items() if k != "action"}
    text = canonical_json(rest) if rest else ""
    if len(text) > 100:
        text = text[:97] + "..."
    return f"{payload.get('action')} {text}".strip()


def _describe(hooks: Any, payload: dict[str, Any]) -> str | None:
    try:
        text = hooks.proto_describe(payload)
    except Exception:  # a summary must never fail a finished session
        return None
    return str(text) if text else None


def round_lines(events: list[dict[str, Any]], hooks: Any, mode: str) -> list[str]:
    """One line per round (simultaneous_round), per message otherwise (proto_describe or compact)."""
    lines: list[str] = []
    if mode == "simultaneous_round":
        for event in events:
            if event["event"] == "round":
                text = _describe(hooks, event["result"])
                lines.append(text or f"round {event['round']}: host {event['host']} vs guest "
                             f"{event['guest']}")
        return lines
    for event in events:
        if event["event"] not in ("message.sent", "message.received"):
            continue
        sender = event["role"] if event["event"] == "message.sent" else (
            "guest" if event["role"] == "host" else "host")
        text = _describe(hooks, event["payload"])
        lines.append(f"{sender}: {text or _compact(event['payload'])}")
    return lines
