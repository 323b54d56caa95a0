"""Build example payloads that satisfy a message schema (or option values).

Used by property tests, the validation benchmark and anyone who wants a
realistic message to start from. Randomness is injected: pass a
``random.Random`` so results are reproducible.
"""

from __future__ import annotations

import random
import string
from typing import Any

from lingxi.contract.limits import (
    DEFAULT_CIPHERTEXT_MAX,
    DEFAULT_OT_BLOB_MAX,
    DEFAULT_TEXT_MAX,
)
from lingxi.contract.model import MessageSchema

_HEX = "0123456789abcdef"
_ID = string.ascii_letters + string.digits + "_.:-"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


def sample_value(defn: dict, rng: random.Random) -> Any:
    """A value that satisfies field definition ``defn``."""
    ftype = defn["type"]
    if ftype == "integer":
        lo = defn.get("min", -1000 if "max" not in defn else defn["max"] - 1000)
        hi = defn.get("max", lo + 1000)
        return rng.randint(lo, hi)
    if ftype == "boolean":
        return rng.random() < 0.5
    if ftype == "enum":
        return rng.choice(defn["values"])
    if ftype in ("text", "ot_blob"):
        default = DEFAULT_TEXT_MAX if ftype == "text" else DEFAULT_OT_BLOB_MAX
        limit = min(defn.get("max_length", default), 64)
        size = rng.randint(0, limit)
        return "".join(rng.choice(string.ascii_letters + " ") for _ in range(size))
    if ftype in ("hash", "key"):
        return _hex(rng, 64)
    if ftype == "signature":
        return _hex(rng, 128)
    if ftype == "nonce":
        return _hex(rng, rng.choice((16, 32, 64)))
    if ftype == "id":
        return "".join(rng.choice(_ID) for _ in range(rng.randint(1, 24)))
    if ftype == "ciphertext":
        limit = min(defn.get("max_length", DEFAULT_CIPHERTEXT_MAX), 128)
        return _hex(rng, 2 * rng.randint(1, limit // 2))  # at least one byte
    if ftype == "ticket":
        return "".join(rng.choice(_ID) for _ in range(rng.randint(1, 40)))
    if ftype == "array":
        lo = defn.get("min_items", 0)
        hi = defn.get("max_items", lo + 4)
        count = rng.randint(lo, min(hi, lo + 4)) if hi > lo + 4 else rng.randint(lo, hi)
        return [sample_value(defn["items"], rng) for _ in range(count)]
    if ftype == "json":
        if defn.get("container", "any") == "array":
            return [rng.randint(0, 9) for _ in range(rng.randint(0, 4))]
        return {"k": rng.randint(0, 9), "tags": ["a", "b"], "ok": True}
    if ftype in ("table", "object"):
        tree = defn.get("columns") or defn["fields"]
        return {name: sample_value(col, rng) for name, col in tree.items()}
    raise ValueError(f"no sampler for type {ftype!r}")


def sample_payload(schema: MessageSchema, rng: random.Random, *,
                   optional: float = 0.5) -> dict[str, Any]:
    """A payload valid for ``schema``; each optional field present with probability ``optional``."""
    payload: dict[str, Any] = {}
    for name, defn in schema.fields.items():
        if defn.get("required") is True or rng.random() < optional:
            payload[name] = sample_value(defn, rng)
    if "action" not in schema.fields:
        payload["action"] = schema.name
    return payload
