"""Field types: checking a field definition, and compiling it into a checker.

A *definition* is the spec's ``{"type": "integer", "min": 1, ...}``. Checking it
happens once, when the spec is loaded (an unknown type or a malformed
constraint fails there). Compiling it yields a closure
``check(value, path, out)`` that appends a :class:`Finding` for each problem and
returns nothing; the closures are built once per spec and reused for every
message or option set, so validation is a dict lookup plus a few type tests.

The same checkers serve messages (codes ``message.*``) and options
(``options.*``): only the code prefix differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard

from lingxi.contract.findings import FindingMemo
from lingxi.contract.limits import (
    DEFAULT_ARRAY_MAX_BYTES,
    DEFAULT_CIPHERTEXT_MAX,
    DEFAULT_JSON_MAX_BYTES,
    DEFAULT_OT_BLOB_MAX,
    DEFAULT_TEXT_MAX,
    HEX_PAIRS,
    PATTERNS,
    TICKET_MAX,
)
from lingxi.contract.source import json_kind
from lingxi.contract.verdict import compile_verdict, item_size, json_problem, json_size, utf8_size
from lingxi.errors import Finding, Report

Checker = Callable[[Any, str, list[Any]], None]

MESSAGE_TYPES = frozenset({
    "integer", "boolean", "enum", "text", "hash", "nonce", "id", "signature", "key",
    "ciphertext", "ot_blob", "ticket", "array", "json",
})
SCALAR_TYPES = MESSAGE_TYPES - {"array", "json"}
PARAMETER_TYPES = SCALAR_TYPES | {"table"}
TABLE_LEAF_TYPES = frozenset({"integer", "boolean", "enum"})

__all__ = [
    "DEFAULT_ARRAY_MAX_BYTES", "DEFAULT_CIPHERTEXT_MAX", "DEFAULT_JSON_MAX_BYTES",
    "DEFAULT_OT_BLOB_MAX", "DEFAULT_TEXT_MAX", "MESSAGE_TYPES", "PARAMETER_TYPES",
    "SCALAR_TYPES", "TABLE_LEAF_TYPES", "TICKET_MAX", "Checker", "check_columns",
    "check_definition", "compile_field", "compile_tree", "json_size",
]

# Constraint keys each type accepts, beyond the common ones.
_CONSTRAINTS: dict[str, frozenset[str]] = {
    "integer": frozenset({"min", "max"}),
    "boolean": frozenset(),
    "enum": frozenset({"values"}),
    "text": frozenset({"max_length"}),
    "hash": frozenset(), "nonce": frozenset(), "id": frozenset(),
    "signature": frozenset(), "key": frozenset(), "ticket": frozenset(),
    "ciphertext": frozenset({"max_length"}),
    "ot_blob": frozenset({"max_length"}),
    "array": frozenset({"items", "min_items", "max_items", "max_total_bytes"}),
    "json": frozenset({"container", "max_total_bytes"}),
    "table": frozenset({"columns"}),
    "object": frozenset({"fields"}),
}
_COMMON = frozenset({"type", "required", "description", "label", "title", "example",
                     "examples", "default", "unit", "doc"})


def _is_int(value: Any) -> TypeGuard[int]:
    return type(value) is int


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path and path != "$" else key


# --------------------------------------------------------------------------- definitions

def check_definition(defn: Any, path: str, report: Report, *, allowed: frozenset[str],
                     where: str = "field") -> str | None:
    """Check one field definition; return its type when usable, else None.

    ``allowed`` is the set of types valid here (message fields, array items,
    parameters, table leaves). Problems go to ``report`` with spec.* codes.
    """
    if not isinstance(defn, dict):
        report.add("spec.bad_field", f"{where} definition must be an object, got {json_kind(defn)}",
                   path)
        return None
    ftype = defn.get("type")
    if "type" not in defn:
        report.add("spec.missing_field", f"{where} definition has no type", path)
        return None
    if not isinstance(ftype, str) or ftype not in allowed:
        known = ", ".join(sorted(allowed))
        code = "spec.unknown_parameter_type" if where == "parameter" else "spec.unknown_field_type"
        report.add(code, f"unknown {where} type {ftype!r} (known: {known})", _join(path, "type"))
        return None
    if "required" in defn and not isinstance(defn["required"], bool):
        report.add("spec.bad_constraint", "required must be true or false",
                   _join(path, "required"))
    extra = set(defn) - _COMMON - _CONSTRAINTS[ftype]
    for key in sorted(extra):
        report.warn("spec.unknown_key", f"{key!r} is not a constraint of type {ftype}; ignored",
                    _join(path, key))
    _check_constraints(ftype, defn, path, report)
    return ftype


def _nonneg_int(defn: dict[str, Any], key: str, path: str, report: Report, *, positive: bool = False) -> None:
    if key not in defn:
        return
    value = defn[key]
    low = 1 if positive else 0
    if not _is_int(value) or value < low:
        what = "a positive integer" if positive else "a non-negative integer"
        report.add("spec.bad_constraint", f"{key} must be {what}, got {value!r}",
                   _join(path, key))


def _integer_limits(ftype: str, defn: dict[str, Any], path: str, report: Report) -> None:
    for key in ("min", "max"):
        if key in defn and not _is_int(defn[key]):
            report.add("spec.bad_constraint", f"{key} must be an integer, got {defn[key]!r}",
                       _join(path, key))
    lo, hi = defn.get("min"), defn.get("max")
    if _is_int(lo) and _is_int(hi) and lo > hi:
        report.add("spec.bad_constraint", f"min {lo} is greater than max {hi}",
                   _join(path, "min"))


def _enum_limits(ftype: str, defn: dict[str, Any], path: str, report: Report) -> None:
    values = defn.get("values")
    if "values" not in defn:
        report.add("spec.bad_constraint", "enum needs a values list", path)
        return
    if not isinstance(values, list) or not values:
        report.add("spec.bad_constraint", "enum values must be a non-empty array",
                   _join(path, "values"))
        return
    seen: set[str] = set()
    for i, item in enumerate(values):
        if not isinstance(item, str) or not item:
            report.add("spec.bad_constraint",
                       f"enum values must be non-empty strings, got {item!r}",
                       f"{_join(path, 'values')}[{i}]")
        elif item in seen:
            report.add("spec.bad_constraint", f"enum value {item!r} is repeated",
                       f"{_join(path, 'values')}[{i}]")
        else:
            seen.add(item)


def _text_limits(ftype: str, defn: dict[str, Any], path: str, report: Report) -> None:
    _nonneg_int(defn, "max_length", path, report, positive=True)
    limit = defn.get("max_length")
    if ftype == "ciphertext" and _is_int(limit) and 0 < limit < 2:
        report.add("spec.bad_constraint", "ciphertext max_length must be at least 2 "
                   "(one byte of hex)", _join(path, "max_length"))


def _array_limits(ftype: str, defn: dict[str, Any], path: str, report: Report) -> None:
    if "items" not in defn:
        report.add("spec.bad_constraint", "array needs an items definition", path)
    else:
        check_definition(defn["items"], _join(path, "items"), report,
                         allowed=SCALAR_TYPES, where="array item")
    _nonneg_int(defn, "min_items", path, report)
    _nonneg_int(defn, "max_items", path, report)
    _nonneg_int(defn, "max_total_bytes", path, report, positive=True)
    lo, hi = defn.get("min_items"), defn.get("max_items")
    if _is_int(lo) and _is_int(hi) and lo > hi:
        report.add("spec.bad_constraint", f"min_items {lo} is greater than max_items {hi}",
                   _join(path, "min_items"))


def _json_limits(ftype: str, defn: dict[str, Any], path: str, report: Report) -> None:
    if "container" in defn and defn["container"] not in ("any", "object", "array"):
        report.add("spec.bad_constraint",
                   f"container must be any, object or array, got {defn['container']!r}",
                   _join(path, "container"))
    _nonneg_int(defn, "max_total_bytes", path, report, positive=True)


# field type -> the check of its own constraints (types without any are absent)
_LIMIT_CHECKS: dict[str, Callable[[str, dict[str, Any], str, Report], None]] = {
    "integer": _integer_limits,
    "enum": _enum_limits,
    "text": _text_limits,
    "ciphertext": _text_limits,
    "ot_blob": _text_limits,
    "array": _array_limits,
    "json": _json_limits,
    "table": lambda ftype, defn, path, report: check_columns(
        defn.get("columns"), _join(path, "columns"), report),
    "object": lambda ftype, defn, path, report: check_columns(
        defn.get("fields"), _join(path, "fields"), report),
}


def _check_constraints(ftype: str, defn: dict[str, Any], path: str, report: Report) -> None:
    check = _LIMIT_CHECKS.get(ftype)
    if check is not None:
        check(ftype, defn, path, report)


def check_columns(columns: Any, path: str, report: Report) -> None:
    """A table's columns: a field tree of integer/boolean/enum leaves and object nodes."""
    if not isinstance(columns, dict) or not columns:
        report.add("spec.bad_constraint", "columns/fields must be a non-empty object", path)
        return
    for name, column in columns.items():
        check_definition(column, _join(path, name), report,
                         allowed=TABLE_LEAF_TYPES | {"object"}, where="table column")


