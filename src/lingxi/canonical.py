"""Canonical JSON, shared by protocol_id hashing and envelope signatures.

Keys sorted, separators ``,`` and ``:``, UTF-8, non-ASCII written as itself
(no ``\\u`` escapes). NaN and infinities are not JSON and are refused.
Stdlib-only; sits below every layer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def canonical_bytes(value: Any) -> bytes:
    """The canonical JSON of ``value`` encoded as UTF-8."""
    return canonical_json(value).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()
