"""Spec loading: one test per rule of issue 2, each naming the finding code."""

from __future__ import annotations

import json

import pytest

from lingxi.contract import SpecError, load_spec
from lingxi.contract.spec import inspect_spec


def codes_of(doc, **kwargs) -> dict[str, str]:
    """``code -> severity`` of every finding for ``doc``."""
    _, _, findings = inspect_spec(doc, **kwargs)
    return {f.code: f.severity for f in findings}


def error_paths(doc) -> dict[str, str]:
    _, _, findings = inspect_spec(doc)
    return {f.path: f.code for f in findings if f.is_error}


def test_base_spec_loads_cleanly(base_spec):
    spec = load_spec(base_spec)
    assert spec.warnings == []
    assert spec.name == "Guess" and spec.flow.mode == "session_loop"
    assert [p.name for p in spec.flow.phases] == ["join", "play"]
    assert spec.flow.phases[1].repeat == "until game_over"
    assert spec.message_for("hint", "host_to_guest").name == "hint"
    assert spec.message_for("hint", "guest_to_host") is None


# ---------------------------------------------------------------- reading

def test_json_syntax_error_names_file_line_and_column(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text('{\n  "name": "x",\n  "messages": [,]\n}', encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.code == "spec.bad_json"
    assert f"{path}:3:16" in caught.value.message
    assert caught.value.exit_code == 2


def test_directory_argument_means_spec_json_inside(tmp_path, base_spec):
    (tmp_path / "spec.json").write_text(json.dumps(base_spec), encoding="utf-8")
    assert load_spec(tmp_path).name == "Guess"
    assert load_spec(str(tmp_path)).name == "Guess"


def test_missing_file_is_unreadable_exit_2(tmp_path):
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / "nope.json")
    assert caught.value.code == "spec.unreadable" and caught.value.exit_code == 2
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path)  # a folder without spec.json
    assert caught.value.code == "spec.unreadable"


@pytest.mark.parametrize("text,code", [
    ("[1, 2]", "spec.not_object"),
    ('{"name": NaN}', "spec.bad_json"),
    ("", "spec.bad_json"),
    ("[" * 100000, "spec.bad_json"),
])
def test_non_object_and_non_json_documents_are_input_errors(tmp_path, text, code):
    path = tmp_path / "spec.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.code == code and caught.value.exit_code == 2


def test_not_utf8_is_bad_json(tmp_path):
    path = tmp_path / "spec.json"
    path.write_bytes(b'{"name": "\xff"}')
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.code == "spec.bad_json"


def test_dict_with_non_json_values_is_rejected(base_spec):
    base_spec["rules"] = {"x": float("nan")}
    with pytest.raises(SpecError) as caught:
        load_spec(base_spec)
    assert caught.value.code == "spec.not_json"
    with pytest.raises(SpecError):
        load_spec(["not", "a", "spec"])
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    base_spec["rules"] = {"x": deep}
    with pytest.raises(SpecError) as caught:
        load_spec(base_spec)
    assert caught.value.code == "spec.not_json"