# --------------------------------------------------------------------------- compilation

def compile_field(defn: dict[str, Any], prefix: str, *, shortcut: bool = True) -> Checker:
    """Build the checker closure for a (valid) definition; codes are ``prefix.*``.

    An array or json checker first asks the field's verdict
    (:mod:`lingxi.contract.verdict`) and stops at a yes; ``shortcut=False``
    builds it without, so tests can hold the two against each other.
    """
    ftype = defn["type"]
    if ftype == "array":
        return _array(defn, prefix, shortcut)
    if ftype == "json":
        return _json(defn, prefix, shortcut)
    builder = _BUILDERS.get(ftype)
    if builder is not None:
        return builder(defn, prefix)
    if ftype in PATTERNS:
        return _pattern_checker(ftype, prefix)
    raise KeyError(ftype)  # unreachable for checked definitions


def _wrong_type(prefix: str, expected: str) -> Callable[[Any, str, list[Any]], None]:
    code = f"{prefix}.wrong_type"
    memo = FindingMemo()

    def report(value: Any, path: str, out: list[Any]) -> None:
        finding = memo.made.get((path, type(value)))
        if finding is None:
            finding = memo.keep((path, type(value)), Finding(
                code, f"expected {expected}, got {json_kind(value)}", path))
        out.append(finding)
    return report


