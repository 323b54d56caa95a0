"""Envelope fields a peer controls, each refused with its code and path: ids, payloads,
flags, signatures, endpoints, and text that is not Unicode; and the caches stay right."""

from __future__ import annotations

import pytest
from wirehelpers import AEAD_KEY

from lingxi.wire import Envelope, EnvelopeError, ReceivePipeline
from lingxi.wire.control import control_action
from lingxi.wire.envelope import AgentEndpoint
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.signature import as_key


@pytest.fixture
def raw(builder) -> dict:
    return builder.build({"action": "move", "x": 1}).to_dict()


def refused(data) -> EnvelopeError:
    with pytest.raises(EnvelopeError) as info:
        Envelope.from_dict(data)
    return info.value


@pytest.mark.parametrize("change,code,path", [
    ({"priority": "high"}, "envelope.unknown_field", "$.priority"),
    ({"id": "not-a-uuid"}, "envelope.malformed", "$.id"),
    ({"payload": ["a", "list"]}, "envelope.malformed", "$.payload"),
    ({"broadcast": "yes"}, "envelope.malformed", "$.broadcast"),
    ({"signature": 12345}, "envelope.bad_signature", "$.signature"),
    ({"sender": ["not", "an", "object"]}, "envelope.malformed", "$.sender"),
])
def test_a_field_of_the_wrong_kind_is_refused_with_its_path(raw, change, code, path) -> None:
    error = refused({**raw, **change})
    assert (error.code, error.path) == (code, path)


@pytest.mark.parametrize("field,value,why", [
    ("agent_id", "", "must not be empty"),
    ("system_id", "sys\ud800", "lone surrogate"),
])
def test_endpoint_text_that_is_empty_or_not_unicode_is_refused(raw, field, value, why) -> None:
    error = refused({**raw, "sender": {**raw["sender"], field: value}})
    assert error.code == "envelope.malformed" and why in error.message


def test_a_payload_with_a_lone_surrogate_has_no_canonical_form(raw) -> None:
    env = Envelope.from_dict(raw).replace(payload={"action": "move", "note": "\ud800"})
    with pytest.raises(EnvelopeError) as info:
        env.payload_json()
    assert info.value.code == "envelope.malformed" and info.value.path == "$.payload"


def test_an_endpoint_is_built_only_with_an_agent_id() -> None:
    with pytest.raises(ValueError):
        AgentEndpoint(agent_id="a|b", system_id="s", endpoint="tcp://h:1")


def test_replace_refuses_unknown_fields_and_recomputes_the_instant(raw) -> None:
    env = Envelope.from_dict(raw)
    with pytest.raises(TypeError):
        env.replace(priority="high")
    later = env.replace(timestamp="2030-01-01T00:00:00.000000Z")
    assert later.instant == pytest.approx(1893456000.0) and later.instant != env.instant


def test_many_distinct_endpoints_fill_and_empty_the_cache_and_stay_right(raw) -> None:
    for n in range(4200):
        sender = {**raw["sender"], "agent_id": f"agent-{n}"}
        assert Envelope.from_dict({**raw, "sender": sender}).sender.agent_id == f"agent-{n}"


def test_a_sender_with_no_key_is_refused_as_an_unknown_sender(builder, clock) -> None:
    """A key lookup that raises KeyError (a dict's ``__getitem__``) means: no such sender."""
    pipeline = ReceivePipeline({"someone-else": b"k" * 16}.__getitem__, clock=clock,
                               aead_key=AEAD_KEY)
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(builder.build({"action": "move"}).to_bytes())
    assert info.value.code == "envelope.bad_sender" and info.value.path == "$.sender.agent_id"


def test_an_envelope_arrives_as_text_or_bytearray_alike(builder, pipeline) -> None:
    wire = builder.build({"action": "move", "x": 2}).to_bytes()
    assert pipeline.accept(bytearray(wire)).payload == {"action": "move", "x": 2}


@pytest.mark.parametrize("make", [
    lambda: ReceivePipeline(b"k", clock=lambda: 0.0, window_seconds=0),
    lambda: ReplayGuard(0),
    lambda: control_action("reboot"),
    lambda: as_key(b""),
])
def test_nonsense_settings_are_refused_when_made(make) -> None:
    with pytest.raises(ValueError):
        make()
