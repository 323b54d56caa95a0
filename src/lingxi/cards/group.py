"""The ristretto255 prime-order group through libsodium.

Points are 32-byte canonical ristretto255 encodings, scalars 32-byte
little-endian values below the group order ``L``. Ristretto255 is a prime-order
group built on Curve25519: every valid encoding is a group element, so no
cofactor or small-order point can reach a product, and a variable-base product
is one scalar multiplication (``crypto_scalarmult_ed25519_noclamp`` on the raw
Ed25519 group must also multiply by ``L`` to check the subgroup; that was half
of a game's CPU). Every point operation refuses an invalid encoding and an
identity result. Secret scalar arithmetic stays in libsodium's constant-time
``crypto_core_ed25519_scalar_*`` (the scalar field is the same).

PyNaCl's bundled libsodium is built without the ristretto255 functions, so the
point operations call the system's libsodium (Debian's ``libsodium23``, 1.0.18
or newer) through :mod:`cards.sodium`; scalars and signatures stay on PyNaCl.

A degenerate result (the identity, a rejected point) raises :class:`Degenerate`;
callers that process peer input turn it into the code of the failed check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from nacl import _sodium
from nacl import bindings as _b

from lingxi.cards import sodium as _r

L = 2**252 + 27742317777372353535851937790883648493
SCALAR_ZERO = bytes(32)

Entropy = Callable[[int], bytes]


class Degenerate(Exception):
    """A group operation on a point that is not a group element, or an identity result."""


_lib, _ffi = _sodium.lib, _sodium.ffi
_new, _buf = _ffi.new, _ffi.buffer
_reduce = _b.crypto_core_ed25519_scalar_reduce


def _point(result: bytes | None) -> bytes:
    if result is None:
        raise Degenerate("libsodium refused the operation")
    return result


def _sized(*values: bytes) -> None:
    for value in values:
        if len(value) != 32:
            raise Degenerate("group elements and scalars are 32 bytes")


def mul(s: bytes, p: bytes) -> bytes:
    """``s·P``; libsodium refuses a ``P`` that is not a ristretto255 encoding."""
    _sized(s, p)
    return _point(_r.scalarmult(s, p))


def base(s: bytes) -> bytes:
    """``s·G`` for the standard generator."""
    _sized(s)
    return _point(_r.scalarmult_base(s))


def add(p: bytes, q: bytes) -> bytes:
    _sized(p, q)
    return _point(_r.add(p, q))


def sub(p: bytes, q: bytes) -> bytes:
    _sized(p, q)
    return _point(_r.sub(p, q))


def _scalar_op(fn: Callable[[Any, bytes, bytes], Any], a: bytes, b: bytes) -> bytes:
    out = _new("unsigned char[32]")
    fn(out, a, b)
    result: bytes = _buf(out, 32)[:]
    return result


def sc_add(a: bytes, b: bytes) -> bytes:
    return _scalar_op(_lib.crypto_core_ed25519_scalar_add, a, b)


def sc_sub(a: bytes, b: bytes) -> bytes:
    return _scalar_op(_lib.crypto_core_ed25519_scalar_sub, a, b)


def sc_mul(a: bytes, b: bytes) -> bytes:
    return _scalar_op(_lib.crypto_core_ed25519_scalar_mul, a, b)


def sc_neg(a: bytes) -> bytes:
    out = _new("unsigned char[32]")
    _lib.crypto_core_ed25519_scalar_negate(out, a)
    result: bytes = _buf(out, 32)[:]
    return result


def sc_inv(s: bytes) -> bytes:
    out = _new("unsigned char[32]")
    if _lib.crypto_core_ed25519_scalar_invert(out, s) != 0:
        raise Degenerate("zero has no inverse")
    result: bytes = _buf(out, 32)[:]
    return result


def is_point(p: bytes) -> bool:
    """A canonical ristretto255 encoding of a group element other than the identity."""
    return len(p) == 32 and p != SCALAR_ZERO and _r.is_valid_point(p)


def is_scalar(s: bytes) -> bool:
    """A canonical scalar: 32 bytes, below ``L``."""
    return len(s) == 32 and int.from_bytes(s, "little") < L


def sc_from_int(v: int) -> bytes:
    return (v % L).to_bytes(32, "little")


def sc_to_int(s: bytes) -> int:
    return int.from_bytes(s, "little")


def random_scalar(entropy: Entropy) -> bytes:
    """A uniform non-zero scalar from 64 bytes of injected entropy (bias < 2^-250)."""
    while True:
        raw = entropy(64)
        if not isinstance(raw, bytes | bytearray) or len(raw) != 64:
            raise ValueError("the entropy source must return exactly the bytes asked for")
        s = _reduce(bytes(raw))
        if s != SCALAR_ZERO:
            return s


def hash_scalar(domain: bytes, *parts: bytes) -> bytes:
    """A scalar from SHA-512 over a domain tag and length-prefixed parts."""
    h = hashlib.sha512(domain)
    for part in parts:
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    s = _reduce(h.digest())
    return s if s != SCALAR_ZERO else sc_from_int(1)


def hash_scalars(domain: bytes, seed: bytes, count: int) -> list[bytes]:
    """``count`` independent scalars expanded from one seed."""
    return [hash_scalar(domain, seed, i.to_bytes(4, "big")) for i in range(count)]


@lru_cache(maxsize=4096)
def hash_point(domain: bytes, data: bytes) -> bytes:
    """Hash to the group: ristretto255's one-way map of 64 uniform bytes (two Elligator
    maps added), so nobody knows the discrete log of one result relative to another."""
    digest = hashlib.sha512(domain + len(data).to_bytes(4, "big") + data).digest()
    p = _point(_r.from_hash(digest))
    if not is_point(p):  # the map never gives the identity in practice; belt and braces
        raise Degenerate("hash to the group gave the identity")
    return p


def digest(domain: bytes, *parts: bytes) -> bytes:
    """SHA-256 over a domain tag and length-prefixed parts (transcript, nullifiers)."""
    h = hashlib.sha256(domain)
    for part in parts:
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    return h.digest()
