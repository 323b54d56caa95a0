"""The commit-reveal rule, in one place: SHA256(value:nonce), lowercase-hex nonces.

The spec's ``commit_reveal`` block sets the nonce length (16-64, the ``nonce``
field type's range); nonces are always lowercase hex, so ``nonce_charset`` may
only describe hex. The contract checks the block with :func:`block_problems`,
the engine draws and checks nonces with :class:`CommitReveal`: validate and
run cannot disagree.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from typing import Any

from lingxi.canonical import canonical_json
from lingxi.records import FrozenRecord, frozen_record

NONCE_MIN, NONCE_MAX, NONCE_DEFAULT = 16, 64, 16
_HEX_CHARSET = re.compile(r"^\s*(lowercase\s+)?hex\b", re.IGNORECASE)
_NONCE = re.compile(r"[0-9a-f]+")


def block_problems(block: Any) -> list[tuple[str, str]]:
    """``(json path, message)`` for every problem with a ``commit_reveal`` block."""
    if not isinstance(block, dict):
        return [("commit_reveal", "commit_reveal must be an object")]
    problems = []
    algorithm = block.get("algorithm", "SHA256")
    if algorithm != "SHA256":
        problems.append(("commit_reveal.algorithm",
                         f"commit_reveal.algorithm must be 'SHA256', got {algorithm!r}"))
    if "nonce_length" in block:
        n = block["nonce_length"]
        if type(n) is not int or not NONCE_MIN <= n <= NONCE_MAX:
            problems.append(("commit_reveal.nonce_length",
                             f"commit_reveal.nonce_length must be an integer from {NONCE_MIN} "
                             f"to {NONCE_MAX} (the nonce field type), got {n!r}"))
    for key, value in block.items():
        if key not in ("algorithm", "nonce_length") and not isinstance(value, str):
            problems.append((f"commit_reveal.{key}", f"commit_reveal.{key} must be text"))
    charset = block.get("nonce_charset")
    if isinstance(charset, str) and not _HEX_CHARSET.match(charset):
        problems.append(("commit_reveal.nonce_charset",
                         f"nonces are lowercase hex (the nonce field type), so nonce_charset "
                         f"must say hex, not {charset!r}"))
    return problems


def value_text(value: Any) -> str:
    """How a value is written inside ``value:nonce`` (strings as is, else canonical JSON)."""
    return value if isinstance(value, str) else canonical_json(value)


def commitment(value: Any, nonce: str) -> str:
    return hashlib.sha256(f"{value_text(value)}:{nonce}".encode()).hexdigest()


def matches(value: Any, nonce: Any, committed: Any) -> bool:
    if not isinstance(nonce, str) or not isinstance(committed, str):
        return False
    return hmac.compare_digest(commitment(value, nonce), committed)


@frozen_record
class CommitReveal(FrozenRecord):
    """A valid block's rule: nonces of ``nonce_length`` lowercase hex characters."""

    nonce_length: int = NONCE_DEFAULT

    @classmethod
    def from_block(cls, block: dict[str, Any] | None) -> CommitReveal:
        """From a block the contract accepted (``None``: the defaults)."""
        return cls(int((block or {}).get("nonce_length", NONCE_DEFAULT)))

    def make_nonce(self, entropy: Callable[[int], bytes]) -> str:
        """A fresh nonce from ``entropy`` (a byte source such as ``os.urandom``)."""
        return entropy((self.nonce_length + 1) // 2).hex()[:self.nonce_length]

    def nonce_ok(self, nonce: Any) -> bool:
        return (isinstance(nonce, str) and len(nonce) == self.nonce_length
                and _NONCE.fullmatch(nonce) is not None)
