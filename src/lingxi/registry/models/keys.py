"""Ed25519 helpers for the registry: the server's signing key and signature checks.

Agents sign with :class:`lingxi.wire.identity.Identity`; this module needs only
``cryptography`` (the server's key) and PyNaCl (signature checks), so the server
and the offline verifier stay independent of the wire layer.
"""

from __future__ import annotations

import base64
import hashlib
from typing import TypeGuard

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError
from nacl.exceptions import ValueError as NaclValueError

HEX = frozenset("0123456789abcdef")


def is_hex(value: object, length: int | None = None) -> TypeGuard[str]:
    return (isinstance(value, str) and (length is None or len(value) == length)
            and bool(value) and set(value) <= HEX)


def agent_id_for(public_hex: str) -> str:
    """``lx-`` + the first 16 hex of SHA-256(public key): the wire layer's rule."""
    return "lx-" + hashlib.sha256(bytes.fromhex(public_hex)).hexdigest()[:16]


def verify(public_hex: str, signature: bytes, data: bytes) -> bool:
    """True when ``signature`` is ``public_hex``'s Ed25519 signature over ``data``.

    Checked by libsodium (PyNaCl), which takes half the time OpenSSL's does here (every
    signed request is one check) and is the stricter of the two: it also refuses
    small-order keys and non-canonical points, so what passes here passes OpenSSL too."""
    if not isinstance(signature, bytes) or len(signature) != 64:
        return False
    try:
        key = bytes.fromhex(public_hex)
        if len(key) != 32:
            return False
        crypto_sign_open(signature + data, key)
    except (BadSignatureError, NaclValueError, ValueError, TypeError):
        return False
    return True


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """Decode unpadded base64url; raise ValueError on anything else."""
    if not isinstance(text, str) or not text or any(c in text for c in "=+/ \n"):
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ServerKey:
    """The registry's Ed25519 key: signs tickets and log heads."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public_hex = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()

    @classmethod
    def generate(cls) -> ServerKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_hex(cls, text: str) -> ServerKey:
        return cls(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(text)))

    def private_hex(self) -> str:
        return self._private.private_bytes(serialization.Encoding.Raw,
                                           serialization.PrivateFormat.Raw,
                                           serialization.NoEncryption()).hex()

    def sign(self, data: bytes) -> bytes:
        return self._private.sign(data)
