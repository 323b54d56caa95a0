"""How big a spec may be, checked before any expensive work is done on it.

A spec comes from someone else (a file, a registry, a peer's protocol_id
resolved through the cache), and checking, hashing and compiling cost time
and memory in proportion to its size: a spec declaring a million messages
took over a minute and gigabytes to validate. So every entry refuses an
oversized document with ``spec.too_large`` first, naming what is over which
bound. The bounds are far above any real protocol (the largest built-in has
about 700 JSON values, 10 messages and 9 levels of nesting); they are listed
in docs/contract.md ("Size bounds").

The walk is iterative, stops as soon as a bound is passed, and never
descends below the JSON depth limit of :mod:`lingxi.contract.source`, so
measuring a hostile document costs at most :data:`MAX_VALUES` steps.
"""

from __future__ import annotations

import json
from typing import Any

from lingxi.contract.errors import SpecError
from lingxi.records import Record, record

MAX_FILE_BYTES = 4 * 1024 * 1024  # a spec file, read before parsing (room for indentation)
MAX_SPEC_BYTES = 1024 * 1024  # the document as compact JSON (UTF-8)
MAX_VALUES = 20_000  # JSON values of every kind: objects, arrays, strings, numbers…
MAX_NESTING = 32  # levels of objects and arrays
MAX_MESSAGES = 256
MAX_FIELDS = 256  # fields (or table columns) in one object
MAX_FIELDS_TOTAL = 4096  # field and column definitions in the whole spec, nested ones included
MAX_PHASES = 256
MAX_STEPS = 256  # exchange steps in one phase
MAX_PARAMETERS = 256
MAX_ENUM_VALUES = 1024  # values of one enum, and choices

_FIELD_KEYS = frozenset({"fields", "columns"})


def too_large(what: str, found: int, limit: int, origin: str) -> SpecError:
    """The one refusal: ``spec.too_large`` naming the bound, what was found and the limit."""
    return SpecError("spec.too_large",
                     f"{origin}: too large to load: {what} {found} (at most {limit})",
                     details={"bound": what, "found": found, "max": limit})


def check_file_size(size: int, origin: str) -> None:
    """Refuse a spec file larger than :data:`MAX_FILE_BYTES` before reading it whole."""
    if size > MAX_FILE_BYTES:
        raise too_large("file bytes", size, MAX_FILE_BYTES, origin)


@record
class _Measure(Record):
    values: int = 0
    text: int = 0  # characters of keys and strings
    deepest: int = 0
    fields_total: int = 0


def _walk(doc: Any, origin: str, depth_limit: int) -> _Measure:
    """Count values, text and nesting; refuse as soon as a per-object bound is passed.

    Objects deeper than ``depth_limit`` are not entered (the caller refuses them).
    """
    seen = _Measure()
    stack: list[tuple[Any, int, Any]] = [(doc, 1, None)]
    while stack:
        item, depth, key = stack.pop()
        seen.values += 1
        if seen.values > MAX_VALUES:
            raise too_large("JSON values", seen.values, MAX_VALUES, origin)
        kind = type(item)
        if kind is str:
            seen.text += len(item)
        elif kind is dict or kind is list:
            seen.deepest = max(seen.deepest, depth)
            if key in _FIELD_KEYS and kind is dict:
                if len(item) > MAX_FIELDS:
                    raise too_large(f"{key} in one object", len(item), MAX_FIELDS, origin)
                seen.fields_total += len(item)
                if seen.fields_total > MAX_FIELDS_TOTAL:
                    raise too_large("field definitions", seen.fields_total,
                                    MAX_FIELDS_TOTAL, origin)
            if key == "values" and kind is list and len(item) > MAX_ENUM_VALUES:
                raise too_large("enum values", len(item), MAX_ENUM_VALUES, origin)
            if depth > depth_limit:
                continue
            if kind is dict:
                for name, child in item.items():
                    seen.text += len(name) if type(name) is str else 0
                    stack.append((child, depth + 1, name))
            else:
                stack.extend((child, depth + 1, None) for child in item)
        if seen.text > MAX_SPEC_BYTES:
            raise too_large("characters of text", seen.text, MAX_SPEC_BYTES, origin)
    return seen


def _count(doc: dict[str, Any], origin: str) -> None:
    """The counts the checker and the compiler pay for per item."""
    def sized(value: Any, what: str, limit: int) -> None:
        if isinstance(value, list | dict) and len(value) > limit:
            raise too_large(what, len(value), limit, origin)

    sized(doc.get("messages"), "messages", MAX_MESSAGES)
    sized(doc.get("parameters"), "parameters", MAX_PARAMETERS)
    sized(doc.get("choices"), "choices", MAX_ENUM_VALUES)
    flow = doc.get("flow")
    phases = flow.get("phases") if isinstance(flow, dict) else None
    sized(phases, "phases", MAX_PHASES)
    for phase in phases if isinstance(phases, list) else []:
        if isinstance(phase, dict):
            sized(phase.get("exchange"), "exchange steps in one phase", MAX_STEPS)


def check_document_bounds(doc: Any, origin: str = "spec", *, depth_limit: int) -> int:
    """Refuse ``doc`` with ``spec.too_large`` if it passes any bound; return its nesting.

    Nesting beyond ``depth_limit`` is returned, not refused, so the caller keeps
    its own code for documents too deep to be JSON at all.
    """
    seen = _walk(doc, origin, depth_limit)
    if seen.deepest > depth_limit:
        return seen.deepest
    if seen.deepest > MAX_NESTING:
        raise too_large("levels of nesting", seen.deepest, MAX_NESTING, origin)
    if isinstance(doc, dict):
        _count(doc, origin)
    try:
        size = len(json.dumps(doc, ensure_ascii=False, separators=(",", ":"),
                              default=str).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):  # not JSON: the caller's own check says so
        return seen.deepest
    if size > MAX_SPEC_BYTES:
        raise too_large("bytes (compact JSON)", size, MAX_SPEC_BYTES, origin)
    return seen.deepest
