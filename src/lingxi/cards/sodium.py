"""The six ristretto255 functions of the system's libsodium, through ctypes.

PyNaCl bundles a libsodium built without ristretto255, and the PyPI bindings
that have it either run a subprocess at import (``ctypes.util.find_library``
calls ``ldconfig``) or write a shared object to a temporary file on every
import. This module loads the system library by its file name (no subprocess,
no file written), checks that it has the functions (libsodium 1.0.18 or
newer), and wraps each call: 32-byte inputs in, 32 bytes out, or ``None`` when
libsodium refuses (an invalid encoding, an identity product).

The layer reads no environment and no files of its own (it is pure); a
library under another name is found by the dynamic loader's own search
(``LD_LIBRARY_PATH``, ``DYLD_LIBRARY_PATH``).
"""

from __future__ import annotations

import ctypes

_NAMES = ("libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.dylib",
          "libsodium.23.dylib", "libsodium.26.dylib", "libsodium.dll")
_FUNCTIONS = ("crypto_scalarmult_ristretto255", "crypto_scalarmult_ristretto255_base",
              "crypto_core_ristretto255_add", "crypto_core_ristretto255_sub",
              "crypto_core_ristretto255_from_hash", "crypto_core_ristretto255_is_valid_point")


class SodiumMissing(ImportError):
    """No libsodium with ristretto255 on this machine (install libsodium 1.0.18+)."""


def _load() -> ctypes.CDLL:
    for name in _NAMES:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        if all(hasattr(lib, f) for f in _FUNCTIONS) and lib.sodium_init() >= 0:
            return lib
    raise SodiumMissing(
        "mental poker needs libsodium 1.0.18 or newer with ristretto255 (Debian: apt-get "
        "install libsodium23; macOS: brew install libsodium)")


_lib = _load()
_scalarmult = _lib.crypto_scalarmult_ristretto255
_scalarmult_base = _lib.crypto_scalarmult_ristretto255_base
_add = _lib.crypto_core_ristretto255_add
_sub = _lib.crypto_core_ristretto255_sub
_from_hash = _lib.crypto_core_ristretto255_from_hash
_is_valid = _lib.crypto_core_ristretto255_is_valid_point
for _f in (_scalarmult, _add, _sub):
    _f.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p)
    _f.restype = ctypes.c_int
for _f in (_scalarmult_base, _from_hash):
    _f.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
    _f.restype = ctypes.c_int
_is_valid.argtypes = (ctypes.c_char_p,)
_is_valid.restype = ctypes.c_int
_out = ctypes.create_string_buffer


def scalarmult(s: bytes, p: bytes) -> bytes | None:
    """``s·P`` (scalar below 2^255, not clamped); None for an invalid ``P`` or identity."""
    out = _out(32)
    return out.raw if _scalarmult(out, s, p) == 0 else None


def scalarmult_base(s: bytes) -> bytes | None:
    out = _out(32)
    return out.raw if _scalarmult_base(out, s) == 0 else None


def add(p: bytes, q: bytes) -> bytes | None:
    out = _out(32)
    return out.raw if _add(out, p, q) == 0 else None


def sub(p: bytes, q: bytes) -> bytes | None:
    out = _out(32)
    return out.raw if _sub(out, p, q) == 0 else None


def from_hash(uniform: bytes) -> bytes | None:
    """The group element for 64 uniform bytes (ristretto255's hash-to-group map)."""
    if len(uniform) != 64:
        return None
    out = _out(32)
    return out.raw if _from_hash(out, uniform) == 0 else None


def is_valid_point(p: bytes) -> bool:
    return len(p) == 32 and _is_valid(p) == 1
