"""Generated validators never run text from the spec.

A spec is hostile input: its field names, enum values, message names and
bounds are chosen by whoever published it. lingxi.contract.codegen writes
Python source per message shape; these tests show that source is a function
of the shape alone (field kinds, which bounds exist, which fields are
required), so no spec text can become code, and that hostile names still
validate as the plain data they are.
"""

from __future__ import annotations

import builtins
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.contract import load_spec
from lingxi.contract.codegen import MAX_GENERATED_FIELDS, generated_source

SETTINGS = settings(max_examples=int(os.environ.get("LINGXI_HYPOTHESIS_EXAMPLES", "150")),
                    deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text a code generator that pasted names would trip over, plus anything at all.
NASTY = st.sampled_from([
    "x'] ; import os ; os._exit(3) #", 'x"); raise SystemExit(4) #', "\\", "'", '"',
    "\n__import__('os')._exit(5)\n", "k0", "c0_0", "v", "p", "n", "verdict", "make", "keys",
    "__builtins__", "len", "type", "{0}", "{}", "}}{{", "%s", "\x00", "\u202e", "\ud7ff",
    "return True", "lambda: 1", "True or", "#", "a\r\nb", " " * 3, "é灵😀",
]) | st.text(min_size=1, max_size=12)
UTF8_NASTY = NASTY.filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t))


def _spec(names: list[str], values: list[str], message: str, bound: int) -> dict:
    fields = {"action": {"type": "enum", "values": [message], "required": True},
              names[0]: {"type": "enum", "values": values, "required": True},
              names[1]: {"type": "integer", "min": bound, "max": bound + 10},
              names[2]: {"type": "text", "max_length": 20 + abs(bound)}}
    return {"name": "t", "messages": [{"name": message, "direction": "both", "fields": fields}]}


@SETTINGS
@given(st.lists(UTF8_NASTY.filter(lambda t: t != "action"), min_size=3, max_size=3,
                unique=True),
       st.lists(UTF8_NASTY, min_size=1, max_size=3, unique=True),
       UTF8_NASTY.filter(lambda t: not t.lower().startswith(("control.", "session."))),
       st.integers(-2**40, 2**40))
def test_hostile_names_and_values_are_data(names, values, message, bound):
    doc = _spec(names, values, message, bound)
    spec = load_spec(doc)
    fields = doc["messages"][0]["fields"]
    # the compiled source depends on the shape only: the same as for tame names
    tame = _spec(["a", "b", "c"], ["x"] * len(values) if len(values) == 1 else
                 [f"x{i}" for i in range(len(values))], "m", 0)["messages"][0]["fields"]
    assert generated_source(fields) == generated_source(tame)
    # and the hostile names validate as plain keys and values
    good = {"action": message, names[0]: values[-1], names[1]: bound + 10, names[2]: "ok"}
    assert spec.validate_message(good, "host_to_guest") == []
    bad = {**good, names[1]: bound - 1, names[0]: values[0] + "?"}
    assert [(f.path, f.code) for f in spec.validate_message(bad, None)] == [
        (names[0], "message.bad_value"), (names[1], "message.out_of_range")]


def test_the_source_names_no_spec_text():
    fields = {"action": {"type": "enum", "values": ["SECRET_ACTION"], "required": True},
              "SECRET_FIELD": {"type": "integer", "min": 123456789, "max": 987654321},
              "SECRET_LIST": {"type": "array", "items": {"type": "enum",
                                                         "values": ["SECRET_VALUE"]}}}
    source = generated_source(fields)
    for text in ("SECRET", "123456789", "987654321", "action"):
        assert text not in source
    # only the builtins a check needs are reachable from generated code
    assert "__import__" not in source and "exec" not in source


def test_generated_code_sees_only_a_few_builtins():
    spec = load_spec(_spec(["a", "b", "c"], ["x"], "m", 0))
    verdict = spec._index.by_name["m"].verdict
    namespace = verdict.__globals__
    assert set(namespace["__builtins__"]) <= {"type", "len", "str", "int", "KeyError"}
    assert namespace["__builtins__"] is not builtins.__dict__


def test_huge_schemas_get_the_loop_not_generated_source():
    count = MAX_GENERATED_FIELDS + 5
    fields = {f"f{i}": {"type": "integer", "max": i} for i in range(count)}
    spec = load_spec({"name": "t", "messages": [{"name": "m", "direction": "both", "fields": {
        "action": {"type": "enum", "values": ["m"], "required": True}, **fields}}]})
    assert "<lingxi.contract verdict>" not in spec._index.by_name["m"].verdict.__code__.co_filename
    payload = {"action": "m", **{f"f{i}": i for i in range(count)}}
    assert spec.validate_message(payload, None) == []
    payload["f7"] = 8
    assert [(f.path, f.code) for f in spec.validate_message(payload, None)] == [
        ("f7", "message.out_of_range")]
