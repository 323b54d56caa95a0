"""Bounds a request body must keep before anything parses it.

The size cap is enforced while the body is read (:mod:`lingxi.serve.app`);
here is the depth bound, checked on the raw bytes, because the JSON decoder,
the canonical encoder the signature needs and the contract's validators all
recurse: a body of ``[[[[…`` must be refused before any of them runs.

:func:`nesting_exceeds` works at C speed on the bytes: escaped backslashes
and escaped quotes are dropped, so the remaining quotes delimit string
literals, whose text is cut out (brackets inside text do not count); every
``{``/``[`` and ``}``/``]`` becomes ``(`` and ``)``, everything else goes, and
innermost ``()`` pairs are deleted pass after pass. A well-formed document
needs as many passes as it is deep, so a pair left after ``limit`` passes
means "deeper than ``limit``". Text that is not JSON may be misjudged either
way; the JSON decoder, which runs next, refuses it.
"""

from __future__ import annotations

import re

DEFAULT_MAX_BODY = 1 << 20  # bytes; word-count's largest request is ~100 kB of text
DEFAULT_MAX_DEPTH = 32  # an envelope is 3 levels; a payload field may nest the rest
DEFAULT_BODY_SECONDS = 10.0  # the whole body must arrive within this (slow-loris bound)

_PAIR = re.compile(rb"\(\)")
_BRACKETS = bytes.maketrans(b"[]{}", b"()()")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def nesting_exceeds(body: bytes, limit: int = DEFAULT_MAX_DEPTH) -> bool:
    """True when the JSON text ``body`` nests arrays/objects more than ``limit`` levels."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    # Escaped backslashes, then escaped quotes, go first (left to right, as JSON pairs
    # them); then every other piece between quotes is a string literal's text.
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    shape = b"".join(plain.split(b'"')[::2]).translate(_BRACKETS, _NOT_BRACKETS)
    for _ in range(limit):
        if not shape:
            return False
        shape, removed = _PAIR.subn(b"", shape)
        if not removed:
            return False  # unbalanced: the decoder says so
    return _PAIR.search(shape) is not None
