"""Message validation: schema choice, every field type, all errors at once."""

from __future__ import annotations

import pytest

from lingxi.contract import MessageError, load_spec
from lingxi.errors import InputError

H2G, G2H = "host_to_guest", "guest_to_host"


def typed_spec(fields: dict) -> object:
    """A spec whose single both-way message 'm' has ``fields`` plus its action."""
    return load_spec({"name": "T", "messages": [
        {"name": "m", "direction": "both", "fields": {
            "action": {"type": "enum", "values": ["m"], "required": True}, **fields}},
        {"name": "error", "direction": "both", "fields": {
            "action": {"type": "enum", "values": ["error"], "required": True}}}]})


def codes(spec, payload, direction=H2G) -> list[tuple[str, str]]:
    return [(f.path, f.code) for f in spec.validate_message(payload, direction)]


# ---------------------------------------------------------------- schema choice

def test_valid_message_has_no_findings_and_check_returns_schema(base_spec):
    spec = load_spec(base_spec)
    payload = {"action": "guess", "attempt": 1, "number": 50}
    assert spec.validate_message(payload, G2H) == []
    assert spec.check_message(payload, G2H).name == "guess"


@pytest.mark.parametrize("payload,code", [
    ([], "message.not_object"),
    ("guess", "message.not_object"),
    ({"attempt": 1}, "message.missing_action"),
    ({"action": 3}, "message.wrong_type"),
    ({"action": "shout"}, "message.unknown_action"),
])
def test_payload_without_a_usable_action(base_spec, payload, code):
    spec = load_spec(base_spec)
    assert [f.code for f in spec.validate_message(payload, G2H)] == [code]
    with pytest.raises(MessageError) as caught:
        spec.check_message(payload, G2H)
    assert caught.value.code == code and caught.value.exit_code == 1


def test_direction_picks_the_schema(base_spec):
    spec = load_spec(base_spec)
    hint = {"action": "hint", "result": "higher", "game_over": False}
    assert spec.validate_message(hint, H2G) == []
    assert [f.code for f in spec.validate_message(hint, G2H)] == ["message.wrong_direction"]
    assert spec.validate_message(hint, None) == []  # either direction
    error = {"action": "error", "reason": "x"}
    assert spec.validate_message(error, H2G) == spec.validate_message(error, G2H) == []


def test_bad_direction_argument_is_an_input_error(base_spec):
    with pytest.raises(InputError) as caught:
        load_spec(base_spec).validate_message({"action": "hint"}, "sideways")
    assert caught.value.code == "message.bad_direction"


def test_same_action_in_two_directions_uses_two_schemas():
    spec = load_spec({"name": "T", "messages": [
        {"name": "ping_h", "direction": H2G, "fields": {
            "action": {"type": "enum", "values": ["ping"], "required": True},
            "h": {"type": "integer"}}},
        {"name": "ping_g", "direction": G2H, "fields": {
            "action": {"type": "enum", "values": ["ping"], "required": True},
            "g": {"type": "integer"}}}]})
    assert spec.check_message({"action": "ping", "h": 1}, H2G).name == "ping_h"
    assert spec.check_message({"action": "ping", "g": 1}, G2H).name == "ping_g"
    assert codes(spec, {"action": "ping", "g": 1}, H2G) == [("g", "message.unknown_field")]


def test_message_name_override(base_spec):
    spec = load_spec(base_spec)
    assert spec.validate_message({"action": "guess", "attempt": 1, "number": 1}, G2H,
                                 message="guess") == []
    found = spec.validate_message({"action": "hint", "attempt": 1, "number": 1}, G2H,
                                  message="guess")
    assert [(f.path, f.code) for f in found] == [("action", "message.bad_value")]
    found = spec.validate_message({"action": "guess", "attempt": 1, "number": 1}, H2G,
                                  message="guess")
    assert [f.code for f in found] == ["message.wrong_direction"]
    with pytest.raises(InputError):
        spec.validate_message({}, G2H, message="nope")


def test_schema_without_action_field_accepts_its_name_as_action():
    spec = load_spec({"name": "T", "messages": [
        {"name": "note", "direction": "both", "fields": {"text": {"type": "text"}}}]})
    assert spec.validate_message({"action": "note", "text": "hi"}, H2G) == []
    assert codes(spec, {"action": "nope"}) == [("action", "message.unknown_action")]


def test_all_errors_are_reported_at_once(base_spec):
    spec = load_spec(base_spec)
    found = codes(spec, {"action": "guess", "attempt": 0, "number": "5", "cheat": True}, G2H)
    assert found == [("attempt", "message.out_of_range"), ("number", "message.wrong_type"),
                     ("cheat", "message.unknown_field")]
    assert codes(spec, {"action": "guess"}, G2H) == [
        ("attempt", "message.missing_field"), ("number", "message.missing_field")]


