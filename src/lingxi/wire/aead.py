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
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305 as ChaCha20Poly1305
else:
    try:
        # The very class cryptography.hazmat.primitives.ciphers.aead names, from the
        # binding that module reads it from: that path first imports the whole `ciphers`
        # package (algorithms, modes, the decrepit ciphers), about 2 % of a `protocol
        # test`'s start-up, for one name. tests/wire/test_wire_sealing.py holds them one.
        from cryptography.hazmat.bindings._rust import openssl as _rust_openssl

        ChaCha20Poly1305 = _rust_openssl.aead.ChaCha20Poly1305
    except (ImportError, AttributeError):  # another cryptography layout: the public name
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from lingxi.wire.envelope import Envelope, decode_json_strict
from lingxi.wire.errors import EnvelopeError

AEAD_ALGORITHM = "ChaCha20-Poly1305"
NONCE_BYTES = 12
SEALED_KEYS = frozenset({"alg", "nonce", "ciphertext"})


AeadKey = bytes | ChaCha20Poly1305


def aead_cipher(key: AeadKey) -> ChaCha20Poly1305:
    """The cipher for ``key`` (a 32-byte key, or a cipher made by this function).

    Making one costs about as much as sealing a message, so a session's
    builder and pipeline each make theirs once and pass it in; nothing here
    keeps a key once its session's objects are gone.
    """
    if isinstance(key, ChaCha20Poly1305):
        return key
    if not isinstance(key, bytes | bytearray) or len(key) != 32:
        raise ValueError("an AEAD key is 32 bytes")
    return ChaCha20Poly1305(bytes(key))


def sealed_payload(nonce: bytes, ciphertext: bytes) -> tuple[dict[str, str], bytes]:
    """The sealed payload object for ``nonce`` and ``ciphertext``, and its canonical JSON.

    The JSON is written directly: hex and base64 text never needs escaping, and
    the keys are in sorted order (a test compares it with the encoder's output).
    """
    nonce_hex = nonce.hex()
    text = base64.b64encode(ciphertext)
    return ({"alg": AEAD_ALGORITHM, "nonce": nonce_hex, "ciphertext": text.decode("ascii")},
            b'{"alg":"%s","ciphertext":"%s","nonce":"%s"}' % (
                AEAD_ALGORITHM.encode(), text, nonce_hex.encode()))


def seal_envelope(env: Envelope, key: AeadKey,
                  nonce_factory: Callable[[int], bytes] = os.urandom) -> Envelope:
    """``env`` with ``encrypt: true`` and its payload replaced by the AEAD object (unsigned)."""
    state = dict(env.__dict__)
    state.update(encrypt=True, signature=None, _wire=None, _bytes=None)
    sealed_env = Envelope._from_state(state)
    nonce = nonce_factory(NONCE_BYTES)
    if len(nonce) != NONCE_BYTES:
        raise ValueError("nonce_factory must return 12 bytes")
    ciphertext = aead_cipher(key).encrypt(nonce, env.payload_json(), sealed_env.header_bytes())
    state["payload"], state["_payload_json"] = sealed_payload(nonce, ciphertext)
    return sealed_env


def open_envelope(env: Envelope, key: AeadKey | None, *,
                  header: bytes | None = None) -> Envelope:
    """The plaintext form of a sealed envelope; ``envelope.decrypt_failed`` otherwise.

    The opened envelope keeps every field of ``env`` (its signature and ``wire``
    bytes included) with the plaintext payload in place of the sealed one.
    ``header``: ``env.header_bytes()`` when the caller already has it.
    """
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
        plain = aead_cipher(key).decrypt(
            nonce, data, env.header_bytes() if header is None else header)
    except InvalidTag:
        raise failed("payload does not open with this key and header") from None
    try:
        payload = decode_json_strict(plain.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise failed("decrypted payload is not JSON (or repeats a key)") from None
    if not isinstance(payload, dict):
        raise failed("decrypted payload is not an object")
    state = dict(env.__dict__)
    state.update(payload=payload, _payload_json=None, _bytes=None)
    return Envelope._from_state(state)