def _integer(defn: dict[str, Any], prefix: str) -> Checker:
    lo, hi = defn.get("min"), defn.get("max")
    wrong = _wrong_type(prefix, "an integer")
    code = f"{prefix}.out_of_range"
    memo = FindingMemo()

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not int:
            wrong(value, path, out)
            return
        below = lo is not None and value < lo
        if below or (hi is not None and value > hi):
            finding = memo.made.get((path, below))
            if finding is None:
                finding = memo.keep((path, below), Finding(
                    code, f"below min {lo}" if below else f"above max {hi}", path))
            out.append(finding)
    return check


def _boolean(defn: dict[str, Any], prefix: str) -> Checker:
    wrong = _wrong_type(prefix, "a boolean")

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not bool:
            wrong(value, path, out)
    return check


def _enum(defn: dict[str, Any], prefix: str) -> Checker:
    values = frozenset(defn["values"])
    shown = ", ".join(defn["values"])
    wrong = _wrong_type(prefix, "a string")
    code = f"{prefix}.bad_value"

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not str:
            wrong(value, path, out)
        elif value not in values:
            out.append(Finding(code, f"{value[:80]!r} is not one of: {shown}", path))
    return check


def _bytes_limited(limit: int, prefix: str, what: str) -> Checker:
    wrong = _wrong_type(prefix, "a string")
    too_long = f"{prefix}.too_long"
    bad = f"{prefix}.bad_value"

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not str:
            wrong(value, path, out)
            return
        size = utf8_size(value)
        if size is None:
            out.append(Finding(bad, "not valid Unicode text (lone surrogate)", path))
        elif size > limit:
            out.append(Finding(too_long, f"{what} is {size} bytes, above max_length {limit}",
                               path))
    return check


def _text(defn: dict[str, Any], prefix: str) -> Checker:
    return _bytes_limited(defn.get("max_length", DEFAULT_TEXT_MAX), prefix, "text")


def _ot_blob(defn: dict[str, Any], prefix: str) -> Checker:
    # An empty ot_blob is accepted: the seed is silent and the published
    # validator accepts it (docs/contract.md, "Empty machine values").
    return _bytes_limited(defn.get("max_length", DEFAULT_OT_BLOB_MAX), prefix, "ot_blob")


def _ticket(defn: dict[str, Any], prefix: str) -> Checker:
    wrong = _wrong_type(prefix, "a string")
    too_long = f"{prefix}.too_long"
    bad = f"{prefix}.bad_value"

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not str:
            wrong(value, path, out)
        elif not value:
            out.append(Finding(bad, "ticket must not be empty", path))
        elif len(value) > TICKET_MAX:
            out.append(Finding(too_long, f"ticket is {len(value)} characters, above {TICKET_MAX}",
                               path))
    return check


def _ciphertext(defn: dict[str, Any], prefix: str) -> Checker:
    limit = defn.get("max_length", DEFAULT_CIPHERTEXT_MAX)
    wrong = _wrong_type(prefix, "a string")
    too_long = f"{prefix}.too_long"
    bad = f"{prefix}.bad_value"
    match = HEX_PAIRS.fullmatch

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not str:
            wrong(value, path, out)
        elif len(value) > limit:
            out.append(Finding(too_long, f"ciphertext is {len(value)} characters, above "
                               f"max_length {limit}", path))
        elif match(value) is None:
            out.append(Finding(bad, "expected non-empty, even-length lowercase hex", path))
    return check


