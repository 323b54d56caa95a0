"""Cards messages as contract payloads, and the message declarations for a spec.

A session carries each cards message as a payload whose ``action`` is
``mp_<step>``; :func:`to_payload` and :func:`from_payload` convert without
touching a signed byte. :func:`spec_messages` gives the ``messages`` entries
of a mental_poker ``spec.json`` for a universe of ``n`` cards, with every
cap declared (decks, shuffle proofs, the 96-byte proofs) and loose enough
that a short, long or repeated deck still reaches the cards layer, which
names the cheat (``cards.deck_missing`` …) instead of a generic field error.
"""

from __future__ import annotations

from typing import Any

from lingxi.cards.errors import CardsError
from lingxi.cards.messages import FIELDS, MAX_NOTE

PREFIX = "mp_"


def to_payload(msg: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in msg.items() if k != "mp"}
    out["action"] = PREFIX + msg["mp"]
    return out


def from_payload(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise CardsError("cards.malformed", "a payload is a JSON object")
    action = payload.get("action")
    if not isinstance(action, str) or not action.startswith(PREFIX) \
            or action[len(PREFIX):] not in FIELDS:
        raise CardsError("cards.malformed", f"not a cards action: {action!r}")
    out = {k: v for k, v in payload.items() if k != "action"}
    out["mp"] = action[len(PREFIX):]
    return out


def spec_messages(n: int) -> list[dict[str, Any]]:
    """Contract declarations of every cards message for ``n`` cards."""
    proof_items = 4 * n + 5
    hex64 = {"type": "key", "required": True}

    def array(items: dict[str, Any], max_items: int) -> dict[str, Any]:
        return {"type": "array", "items": items, "min_items": 0, "max_items": max_items,
                "max_total_bytes": max(262144, 64 * max_items), "required": True}

    position = {"type": "integer", "min": 0, "max": 2 * n, "required": True}
    proof96 = {"type": "ciphertext", "max_length": 192, "required": True}
    bodies: dict[str, dict[str, Any]] = {
        "hello": {"key": hex64, "pok": {"type": "ciphertext", "max_length": 128,
                                        "required": True}},
        "shuffle": {"deck": array({"type": "key"}, 2 * n),
                    "proof": array({"type": "key"}, 2 * proof_items)},
        "deal": {"positions": array({"type": "integer", "min": 0, "max": 2 * n}, n),
                 "shares": array({"type": "key"}, n),
                 "proofs": array({"type": "ciphertext", "max_length": 192}, n)},
        "draw": {"position": position},
        "share": {"position": position, "share": hex64,
                  "proof": {"type": "ot_blob", "max_length": 192, "required": True}},
        "play": {"position": position, "card": {"type": "id", "required": True},
                 "nullifier": {"type": "hash", "required": True}, "proof": proof96,
                 "note": {"type": "text", "max_length": MAX_NOTE}},
        "open": {"secret": hex64},
        "forfeit": {"against": {"type": "enum", "values": ["host", "guest"], "required": True},
                    "reason": {"type": "text", "max_length": MAX_NOTE, "required": True}},
    }
    common = {"from": {"type": "enum", "values": ["host", "guest"], "required": True},
              "seq": {"type": "integer", "min": 0, "required": True},
              "prev": {"type": "hash", "required": True},
              "sig": {"type": "signature", "required": True}}
    out = []
    for step, fields in bodies.items():
        decl = {"action": {"type": "enum", "values": [PREFIX + step], "required": True},
                **common, **fields}
        out.append({"name": PREFIX + step, "direction": "both", "fields": decl})
    return out
