"""Fast verdicts: whether a value satisfies a field definition, as a bool.

Nearly every message a session receives is valid, and for a valid message a
list of findings is wasted work. So each field has two compiled forms: the
checker of :mod:`lingxi.contract.fields`, which explains every problem, and
the verdict built here, which only answers yes or no and is run first. The
checker runs only when a verdict says no.

The one rule a verdict must keep (tested by ``tests/contract/test_field_verdicts.py``):
it accepts a value only when the checker reports nothing for it. A verdict
that refused too much would cost time, never correctness, because the
checker then has the last word.

Arrays are where the time goes (a deck is 52 ciphertexts): their verdicts
check the items' types and lengths in one loop and their characters all at
once (``str.join`` and ``bytes.translate`` in C) instead of a call, a regular
expression and a path string per item.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from lingxi.contract.limits import (
    DEFAULT_ARRAY_MAX_BYTES,
    DEFAULT_CIPHERTEXT_MAX,
    DEFAULT_JSON_MAX_BYTES,
    DEFAULT_OT_BLOB_MAX,
    DEFAULT_TEXT_MAX,
    HEX_DIGITS,
    HEX_PAIRS,
    PATTERN_CHARS,
    PATTERNS,
    TICKET_MAX,
)

Verdict = Callable[[Any], bool]


# --------------------------------------------------------------------------- sizes

def utf8_size(value: str) -> int | None:
    """Bytes of ``value`` as UTF-8, or None when it holds a lone surrogate."""
    if value.isascii():
        return len(value)
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def json_size(value: Any) -> int:
    """Size in bytes of ``value`` as compact UTF-8 JSON (raises ValueError/TypeError)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8"))


def item_size(item: Any) -> int | None:
    """Bytes one scalar array item counts towards ``max_total_bytes``.

    A string counts its UTF-8 bytes (None when it cannot be written as UTF-8:
    such an item could not travel in a signed envelope); any other scalar its
    JSON text.
    """
    if type(item) is str:
        return utf8_size(item)
    try:
        return len(json.dumps(item))
    except (TypeError, ValueError):
        return None


