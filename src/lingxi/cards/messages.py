"""Message shapes: flat JSON objects of hex strings, integers and arrays.

Every mental-poker message is a flat object whose values fit the contract's
field types: ``key`` (64 hex), ``ciphertext`` (short hex: proofs), ``array``
of 64-hex items (decks, shuffle proofs), ``hash`` (64 hex), ``signature``
(128 hex), ``integer`` and ``text``. Parsing is strict (lowercase hex only,
no bools for integers, no unknown keys) and fails with ``cards.malformed``.
"""

from __future__ import annotations

import re
from typing import Any

from lingxi.cards.errors import CardsError
from lingxi.roles import ROLES

HEX64 = re.compile(r"[0-9a-f]{64}")
HEX128 = re.compile(r"[0-9a-f]{128}")
HEX192 = re.compile(r"[0-9a-f]{192}")
COMMON = ("mp", "from", "seq", "prev", "sig")
MAX_NOTE = 256
MAX_ITEMS = 8192

# kind -> {field: type}; "?" suffix marks an optional field
FIELDS: dict[str, dict[str, str]] = {
    "hello": {"key": "hex64", "pok": "hex128"},
    "shuffle": {"deck": "hex64[]", "proof": "hex64[]"},
    "deal": {"positions": "int[]", "shares": "hex64[]", "proofs": "hex192[]"},
    "draw": {"position": "int"},
    "share": {"position": "int", "share": "hex64", "proof": "hex192"},
    "play": {"position": "int", "card": "text", "nullifier": "hex64", "proof": "hex192",
             "note?": "text"},
    "open": {"secret": "hex64"},
    "forfeit": {"against": "role", "reason": "text"},
}


def malformed(msg: str, path: str = "$") -> CardsError:
    return CardsError("cards.malformed", msg, path=path)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check(value: Any, kind: str, path: str) -> Any:
    if kind.endswith("[]"):
        if not isinstance(value, list) or len(value) > MAX_ITEMS:
            raise malformed(f"expected an array of at most {MAX_ITEMS} items", path)
        return [_check(v, kind[:-2], f"{path}[{i}]") for i, v in enumerate(value)]
    if kind == "int":
        if not _is_int(value) or not 0 <= value < 1 << 31:
            raise malformed("expected a non-negative integer", path)
        return value
    if kind == "role":
        if value not in ROLES:
            raise malformed("expected host or guest", path)
        return value
    if kind == "text":
        try:
            size = len(value.encode("utf-8")) if isinstance(value, str) else MAX_NOTE + 1
        except UnicodeEncodeError:  # a lone surrogate is not text
            size = MAX_NOTE + 1
        if size > MAX_NOTE:
            raise malformed(f"expected UTF-8 text of at most {MAX_NOTE} bytes", path)
        return value
    pattern = {"hex64": HEX64, "hex128": HEX128, "hex192": HEX192}[kind]
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise malformed(f"expected {kind[3:]} lowercase hex characters", path)
    return bytes.fromhex(value)


def parse(msg: Any) -> tuple[str, dict[str, Any]]:
    """Check a message's shape; return its kind and decoded body fields."""
    if not isinstance(msg, dict):
        raise malformed("a message is a JSON object")
    kind = msg.get("mp")
    if not isinstance(kind, str) or kind not in FIELDS:
        raise malformed(f"unknown mental-poker step {kind!r}", "$.mp")
    spec = FIELDS[kind]
    names = {k.rstrip("?") for k in spec}
    for key in msg:
        if key not in names and key not in COMMON:
            raise malformed(f"unknown field {key!r}", f"$.{key}")
    if msg.get("from") not in ROLES:
        raise malformed("from must be host or guest", "$.from")
    _check(msg.get("seq"), "int", "$.seq")
    _check(msg.get("prev"), "hex64", "$.prev")
    _check(msg.get("sig"), "hex128", "$.sig")
    body: dict[str, Any] = {}
    for key, kind_of in spec.items():
        name = key.rstrip("?")
        if name not in msg:
            if key.endswith("?"):
                continue
            raise malformed(f"missing field {name!r}", f"$.{name}")
        body[name] = _check(msg[name], kind_of, f"$.{name}")
    return kind, body
