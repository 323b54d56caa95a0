"""The fast verdicts say exactly what the explaining checkers say.

Validation runs a generated verdict first and the checkers only on a no
(lingxi.contract.codegen, lingxi.contract.verdict). These properties hold
the two against each other on random field definitions, random values and
random payloads: a verdict accepts exactly the values the checker finds no
problem with, and a spec's findings are the findings the checkers alone
produce, in the same order.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from verdict_cases import EDGE_STRINGS, SCALARS, near, spoil

from lingxi.contract import load_spec
from lingxi.contract.codegen import payload_verdict
from lingxi.contract.fields import compile_field
from lingxi.contract.verdict import compile_verdict
from lingxi.errors import Finding

EXAMPLES = int(os.environ.get("LINGXI_HYPOTHESIS_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FIELD_SETTINGS = settings(SETTINGS, max_examples=max(EXAMPLES // 6, 30))

SCALAR_TYPES = ["integer", "boolean", "enum", "text", "hash", "nonce", "id", "signature",
                "key", "ciphertext", "ot_blob", "ticket"]

# values only a Python caller could pass (no JSON text parses to them)
PYTHON_ONLY = st.tuples(st.integers()) | st.just({1: 2}) | st.just(float("nan"))


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@st.composite
def scalar_definitions(draw, ftype: str | None = None) -> dict[str, Any]:
    ftype = ftype or draw(st.sampled_from(SCALAR_TYPES))
    defn: dict[str, Any] = {"type": ftype}
    if ftype == "integer":
        bounds = sorted(draw(st.lists(st.integers(-1000, 1000), min_size=2, max_size=2)))
        if draw(st.booleans()):
            defn["min"] = bounds[0]
        if draw(st.booleans()):
            defn["max"] = bounds[1]
    elif ftype == "enum":
        # (a spec's own text is UTF-8: values with lone surrogates cannot be loaded)
        defn["values"] = draw(st.lists((st.text(min_size=1, max_size=6) | EDGE_STRINGS).filter(
            lambda v: v and _utf8(v)), min_size=1, max_size=4, unique=True))
    elif ftype in ("text", "ot_blob") and draw(st.booleans()):
        defn["max_length"] = draw(st.integers(1, 70))
    elif ftype == "ciphertext" and draw(st.booleans()):
        defn["max_length"] = draw(st.integers(2, 70))
    return defn


@st.composite
def definitions(draw, kind: str | None = None) -> dict[str, Any]:
    """A field definition; ``kind`` is a type, ``array:<item type>``, or None (any)."""
    kind = kind or draw(st.sampled_from(SCALAR_TYPES + ["array", "json"]))
    if kind in SCALAR_TYPES:
        return draw(scalar_definitions(kind))
    if kind == "json":
        defn: dict[str, Any] = {"type": "json"}
        if draw(st.booleans()):
            defn["container"] = draw(st.sampled_from(["any", "object", "array"]))
        if draw(st.booleans()):
            defn["max_total_bytes"] = draw(st.integers(1, 80))
        return defn
    item = kind.partition(":")[2] or None
    defn = {"type": "array", "items": draw(scalar_definitions(item))}
    counts = sorted(draw(st.lists(st.integers(0, 6), min_size=2, max_size=2)))
    if draw(st.booleans()):
        defn["min_items"] = counts[0]
    if draw(st.booleans()):
        defn["max_items"] = counts[1]
    if draw(st.booleans()):
        defn["max_total_bytes"] = draw(st.integers(1, 300))
    return defn


KINDS = SCALAR_TYPES + ["json"] + [f"array:{t}" for t in SCALAR_TYPES]


def _near(defn: dict) -> st.SearchStrategy:
    return near(defn) | PYTHON_ONLY


@pytest.mark.parametrize("kind", KINDS)
@FIELD_SETTINGS
@given(data=st.data())
def test_a_field_verdict_accepts_exactly_what_its_checker_accepts(kind, data):
    defn = data.draw(definitions(kind))
    value = data.draw(_near(defn))
    checker = compile_field(defn, "message", shortcut=False)
    found: list[Finding] = []
    checker(value, "v", found)
    assert compile_verdict(defn)(value) is (not found), (defn, value, found)
    shortcut: list[Finding] = []
    compile_field(defn, "message")(value, "v", shortcut)
    assert shortcut == found


def _findings_without_verdicts(fields: dict, payload: dict) -> list[Finding]:
    """What the checkers alone report for a payload (the meaning of validation)."""
    checks = {name: compile_field(defn, "message", shortcut=False)
              for name, defn in fields.items()}
    out: list[Finding] = []
    for key, value in payload.items():
        if key in checks:
            checks[key](value, key, out)
        elif key != "action":
            out.append(Finding("message.unknown_field", f"field {str(key)[:80]!r} is not "
                               "declared in message 'm'", str(key)))
    for key, defn in fields.items():
        if defn.get("required") is True and key not in payload:
            out.append(Finding("message.missing_field", "required field of 'm' is missing",
                               key))
    return out


FIELD_NAMES = st.sampled_from(["a", "b", "n", "round", "blobs", "x y", "é", "1"])


@SETTINGS
@given(st.data())
def test_message_findings_are_the_checkers_findings_in_order(data):
    fields = data.draw(st.dictionaries(FIELD_NAMES, definitions(), min_size=1, max_size=6))
    for defn in fields.values():
        defn["required"] = data.draw(st.booleans())
    fields = {"action": {"type": "enum", "values": ["m"], "required": True}, **fields}
    spec = load_spec({"name": "t", "messages": [
        {"name": "m", "direction": "both", "fields": fields}]})
    payload: dict[str, Any] = {"action": "m"}
    for key, defn in fields.items():
        if key != "action" and data.draw(st.integers(0, 3)):
            payload[key] = data.draw(_near(defn))
    if data.draw(st.booleans()):
        payload[data.draw(st.text(max_size=4))] = data.draw(SCALARS)
    expected = _findings_without_verdicts(fields, payload)
    assert spec.validate_message(payload, "host_to_guest") == expected
    assert spec.validate_message(payload, None) == expected
    # and the generated verdict alone says valid exactly when there is nothing to report
    assert (spec._index.by_name["m"].verdict(payload) < 0) is (not expected)


def test_a_repeated_problem_reuses_its_finding_but_reports_each_payload():
    spec = load_spec({"name": "t", "messages": [{"name": "m", "direction": "both", "fields": {
        "action": {"type": "enum", "values": ["m"], "required": True},
        "n": {"type": "integer", "max": 3, "required": True}}}]})
    first = spec.validate_message({"action": "m", "n": 4, "zz": 1}, None)
    again = spec.validate_message({"action": "m", "n": 4, "zz": 1}, None)
    assert [(f.path, f.code) for f in first] == [("n", "message.out_of_range"),
                                                 ("zz", "message.unknown_field")]
    assert again == first
    # a peer inventing a new key per message still gets a finding for each
    for index in range(200):
        found = spec.validate_message({"action": "m", "n": 1, f"k{index}": 0}, None)
        assert [(f.path, f.code) for f in found] == [(f"k{index}", "message.unknown_field")]


# ---------------------------------------------------------------- every edge, deterministically

BOUNDARY_DEFINITIONS = [
    {"type": "integer"}, {"type": "integer", "min": -2}, {"type": "integer", "max": 7},
    {"type": "integer", "min": 0, "max": 12}, {"type": "boolean"},
    {"type": "enum", "values": ["a"]}, {"type": "enum", "values": ["a", "bé"]},
    {"type": "text", "max_length": 6}, {"type": "text"}, {"type": "ot_blob", "max_length": 5},
    {"type": "ot_blob"}, {"type": "ticket"}, {"type": "hash"}, {"type": "key"},
    {"type": "signature"}, {"type": "nonce"}, {"type": "id"},
    {"type": "ciphertext", "max_length": 8}, {"type": "ciphertext"},
    {"type": "json"}, {"type": "json", "container": "object", "max_total_bytes": 12},
    {"type": "json", "container": "array", "max_total_bytes": 9},
]


def _edge_strings(lengths: list[int]) -> list[str]:
    out = []
    for size in lengths:
        if size < 0:
            continue
        for unit in ("a", "0", "é", "灵"):
            out.append((unit * size)[:size] if unit in "a0" else unit * size)
        hexed = ("0123456789abcdef" * 300)[:size]
        out += [hexed, hexed.upper(), spoil(hexed, "g", size // 2),
                spoil(hexed, "\ud800", size // 2), spoil(hexed, ":", 0)]
    return out


def _edges(defn: dict) -> list[Any]:
    """Values on and around every bound of ``defn``."""
    ftype = defn["type"]
    common: list[Any] = [None, True, False, 0, 1.0, "", [], {}, "\ud800"]
    if ftype == "integer":
        near = [b + d for b in (defn.get("min", -5), defn.get("max", 5)) for d in (-1, 0, 1)]
        return common + near + [2**70, -2**70]
    if ftype == "enum":
        return common + defn["values"] + [v.upper() for v in defn["values"]] + ["a "]
    if ftype in ("text", "ot_blob"):
        limit = defn.get("max_length", 2000 if ftype == "text" else 16384)
        return common + _edge_strings([0, 1, limit // 4, limit // 3, limit // 2, limit - 1,
                                       limit, limit + 1])
    if ftype == "ticket":
        return common + _edge_strings([1, 2047, 2048, 2049])
    if ftype == "ciphertext":
        limit = defn.get("max_length", 512)
        return common + _edge_strings([1, 2, 3, limit - 1, limit, limit + 1, limit + 2])
    if ftype in ("hash", "key", "signature", "nonce", "id"):
        return common + _edge_strings([1, 15, 16, 17, 63, 64, 65, 127, 128, 129])
    if ftype == "json":
        return common + [[1, 2], {"k": "v"}, {"k": "vvvvv"}, [1, [2, [3]]], {"k": [1.5]},
                         [float("nan")], {1: 2}, (1,), [[1, 2, 3, 4]], "x" * 10]
    return common


def _arrays(item: dict) -> list[tuple[dict, list]]:
    """Array definitions over ``item`` with arrays on and around every bound."""
    good = [v for v in _edges(item) if not _problems(item, v)]
    bad = [v for v in _edges(item) if _problems(item, v)]
    out = []
    for defn in ({"type": "array", "items": item},
                 {"type": "array", "items": item, "min_items": 1, "max_items": 3},
                 {"type": "array", "items": item, "max_total_bytes": 24},
                 {"type": "array", "items": item, "max_total_bytes": 3}):
        for value in good + bad[:6]:
            for count in (0, 1, 2, 3, 4):
                out.append((defn, [value] * count))
        for value in bad:
            out.append((defn, good[:2] + [value]))
        for left, right in zip(good, good[1:], strict=False):
            out.append((defn, [left, right]))
    return out


def _problems(defn: dict, value: Any) -> list[Finding]:
    found: list[Finding] = []
    compile_field(defn, "message", shortcut=False)(value, "v", found)
    return found


def _assert_same_verdicts(defn: dict, value: Any) -> None:
    expected = not _problems(defn, value)
    assert compile_verdict(defn)(value) is expected, (defn, value)
    verdict, _ = payload_verdict({"v": {**defn, "required": True}}, None)
    assert (verdict({"v": value}) < 0) is expected, (defn, value)
    optional, _ = payload_verdict({"v": defn, "w": {"type": "boolean"}}, None)
    assert (optional({"v": value}) < 0) is expected, (defn, value)


@pytest.mark.parametrize("defn", BOUNDARY_DEFINITIONS, ids=lambda d: str(sorted(d.items())))
def test_verdicts_agree_on_every_bound(defn):
    for value in _edges(defn):
        _assert_same_verdicts(defn, value)


@pytest.mark.parametrize("item", [d for d in BOUNDARY_DEFINITIONS if d["type"] != "json"],
                         ids=lambda d: str(sorted(d.items())))
def test_array_verdicts_agree_on_every_bound(item):
    for defn, value in _arrays(item):
        _assert_same_verdicts(defn, value)