def json_problem(value: Any) -> str | None:
    """Why ``value`` is not finite, plain JSON data, or None when it is."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return "object keys must be strings"
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is str or kind is int or kind is bool or item is None:
            continue
        elif kind is float:
            if not math.isfinite(item):
                return "NaN and infinities are not JSON"
        else:
            return f"{kind.__name__} is not a JSON value"
    return None


# --------------------------------------------------------------------------- scalars

def _integer(defn: dict[str, Any]) -> Verdict:
    lo, hi = defn.get("min"), defn.get("max")
    if lo is None and hi is None:
        return lambda v: type(v) is int
    low = lo if lo is not None else -math.inf
    high = hi if hi is not None else math.inf
    return lambda v: type(v) is int and low <= v <= high


def _enum(defn: dict[str, Any]) -> Verdict:
    values = frozenset(defn["values"])
    return lambda v: type(v) is str and v in values


def _bytes_within(limit: int) -> Verdict:
    def ok(v: Any) -> bool:
        if type(v) is not str:
            return False
        if v.isascii():
            return len(v) <= limit
        size = utf8_size(v)
        return size is not None and size <= limit
    return ok


def _pattern(ftype: str) -> Verdict:
    match = PATTERNS[ftype][0].fullmatch
    return lambda v: type(v) is str and match(v) is not None


def _ciphertext(defn: dict[str, Any]) -> Verdict:
    limit = defn.get("max_length", DEFAULT_CIPHERTEXT_MAX)
    match = HEX_PAIRS.fullmatch
    return lambda v: type(v) is str and len(v) <= limit and match(v) is not None


def _ticket(defn: dict[str, Any]) -> Verdict:
    return lambda v: type(v) is str and 0 < len(v) <= TICKET_MAX


# --------------------------------------------------------------------------- array items

ItemsVerdict = Callable[[list[Any]], bool]  # called with a non-empty list


def _charset_items(chars: str, shortest: int, longest: int, even: bool,
                   limit: int) -> ItemsVerdict:
    """Strings of ``shortest``..``longest`` characters, all from ``chars`` (ASCII)."""
    table = chars.encode("ascii")

    def characters_ok(v: list[Any]) -> bool:
        joined = "".join(v)  # ASCII items: characters are bytes, so this is the total size
        return (len(joined) <= limit and joined.isascii()
                and not joined.encode("ascii").translate(None, table))

    if even:
        def ok(v: list[Any]) -> bool:
            for x in v:
                if type(x) is not str:
                    return False
                size = len(x)
                if size < shortest or size > longest or size & 1:
                    return False
            return characters_ok(v)
    else:
        def ok(v: list[Any]) -> bool:
            for x in v:
                if type(x) is not str:
                    return False
                size = len(x)
                if size < shortest or size > longest:
                    return False
            return characters_ok(v)
    return ok


def _all_str(v: list[Any]) -> bool:
    for x in v:
        if type(x) is not str:
            return False
    return True


def _joined_size_ok(v: list[Any], limit: int) -> bool:
    joined = "".join(v)
    size = len(joined) if joined.isascii() else utf8_size(joined)
    return size is not None and size <= limit


def _bytes_items(each: int, limit: int) -> ItemsVerdict:
    def ok(v: list[Any]) -> bool:
        if not _all_str(v):
            return False
        joined = "".join(v)
        if joined.isascii():
            return len(joined) <= limit and max(map(len, v)) <= each
        total = 0
        for x in v:
            size = utf8_size(x)
            if size is None or size > each:
                return False
            total += size
        return total <= limit
    return ok


def _ticket_items(limit: int) -> ItemsVerdict:
    def ok(v: list[Any]) -> bool:
        for x in v:
            if type(x) is not str or not 0 < len(x) <= TICKET_MAX:
                return False
        return _joined_size_ok(v, limit)
    return ok


def _enum_items(values: frozenset[str], limit: int) -> ItemsVerdict:
    def ok(v: list[Any]) -> bool:
        return _all_str(v) and values.issuperset(v) and _joined_size_ok(v, limit)
    return ok


def _boolean_items(limit: int) -> ItemsVerdict:
    def ok(v: list[Any]) -> bool:
        for x in v:
            if x is not True and x is not False:
                return False
        return len(v) * 5 <= limit or sum(4 if x else 5 for x in v) <= limit
    return ok


def _integer_items(defn: dict[str, Any], limit: int) -> ItemsVerdict:
    item = _integer(defn)
    lo, hi = defn.get("min"), defn.get("max")
    # The longest JSON text an in-range item can have, when both bounds are known.
    widest = max(len(repr(lo)), len(repr(hi))) if lo is not None and hi is not None else None

    def ok(v: list[Any]) -> bool:
        for x in v:
            if not item(x):
                return False
        if widest is not None and len(v) * widest <= limit:
            return True
        try:
            return sum(len(repr(x)) for x in v) <= limit
        except ValueError:  # an integer too long to write as text
            return False
    return ok


def _items(defn: dict[str, Any], limit: int) -> ItemsVerdict:
    ftype = defn["type"]
    if ftype in PATTERN_CHARS:
        _, _, shortest, longest = PATTERNS[ftype]
        return _charset_items(PATTERN_CHARS[ftype], shortest, longest, False, limit)
    if ftype == "ciphertext":
        return _charset_items(HEX_DIGITS, 2, defn.get("max_length", DEFAULT_CIPHERTEXT_MAX),
                              True, limit)
    if ftype in ("text", "ot_blob"):
        default = DEFAULT_TEXT_MAX if ftype == "text" else DEFAULT_OT_BLOB_MAX
        return _bytes_items(defn.get("max_length", default), limit)
    if ftype == "ticket":
        return _ticket_items(limit)
    if ftype == "enum":
        return _enum_items(frozenset(defn["values"]), limit)
    if ftype == "boolean":
        return _boolean_items(limit)
    return _integer_items(defn, limit)


def _array(defn: dict[str, Any]) -> Verdict:
    lo = defn.get("min_items", 0)
    hi = defn.get("max_items", math.inf)
    items = _items(defn["items"], defn.get("max_total_bytes", DEFAULT_ARRAY_MAX_BYTES))

    def ok(v: Any) -> bool:
        if type(v) is not list:
            return False
        count = len(v)
        if count < lo or count > hi:
            return False
        return count == 0 or items(v)
    return ok


def _json(defn: dict[str, Any]) -> Verdict:
    container = {"object": dict, "array": list}.get(defn.get("container", "any"))
    limit = defn.get("max_total_bytes", DEFAULT_JSON_MAX_BYTES)

    def ok(v: Any) -> bool:
        if container is not None and type(v) is not container:
            return False
        if json_problem(v) is not None:
            return False
        try:
            return bool(json_size(v) <= limit)
        except (ValueError, TypeError, RecursionError):
            return False
    return ok


def compile_verdict(defn: dict[str, Any]) -> Verdict:
    """The verdict for a (valid) message field definition."""
    ftype = defn["type"]
    if ftype in PATTERNS:
        return _pattern(ftype)
    if ftype == "integer":
        return _integer(defn)
    if ftype == "boolean":
        return lambda v: v is True or v is False
    if ftype == "enum":
        return _enum(defn)
    if ftype == "text":
        return _bytes_within(defn.get("max_length", DEFAULT_TEXT_MAX))
    if ftype == "ot_blob":
        return _bytes_within(defn.get("max_length", DEFAULT_OT_BLOB_MAX))
    if ftype == "ciphertext":
        return _ciphertext(defn)
    if ftype == "ticket":
        return _ticket(defn)
    if ftype == "array":
        return _array(defn)
    if ftype == "json":
        return _json(defn)
    raise KeyError(ftype)  # unreachable for checked definitions
