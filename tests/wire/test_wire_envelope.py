"""Envelope shape: versions, required fields, prefixes, timestamps, and parser fuzzing."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wirehelpers import KEY, FakeClock

from lingxi.wire import (
    Envelope,
    EnvelopeError,
    ReceivePipeline,
    format_rfc3339,
    parse_rfc3339,
    sign_envelope,
)


@pytest.fixture
def move(signature_cases):
    return copy.deepcopy(signature_cases[0]["envelope"])


def code_of(raw) -> str:
    with pytest.raises(EnvelopeError) as info:
        if isinstance(raw, bytes | str):
            Envelope.parse(raw)
        else:
            Envelope.from_dict(raw)
    return info.value.code


# ---- versions ---------------------------------------------------------------

def test_newer_minor_is_accepted_and_unknown_fields_ignored(move):
    move["version"] = "1.4.2"
    move["priority"] = "high"
    move["sender"]["region"] = "eu"
    env = Envelope.from_dict(move)
    assert env.version == "1.4.2"
    assert "priority" not in env.to_dict()
    # the extra fields are outside the signature, so the vector still verifies
    pipeline = ReceivePipeline(b"k3y-shared-secret", clock=lambda: env.instant)
    assert pipeline.accept(move).payload["action"] == "move"


def test_unknown_field_at_our_own_version_is_refused(move):
    move["priority"] = "high"
    assert code_of(move) == "envelope.unknown_field"


@pytest.mark.parametrize("version", ["2.0.0", "0.9.0", "1.0", "v1.0.0", "1.0.0.0", "", 1])
def test_other_major_or_malformed_version_is_rejected(move, version):
    move["version"] = version
    assert code_of(move) == "envelope.bad_version"


def test_patch_and_prerelease_of_our_major_are_accepted(move):
    for version in ("1.0.7", "1.0.0-rc.1", "1.0.0+build.5"):
        move["version"] = version
        assert Envelope.from_dict(move).version == version


# ---- required fields and prefixes ---------------------------------------

@pytest.mark.parametrize("field", ["id", "version", "type", "sender", "payload", "timestamp"])
def test_missing_required_field(move, field):
    del move[field]
    assert code_of(move) == "envelope.missing_field"


@pytest.mark.parametrize("field", ["agent_id", "system_id", "endpoint"])
def test_missing_endpoint_field(move, field):
    del move["sender"][field]
    assert code_of(move) == "envelope.missing_field"


@pytest.mark.parametrize("kind", ["move", "p2p:", "chat:move", "p2p:mo ve", ":move", "P2P:move"])
def test_bad_type(move, kind):
    move["type"] = kind
    assert code_of(move) == "envelope.bad_type"


@pytest.mark.parametrize("prefix", ["group", "inter_group"])
def test_group_messages_need_group_id(move, prefix):
    move["type"] = f"{prefix}:move"
    assert code_of(move) == "envelope.missing_field"
    move["group_id"] = "room-7"
    del move["receiver"]
    assert Envelope.from_dict(move).receiver is None


@pytest.mark.parametrize("prefix", ["p2p", "caller"])
def test_point_to_point_messages_need_a_receiver(move, prefix):
    move["type"] = f"{prefix}:move"
    del move["receiver"]
    assert code_of(move) == "envelope.missing_field"


@pytest.mark.parametrize(("field", "value"), [
    ("id", "not-a-uuid"), ("payload", [1, 2]), ("sender", "agent"), ("ttl", True),
    ("ttl", 1.5), ("broadcast", "yes"), ("encrypt", 1), ("reply_to", 7),
    ("conversation_id", ""), ("correlation_id", "x" * 300),
])
def test_field_of_the_wrong_type(move, field, value):
    move[field] = value
    assert code_of(move) == "envelope.malformed"


def test_non_object_documents(move):
    for text in (b"", b"[]", b"null", b"\xff\xfe", b"{", b'{"a": NaN}', b"1e999999"):
        assert code_of(text) == "envelope.malformed"


def test_lone_surrogate_in_payload_is_malformed(move):
    text = json.dumps(move).replace('"move"}', '"\\ud800"}', 1)
    text = text.replace('"col": 5', '"col": "\\ud800"')
    assert code_of(text) == "envelope.malformed"


def test_deep_nesting_is_malformed_not_a_crash():
    assert code_of(b"[" * 100_000 + b"]" * 100_000) == "envelope.malformed"


# ---- RFC 3339 -----------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("2026-06-27T15:30:00Z", "2026-06-27T15:30:00.000000Z"),
    ("2026-06-27T15:30:00+08:00", "2026-06-27T07:30:00.000000Z"),
    ("2026-06-27T15:30:00-02:30", "2026-06-27T18:00:00.000000Z"),
    ("2026-06-27t15:30:00.5z", "2026-06-27T15:30:00.500000Z"),
    ("2026-11-30T08:00:00.123456789Z", "2026-11-30T08:00:00.123456Z"),
])
def test_rfc3339_accepts_z_and_offsets_and_emits_utc_micro(text, expected):
    assert format_rfc3339(parse_rfc3339(text)) == expected


@pytest.mark.parametrize("text", [
    "2026-06-27 15:30:00Z", "2026-06-27T15:30:00", "2026-13-01T00:00:00Z",
    "2026-02-30T00:00:00Z", "2026-06-27T25:00:00Z", "2026-06-27T15:30:00+24:00",
    "2026-06-27T15:30:00.Z", "27/06/2026", "", "2026-06-27T15:30:60Z",
])
def test_rfc3339_rejects_other_forms(text):
    with pytest.raises(EnvelopeError) as info:
        parse_rfc3339(text)
    assert info.value.code == "envelope.bad_timestamp"


def test_offset_timestamp_is_signed_as_sent(signature_cases):
    case = signature_cases[1]
    env = Envelope.from_dict(case["envelope"])
    assert env.timestamp == "2026-06-27T15:30:00+08:00"
    assert format_rfc3339(env.instant) == "2026-06-27T07:30:00.000000Z"


# ---- fuzzing: the parser raises typed errors only ------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=4),
    max_leaves=12,
)
field_values = st.one_of(json_values, st.sampled_from([
    "1.0.0", "1.9.0", "p2p:move", "group:vote", "2026-06-27T15:30:00Z",
    "6f1c2f0e-8d7a-4b53-9d43-1f2a3b4c5d6e",
    {"agent_id": "a", "system_id": "s", "endpoint": "lingxi://e"},
    {"action": "move"}, "HMAC-SHA256", "ab" * 32, "\ud800x",
    {"agent_id": "a", "system_id": "\udfff", "endpoint": "lingxi://e"}, {"action": "\udc00"},
]))
envelope_like = st.dictionaries(
    st.sampled_from(["id", "version", "type", "sender", "receiver", "payload", "timestamp",
                     "ttl", "group_id", "broadcast", "encrypt", "signature",
                     "signature_algorithm", "reply_to", "extra"]),
    field_values, max_size=16)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_fuzz_bytes_give_typed_errors_only(data):
    try:
        Envelope.parse(data)
    except EnvelopeError:
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(envelope_like)
def test_fuzz_envelope_like_objects_through_the_whole_pipeline(raw):
    pipeline = ReceivePipeline(KEY, clock=FakeClock(parse_rfc3339("2026-06-27T15:30:00Z")))
    try:
        pipeline.accept(json.dumps(raw).encode())
    except EnvelopeError:
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_vector_text_gives_typed_errors_only(signature_cases, data):
    text = bytearray(json.dumps(signature_cases[0]["envelope"]).encode())
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(text) - 1))
        text[index] = data.draw(st.integers(0, 255))
    pipeline = ReceivePipeline(b"k3y-shared-secret",
                               clock=lambda: parse_rfc3339("2026-06-27T15:30:00Z"))
    try:
        pipeline.accept(bytes(text))
    except EnvelopeError:
        pass


def test_signed_then_parsed_matches(move):
    env = Envelope.from_dict(move)
    again = sign_envelope(env.replace(signature=None), b"k3y-shared-secret")
    assert again.signature == move["signature"]


texts = st.text(min_size=1, max_size=12).filter(lambda s: "|" not in s)
finite_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(payload=st.dictionaries(st.text(max_size=6), finite_json, max_size=5),
       reply_to=st.none() | texts, ttl=st.none() | st.integers(0, 10**6),
       flags=st.tuples(st.none() | st.booleans(), st.none() | st.booleans()),
       agent=texts)
def test_fuzz_to_bytes_equals_canonical_to_dict(payload, reply_to, ttl, flags, agent):
    from lingxi.canonical import canonical_bytes
    from lingxi.wire import AgentEndpoint
    env = Envelope(id="6f1c2f0e-8d7a-4b53-9d43-1f2a3b4c5d6e", type="group:x",
                   sender=AgentEndpoint(agent, "s\u00e9\"", "lingxi://e%22p"), payload=payload,
                   timestamp="2026-06-27T15:30:00Z", group_id="g", reply_to=reply_to, ttl=ttl,
                   broadcast=flags[0], encrypt=flags[1])
    assert env.to_bytes() == canonical_bytes(env.to_dict())
    assert Envelope.parse(env.to_bytes()) == env


def test_lone_surrogates_in_header_text_are_malformed(move):
    move["receiver"]["agent_name"] = "\ud800"
    assert code_of(json.dumps(move).encode()) == "envelope.malformed"


def test_non_ascii_digits_are_not_rfc3339_or_semver(move):
    move["timestamp"] = "٢٠٢٦-06-27T15:30:00Z"
    assert code_of(move) == "envelope.bad_timestamp"
    move["timestamp"] = "2026-06-27T15:30:00Z"
    move["version"] = "١.0.0"
    assert code_of(move) == "envelope.bad_version"


def test_parsed_envelopes_keep_their_wire_bytes(signature_cases):
    data = json.dumps(signature_cases[0]["envelope"], indent=1).encode()
    env = Envelope.parse(data)
    assert env.wire == data
    assert env.replace(ttl=1).wire is None


def test_fast_constructors_set_every_dataclass_field(move, builder):
    import dataclasses
    names = {f.name for f in dataclasses.fields(Envelope)}
    for env in (Envelope.from_dict(move), builder.build({"action": "x"}),
                builder.build({"action": "x"}, encrypt=True)):
        assert set(env.__dict__) == names


# ---- repeated keys and the empty algorithm (issue 9.11) -------------------------
# Built from the project's own builder, so these run without the published vectors.

def _signed(builder, payload=None) -> bytes:
    payload = payload or {"action": "move", "row": 2, "note": {"text": "hi", "n": 1}}
    return builder.build(payload).to_bytes()


@pytest.mark.parametrize(("needle", "twin"), [
    (b'"type":', b'"type":"p2p:other",'),                # top level
    (b'"row":', b'"row":9,'),                           # payload
    (b'"text":', b'"text":"other",'),                   # nested in the payload
    (b'"agent_id":', b'"agent_id":"someone-else",'),    # an endpoint
])
def test_a_repeated_key_anywhere_is_malformed(builder, pipeline, needle, twin):
    data = _signed(builder)
    assert Envelope.parse(data).payload["row"] == 2
    forged = data.replace(needle, twin + needle, 1)
    assert forged != data
    assert code_of(forged) == "envelope.malformed"
    with pytest.raises(EnvelopeError) as info:  # the last value is the signed one: still refused
        pipeline.accept(forged)
    assert info.value.code == "envelope.malformed"


def test_a_repeated_key_is_found_in_non_canonical_text_too(builder):
    value = json.loads(_signed(builder))
    spaced = json.dumps(value, indent=1)  # whitespace between keys and colons elsewhere
    assert Envelope.parse(spaced).id == value["id"]
    twin = spaced.replace('"row" : 2', '"row": 2', 1).replace('"row": 2', '"row": 3,\n "row"  : 2', 1)
    assert twin != spaced and code_of(twin) == "envelope.malformed"


def test_strings_that_look_like_keys_still_parse(builder):
    tricky = {"action": "move", "quote": 'a":b', "spaced": '" x', "tab": '"\t', "k\":": 1}
    data = builder.build(tricky).to_bytes()
    assert Envelope.parse(data).payload == tricky


OBJECT_KEYS = st.text(st.sampled_from('ab":\\ \t'), min_size=1, max_size=4)
PAYLOAD_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(st.sampled_from('ab":\\ \t{'),
                                                              max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(OBJECT_KEYS, kids, max_size=3),
    max_leaves=12)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(OBJECT_KEYS, PAYLOAD_VALUES, max_size=4), st.data())
def test_fuzz_repeats_are_always_caught_and_unique_keys_always_pass(builder, payload, data):
    payload = {"action": "move", **payload}
    text = builder.build(payload).to_bytes().decode("utf-8")
    assert Envelope.parse(text).payload == payload
    # repeat one key of one object (any depth) by re-encoding that object with a twin pair
    objects = [payload]
    stack = [payload]
    while stack:
        item = stack.pop()
        for child in (item.values() if isinstance(item, dict) else item):
            if isinstance(child, dict | list):
                stack.append(child)
                if isinstance(child, dict) and child:
                    objects.append(child)
    target = data.draw(st.sampled_from(objects))
    key = data.draw(st.sampled_from(sorted(target)))
    pretty = data.draw(st.booleans())
    separators = (", ", " : ") if pretty else (",", ":")

    def encode(value):
        if isinstance(value, dict):
            pairs = [f"{json.dumps(k)}{separators[1]}{encode(v)}" for k, v in value.items()]
            if value is target:
                pairs.insert(0, f"{json.dumps(key)}{separators[1]}{encode(value[key])}")
            return "{" + separators[0].join(pairs) + "}"
        if isinstance(value, list):
            return "[" + separators[0].join(encode(v) for v in value) + "]"
        return json.dumps(value, ensure_ascii=False)

    envelope = json.loads(text)
    envelope["payload"] = "@@PAYLOAD@@"
    forged = json.dumps(envelope).replace('"@@PAYLOAD@@"', encode(payload))
    assert code_of(forged) == "envelope.malformed"


@pytest.mark.parametrize("algorithm", ["", 0, None])
def test_an_empty_or_non_text_algorithm_is_unknown(builder, algorithm):
    value = json.loads(_signed(builder))
    value["signature_algorithm"] = algorithm
    if algorithm is None:
        assert Envelope.from_dict(value).signature_algorithm is None  # JSON null: absent
        return
    assert code_of(value) == "envelope.unknown_algorithm"
    assert code_of(json.dumps(value)) == "envelope.unknown_algorithm"


def test_a_sealed_payload_that_repeats_a_key_does_not_open(builder, pipeline):
    import base64

    from wirehelpers import AEAD_KEY

    from lingxi.canonical import canonical_bytes
    from lingxi.wire.aead import AEAD_ALGORITHM, aead_cipher

    env = builder.build({"action": "move", "row": 2}, encrypt=True)
    header = canonical_bytes(env.header_dict())
    nonce = bytes(12)
    plain = b'{"action":"move","row":9,"row":2}'
    sealed = aead_cipher(AEAD_KEY).encrypt(nonce, plain, header)
    forged = sign_envelope(env.replace(payload={
        "alg": AEAD_ALGORITHM, "nonce": nonce.hex(),
        "ciphertext": base64.b64encode(sealed).decode("ascii")}, signature=None), KEY)
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(forged.to_bytes())
    assert info.value.code == "envelope.decrypt_failed"
