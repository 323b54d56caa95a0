"""The seed's AgentEndpoint rules hold wherever an envelope is read (seed §3.5).

``system_id`` is required, so an empty one is refused; ``endpoint`` is the
callback URL, so text that is not a ``scheme://…`` URL is refused. Both for
the sender and the receiver, through ``Envelope.parse``/``from_dict`` and so
through every receive pipeline, the handshake and ``lingxi envelope verify``.
Before this check both were accepted (the parametrised refusals below failed).
"""

from __future__ import annotations

import json

import pytest

from lingxi.wire import AgentEndpoint, Envelope, EnvelopeBuilder, EnvelopeError
from lingxi.wire.agent_fields import endpoint_url_problem

GOOD = {"agent_id": "alice", "system_id": "lingxi", "endpoint": "lingxi://alice"}
SERVER = {"agent_id": "lx-server", "system_id": "lingxi", "endpoint": "http://127.0.0.1:8088/"}


def envelope(sender=None, receiver=None) -> dict:
    return {"id": "6f1c2f0e-8d7a-4b53-9d43-1f2a3b4c5d6e", "version": "1.0.0",
            "type": "caller:request", "sender": sender or dict(GOOD),
            "receiver": receiver or dict(SERVER), "payload": {"action": "request"},
            "timestamp": "2026-06-27T15:30:00Z"}


@pytest.mark.parametrize("endpoint", [
    "http://127.0.0.1:8088/", "https://example.org/p2a?x=1#f", "tcp://127.0.0.1:7400",
    "tcp://[::1]:7400", "lingxi://lx-0123456789abcdef", "memory://host", "tcp://?",
    "http://h/%C3%A9"])
def test_urls_the_runtime_uses_are_endpoints(endpoint):
    assert endpoint_url_problem(endpoint) is None
    parsed = Envelope.from_dict(envelope(sender={**GOOD, "endpoint": endpoint}))
    assert parsed.sender.endpoint == endpoint


@pytest.mark.parametrize("endpoint", [
    "", "e", "not a url", "127.0.0.1:8088", "http://", "http:/x", "//host/path",
    "http://exa mple.org/", 'http://a"b/', "http://a\nb/", "http://\u00e9.org/",
    "http://a/%zz", "http://a/%4", "1http://a/", "ht_tp://a/", "http://a/\x1b[31m"])
@pytest.mark.parametrize("side", ["sender", "receiver"])
def test_an_endpoint_that_is_not_a_url_is_malformed(endpoint, side):
    doc = envelope(**{side: {**(GOOD if side == "sender" else SERVER), "endpoint": endpoint}})
    with pytest.raises(EnvelopeError) as info:
        Envelope.parse(json.dumps(doc))
    assert info.value.code == "envelope.malformed"
    assert info.value.path == f"$.{side}.endpoint"


@pytest.mark.parametrize("side", ["sender", "receiver"])
def test_an_empty_system_id_is_malformed(side):
    doc = envelope(**{side: {**(GOOD if side == "sender" else SERVER), "system_id": ""}})
    with pytest.raises(EnvelopeError) as info:
        Envelope.from_dict(doc)
    assert (info.value.code, info.value.path) == ("envelope.malformed", f"$.{side}.system_id")


def test_a_cached_good_endpoint_does_not_let_a_bad_one_through():
    Envelope.from_dict(envelope())  # GOOD is now the last endpoint seen at $.sender
    for bent in ({**GOOD, "system_id": ""}, {**GOOD, "endpoint": "alice"}):
        with pytest.raises(EnvelopeError):
            Envelope.from_dict(envelope(sender=bent))
    Envelope.from_dict(envelope())


def test_a_built_envelope_with_a_bad_local_endpoint_is_refused_by_its_receiver():
    sender = AgentEndpoint("alice", "", "alice")  # local code may build one; nobody accepts it
    env = EnvelopeBuilder(sender, AgentEndpoint("lx-server", "lingxi", "http://h/"), b"k",
                          clock=lambda: 0.0, prefix="caller").build({"action": "request"})
    with pytest.raises(EnvelopeError) as info:
        Envelope.parse(env.to_bytes())
    assert info.value.code == "envelope.malformed"
