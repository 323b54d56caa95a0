"""Reading a spec document from a path, a protocol folder or a dict.

Unreadable input (missing file, not UTF-8, bad JSON, not an object) raises
:class:`SpecError` with exit status 2; JSON syntax errors name
``file:line:column``. Duplicate object keys are reported too, because two
readers could otherwise disagree on which value is the contract. An
oversized spec is refused with ``spec.too_large`` (:mod:`lingxi.contract.bounds`)
before it is copied, checked, hashed or compiled: a file by its size before it
is read whole, every document by its counts right after parsing.
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path
from typing import Any

from lingxi.contract.bounds import MAX_FILE_BYTES, check_document_bounds, check_file_size
from lingxi.contract.errors import SpecError

SPEC_FILE = "spec.json"


def resolve_spec_path(source: str | Path) -> Path:
    """A directory argument means ``<dir>/spec.json``."""
    path = Path(source)
    if path.is_dir():
        return path / SPEC_FILE
    return path


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _Duplicates:
    """object_pairs_hook that keeps the last value and remembers repeated keys."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                self.keys.append(key)
            out[key] = value
        return out


def parse_json_text(text: str, origin: str) -> tuple[Any, list[str]]:
    """Parse ``text``; raise SpecError(spec.bad_json) naming origin:line:column."""
    dupes = _Duplicates()
    try:
        value = json.loads(text, object_pairs_hook=dupes, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        where = f"{origin}:{error.lineno}:{error.colno}"
        raise SpecError("spec.bad_json", f"{where}: {error.msg}",
                        details={"line": error.lineno, "column": error.colno}) from None
    except ValueError as error:  # NaN / Infinity
        raise SpecError("spec.bad_json", f"{origin}: {error}") from None
    except RecursionError:
        raise SpecError("spec.bad_json", f"{origin}: nested too deeply") from None
    return value, dupes.keys


MAX_DEPTH = 200  # far deeper than any real spec; keeps copying and hashing off the recursion limit


def _is_json(value: Any) -> bool:
    """True when ``value`` is plain, finite JSON data (str keys, no NaN, not too deep)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if depth >= MAX_DEPTH:
                return False
            if kind is dict:
                for key, child in item.items():
                    if type(key) is not str:
                        return False
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif item is not None and kind not in (str, int, bool):
            return False
    return True


def read_spec_document(source: str | Path | dict[str, Any]) -> tuple[dict[str, Any], str, list[str]]:
    """Return ``(document, origin, duplicate_keys)`` or raise SpecError (exit 2)."""
    if isinstance(source, dict):
        check_document_bounds(source, "spec", depth_limit=MAX_DEPTH)
        if not _is_json(source):
            raise SpecError("spec.not_json", "spec is not plain JSON data (non-string keys, "
                            f"NaN, non-JSON values, or nested deeper than {MAX_DEPTH})")
        return copy.deepcopy(source), "<dict>", []
    if not isinstance(source, (str, Path)):
        raise SpecError("spec.not_object", f"a spec must be a JSON object, a path or a "
                        f"folder, got {type(source).__name__}")
    path = resolve_spec_path(source)
    origin = str(path)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            check_file_size(size, origin)
            data = handle.read(MAX_FILE_BYTES + 1)  # a pipe or a growing file has no size
    except OSError as error:
        reason = error.strerror or str(error)
        raise SpecError("spec.unreadable", f"cannot read {origin}: {reason}") from None
    check_file_size(len(data), origin)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        msg = f"{origin}: not UTF-8 (byte {error.start})"
        raise SpecError("spec.bad_json", msg) from None
    value, dupes = parse_json_text(text, origin)
    if not isinstance(value, dict):
        msg = f"{origin}: a spec must be a JSON object, got {json_kind(value)}"
        raise SpecError("spec.not_object", msg)
    # counts first; a table nested hundreds of levels would exhaust the checker's stack
    if check_document_bounds(value, origin, depth_limit=MAX_DEPTH) > MAX_DEPTH:
        raise SpecError("spec.bad_json", f"{origin}: nested more than {MAX_DEPTH} levels deep")
    return value, origin, dupes


def json_kind(value: Any) -> str:
    """The JSON name of a Python value's type, for one-line messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