def test_optional_fields_may_be_absent():
    spec = typed_spec({"n": {"type": "integer"}, "r": {"type": "integer", "required": False}})
    assert codes(spec, {"action": "m"}) == []


# ---------------------------------------------------------------- field types

HEX64 = "ab" * 32


@pytest.mark.parametrize("defn,good,bad", [
    ({"type": "integer", "min": -2, "max": 5}, [-2, 0, 5],
     [(6, "out_of_range"), (-3, "out_of_range"), (True, "wrong_type"), (1.0, "wrong_type"),
      ("1", "wrong_type"), (None, "wrong_type")]),
    ({"type": "boolean"}, [True, False], [(0, "wrong_type"), ("true", "wrong_type")]),
    ({"type": "enum", "values": ["a", "b"]}, ["a", "b"],
     [("c", "bad_value"), ("A", "bad_value"), (1, "wrong_type"), (["a"], "wrong_type")]),
    ({"type": "text", "max_length": 6}, ["", "abcdef", "灵隙"],
     [("abcdefg", "too_long"), ("灵隙灵", "too_long"), ("\ud800", "bad_value"),
      (5, "wrong_type")]),
    ({"type": "text"}, ["x" * 2000], [("x" * 2001, "too_long")]),
    ({"type": "hash"}, [HEX64], [(HEX64.upper(), "bad_value"), (HEX64[:-1], "bad_value"),
                                 (HEX64 + "\n", "bad_value"), (HEX64 + "0", "bad_value")]),
    ({"type": "key"}, [HEX64], [("g" * 64, "bad_value")]),
    ({"type": "signature"}, [HEX64 * 2], [(HEX64, "bad_value")]),
    ({"type": "nonce"}, ["0" * 16, "f" * 64], [("0" * 15, "bad_value"), ("0" * 65, "bad_value"),
                                                ("0" * 15 + "G", "bad_value")]),
    ({"type": "id"}, ["a", "Hero_1.x:y-z", "x" * 128],
     [("", "bad_value"), ("x" * 129, "bad_value"), ("a b", "bad_value"), ("é", "bad_value"),
      (7, "wrong_type")]),
    ({"type": "ciphertext", "max_length": 8}, ["00", "00ff", "a1b2c3d4"],
     [("", "bad_value"), ("0", "bad_value"), ("abc", "bad_value"), ("AB", "bad_value"),
      ("00" * 5, "too_long")]),
    ({"type": "ciphertext"}, ["00" * 256], [("00" * 257, "too_long")]),
    ({"type": "ot_blob", "max_length": 4}, ["abcd", "xyz", "x", ""],
     [("abcde", "too_long"), ("é" * 3, "too_long"), ("\ud800", "bad_value")]),
    ({"type": "ot_blob"}, ["x" * 16384], [("x" * 16385, "too_long")]),
    ({"type": "ticket"}, ["t", "t" * 2048], [("", "bad_value"), ("t" * 2049, "too_long"),
                                             (None, "wrong_type")]),
])
def test_scalar_types(defn, good, bad):
    spec = typed_spec({"v": defn})
    for value in good:
        assert codes(spec, {"action": "m", "v": value}) == [], value
    for value, code in bad:
        assert codes(spec, {"action": "m", "v": value}) == [("v", f"message.{code}")], value


def test_array_type():
    spec = typed_spec({"v": {"type": "array", "items": {"type": "integer", "max": 9},
                             "min_items": 1, "max_items": 3, "max_total_bytes": 6}})
    assert codes(spec, {"action": "m", "v": [1, 2, 3]}) == []
    ok = typed_spec({"v": {"type": "array", "items": {"type": "integer"}}})
    assert codes(ok, {"action": "m", "v": []}) == []
    assert codes(spec, {"action": "m", "v": []}) == [("v", "message.out_of_range")]
    assert codes(spec, {"action": "m", "v": [1, 2, 3, 4]}) == [("v", "message.out_of_range")]
    assert codes(spec, {"action": "m", "v": [1, 10, "x"]}) == [
        ("v[1]", "message.out_of_range"), ("v[2]", "message.wrong_type")]
    assert codes(spec, {"action": "m", "v": {"0": 1}}) == [("v", "message.wrong_type")]


def test_array_total_size_limit():
    spec = typed_spec({"v": {"type": "array", "items": {"type": "text"},
                             "max_total_bytes": 10}})
    # items together: the sum of each item's UTF-8 bytes
    assert codes(spec, {"action": "m", "v": ["abcde", "fghij"]}) == []
    assert codes(spec, {"action": "m", "v": ["abcde", "fghijk"]}) == [
        ("v", "message.too_large")]
    assert codes(spec, {"action": "m", "v": ["灵隙", "abcd"]}) == []
    assert codes(spec, {"action": "m", "v": ["灵隙", "abcde"]}) == [("v", "message.too_large")]


