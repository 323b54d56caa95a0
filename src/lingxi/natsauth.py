"""NATS decentralized auth, written small: NKeys and the JWTs nats-server 2.9 checks.

Why here, on its own: the registry signs relay credentials (``registry.models.relay``)
and the relay transport proves them (``wire.relay_transport``); neither may
import the other, and both need the same encoding. Stdlib and ``cryptography``
only (no ``nkeys`` package: the format is 30 lines).

- An **NKey** is an Ed25519 key written in base32 (RFC 4648, no padding) with a
  prefix byte naming its role (operator ``O``, account ``A``, user ``U``) and a
  CRC-16/XMODEM checksum (little-endian) at the end. A seed (``S…``) packs the
  role into two leading bytes.
- A **JWT** is ``base64url(header).base64url(claims).base64url(Ed25519 signature
  over the first two parts)`` with header ``{"typ": "JWT", "alg": "ed25519-nkey"}``;
  ``jti`` is base32 of the SHA-256 of the claims written without it.

The server trusts an operator (its JWT in the server's configuration); the
operator signs an account; the account signs users. A user JWT names the
subjects its holder may publish and subscribe to; everything else is denied.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

PREFIXES = {"operator": 14 << 3, "account": 0, "user": 20 << 3, "server": 13 << 3}
_SEED = 18 << 3
_ROLE_OF = {value: role for role, value in PREFIXES.items()}
JWT_HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}


class NatsAuthError(ValueError):
    """A key or token that does not decode or verify (a one-line reason)."""


def _crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def _b32(raw: bytes) -> str:
    return base64.b32encode(raw).decode("ascii").rstrip("=")


def _unb32(text: str) -> bytes:
    try:
        return base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError):
        raise NatsAuthError("not base32") from None


def _with_crc(raw: bytes) -> str:
    return _b32(raw + _crc16(raw).to_bytes(2, "little"))


def _checked(text: str) -> bytes:
    raw = _unb32(text)
    if len(raw) < 3 or _crc16(raw[:-2]) != int.from_bytes(raw[-2:], "little"):
        raise NatsAuthError("bad nkey checksum")
    return raw[:-2]


def encode_public(role: str, public: bytes) -> str:
    return _with_crc(bytes([PREFIXES[role]]) + public)


def decode_public(text: str, role: str | None = None) -> bytes:
    raw = _checked(text)
    if len(raw) != 33 or raw[0] not in _ROLE_OF or (role and _ROLE_OF[raw[0]] != role):
        raise NatsAuthError(f"not a public {role or 'n'}key")
    return raw[1:]


@dataclass(frozen=True)
class NKey:
    """An Ed25519 key pair with its NATS role."""

    role: str
    private: Ed25519PrivateKey

    @classmethod
    def generate(cls, role: str) -> NKey:
        return cls(role, Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: str) -> NKey:
        raw = _checked(seed)
        if len(raw) != 34 or raw[0] & 0xF8 != _SEED:
            raise NatsAuthError("not an nkey seed")
        prefix = ((raw[0] & 7) << 5) | ((raw[1] & 0xF8) >> 3)
        if prefix not in _ROLE_OF:
            raise NatsAuthError("unknown nkey role")
        return cls(_ROLE_OF[prefix], Ed25519PrivateKey.from_private_bytes(raw[2:]))

    @property
    def seed(self) -> str:
        prefix = PREFIXES[self.role]
        raw = self.private.private_bytes(serialization.Encoding.Raw,
                                         serialization.PrivateFormat.Raw,
                                         serialization.NoEncryption())
        return _with_crc(bytes([_SEED | (prefix >> 5), (prefix & 31) << 3]) + raw)

    @property
    def public(self) -> str:
        raw = self.private.public_key().public_bytes(serialization.Encoding.Raw,
                                                     serialization.PublicFormat.Raw)
        return encode_public(self.role, raw)

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise NatsAuthError("not base64url") from None


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


def encode_jwt(claims: dict[str, Any], signer: NKey) -> str:
    """Sign ``claims`` (``iss`` is set to the signer, ``jti`` computed) into a JWT."""
    body = {**claims, "iss": signer.public, "jti": ""}
    body["jti"] = _b32(hashlib.sha256(_json(body)).digest())
    head = _b64url(_json(JWT_HEADER)) + "." + _b64url(_json(body))
    return head + "." + _b64url(signer.sign(head.encode("ascii")))


def decode_jwt(token: str, *, issuer: str | None = None) -> dict[str, Any]:
    """The verified claims of ``token`` (signature by its ``iss``, which must be ``issuer``)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise NatsAuthError("a JWT has three parts")
    try:
        header = json.loads(_unb64url(parts[0]))
        claims = json.loads(_unb64url(parts[1]))
    except (ValueError, UnicodeDecodeError):
        raise NatsAuthError("JWT parts are not JSON") from None
    if header != JWT_HEADER or not isinstance(claims, dict):
        raise NatsAuthError("not an ed25519-nkey JWT")
    iss = claims.get("iss")
    if not isinstance(iss, str) or (issuer is not None and iss != issuer):
        raise NatsAuthError("the JWT has another issuer")
    try:
        Ed25519PublicKey.from_public_bytes(decode_public(iss)).verify(
            _unb64url(parts[2]), (parts[0] + "." + parts[1]).encode("ascii"))
    except InvalidSignature:
        raise NatsAuthError("the JWT signature does not verify") from None
    return claims


def operator_jwt(operator: NKey, *, name: str, system_account: str, now: int) -> str:
    return encode_jwt({"iat": now, "name": name, "sub": operator.public,
                       "nats": {"type": "operator", "version": 2,
                                "system_account": system_account}}, operator)


def account_jwt(operator: NKey, account: str, *, name: str, now: int,
                limits: dict[str, Any] | None = None) -> str:
    """An account the operator vouches for; ``limits`` are NATS account limits."""
    base = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
            "wildcards": True, "conn": -1, "leaf": -1}
    return encode_jwt({"iat": now, "name": name, "sub": account,
                       "nats": {"type": "account", "version": 2,
                                "limits": {**base, **(limits or {})},
                                "default_permissions": {"pub": {}, "sub": {}}}}, operator)


def user_jwt(account: NKey, user: str, *, name: str, now: int, expires: int,
             publish: list[str], subscribe: list[str], payload: int, subs: int) -> str:
    """A user of ``account`` that may publish and subscribe on exactly these subjects."""
    return encode_jwt({"iat": now, "exp": expires, "name": name, "sub": user,
                       "nats": {"type": "user", "version": 2,
                                "pub": {"allow": publish}, "sub": {"allow": subscribe},
                                "subs": subs, "data": -1, "payload": payload}}, account)