def test_duplicate_json_keys_are_errors(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text('{"name": "a", "name": "b", "messages": []}', encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert "spec.duplicate_key" in caught.value.codes


def test_invalid_spec_carries_every_finding_and_exit_1(base_spec):
    del base_spec["name"]
    base_spec["messages"][0]["direction"] = "sideways"
    with pytest.raises(SpecError) as caught:
        load_spec(base_spec)
    assert caught.value.exit_code == 1
    assert set(caught.value.codes) == {"spec.missing_field", "spec.bad_direction"}
    assert caught.value.code == caught.value.codes[0]


# ---------------------------------------------------------------- spec_version

def test_missing_spec_version_means_1_0(base_spec):
    del base_spec["spec_version"]
    assert load_spec(base_spec).spec_version == "1.0"


def test_unknown_spec_version_is_rejected_unless_allowed(base_spec):
    base_spec["spec_version"] = "2.0"
    with pytest.raises(SpecError) as caught:
        load_spec(base_spec)
    assert caught.value.code == "spec.unknown_version"
    spec = load_spec(base_spec, allow_unknown_version=True)
    assert [w.code for w in spec.warnings] == ["spec.unknown_version"]
    assert codes_of({**base_spec, "spec_version": 1})["spec.bad_type"] == "error"


# ---------------------------------------------------------------- header and messages

@pytest.mark.parametrize("mutate,path,code", [
    (lambda s: s.pop("name"), "name", "spec.missing_field"),
    (lambda s: s.update(name=""), "name", "spec.bad_type"),
    (lambda s: s.pop("messages"), "messages", "spec.missing_field"),
    (lambda s: s.update(messages={}), "messages", "spec.bad_type"),
    (lambda s: s["messages"].append(3), "messages[4]", "spec.bad_message"),
    (lambda s: s["messages"][1].pop("name"), "messages[1].name", "spec.missing_field"),
    (lambda s: s["messages"][1].update(name="join"), "messages[1].name",
     "spec.duplicate_message"),
    (lambda s: s["messages"][1].update(direction="up"), "messages[1].direction",
     "spec.bad_direction"),
    (lambda s: s["messages"][1].update(fields={}), "messages[1].fields", "spec.bad_fields"),
    (lambda s: s["messages"][1].update(fields=[]), "messages[1].fields", "spec.bad_fields"),
    (lambda s: s["messages"][1]["fields"].update(x={"type": "float"}),
     "messages[1].fields.x.type", "spec.unknown_field_type"),
    (lambda s: s["messages"][1]["fields"].update(x={"min": 1}),
     "messages[1].fields.x", "spec.missing_field"),
    (lambda s: s["messages"][1]["fields"].update(x="integer"),
     "messages[1].fields.x", "spec.bad_field"),
])
def test_message_declaration_rules(base_spec, mutate, path, code):
    mutate(base_spec)
    assert error_paths(base_spec).get(path) == code


@pytest.mark.parametrize("defn,path_suffix", [
    ({"type": "integer", "min": 5, "max": 1}, "min"),
    ({"type": "integer", "min": "1"}, "min"),
    ({"type": "integer", "max": True}, "max"),
    ({"type": "enum", "values": []}, "values"),
    ({"type": "enum"}, ""),
    ({"type": "enum", "values": ["a", ""]}, "values[1]"),
    ({"type": "enum", "values": ["a", 3]}, "values[1]"),
    ({"type": "enum", "values": ["a", "a"]}, "values[1]"),
    ({"type": "text", "max_length": 0}, "max_length"),
    ({"type": "ciphertext", "max_length": -2}, "max_length"),
    ({"type": "ot_blob", "max_length": 1.5}, "max_length"),
    ({"type": "array"}, ""),
    ({"type": "array", "items": {"type": "hash"}, "min_items": 3, "max_items": 2},
     "min_items"),
    ({"type": "array", "items": {"type": "hash"}, "max_total_bytes": 0}, "max_total_bytes"),
    ({"type": "json", "container": "tuple"}, "container"),
    ({"type": "integer", "required": "yes"}, "required"),
])
def test_malformed_constraints_fail_at_load(base_spec, defn, path_suffix):
    base_spec["messages"][1]["fields"]["x"] = defn
    path = "messages[1].fields.x" + (f".{path_suffix}" if path_suffix else "")
    assert error_paths(base_spec).get(path) == "spec.bad_constraint"


def test_array_items_must_be_a_known_scalar(base_spec):
    fields = base_spec["messages"][1]["fields"]
    fields["x"] = {"type": "array", "items": {"type": "array", "items": {"type": "id"}}}
    fields["y"] = {"type": "array", "items": {"type": "json"}}
    fields["z"] = {"type": "array", "items": {"type": "hash"}, "min_items": 0}
    paths = error_paths(base_spec)
    assert paths["messages[1].fields.x.items.type"] == "spec.unknown_field_type"
    assert paths["messages[1].fields.y.items.type"] == "spec.unknown_field_type"
    assert not any(p.startswith("messages[1].fields.z") for p in paths)


def test_every_design_type_is_accepted(base_spec):
    base_spec["messages"][1]["fields"].update({
        "a": {"type": "hash"}, "b": {"type": "nonce"}, "c": {"type": "id"},
        "d": {"type": "signature"}, "e": {"type": "key"}, "f": {"type": "ciphertext"},
        "g": {"type": "ot_blob"}, "h": {"type": "ticket"}, "i": {"type": "text"},
        "j": {"type": "array", "items": {"type": "integer"}}, "k": {"type": "json"},
        "l": {"type": "boolean"}})
    assert load_spec(base_spec).warnings == []


def test_unknown_constraint_key_is_a_warning(base_spec):
    base_spec["messages"][1]["fields"]["number"]["maximum"] = 5
    assert codes_of(base_spec) == {"spec.unknown_key": "warning"}


def test_two_messages_claiming_one_action_and_direction_is_an_error(base_spec):
    base_spec["messages"].append({"name": "guess2", "direction": "both", "fields": {
        "action": {"type": "enum", "values": ["guess"], "required": True}}})
    assert codes_of(base_spec)["spec.duplicate_action"] == "error"


# ---------------------------------------------------------------- flow

def test_other_flow_modes_load_with_mode_not_supported_warning(base_spec):
    base_spec["flow"]["mode"] = "authoritative_realtime"
    base_spec["flow"]["realtime"] = {"tick_rate_hz": 10}
    spec = load_spec(base_spec)
    assert not spec.supported
    assert [w.code for w in spec.warnings] == ["spec.mode_not_supported"]
    base_spec["flow"]["realtime"] = 10
    assert error_paths(base_spec)["flow.realtime"] == "spec.bad_flow"


def test_flow_must_be_object_with_string_mode(base_spec):
    assert error_paths({**base_spec, "flow": []})["flow"] == "spec.bad_flow"
    base_spec["flow"]["mode"] = 3
    assert error_paths(base_spec)["flow.mode"] == "spec.bad_flow"


@pytest.mark.parametrize("mutate,path,code", [
    (lambda f: f["phases"][1]["exchange"][0].update(message="nope"),
     "flow.phases[1].exchange[0].message", "spec.unknown_message"),
    (lambda f: f["phases"][1]["exchange"][0].update(direction="host_to_guest"),
     "flow.phases[1].exchange[0].direction", "spec.direction_mismatch"),
    (lambda f: f["phases"][1]["exchange"][0].update(direction="down"),
     "flow.phases[1].exchange[0].direction", "spec.bad_direction"),
    (lambda f: f["phases"][1].update(exchange=[]), "flow.phases[1].exchange",
     "spec.bad_phase"),
    (lambda f: f["phases"].append("x"), "flow.phases[2]", "spec.bad_phase"),
    (lambda f: f.update(phases={}), "flow.phases", "spec.bad_phase"),
    (lambda f: f["phases"][1].update(repeat="forever"), "flow.phases[1].repeat",
     "spec.bad_repeat"),
    (lambda f: f["phases"][1].update(repeat=3), "flow.phases[1].repeat", "spec.bad_repeat"),
])
def test_phase_rules(base_spec, mutate, path, code):
    mutate(base_spec["flow"])
    assert error_paths(base_spec).get(path) == code


def test_repeat_may_name_an_integer_parameter_only(base_spec):
    base_spec["flow"]["phases"][1]["repeat"] = "max_attempts"
    assert load_spec(base_spec).flow.phases[1].repeat == "max_attempts"
    base_spec["parameters"]["mode"] = {"type": "enum", "values": ["a"]}
    base_spec["flow"]["phases"][1]["repeat"] = "mode"
    assert error_paths(base_spec)["flow.phases[1].repeat"] == "spec.bad_repeat"


def test_exchange_without_direction_takes_the_message_direction(base_spec):
    del base_spec["flow"]["phases"][1]["exchange"][1]["direction"]
    base_spec["flow"]["phases"][1]["exchange"].append({"message": "error"})
    steps = load_spec(base_spec).flow.phases[1].exchange
    assert [(s.message, s.direction) for s in steps] == [
        ("guess", "guest_to_host"), ("hint", "host_to_guest"), ("error", "both")]


def test_simultaneous_round_requires_a_resolving_round(base_spec):
    base_spec["flow"]["mode"] = "simultaneous_round"
    assert error_paths(base_spec)["flow.round"] == "spec.bad_round"
    base_spec["flow"]["round"] = {"value_field": "number", "value_type_ref": "guess.fields.nope"}
    assert error_paths(base_spec)["flow.round.value_type_ref"] == "spec.bad_round"
    base_spec["flow"]["round"] = {"value_type_ref": "guess.fields.number"}
    assert error_paths(base_spec)["flow.round.value_field"] == "spec.bad_round"
    base_spec["flow"]["round"] = {"value_field": "number",
                                  "value_type_ref": "guess.fields.number"}
    rnd = load_spec(base_spec).flow.round
    assert (rnd.value_field, rnd.message, rnd.field) == ("number", "guess", "number")


def test_free_mode_accepts_either_ends_only(base_spec):
    base_spec["messages"].append({"name": "end", "direction": "both", "fields": {
        "action": {"type": "enum", "values": ["end"], "required": True}}})
    base_spec["flow"].update(mode="free", end_when="either_ends")
    assert load_spec(base_spec).flow.end_when == "either_ends"
    base_spec["flow"]["end_when"] = "host_ends"
    assert error_paths(base_spec)["flow.end_when"] == "spec.bad_end_when"


# ---------------------------------------------------------------- other sections

@pytest.mark.parametrize("key,value,path,code", [
    ("choices", [], "choices", "spec.bad_choices"),
    ("choices", ["a", "a"], "choices[1]", "spec.bad_choices"),
    ("choices", ["a", 2], "choices[1]", "spec.bad_choices"),
    ("commit_reveal", [], "commit_reveal", "spec.bad_commit_reveal"),
    ("commit_reveal", {"algorithm": "MD5"}, "commit_reveal.algorithm",
     "spec.bad_commit_reveal"),
    ("commit_reveal", {"nonce_length": 8}, "commit_reveal.nonce_length",
     "spec.bad_commit_reveal"),
    ("commit_reveal", {"nonce_charset": 5}, "commit_reveal.nonce_charset",
     "spec.bad_commit_reveal"),
    ("rules", ["a"], "rules", "spec.bad_rules"),
    ("rules", {"a": 3}, "rules.a", "spec.bad_rules"),
    ("decision", "auto", "decision", "spec.bad_decision"),
    ("decision", {"mode": "robot"}, "decision.mode", "spec.bad_decision"),
    ("decision", {"timeout_seconds": 0}, "decision.timeout_seconds", "spec.bad_decision"),
    ("decision", {"timeout_seconds": True}, "decision.timeout_seconds", "spec.bad_decision"),
    ("decision", {"timeout_action": "explode"}, "decision.timeout_action",
     "spec.bad_decision"),
    ("shadow_judge", "yes", "shadow_judge", "spec.bad_type"),
    ("parameters", [], "parameters", "spec.bad_type"),
    ("timing", 3, "timing", "spec.bad_type"),
])
def test_section_rules(base_spec, key, value, path, code):
    base_spec[key] = value
    assert error_paths(base_spec).get(path) == code


def test_well_formed_sections_are_exposed(base_spec):
    base_spec.update(
        choices=["rock", "paper"], shadow_judge=True,
        commit_reveal={"algorithm": "SHA256", "nonce_length": 16, "format": "x"},
        rules={"a": "text", "b": ["list", "of", "text"], "c": {"rock": "scissors"}},
        decision={"mode": "manual", "timeout_seconds": 2.5, "timeout_action": "abort"})
    spec = load_spec(base_spec)
    assert spec.choices == ["rock", "paper"] and spec.shadow_judge is True
    assert spec.commit_reveal["nonce_length"] == 16
    assert (spec.decision.mode, spec.decision.timeout_seconds,
            spec.decision.timeout_action) == ("manual", 2.5, "abort")


def test_decision_defaults(base_spec):
    decision = load_spec(base_spec).decision
    assert (decision.mode, decision.timeout_seconds, decision.timeout_action) == (
        "auto", None, "fallback")


@pytest.mark.parametrize("param,path,code", [
    ({"type": "float"}, "parameters.p.type", "spec.unknown_parameter_type"),
    ({"type": "array", "items": {"type": "id"}}, "parameters.p.type",
     "spec.unknown_parameter_type"),
    ({"type": "integer", "min": 3, "max": 1}, "parameters.p.min", "spec.bad_constraint"),
    ({"type": "integer", "max": 5, "default": 9}, "parameters.p.default", "spec.bad_default"),
    ({"type": "enum", "values": ["a"], "default": "b"}, "parameters.p.default",
     "spec.bad_default"),
    ({"type": "table"}, "parameters.p.columns", "spec.bad_constraint"),
    ({"type": "table", "columns": {}}, "parameters.p.columns", "spec.bad_constraint"),
    ({"type": "table", "columns": {"x": {"type": "text"}}}, "parameters.p.columns.x.type",
     "spec.unknown_field_type"),
    ({"type": "table", "columns": {"x": {"type": "object"}}},
     "parameters.p.columns.x.fields", "spec.bad_constraint"),
    ({"type": "table", "columns": {"x": {"type": "object", "fields": {
        "y": {"type": "integer", "min": 2, "max": 1}}}}},
     "parameters.p.columns.x.fields.y.min", "spec.bad_constraint"),
    ({"type": "table", "columns": {"x": {"type": "integer"}}, "default": {"x": "1"}},
     "parameters.p.default.x", "spec.bad_default"),
])
def test_parameter_rules(base_spec, param, path, code):
    base_spec["parameters"]["p"] = param
    assert error_paths(base_spec).get(path) == code


def test_parameters_accept_scalar_message_types(base_spec):
    base_spec["parameters"].update(hero={"type": "id"}, title={"type": "text", "max_length": 9},
                                   flag={"type": "boolean", "default": False})
    assert set(load_spec(base_spec).parameters) == {"max_attempts", "hero", "title", "flag"}


# ---------------------------------------------------------------- best practices

def test_best_practice_warnings(base_spec):
    base_spec["messages"][0]["fields"]["action"]["values"] = ["join", "hello"]
    del base_spec["messages"][2]["fields"]["game_over"]
    base_spec["messages"].pop(3)
    spec = load_spec(base_spec)
    assert {w.code for w in spec.warnings} == {
        "spec.action_mismatch", "spec.no_game_over", "spec.no_error_message"}
    assert all(not w.is_error for w in spec.warnings)


def test_no_game_over_warning_only_for_games(base_spec):
    del base_spec["messages"][2]["fields"]["game_over"]
    base_spec["type"] = "service"
    assert load_spec(base_spec).warnings == []


def test_ciphertext_max_length_below_one_byte_is_a_bad_constraint():
    doc = {"name": "T", "messages": [{"name": "m", "direction": "both", "fields": {
        "v": {"type": "ciphertext", "max_length": 1}}}]}
    assert error_paths(doc) == {"messages[0].fields.v.max_length": "spec.bad_constraint"}


# ---------------------------------------------------------------- reserved namespaces

@pytest.mark.parametrize("where,action", [
    ("enum", "control.abort"), ("enum", "session.receipt"), ("name", "control.ping"),
    ("name", "session.x"), ("enum", "Control.Abort"),
])
def test_actions_in_the_engine_namespaces_are_refused_at_load(base_spec, where, action):
    message = {"name": "extra", "direction": "both", "fields": {"n": {"type": "integer"}}}
    if where == "enum":
        message["fields"]["action"] = {"type": "enum", "values": ["extra", action]}
    else:
        message["name"] = action
    base_spec["messages"].append(message)
    with pytest.raises(SpecError) as caught:
        load_spec(base_spec)
    assert caught.value.code == "spec.reserved_action"
    assert caught.value.exit_code == 1


def test_names_that_only_look_like_the_namespaces_are_fine(base_spec):
    for name in ("controls", "session", "sessionx.start", "my.control.x"):
        base_spec["messages"].append({"name": name, "direction": "both",
                                      "fields": {"n": {"type": "integer"}}})
    load_spec(base_spec)
