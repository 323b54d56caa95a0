"""Fast paths must agree with the general code they shortcut, on good and bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wirehelpers import GUEST, HOST, KEY, FakeClock

from lingxi.canonical import canonical_bytes as reference_canonical
from lingxi.wire import (
    AgentEndpoint,
    Envelope,
    EnvelopeBuilder,
    ReceivePipeline,
    compute_signature,
    verify_signature,
)
from lingxi.wire.envelope import _DECODER, canonical_bytes, decode_json
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.timefmt import _parse_general, format_rfc3339, parse_rfc3339

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=4),
    max_leaves=15,
)


def _outcome(fn, text):
    try:
        return "ok", fn(text)
    except (ValueError, RecursionError) as error:
        return "error", type(error).__name__, str(error)


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(max_size=6), json_values, max_size=6))
def test_fast_canonical_bytes_equals_lingxi_canonical(value):
    assert canonical_bytes(value) == reference_canonical(value)


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": float("inf")}, {"x": object()},
                                 {"x": {1, 2}}, {"x": b"bytes"}])
def test_fast_canonical_bytes_refuses_what_canonical_refuses(bad):
    with pytest.raises((ValueError, TypeError)):
        reference_canonical(bad)
    with pytest.raises((ValueError, TypeError)):
        canonical_bytes(bad)


def test_a_cyclic_payload_is_refused_not_a_crash():
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises((ValueError, RecursionError)):
        canonical_bytes(cyclic)


@settings(max_examples=400, deadline=None)
@given(value=json_values, before=st.sampled_from(["", " ", "\n", "x"]),
       after=st.sampled_from(["", " ", "\t\n", "}", ",", "x", "{}"]),
       cut=st.integers(0, 40))
def test_decode_json_agrees_with_the_full_decoder(value, before, after, cut):
    text = before + json.dumps(value, ensure_ascii=False) + after
    for candidate in (text, text[:cut], text[cut:]):
        assert _outcome(decode_json, candidate) == _outcome(_DECODER.decode, candidate)


@pytest.mark.parametrize("text", ['{"a":NaN}', '{"a":Infinity}', '{"a":1}{"b":2}', '{"a":1',
                                  '{"a" 1}', "{", "", "[" * 5000 + "]" * 5000,
                                  '{"a":"\\ud800"}', '{"a":1,"a":2}'])
def test_decode_json_edge_cases_agree(text):
    assert _outcome(decode_json, text) == _outcome(_DECODER.decode, text)


# ---- timestamps: the shortcut for "YYYY-MM-DDTHH:MM:SS.ffffffZ" ---------------------

def _time_outcome(fn, text):
    try:
        return "ok", fn(text)
    except EnvelopeError as error:
        return "error", error.code, error.message


_digit_or_odd = st.sampled_from(list("0123456789") + ["٣", "_", " ", "a", "+", "-", "9", "0"])


@st.composite
def near_emitted_timestamps(draw):
    """Timestamps of the emitted form, some of them bent out of it (a character at a time)."""
    instant = draw(st.integers(-62135596800, 253402300799))  # years 1..9999
    micro = draw(st.integers(0, 999_999))
    text = format_rfc3339(instant + micro / 1_000_000)
    if len(text) != 27:
        return text
    chars = list(text)
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, 26))
        chars[where] = draw(_digit_or_odd | st.sampled_from(["Z", "z", "T", "t", ".", ":", "60"]))
    return "".join(chars)


@settings(max_examples=1500, deadline=None)
@given(text=near_emitted_timestamps())
def test_fast_timestamp_parser_agrees_with_the_general_one(text):
    expected = _time_outcome(_parse_general, text)
    assert _time_outcome(parse_rfc3339, text) == expected
    assert _time_outcome(parse_rfc3339, text) == expected  # again, now from the cache


@settings(max_examples=300, deadline=None)
@given(second=st.sampled_from(["2026-11-30T08:00:00", "2026-02-28T23:59:59", "2024-02-29T12:00:00",
                               "2026-12-31T23:59:59", "1970-01-01T00:00:00"]),
       fraction=st.text(alphabet="0123456789٣_ +-x", min_size=6, max_size=6))
def test_fast_timestamp_parser_checks_the_fraction_of_a_cached_second(second, fraction):
    parse_rfc3339(second + ".000000Z")  # the whole second is now cached
    text = f"{second}.{fraction}Z"
    assert _time_outcome(parse_rfc3339, text) == _time_outcome(_parse_general, text)


@pytest.mark.parametrize("text", ["2026-06-27T15:30:60.000000Z", "2026-02-30T00:00:00.000000Z",
                                  "2026-06-27T15:30:00.00000٣Z", "2026-06-27T15:30:00.0000_1Z",
                                  "2026-06-27T15:30:00.+00001Z", "2026-06-27 15:30:00.000000Z",
                                  "0000-01-01T00:00:00.000000Z"])
def test_fast_timestamp_parser_rejects_malformed_emitted_forms(text):
    for _ in range(2):
        with pytest.raises(EnvelopeError) as info:
            parse_rfc3339(text)
        assert info.value.code == "envelope.bad_timestamp"


# ---- the builder's per-session template ----------------------------------------------

_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
_ids = _texts.filter(lambda text: "|" not in text)
_endpoints = st.builds(AgentEndpoint, _ids, _texts | st.just("%s%%\"\\"), _texts,
                       st.none() | _texts, st.none() | _texts)


@settings(max_examples=300, deadline=None)
@given(sender=_endpoints, receiver=st.none() | _endpoints,
       conversation_id=st.none() | _texts, group_id=st.none() | _texts,
       algorithm=st.sampled_from(["HMAC-SHA256", "HMAC-SHA512"]),
       env_id=_texts, reply_to=st.none() | _texts, correlation_id=st.none() | _texts,
       ttl=st.none() | st.integers(0, 10**6), broadcast=st.none() | st.booleans(),
       payload=st.dictionaries(st.text(max_size=5), json_values, max_size=4),
       action=_texts, instant=st.floats(0, 4e9))
def test_built_frames_are_the_canonical_json_of_the_envelope(
        sender, receiver, conversation_id, group_id, algorithm, env_id, reply_to,
        correlation_id, ttl, broadcast, payload, action, instant):
    builder = EnvelopeBuilder(sender, receiver, KEY, clock=lambda: instant,
                              id_factory=lambda: env_id, conversation_id=conversation_id,
                              group_id=group_id, algorithm=algorithm)
    for _ in range(2):  # the second build uses the cached template
        env = builder.build({**payload, "action": action}, reply_to=reply_to,
                            correlation_id=correlation_id, ttl=ttl, broadcast=broadcast)
        assert env.to_bytes() == reference_canonical(env.to_dict())
        assert env.signature == compute_signature(env, KEY, algorithm)


def test_the_template_follows_a_reassigned_builder_field():
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=FakeClock(), conversation_id="s1")
    builder.build({"action": "warm"})
    builder.sender, builder.receiver, builder.conversation_id = HOST, GUEST, "s2"
    builder.key = b"another key"
    env = builder.build({"action": "x"})
    assert env.to_bytes() == reference_canonical(env.to_dict())
    assert b'"conversation_id":"s2"' in env.to_bytes()
    verify_signature(Envelope.parse(env.to_bytes()), b"another key")
    with pytest.raises(EnvelopeError) as info:
        verify_signature(Envelope.parse(env.to_bytes()), KEY)
    assert info.value.code == "envelope.bad_signature"


def test_a_built_envelope_changed_by_replace_is_serialised_afresh():
    env = EnvelopeBuilder(GUEST, HOST, KEY, clock=FakeClock()).build({"action": "x"})
    changed = env.replace(reply_to="r-1")
    assert changed.to_bytes() == reference_canonical(changed.to_dict())
    assert b"r-1" in changed.to_bytes() and b"r-1" not in env.to_bytes()


# ---- the last-seen endpoint and the pipeline's standing expectations -----------------

def test_an_endpoint_after_a_cached_one_is_still_checked_in_full():
    good = {"agent_id": "a-1", "system_id": "s", "endpoint": "lingxi://e"}
    assert AgentEndpoint.from_dict(dict(good)) == AgentEndpoint("a-1", "s", "lingxi://e")
    assert AgentEndpoint.from_dict(dict(good)) is AgentEndpoint.from_dict(dict(good))
    for bent, code in [({**good, "agent_id": "a|b"}, "envelope.malformed"),
                       ({**good, "agent_id": "x" * 300}, "envelope.malformed"),
                       ({**good, "extra": "1"}, "envelope.unknown_field"),
                       ({**good, "system_id": 7}, "envelope.malformed"),
                       ({**good, "system_id": ""}, "envelope.malformed"),
                       ({**good, "endpoint": "e"}, "envelope.malformed"),
                       ({"agent_id": "a-1", "system_id": "s"}, "envelope.missing_field")]:
        AgentEndpoint.from_dict(dict(good))  # the good one is the last seen again
        with pytest.raises(EnvelopeError) as info:
            AgentEndpoint.from_dict(bent)
        assert info.value.code == code
    # a newer minor version may add fields; the same dict at our own version may not
    AgentEndpoint.from_dict({**good, "extra": "1"}, allow_extra=True)
    with pytest.raises(EnvelopeError):
        AgentEndpoint.from_dict({**good, "extra": "1"})
    # the receiver's last-seen entry does not answer for the sender
    AgentEndpoint.from_dict(dict(good), "$.receiver")
    assert AgentEndpoint.from_dict({**good, "agent_id": "a-2"}).agent_id == "a-2"


@pytest.mark.parametrize(("sender", "receiver", "ok"), [
    (GUEST, HOST, True), ("agent-guest-02", "agent-host-01", True),
    ("agent-guest-02", HOST, True), (HOST, HOST, False), ("someone", None, False),
    (None, "agent-guest-02", False), (None, GUEST, False),
])
def test_standing_expectations_by_endpoint_or_id(sender, receiver, ok):
    clock = FakeClock()
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, conversation_id="c1")
    pipeline = ReceivePipeline(KEY, clock=clock, expect_sender=sender, expect_receiver=receiver,
                               expect_conversation_id="c1")
    frame = builder.build({"action": "x"}).to_bytes()
    if ok:
        assert pipeline.accept(frame).sender == GUEST
    else:
        with pytest.raises(EnvelopeError) as info:
            pipeline.accept(frame)
        assert info.value.code in ("envelope.bad_sender", "envelope.bad_receiver")
    other = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, conversation_id="c2")
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock, expect_conversation_id="c1").accept(
            other.build({"action": "x"}).to_bytes())
    assert info.value.code == "envelope.bad_conversation"


# ---- type/payload binding: the plain match and the full check agree ----------------------

_type_parts = st.sampled_from(["p2p", "group", "caller", "inter_group", "p2p:x", "", "P2P"])
_actions = st.one_of(st.sampled_from(["move", "x:y", "", "control.ping"]), st.integers(),
                     st.none(), st.text(max_size=4))


@settings(max_examples=400, deadline=None)
@given(prefix=_type_parts, action=_actions, claimed=_actions,
       expect_prefix=st.none() | _type_parts)
def test_binding_in_accept_agrees_with_check_binding(prefix, action, claimed, expect_prefix):
    from lingxi.wire.pipeline import check_binding
    claimed = claimed if isinstance(claimed, str) and claimed else "move"
    kind = f"{prefix}:{claimed}"
    clock = FakeClock()
    env = Envelope(id="6f1c2f0e-8d7a-4b53-9d43-1f2a3b4c5d6e", type=kind, sender=GUEST,
                   receiver=HOST, payload={"action": action}, timestamp="2026-11-30T08:00:00Z",
                   group_id="g")
    try:
        check_binding(env, expect_prefix)
        expected = "ok"
    except EnvelopeError as error:
        expected = error.code
    try:
        env = Envelope.from_dict(env.to_dict())
    except EnvelopeError:
        return  # not a well-formed envelope: the parser refuses it before any binding
    signed = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, group_id="g").build(
        {"action": action}, type=kind)
    try:
        ReceivePipeline(KEY, clock=clock).accept(signed.to_bytes(), expect_prefix=expect_prefix)
        got = "ok"
    except EnvelopeError as error:
        got = error.code
    assert got == expected
