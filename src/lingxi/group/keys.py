"""Ed25519 signing for group logs (PyNaCl), over domain-separated digests.

Identity keys are the same 32-byte Ed25519 keys as a Lingxi identity
(``lingxi.wire.identity``), written as 64 lowercase hex characters.
"""

from __future__ import annotations

import hashlib
import re

from nacl.exceptions import BadSignatureError
from nacl.exceptions import ValueError as NaclValueError
from nacl.signing import SigningKey, VerifyKey

from lingxi.canonical import canonical_bytes

HEX64 = re.compile(r"[0-9a-f]{64}")
HEX128 = re.compile(r"[0-9a-f]{128}")


def digest(domain: bytes, value: object) -> bytes:
    """SHA-256 of a domain tag, a zero byte and the canonical JSON of ``value``."""
    return hashlib.sha256(domain + b"\0" + canonical_bytes(value)).digest()


class Signer:
    """A member's (or sequencer's) signing key; ``key`` is its public identity hex."""

    def __init__(self, seed: bytes) -> None:
        self._key = SigningKey(seed)
        self.key = self._key.verify_key.encode().hex()

    @classmethod
    def from_entropy(cls, entropy) -> Signer:
        return cls(entropy(32))

    def sign(self, data: bytes) -> str:
        return self._key.sign(data).signature.hex()


def verify(key: str, data: bytes, signature: object) -> bool:
    """Whether ``signature`` (hex) is ``key``'s signature of ``data``; False on any bad shape."""
    if not (isinstance(key, str) and HEX64.fullmatch(key)):
        return False
    if not (isinstance(signature, str) and HEX128.fullmatch(signature)):
        return False
    try:
        VerifyKey(bytes.fromhex(key)).verify(data, bytes.fromhex(signature))
    except (BadSignatureError, NaclValueError, TypeError):
        return False
    return True