def _pattern_checker(ftype: str, prefix: str) -> Checker:
    pattern, described, _, _ = PATTERNS[ftype]
    match = pattern.fullmatch
    wrong = _wrong_type(prefix, "a string")
    bad = f"{prefix}.bad_value"

    memo = FindingMemo()

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not str:
            wrong(value, path, out)
        elif match(value) is None:
            finding = memo.made.get(path)
            if finding is None:
                finding = memo.keep(path, Finding(bad, f"{ftype} must be {described}", path))
            out.append(finding)
    return check


def _never(value: Any) -> bool:
    return False


def _array(defn: dict[str, Any], prefix: str, shortcut: bool) -> Checker:
    item_check = compile_field(defn["items"], prefix)
    fast = compile_verdict(defn) if shortcut else _never
    lo, hi = defn.get("min_items"), defn.get("max_items")
    limit = defn.get("max_total_bytes", DEFAULT_ARRAY_MAX_BYTES)
    wrong = _wrong_type(prefix, "an array")
    out_of_range = f"{prefix}.out_of_range"
    too_large = f"{prefix}.too_large"
    bad = f"{prefix}.bad_value"

    def check(value: Any, path: str, out: list[Any]) -> None:
        if fast(value):
            return
        if type(value) is not list:
            wrong(value, path, out)
            return
        count = len(value)
        if lo is not None and count < lo:
            out.append(Finding(out_of_range, f"has {count} items, below min_items {lo}", path))
            return
        if hi is not None and count > hi:
            out.append(Finding(out_of_range, f"has {count} items, above max_items {hi}", path))
            return
        before = len(out)
        for index, item in enumerate(value):
            item_check(item, f"{path}[{index}]", out)
            if len(out) - before >= 20:  # enough to act on; keep reports short
                return
        if len(out) != before:
            return
        size = 0
        for index, item in enumerate(value):
            item_bytes = item_size(item)
            if item_bytes is None:
                out.append(Finding(bad, "not writable as UTF-8 JSON (lone surrogate or "
                                   "an integer too long)", f"{path}[{index}]"))
                return
            size += item_bytes
        if size > limit:
            out.append(Finding(too_large, f"items total {size} bytes, above "
                               f"max_total_bytes {limit}", path))
    return check


def _json(defn: dict[str, Any], prefix: str, shortcut: bool) -> Checker:
    container = defn.get("container", "any")
    fast = compile_verdict(defn) if shortcut else _never
    limit = defn.get("max_total_bytes", DEFAULT_JSON_MAX_BYTES)
    wrong_code = f"{prefix}.wrong_type"
    bad = f"{prefix}.bad_value"
    too_large = f"{prefix}.too_large"

    def check(value: Any, path: str, out: list[Any]) -> None:
        if fast(value):
            return
        if container == "object" and type(value) is not dict:
            out.append(Finding(wrong_code, f"expected an object, got {json_kind(value)}", path))
            return
        if container == "array" and type(value) is not list:
            out.append(Finding(wrong_code, f"expected an array, got {json_kind(value)}", path))
            return
        problem = json_problem(value)
        if problem:
            out.append(Finding(bad, problem, path))
            return
        try:
            size = json_size(value)
        except (ValueError, TypeError, RecursionError):
            out.append(Finding(bad, "not encodable as JSON (nested too deeply or bad text)",
                               path))
            return
        if size > limit:
            out.append(Finding(too_large, f"is {size} bytes, above max_total_bytes {limit}",
                               path))
    return check


def _object(defn: dict[str, Any], prefix: str) -> Checker:
    return compile_tree(defn["fields"], prefix)


def _table(defn: dict[str, Any], prefix: str) -> Checker:
    return compile_tree(defn["columns"], prefix)


def compile_tree(columns: dict[str, Any], prefix: str) -> Checker:
    """Checker for an object whose keys are exactly ``columns`` (all required)."""
    checks = {name: compile_field(column, prefix) for name, column in columns.items()}
    wrong = _wrong_type(prefix, "an object")
    missing = f"{prefix}.missing_field"
    unknown = f"{prefix}.unknown_field"

    def check(value: Any, path: str, out: list[Any]) -> None:
        if type(value) is not dict:
            wrong(value, path, out)
            return
        for key, item in value.items():
            sub = checks.get(key)
            where = _join(path, str(key))
            if sub is None:
                out.append(Finding(unknown, f"unknown key {str(key)[:80]!r}", where))
            else:
                sub(item, where, out)
        for key in checks:
            if key not in value:
                out.append(Finding(missing, "required key is missing", _join(path, key)))
    return check


_BUILDERS: dict[str, Callable[[dict[str, Any], str], Checker]] = {
    "integer": _integer,
    "boolean": _boolean,
    "enum": _enum,
    "text": _text,
    "ot_blob": _ot_blob,
    "ticket": _ticket,
    "ciphertext": _ciphertext,
    "object": _object,
    "table": _table,
}
