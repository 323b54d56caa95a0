"""Build example payloads that satisfy a message schema (or option values).

Used by property tests, the validation benchmark and anyone who wants a
realistic message to start from. Randomness is injected: pass a
``random.Random`` so results are reproducible.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
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


def _integer(defn: dict[str, Any], rng: random.Random) -> int:
    lo = defn.get("min", -1000 if "max" not in defn else defn["max"] - 1000)
    hi = defn.get("max", lo + 1000)
    return rng.randint(lo, hi)


def _text_of(default: int) -> Callable[[dict[str, Any], random.Random], str]:
    def text(defn: dict[str, Any], rng: random.Random) -> str:
        size = rng.randint(0, min(defn.get("max_length", default), 64))
        return "".join(rng.choice(string.ascii_letters + " ") for _ in range(size))
    return text


def _ciphertext(defn: dict[str, Any], rng: random.Random) -> str:
    limit = min(defn.get("max_length", DEFAULT_CIPHERTEXT_MAX), 128)
    return _hex(rng, 2 * rng.randint(1, limit // 2))  # at least one byte


def _array(defn: dict[str, Any], rng: random.Random) -> list[Any]:
    lo = defn.get("min_items", 0)
    hi = defn.get("max_items", lo + 4)
    count = rng.randint(lo, min(hi, lo + 4)) if hi > lo + 4 else rng.randint(lo, hi)
    return [sample_value(defn["items"], rng) for _ in range(count)]


def _json(defn: dict[str, Any], rng: random.Random) -> Any:
    if defn.get("container", "any") == "array":
        return [rng.randint(0, 9) for _ in range(rng.randint(0, 4))]
    return {"k": rng.randint(0, 9), "tags": ["a", "b"], "ok": True}


def _columns(defn: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    tree = defn.get("columns") or defn["fields"]
    return {name: sample_value(col, rng) for name, col in tree.items()}


# field type -> a sampler of values that satisfy its definition
_SAMPLERS: dict[str, Callable[[dict[str, Any], random.Random], Any]] = {
    "integer": _integer,
    "boolean": lambda defn, rng: rng.random() < 0.5,
    "enum": lambda defn, rng: rng.choice(defn["values"]),
    "text": _text_of(DEFAULT_TEXT_MAX),
    "ot_blob": _text_of(DEFAULT_OT_BLOB_MAX),
    "hash": lambda defn, rng: _hex(rng, 64),
    "key": lambda defn, rng: _hex(rng, 64),
    "signature": lambda defn, rng: _hex(rng, 128),
    "nonce": lambda defn, rng: _hex(rng, rng.choice((16, 32, 64))),
    "id": lambda defn, rng: "".join(rng.choice(_ID) for _ in range(rng.randint(1, 24))),
    "ciphertext": _ciphertext,
    "ticket": lambda defn, rng: "".join(rng.choice(_ID) for _ in range(rng.randint(1, 40))),
    "array": _array,
    "json": _json,
    "table": _columns,
    "object": _columns,
}


def sample_value(defn: dict[str, Any], rng: random.Random) -> Any:
    """A value that satisfies field definition ``defn``."""
    sampler = _SAMPLERS.get(defn["type"])
    if sampler is None:
        raise ValueError(f"no sampler for type {defn['type']!r}")
    return sampler(defn, rng)


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
