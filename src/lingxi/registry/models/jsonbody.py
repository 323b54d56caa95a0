"""Bounded JSON parsing for request bodies: depth is checked on the bytes first.

The JSON decoder, the canonical encoder and the contract's validators all
recurse, so a body of ``[[[[…`` must be refused before any of them runs
(``registry.too_deep``, 400) rather than reaching a ``RecursionError``. The
check runs at C speed: string literals are cut out with one regex, every
byte but brackets is dropped, openers become ``+1`` and closers ``-1`` (as
signed bytes) and the running sum's maximum is the depth. Size is bounded
by the reader before this runs (``registry.body_too_large``).
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from lingxi.registry.errors import RegistryError

MAX_DEPTH = 64  # a spec is ~10 levels, a body adds one; far below the decoder's recursion

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def depth(body: bytes) -> int:
    """The deepest array/object nesting of the JSON text ``body`` (0 for a scalar)."""
    shape = _STRING.sub(b"", body).translate(_SIGNS, _NOT_BRACKETS)
    return max(accumulate(memoryview(shape).cast("b")), default=0)


def parse_object(body: bytes, *, max_depth: int = MAX_DEPTH) -> tuple[dict[str, Any], str]:
    """``(object, text)`` of a UTF-8 JSON object body; an empty body is ``{}``.

    Raises ``registry.too_deep`` or ``registry.bad_json`` (400) for anything else.
    """
    if depth(body) > max_depth:
        raise RegistryError("registry.too_deep",
                            f"the body nests more than {max_depth} levels deep")
    try:
        text = body.decode("utf-8")
        data = json.loads(text) if text.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise RegistryError("registry.bad_json", "the body is not UTF-8 JSON") from None
    if not isinstance(data, dict):
        raise RegistryError("registry.bad_json", "the body must be a JSON object")
    return data, text
