"""Envelope signatures (docs/wire.md "Signature").

``signature = hex(HMAC(key, sender.agent_id | receiver.agent_id | timestamp | payload_json))``
with the receiver empty when absent, the timestamp exactly as sent and the
payload in canonical JSON. The signature does not cover id, type, ttl or the
correlation fields; ``pipeline`` binds those. Comparison is constant-time and
only lowercase hex of the algorithm's length is accepted, so one HMAC has one
spelling (the replay guard keys on it).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable

from lingxi.wire.envelope import Envelope
from lingxi.wire.errors import EnvelopeError

DEFAULT_ALGORITHM = "HMAC-SHA256"
ALGORITHMS = {"HMAC-SHA256": "sha256", "HMAC-SHA512": "sha512"}
_HEX_LENGTH = {"HMAC-SHA256": 64, "HMAC-SHA512": 128}
_SPELLING = {name: re.compile(f"[0-9a-f]{{{length}}}") for name, length in _HEX_LENGTH.items()}


def as_key(key: bytes | str) -> bytes:
    """Keys are bytes; text keys are taken as UTF-8. An empty key is refused."""
    data = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if not data:
        raise ValueError("an HMAC key must not be empty")
    return data


def signature_content(env: Envelope) -> bytes:
    """The exact bytes that are signed."""
    receiver = env.receiver.agent_id if env.receiver is not None else ""
    head = f"{env.sender.agent_id}|{receiver}|{env.timestamp}|".encode()
    return head + env.payload_json()


def _digest(algorithm: str) -> str:
    digest = ALGORITHMS.get(algorithm)
    if digest is None:
        raise EnvelopeError("envelope.unknown_algorithm",
                            f"unknown signature algorithm {algorithm[:40]!r}; "
                            f"use one of {', '.join(ALGORITHMS)}", path="$.signature_algorithm")
    return digest


_HASHES: dict[str, Callable[..., hashlib._Hash]] = {
    digest: getattr(hashlib, digest) for digest in ALGORITHMS.values()}
_IPAD = bytes(x ^ 0x36 for x in range(256))  # RFC 2104's inner and outer pads, as
_OPAD = bytes(x ^ 0x5C for x in range(256))  # translation tables over the padded key


class KeyedHmac:
    """HMAC (RFC 2104) under one key, the key set up once: per message, two hash
    states are copied and finished (C calls only; no Python-level HMAC object).
    Tests hold it equal to :func:`hmac.new` for keys of every length."""

    __slots__ = ("_inner", "_outer")

    def __init__(self, key: bytes, digest: str) -> None:
        new = _HASHES[digest]
        block = new().block_size
        if len(key) > block:
            key = new(key).digest()
        key = key.ljust(block, b"\0")
        self._inner = new(key.translate(_IPAD))
        self._outer = new(key.translate(_OPAD))

    def hexdigest(self, message: bytes) -> str:
        """``hmac.new(key, message, digest).hexdigest()``."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.hexdigest()


def keyed_hmac(key: bytes | str, algorithm: str = DEFAULT_ALGORITHM) -> KeyedHmac:
    """The HMAC under ``key`` for ``algorithm``, set up once to sign many messages.

    It skips the key setup (two hash blocks) per message. The caller owns it
    and keeps it only as long as the session whose key it holds (a builder, a
    receive pipeline); nothing in this module keeps a key.
    ``envelope.unknown_algorithm`` for an algorithm we do not know.
    """
    return KeyedHmac(as_key(key), _digest(algorithm))


def compute_signature(env: Envelope, key: bytes | str, algorithm: str = DEFAULT_ALGORITHM, *,
                      keyed: KeyedHmac | None = None) -> str:
    """The signature of ``env`` under ``key``; ``keyed`` is ``keyed_hmac(key, algorithm)``
    when the caller holds one (it must be for this key and algorithm)."""
    digest = _digest(algorithm)
    if keyed is not None:
        return keyed.hexdigest(signature_content(env))
    return hmac.new(key if type(key) is bytes and key else as_key(key),
                    signature_content(env), digest).hexdigest()


def sign_envelope(env: Envelope, key: bytes | str, algorithm: str = DEFAULT_ALGORITHM) -> Envelope:
    """A copy of ``env`` carrying its signature and ``signature_algorithm``."""
    signature = compute_signature(env, key, algorithm)
    return env.replace(signature=signature, signature_algorithm=algorithm)


def verify_signature(env: Envelope, key: bytes | str, *,
                     keyed: dict[tuple[bytes, str], KeyedHmac] | None = None) -> None:
    """Raise ``envelope.bad_signature`` / ``envelope.unknown_algorithm`` unless ``env`` is signed by ``key``.

    ``keyed``: the caller's own ``(key, algorithm) -> keyed_hmac`` map, filled
    here, so a session's pipeline sets each key up once (and drops it with
    the session).
    """
    algorithm = env.signature_algorithm or DEFAULT_ALGORITHM
    if algorithm not in ALGORITHMS:
        raise EnvelopeError("envelope.unknown_algorithm",
                            f"unknown signature algorithm {algorithm[:40]!r}",
                            path="$.signature_algorithm")
    given = env.signature
    if given is None:
        raise EnvelopeError("envelope.bad_signature", "the envelope is not signed",
                            path="$.signature")
    if _SPELLING[algorithm].fullmatch(given) is None:
        raise EnvelopeError("envelope.bad_signature",
                            f"signature must be {_HEX_LENGTH[algorithm]} lowercase hex characters "
                            f"for {algorithm}", path="$.signature")
    mac = None
    if keyed is not None:
        raw = key if type(key) is bytes and key else as_key(key)
        mac = keyed.get((raw, algorithm))
        if mac is None:
            if len(keyed) >= 16:  # a pipeline has a key or two per peer; stay bounded
                keyed.clear()
            mac = keyed[(raw, algorithm)] = keyed_hmac(raw, algorithm)
    expected = compute_signature(env, key, algorithm, keyed=mac)
    if not hmac.compare_digest(expected, given):
        raise EnvelopeError("envelope.bad_signature", "signature does not match",
                            path="$.signature")