def test_default_array_total_size_is_256_kib():
    spec = typed_spec({"v": {"type": "array", "items": {"type": "ot_blob"}}})
    item = "x" * 16000
    assert codes(spec, {"action": "m", "v": [item] * 16}) == []
    assert codes(spec, {"action": "m", "v": [item] * 17}) == [("v", "message.too_large")]


def test_json_type():
    spec = typed_spec({"o": {"type": "json", "container": "object", "max_total_bytes": 20},
                       "a": {"type": "json", "container": "array"},
                       "x": {"type": "json"}})
    for value in (None, 1, 1.5, "s", [1, {"k": [True]}], {}):
        assert codes(spec, {"action": "m", "x": value}) == [], value
    assert codes(spec, {"action": "m", "o": {"k": "v"}, "a": [1]}) == []
    assert codes(spec, {"action": "m", "o": [1]}) == [("o", "message.wrong_type")]
    assert codes(spec, {"action": "m", "a": {}}) == [("a", "message.wrong_type")]
    assert codes(spec, {"action": "m", "o": {"k": "v" * 20}}) == [("o", "message.too_large")]
    assert codes(spec, {"action": "m", "x": [float("nan")]}) == [("x", "message.bad_value")]
    assert codes(spec, {"action": "m", "x": {1: 2}}) == [("x", "message.bad_value")]
    assert codes(spec, {"action": "m", "x": {"s": {1, 2}}}) == [("x", "message.bad_value")]
    deep: list = []
    for _ in range(100000):
        deep = [deep]
    assert codes(spec, {"action": "m", "x": deep}) == [("x", "message.bad_value")]


def test_default_json_size_is_1_mib():
    spec = typed_spec({"x": {"type": "json"}})
    assert codes(spec, {"action": "m", "x": "y" * (1048576 - 2)}) == []
    assert codes(spec, {"action": "m", "x": "y" * (1048576 - 1)}) == [("x", "message.too_large")]


# ---------------------------------------------------------------- compiled once

def test_validators_are_compiled_at_load_and_reused(base_spec, monkeypatch):
    import lingxi.contract.fields as fields

    spec = load_spec(base_spec)

    def refuse(*args, **kwargs):
        raise AssertionError("compile_field called after load")

    monkeypatch.setattr(fields, "compile_field", refuse)
    for attempt in range(1, 50):
        assert spec.validate_message({"action": "guess", "attempt": attempt, "number": 3},
                                     G2H) == []
    assert spec.check_options({"max_attempts": 3}).values == {"max_attempts": 3}


def test_vector_messages_validate(protocol_vectors):
    spec = load_spec(protocol_vectors["crazy-eights.spec.json"][0])
    setup = {"action": "mp_setup_a", "rsa_pub": "pem", "blobs": ["00" * 32] * 52,
             "sealed_keys": ["k"] * 52}
    assert spec.validate_message(setup, H2G) == []
    setup["blobs"] = setup["blobs"][:51]
    assert codes(spec, setup, H2G) == [("blobs", "message.out_of_range")]
    assert codes(spec, setup, G2H) == [("action", "message.wrong_direction")]


# ---------------------------------------------------------------- empty values (issue 8.10)

@pytest.mark.parametrize("defn,empty_ok", [
    ({"type": "ciphertext"}, False),   # a ciphertext has at least one byte
    ({"type": "ot_blob"}, True),       # the published validator accepts an empty blob
    ({"type": "ticket"}, False),
    ({"type": "hash"}, False),
    ({"type": "nonce"}, False),
    ({"type": "id"}, False),
    ({"type": "signature"}, False),
    ({"type": "key"}, False),
    ({"type": "text"}, True),          # people may send an empty line
])
def test_empty_string_per_machine_type(defn, empty_ok):
    spec = typed_spec({"v": defn})
    expected = [] if empty_ok else [("v", "message.bad_value")]
    assert codes(spec, {"action": "m", "v": ""}) == expected


def test_empty_containers_follow_their_declared_bounds():
    spec = typed_spec({"a": {"type": "array", "items": {"type": "ciphertext"}},
                       "b": {"type": "array", "items": {"type": "id"}, "min_items": 1},
                       "j": {"type": "json"}, "o": {"type": "json", "container": "object"}})
    assert codes(spec, {"action": "m", "a": [], "j": {}, "o": {}}) == []
    assert codes(spec, {"action": "m", "j": None}) == []
    assert codes(spec, {"action": "m", "b": []}) == [("b", "message.out_of_range")]
    assert codes(spec, {"action": "m", "a": [""]}) == [("a[0]", "message.bad_value")]
