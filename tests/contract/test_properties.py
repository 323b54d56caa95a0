"""Property tests: random and mutated JSON into the loader, the message
validator and the option validator yield only typed errors, never another
exception; sampled valid payloads always pass."""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.contract import MessageError, OptionsError, SpecError, load_spec
from lingxi.contract.catalog import TEMPLATES, template_document
from lingxi.contract.samples import sample_payload
from lingxi.errors import Finding, InputError

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"  # the project's own specs: every flow mode, field and parameter type
BUILTINS = HERE.parents[1] / "src" / "lingxi" / "protocols"
# LINGXI_HYPOTHESIS_EXAMPLES=3000 for a deeper (slower) search than the default run.
SETTINGS = settings(max_examples=int(os.environ.get("LINGXI_HYPOTHESIS_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
           | st.sampled_from(["integer", "enum", "both", "host_to_guest", "session_loop",
                              "until game_over", "action", "fields", "messages", "table",
                              "0" * 64, "SHA256", "either_ends"]))
JSON = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=5)
                    | st.dictionaries(st.text(max_size=12) | st.sampled_from(
                        ["name", "type", "values", "min", "max", "direction", "fields",
                         "action", "required", "columns", "items", "phases", "exchange"]),
                        kids, max_size=6), max_leaves=40)


def _documents() -> list[dict]:
    """Project-owned specs only, so the properties hold in a clone without ../shared."""
    paths = sorted(CORPUS.glob("*.json")) + sorted(BUILTINS.glob("*/spec.json"))
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    return docs + [template_document(name) for name in TEMPLATES]


DOCUMENTS = _documents()
SPECS = [load_spec(doc) for doc in DOCUMENTS]


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, prefix + (index,))


def mutate(doc, data):
    """Apply 1-3 random edits (replace, delete, insert) anywhere in ``doc``."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        path = data.draw(st.sampled_from(paths))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        if op == "replace":
            parent[path[-1]] = data.draw(JSON)
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.text(max_size=10))] = data.draw(JSON)
        else:
            parent.insert(path[-1], data.draw(JSON))
    return doc


def _load_or_typed_error(doc):
    try:
        spec = load_spec(doc)
    except SpecError as error:
        assert error.exit_code in (1, 2)
        if error.exit_code == 1:  # invalid contract: every finding is attached
            assert error.findings and error.code == error.codes[0]
        return None
    assert len(spec.protocol_id) == 64
    return spec


@SETTINGS
@given(JSON.filter(lambda doc: not isinstance(doc, str)))  # a str is a path
def test_random_json_into_the_loader(doc):
    _load_or_typed_error(doc)


@SETTINGS
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8")))
def test_random_bytes_into_the_file_loader(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("spec") / "spec.json"
    path.write_bytes(raw)
    try:
        load_spec(path)
    except SpecError:
        pass


@SETTINGS
@given(st.sampled_from(range(len(DOCUMENTS))), st.data())
def test_mutated_specs_into_the_loader(index, data):
    spec = _load_or_typed_error(mutate(DOCUMENTS[index], data))
    if spec is not None:  # a mutant that still loads must still validate messages safely
        for schema in spec.messages.values():
            spec.validate_message({"action": schema.name}, None)
        spec.option_findings({})


def _typed_message_check(spec, payload, direction):
    findings = spec.validate_message(payload, direction)
    assert all(isinstance(f, Finding) and f.code.startswith("message.") for f in findings)
    try:
        spec.check_message(payload, direction)
    except MessageError as error:
        assert findings and error.code == findings[0].code
    else:
        assert not findings
    return findings


DIRECTION = st.sampled_from(["host_to_guest", "guest_to_host", None])


@SETTINGS
@given(st.sampled_from(range(len(SPECS))), JSON, DIRECTION)
def test_random_json_into_the_message_validator(index, payload, direction):
    _typed_message_check(SPECS[index], payload, direction)


@SETTINGS
@given(st.sampled_from(range(len(SPECS))), st.randoms(use_true_random=False), st.data())
def test_sampled_payloads_pass_and_mutants_give_typed_errors(index, rng, data):
    spec = SPECS[index]
    schema = data.draw(st.sampled_from(sorted(spec.messages.values(), key=lambda s: s.name)))
    direction = ("host_to_guest" if schema.matches("host_to_guest") else
                 schema.direction if schema.direction in ("to_group", "to_member")
                 else "guest_to_host")
    payload = sample_payload(schema, random.Random(rng.random()))
    assert spec.validate_message(payload, direction) == []
    _typed_message_check(spec, mutate(payload, data), direction)


def _typed_options_check(spec, options):
    try:
        result = spec.check_options(options)
    except OptionsError as error:
        assert error.findings and all(f.code.startswith("options.") for f in error.findings)
        return
    assert set(result.values) <= set(spec.parameters)
    assert all(w.severity == "warning" for w in result.warnings)


@SETTINGS
@given(st.sampled_from(range(len(SPECS))), JSON)
def test_random_json_into_the_options_validator(index, options):
    _typed_options_check(SPECS[index], options)


TABLE_SPECS = [s for s in SPECS if any(p.get("type") == "table" for p in s.parameters.values())]


def test_the_documents_cover_tables_and_every_flow_mode():
    from lingxi.contract.check import KNOWN_FUTURE_MODES
    from lingxi.contract.model import SUPPORTED_MODES

    assert len(TABLE_SPECS) >= 2
    assert {s.flow.mode for s in SPECS} >= set(SUPPORTED_MODES) | set(KNOWN_FUTURE_MODES)


@SETTINGS
@given(st.sampled_from(range(len(TABLE_SPECS))), st.randoms(use_true_random=False), st.data())
def test_mutated_balance_tables_give_typed_errors(index, rng, data):
    from lingxi.contract.samples import sample_value

    spec = TABLE_SPECS[index]
    options = {name: sample_value(defn, random.Random(rng.random()))
               for name, defn in spec.parameters.items()}
    assert spec.check_options(options).values == options
    _typed_options_check(spec, mutate(options, data))


def test_bad_direction_is_the_only_non_finding_error():
    with pytest.raises(InputError):
        SPECS[0].validate_message({}, "up")
