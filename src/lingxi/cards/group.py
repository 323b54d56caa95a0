"""The Ed25519 prime-order group through libsodium (PyNaCl bindings).

Points are 32-byte canonical encodings, scalars 32-byte little-endian values
below the group order ``L``. Every variable-base multiplication goes through
``crypto_scalarmult_ed25519_noclamp``, which refuses non-canonical encodings,
small-order points and points outside the prime-order subgroup, so a point a
peer sent is subgroup-checked the first time it is multiplied. Secret scalar
arithmetic stays in libsodium's constant-time ``crypto_core_ed25519_scalar_*``.

A degenerate result (the identity, a rejected point) raises :class:`Degenerate`;
callers that process peer input turn it into the code of the failed check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache

from nacl import _sodium
from nacl import bindings as _b

L = 2**252 + 27742317777372353535851937790883648493
SCALAR_ZERO = bytes(32)

Entropy = Callable[[int], bytes]


class Degenerate(Exception):
    """A group operation on a point that is not in the prime-order subgroup."""


_lib, _ffi = _sodium.lib, _sodium.ffi
_new, _buf = _ffi.new, _ffi.buffer
_valid = _lib.crypto_core_ed25519_is_valid_point
_reduce = _b.crypto_core_ed25519_scalar_reduce
_from_uniform = _b.crypto_core_ed25519_from_uniform


def _call2(fn, a: bytes, b: bytes) -> bytes:
    if len(a) != 32 or len(b) != 32:
        raise Degenerate("group elements are 32 bytes")
    out = _new("unsigned char[32]")
    if fn(out, a, b) != 0:
        raise Degenerate("libsodium refused the operation")
    return _buf(out, 32)[:]


def mul(s: bytes, p: bytes) -> bytes:
    """``s·P`` for a subgroup point ``P`` (libsodium checks it is one)."""
    return _call2(_lib.crypto_scalarmult_ed25519_noclamp, s, p)


def base(s: bytes) -> bytes:
    """``s·G`` for the standard base point."""
    if len(s) != 32:
        raise Degenerate("scalars are 32 bytes")
    out = _new("unsigned char[32]")
    if _lib.crypto_scalarmult_ed25519_base_noclamp(out, s) != 0:
        raise Degenerate("libsodium refused the operation")
    return _buf(out, 32)[:]


def add(p: bytes, q: bytes) -> bytes:
    return _call2(_lib.crypto_core_ed25519_add, p, q)


def sub(p: bytes, q: bytes) -> bytes:
    return _call2(_lib.crypto_core_ed25519_sub, p, q)


def _scalar_op(fn, a: bytes, b: bytes) -> bytes:
    out = _new("unsigned char[32]")
    fn(out, a, b)
    return _buf(out, 32)[:]


def sc_add(a: bytes, b: bytes) -> bytes:
    return _scalar_op(_lib.crypto_core_ed25519_scalar_add, a, b)


def sc_sub(a: bytes, b: bytes) -> bytes:
    return _scalar_op(_lib.crypto_core_ed25519_scalar_sub, a, b)


def sc_mul(a: bytes, b: bytes) -> bytes:
    return _scalar_op(_lib.crypto_core_ed25519_scalar_mul, a, b)


def sc_neg(a: bytes) -> bytes:
    out = _new("unsigned char[32]")
    _lib.crypto_core_ed25519_scalar_negate(out, a)
    return _buf(out, 32)[:]


def sc_inv(s: bytes) -> bytes:
    out = _new("unsigned char[32]")
    if _lib.crypto_core_ed25519_scalar_invert(out, s) != 0:
        raise Degenerate("zero has no inverse")
    return _buf(out, 32)[:]


def is_point(p: bytes) -> bool:
    """Canonical, not of small order, and in the prime-order subgroup."""
    return len(p) == 32 and _valid(p) == 1


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
    """Hash to the curve: Elligator 2 (libsodium clears the cofactor)."""
    digest = hashlib.sha512(domain + len(data).to_bytes(4, "big") + data).digest()
    p = _from_uniform(digest[:32])
    if not is_point(p):  # libsodium maps into the prime-order subgroup; belt and braces
        raise Degenerate("hash to curve left the subgroup")
    return p


def digest(domain: bytes, *parts: bytes) -> bytes:
    """SHA-256 over a domain tag and length-prefixed parts (transcript, nullifiers)."""
    h = hashlib.sha256(domain)
    for part in parts:
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    return h.digest()
