"""The convergence fingerprint: a protocol's message structure with its values set aside.

The seed's principle: changing numbers (rounds, ranges, counts) is a matter of
parameters, only a different message structure makes a new protocol. Two
specs share a fingerprint when they have the same messages (name, direction,
field names, field types, which are required, and the ``action`` values that
pick a message) and the same flow (mode and exchange sequence, with every
repeat count reduced to "repeats"), whatever their limits, enum values, rules
text, choices, parameters or timing say. Those are exactly the values a
parameter could carry, so a draft with a known fingerprint is a near-duplicate.
"""

from __future__ import annotations

from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex


def _message(message: dict[str, Any]) -> dict[str, Any]:
    fields = {}
    for name, schema in sorted((message.get("fields") or {}).items()):
        shape: dict[str, Any] = {"type": schema.get("type"),
                                 "required": bool(schema.get("required", False))}
        if name == "action":  # the discriminator picks the message: it is structure
            shape["values"] = sorted(schema.get("values") or [])
        if schema.get("type") == "array":
            shape["items"] = (schema.get("items") or {}).get("type")
        fields[name] = shape
    return {"name": message.get("name"), "direction": message.get("direction"),
            "fields": fields}


def skeleton(spec: dict[str, Any]) -> dict[str, Any]:
    """The structure of ``spec`` that the fingerprint hashes."""
    flow = spec.get("flow") or {}
    phases = []
    for phase in flow.get("phases") or []:
        steps = [[step.get("message"), step.get("direction")]
                 for step in phase.get("exchange") or []]
        phases.append({"repeats": "repeat" in phase, "exchange": steps})
    return {"messages": sorted((_message(m) for m in spec.get("messages") or []),
                               key=lambda m: (str(m["name"]), str(m["direction"]))),
            "flow": {"mode": flow.get("mode", "session_loop"), "phases": phases},
            "commit_reveal": "commit_reveal" in spec}


def fingerprint(spec: dict[str, Any]) -> str:
    return sha256_hex(canonical_bytes(skeleton(spec)))
