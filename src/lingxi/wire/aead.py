"""``encrypt: true`` payloads: ChaCha20-Poly1305 with the session's AEAD key.

The sealed payload is ``{"alg": "ChaCha20-Poly1305", "nonce": <24 hex>,
"ciphertext": <base64>}``; the plaintext is the canonical JSON of the real
payload and the associated data is the canonical JSON of the header (every
field but payload, signature and signature_algorithm), so altering any header
field makes the payload fail to open. Seal first, then sign: the signature
covers the sealed form.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from lingxi.wire.envelope import Envelope, canonical_bytes, decode_json_strict
from lingxi.wire.errors import EnvelopeError

AEAD_ALGORITHM = "ChaCha20-Poly1305"
NONCE_BYTES = 12
SEALED_KEYS = frozenset({"alg", "nonce", "ciphertext"})


_CIPHERS: dict[bytes, ChaCha20Poly1305] = {}  # a session's key is used for every message
_CIPHER_CACHE = 256


def _cipher(key: bytes) -> ChaCha20Poly1305:
    """The cipher for ``key``; made once per key (its setup costs as much as a message)."""
    cipher = _CIPHERS.get(key) if type(key) is bytes else None
    if cipher is not None:
        return cipher
    if not isinstance(key, bytes | bytearray) or len(key) != 32:
        raise ValueError("an AEAD key is 32 bytes")
    cipher = ChaCha20Poly1305(bytes(key))
    if len(_CIPHERS) >= _CIPHER_CACHE:
        _CIPHERS.clear()
    _CIPHERS[bytes(key)] = cipher
    return cipher


def seal_envelope(env: Envelope, key: bytes,
                  nonce_factory: Callable[[int], bytes] = os.urandom) -> Envelope:
    """``env`` with ``encrypt: true`` and its payload replaced by the AEAD object."""
    env = env.replace(encrypt=True, signature=None)
    nonce = nonce_factory(NONCE_BYTES)
    if len(nonce) != NONCE_BYTES:
        raise ValueError("nonce_factory must return 12 bytes")
    sealed = _cipher(key).encrypt(nonce, env.payload_json(), canonical_bytes(env.header_dict()))
    payload = {"alg": AEAD_ALGORITHM, "nonce": nonce.hex(),
               "ciphertext": base64.b64encode(sealed).decode("ascii")}
    return env.replace(payload=payload)


def open_envelope(env: Envelope, key: bytes | None) -> Envelope:
    """The plaintext form of a sealed envelope; ``envelope.decrypt_failed`` otherwise."""
    def failed(why: str) -> EnvelopeError:
        return EnvelopeError("envelope.decrypt_failed", why, path="$.payload")

    if key is None:
        raise failed("encrypted payload but no session key to open it")
    sealed = env.payload
    if set(sealed) != SEALED_KEYS or sealed.get("alg") != AEAD_ALGORITHM:
        raise failed(f"an encrypted payload is exactly {{alg: {AEAD_ALGORITHM}, nonce, ciphertext}}")
    try:
        nonce = bytes.fromhex(sealed["nonce"])
        data = base64.b64decode(sealed["ciphertext"], validate=True)
    except (TypeError, ValueError, binascii.Error):
        raise failed("nonce or ciphertext is not valid hex/base64") from None
    if len(nonce) != NONCE_BYTES:
        raise failed("nonce must be 12 bytes")
    try:
        plain = _cipher(key).decrypt(nonce, data, canonical_bytes(env.header_dict()))
    except InvalidTag:
        raise failed("payload does not open with this key and header") from None
    try:
        payload = decode_json_strict(plain.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise failed("decrypted payload is not JSON (or repeats a key)") from None
    if not isinstance(payload, dict):
        raise failed("decrypted payload is not an object")
    opened = env.replace(payload=payload)
    opened.__dict__["_wire"] = env.wire
    return opened
