"""One generated verdict function per message shape.

A message schema is a handful of fields, each a type with a few bounds. The
fastest check Python can run for it is straight-line code: fetch each
declared field, test it inline, count the keys. Calling a checker per field
and looping over the payload costs two to three times more. So each message
gets a function written for its shape (the sequence of field kinds, which
bounds are present, which fields are required), compiled once and shared by
every message with the same shape.

A spec is hostile input, so no text from it ever reaches the generated
source. The source is a function of the shape alone: kinds from this
module's own table, flags, and counts. Field names, enum values, bounds and
limits are *constants*, handed to the compiled factory as tuples and bound
to generated identifiers (``k0``, ``c1_0``), so a field named
``"]; import os #`` is a dictionary key like any other. The generated code
runs with only the builtins it needs.

The function answers yes or no. A no sends the payload to the checkers of
:mod:`lingxi.contract.fields`, which say why; a yes must never be given to
a payload those checkers would refuse (``tests/contract/test_field_verdicts.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from lingxi.contract.limits import (
    DEFAULT_CIPHERTEXT_MAX,
    DEFAULT_OT_BLOB_MAX,
    DEFAULT_TEXT_MAX,
    HEX_PAIRS,
    PATTERNS,
    TICKET_MAX,
)
from lingxi.contract.verdict import Verdict, compile_verdict, utf8_size

PayloadVerdict = Callable[[dict[str, Any]], int]

# kind -> the expression that is true when ``v`` is NOT acceptable; {0}, {1}
# are the field's constants. Only these strings and generated names are ever
# compiled.
_FAILS: dict[str, str] = {
    "int": "type(v) is not int",
    "int_lo": "type(v) is not int or v < {0}",
    "int_hi": "type(v) is not int or v > {0}",
    "int_lo_hi": "type(v) is not int or v < {0} or v > {1}",
    "bool": "v is not True and v is not False",
    "enum1": "type(v) is not str or v != {0}",
    "enum": "type(v) is not str or v not in {0}",
    "bytes": "type(v) is not str or (len(v) > {0} if v.isascii() else not {1}(v))",
    "ticket": "type(v) is not str or not v or len(v) > {0}",
    "pattern": "type(v) is not str or {0}(v) is None",
    "ciphertext": "type(v) is not str or len(v) > {0} or {1}(v) is None",
    "call": "not {0}(v)",
}
_BUILTINS = {"type": type, "len": len, "str": str, "int": int, "KeyError": KeyError}
# Past this many fields a schema gets the generic loop (bounded source size).
MAX_GENERATED_FIELDS = 64


def _bytes_within(limit: int) -> Verdict:
    def ok(v: str) -> bool:
        size = utf8_size(v)
        return size is not None and size <= limit
    return ok


def field_plan(defn: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """``(kind, constants)`` for one (valid) field definition."""
    ftype = defn["type"]
    if ftype == "integer":
        lo, hi = defn.get("min"), defn.get("max")
        bounds = tuple(b for b in (lo, hi) if b is not None)
        kind = "int" + ("_lo" if lo is not None else "") + ("_hi" if hi is not None else "")
        return kind, bounds
    if ftype == "boolean":
        return "bool", ()
    if ftype == "enum":
        values = defn["values"]
        return ("enum1", (values[0],)) if len(values) == 1 else ("enum", (frozenset(values),))
    if ftype in ("text", "ot_blob"):
        limit = defn.get("max_length", DEFAULT_TEXT_MAX if ftype == "text"
                         else DEFAULT_OT_BLOB_MAX)
        return "bytes", (limit, _bytes_within(limit))
    if ftype == "ticket":
        return "ticket", (TICKET_MAX,)
    if ftype in PATTERNS:
        return "pattern", (PATTERNS[ftype][0].fullmatch,)
    if ftype == "ciphertext":
        return "ciphertext", (defn.get("max_length", DEFAULT_CIPHERTEXT_MAX),
                              HEX_PAIRS.fullmatch)
    return "call", (compile_verdict(defn),)  # array, json


Shape = tuple[tuple[str, bool, int], ...]  # (kind, required, number of constants) per slot


def _source(shape: Shape) -> str:
    """The factory's source for ``shape``: only table strings and generated names.

    Slots come required first, then optional (the order they are checked
    in). The verdict returns -1 for a valid payload, else how many slots (in
    that order) were found good before the first problem: the explaining
    checkers can skip those.
    """
    lines = ["def make(keys, consts):"]
    if shape:
        lines.append("    " + "".join(f"k{i}, " for i in range(len(shape))) + "= keys")
    names = [[f"c{i}_{j}" for j in range(count)] for i, (_, _, count) in enumerate(shape)]
    flat = [name for group in names for name in group]
    if flat:
        lines.append("    " + "".join(f"{name}, " for name in flat) + "= consts")
    lines.append("    def verdict(p):")
    nreq = 0
    for i, (kind, required, _) in enumerate(shape):
        fails = _FAILS[kind].format(*names[i])
        if required:
            if i != nreq:
                raise ValueError("required slots come first")
            nreq += 1
            lines += ["        try:", f"            v = p[k{i}]", "        except KeyError:",
                      f"            return {i}", f"        if {fails}:", f"            return {i}"]
        else:
            if i == nreq:
                lines.append("        n = 0")
            lines += [f"        if k{i} in p:", "            n += 1", f"            v = p[k{i}]",
                      f"            if {fails}:", f"                return {i}"]
    count = f"{nreq} + n" if len(shape) > nreq else f"{nreq}"
    lines.append(f"        return -1 if len(p) == {count} else {len(shape)}")
    lines.append("    return verdict")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=512)
def _factory(shape: Shape) -> Callable[[tuple[Any, ...], tuple[Any, ...]], PayloadVerdict]:
    for kind, required, count in shape:  # the shape is ours alone; check it anyway
        if kind not in _FAILS or type(required) is not bool or type(count) is not int:
            raise ValueError("bad verdict shape")
    namespace: dict[str, Any] = {"__builtins__": dict(_BUILTINS)}
    exec(compile(_source(shape), "<lingxi.contract verdict>", "exec"), namespace)  # noqa: S102
    factory: Callable[[tuple[Any, ...], tuple[Any, ...]], PayloadVerdict] = namespace["make"]
    return factory


def _generic(slots: Sequence[tuple[str, bool, Verdict]]) -> PayloadVerdict:
    """The same verdict as a loop, for schemas too large to write out."""
    def verdict(p: dict[str, Any]) -> int:
        n = 0
        for index, (key, required, ok) in enumerate(slots):
            if key in p:
                n += 1
                if not ok(p[key]):
                    return index
            elif required:
                return index
        return -1 if len(p) == n else len(slots)
    return verdict


def _slots(fields: dict[str, dict[str, Any]], implicit_action: str | None
           ) -> list[tuple[str, bool, str, tuple[Any, ...]]]:
    slots = []
    for key, defn in fields.items():
        kind, consts = field_plan(defn)
        slots.append((key, defn.get("required") is True, kind, consts))
    if implicit_action is not None:
        slots.append(("action", False, "enum1", (implicit_action,)))
    slots.sort(key=lambda slot: not slot[1])  # required first, declaration order kept
    return slots


def payload_verdict(fields: dict[str, dict[str, Any]], implicit_action: str | None
                    ) -> tuple[PayloadVerdict, tuple[str, ...]]:
    """``(verdict, order)`` for a message schema's ``fields`` (a checked definition).

    ``verdict(payload)`` is -1 when the payload is valid, else the number of
    keys of ``order`` (the slots, in the order checked) found good before the
    first problem. ``implicit_action`` is the schema's name when it declares
    no ``action`` field: such a payload may carry ``"action": <name>``.
    """
    slots = _slots(fields, implicit_action)
    order = tuple(key for key, _, _, _ in slots)
    if len(slots) > MAX_GENERATED_FIELDS:
        loose = [(key, req, compile_verdict(fields[key]) if key in fields
                  else (lambda v: type(v) is str and v == implicit_action))
                 for key, req, _, _ in slots]
        return _generic(loose), order
    shape: Shape = tuple((kind, req, len(consts)) for _, req, kind, consts in slots)
    consts = tuple(c for _, _, _, group in slots for c in group)
    return _factory(shape)(order, consts), order


def generated_source(fields: dict[str, dict[str, Any]], implicit_action: str | None = None) -> str:
    """The source compiled for these fields (for tests and curious readers)."""
    return _source(tuple((kind, req, len(consts))
                         for _, req, kind, consts in _slots(fields, implicit_action)))
