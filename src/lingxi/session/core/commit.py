"""Engine-run commit-reveal: SHA256(value:nonce) as lowercase hex.

Nonce length and charset come from the spec's ``commit_reveal`` block; the
rng is injected so seeded runs are reproducible.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import string
from dataclasses import dataclass
from typing import Any

from lingxi.canonical import canonical_json

HEX = "0123456789abcdef"
CHARSETS = {"hex": HEX, "alnum": string.ascii_letters + string.digits,
            "alphanumeric": string.ascii_letters + string.digits}


@dataclass(frozen=True)
class CommitRules:
    nonce_length: int = 16
    charset: str = HEX

    @classmethod
    def from_spec(cls, block: dict[str, Any] | None) -> CommitRules:
        block = block or {}
        length = block.get("nonce_length", 16)
        if not isinstance(length, int) or isinstance(length, bool) or not 8 <= length <= 256:
            length = 16
        described = str(block.get("nonce_charset", "hex")).lower()
        charset = HEX
        for key, chars in CHARSETS.items():
            if described.startswith(key):
                charset = chars
                break
        return cls(length, charset)

    def make_nonce(self, rng: random.Random) -> str:
        return "".join(rng.choice(self.charset) for _ in range(self.nonce_length))

    def nonce_ok(self, nonce: Any) -> bool:
        return (isinstance(nonce, str) and len(nonce) == self.nonce_length
                and all(c in self.charset for c in nonce))


def value_text(value: Any) -> str:
    """How a value is written inside ``value:nonce`` (strings as is, else canonical JSON)."""
    return value if isinstance(value, str) else canonical_json(value)


def commitment(value: Any, nonce: str) -> str:
    return hashlib.sha256(f"{value_text(value)}:{nonce}".encode()).hexdigest()


def matches(value: Any, nonce: str, committed: str) -> bool:
    return hmac.compare_digest(commitment(value, nonce), str(committed))
