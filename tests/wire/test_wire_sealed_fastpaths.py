"""The sealed round trip's one-pass paths agree with the general code and with the spec.

A sealed envelope is built in one pass (payload, header and sealed payload
each canonicalised once, no intermediate envelopes) and read back through a
session's learnt form (:mod:`lingxi.wire.shape`) instead of the JSON parser.
Both must give byte for byte what the general path gives, and the receive
pipeline must refuse exactly what it refused before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from hypothesis import given, settings
from hypothesis import strategies as st
from wirehelpers import (
    AEAD_KEY,
    ENDPOINTS,
    GUEST,
    HOST,
    IDS,
    KEY,
    PAYLOADS,
    TEXTS,
    FakeClock,
    counting_ids,
    counting_nonces,
)

from lingxi.canonical import canonical_bytes as reference_canonical
from lingxi.wire import Envelope, EnvelopeBuilder, ReceivePipeline, seal_envelope
from lingxi.wire.aead import sealed_payload
from lingxi.wire.envelope import _canonical_payload
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.shape import SealedShape


def _reference_sealed(env: Envelope, nonce: bytes, aead_key: bytes, key: bytes,
                      algorithm: str) -> dict:
    """The sealed envelope as the spec describes it, computed from scratch."""
    header = {k: v for k, v in env.to_dict().items()
              if k not in ("payload", "signature", "signature_algorithm")}
    header["encrypt"] = True
    ciphertext = ChaCha20Poly1305(aead_key).encrypt(
        nonce, reference_canonical(env.payload), reference_canonical(header))
    payload = {"alg": "ChaCha20-Poly1305", "nonce": nonce.hex(),
               "ciphertext": base64.b64encode(ciphertext).decode()}
    receiver = env.receiver.agent_id if env.receiver is not None else ""
    content = (f"{env.sender.agent_id}|{receiver}|{env.timestamp}|".encode()
               + reference_canonical(payload))
    digest = {"HMAC-SHA256": hashlib.sha256, "HMAC-SHA512": hashlib.sha512}[algorithm]
    return {**header, "payload": payload, "signature_algorithm": algorithm,
            "signature": hmac.new(key, content, digest).hexdigest()}


@settings(max_examples=80, deadline=None)
@given(sender=ENDPOINTS, receiver=st.none() | ENDPOINTS,
       conversation_id=st.none() | TEXTS, group_id=st.none() | TEXTS,
       algorithm=st.sampled_from(["HMAC-SHA256", "HMAC-SHA512"]),
       reply_to=st.none() | TEXTS, correlation_id=st.none() | TEXTS,
       ttl=st.none() | st.integers(0, 10**6), broadcast=st.none() | st.booleans(),
       payload=PAYLOADS, action=TEXTS, instant=st.floats(0, 4e9))
def test_a_sealed_build_is_the_spec_computed_from_scratch(
        sender, receiver, conversation_id, group_id, algorithm, reply_to, correlation_id,
        ttl, broadcast, payload, action, instant):
    nonce = bytes(range(12))
    builder = EnvelopeBuilder(sender, receiver, KEY, clock=lambda: instant,
                              id_factory=lambda: "6f1c2f0e-8d7a-4b53-9d43-1f2a3b4c5d6e",
                              conversation_id=conversation_id, group_id=group_id,
                              algorithm=algorithm, aead_key=AEAD_KEY,
                              nonce_factory=lambda size: nonce)
    body = {**payload, "action": action}
    options = dict(reply_to=reply_to, correlation_id=correlation_id, ttl=ttl,
                   broadcast=broadcast)
    plain = builder.build(dict(body), **options)
    expected = _reference_sealed(plain, nonce, AEAD_KEY, KEY, algorithm)
    for _ in range(2):  # the second time from the cached templates
        sealed, opened = builder.build_sealed(dict(body), **options)
        assert sealed.to_dict() == expected
        assert sealed.to_bytes() == reference_canonical(expected)
        assert sealed.payload_json() == reference_canonical(expected["payload"])
        assert opened.to_dict() == {**expected, "payload": body}
        assert opened.wire == sealed.to_bytes()
        assert opened.payload_json() == reference_canonical(body)
        assert builder.build(dict(body), encrypt=True, **options).to_dict() == expected
    # seal_envelope (unsigned) seals the same way
    unsigned = seal_envelope(plain.replace(signature=None), AEAD_KEY, lambda size: nonce)
    assert unsigned.payload == expected["payload"]
    assert unsigned.header_bytes() == reference_canonical(unsigned.header_dict())


@settings(max_examples=150, deadline=None)
@given(sender=ENDPOINTS, receiver=st.none() | ENDPOINTS, conversation_id=st.none() | TEXTS,
       group_id=st.none() | TEXTS, reply_to=st.none() | TEXTS,
       correlation_id=st.none() | TEXTS, ttl=st.none() | st.integers(0, 10**6),
       broadcast=st.none() | st.booleans(), encrypt=st.none() | st.booleans(),
       kind=IDS)
def test_header_bytes_are_the_canonical_header(sender, receiver, conversation_id, group_id,
                                               reply_to, correlation_id, ttl, broadcast,
                                               encrypt, kind):
    env = Envelope(id="x", type=kind, sender=sender, payload={}, timestamp="t",
                   receiver=receiver, conversation_id=conversation_id, group_id=group_id,
                   reply_to=reply_to, correlation_id=correlation_id, ttl=ttl,
                   broadcast=broadcast, encrypt=encrypt, signature="s")
    assert env.header_bytes() == reference_canonical(env.header_dict())
    assert env.to_bytes() == reference_canonical(env.to_dict())


@settings(max_examples=300, deadline=None)
@given(alg=st.text(max_size=20), ciphertext=st.text(max_size=20), nonce=st.text(max_size=20),
       extra=st.none() | st.text(max_size=3))
def test_the_sealed_payload_shortcut_writes_what_the_encoder_writes(alg, ciphertext, nonce,
                                                                    extra):
    payload = {"nonce": nonce, "alg": alg, "ciphertext": ciphertext}
    if extra is not None:
        payload[extra] = 1
    assert _canonical_payload(payload) == reference_canonical(payload)


def test_the_sealed_payload_shortcut_refuses_what_the_encoder_refuses():
    with pytest.raises(EnvelopeError) as info:
        _canonical_payload({"alg": "\ud800", "ciphertext": "", "nonce": ""})
    assert info.value.code == "envelope.malformed"
    assert _canonical_payload({"alg": 1, "ciphertext": "c", "nonce": "n"}) == \
        reference_canonical({"alg": 1, "ciphertext": "c", "nonce": "n"})


@settings(max_examples=100, deadline=None)
@given(nonce=st.binary(min_size=12, max_size=12), ciphertext=st.binary(max_size=80))
def test_sealed_payload_json_is_canonical(nonce, ciphertext):
    payload, text = sealed_payload(nonce, ciphertext)
    assert text == reference_canonical(payload)
    assert json.loads(text) == payload


# ---- the learnt form of a peer's sealed envelopes ------------------------------------------

def _sealed_pair(clock, **builder_options):
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, conversation_id="c-1",
                              aead_key=AEAD_KEY, id_factory=counting_ids(),
                              nonce_factory=counting_nonces(), **builder_options)
    pipeline = ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY, expect_sender=GUEST,
                               expect_receiver=HOST, expect_conversation_id="c-1")
    return builder, pipeline


def _outcome(accept, data):
    try:
        env = accept(data)
    except EnvelopeError as error:
        return error.code
    return env.to_dict(), env.wire, env.payload_json(), env.instant


def _mutations(data: bytes, draw_positions: list[tuple[int, int]]) -> list[bytes]:
    out = [data, data.replace(b'"encrypt":true', b'"encrypt":true,"encrypt":true'),
           data.replace(b'"type":', b'"type":"p2p:x","type":'),
           data.replace(b'{"alg"', b'{"nonce":"00","alg"'), data.replace(b",", b", ", 1),
           data.replace(b'"p2p:', b'"group:'), data.replace(b"Z\"", b"+00:00\""),
           data.replace(b".", b"", 1), data[:-1], data + b" "]
    for where, byte in draw_positions:
        where %= len(data)
        out.append(data[:where] + bytes([byte]) + data[where + 1:])
    return out


@settings(max_examples=40, deadline=None)
@given(payload=PAYLOADS, reply_to=st.none() | TEXTS | st.just("x" * 256) | st.just("y" * 257),
       action=st.sampled_from(["move", "echo", "a.b:c"]),
       positions=st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 255)), max_size=6))
def test_the_learnt_form_reads_what_the_parser_reads_and_refuses_nothing_new(
        payload, reply_to, action, positions):
    clock = FakeClock()
    builder, _ = _sealed_pair(clock)
    warm = builder.build_sealed({"action": "warm"})[0].to_bytes()

    def learnt_pipeline():
        _, pipeline = _sealed_pair(clock)
        pipeline.accept(warm)
        assert pipeline._shape is not None
        return pipeline

    sealed, opened = builder.build_sealed({**payload, "action": action}, reply_to=reply_to)
    fast = learnt_pipeline()
    for data in _mutations(sealed.to_bytes(), positions):
        _, fresh = _sealed_pair(clock)  # no form learnt: the general parser
        assert _outcome(learnt_pipeline().accept, data) == _outcome(fresh.accept, data)
        learnt = fast._shape.parse(data)
        try:
            parsed = Envelope.parse(data)
        except EnvelopeError:
            assert learnt is None
            continue
        if learnt is not None:
            env, header = learnt
            assert env.to_dict() == parsed.to_dict() and env.wire == parsed.wire
            assert env.payload_json() == parsed.payload_json()
            assert env.instant == parsed.instant
            assert header == reference_canonical(parsed.header_dict())
    if not isinstance(_outcome(fast.accept, sealed.to_bytes()), str):  # accepted once
        assert _outcome(fast.accept, sealed.to_bytes()) == "envelope.replay"


def test_the_learnt_form_is_used_and_keeps_every_refusal():
    clock = FakeClock()
    builder, pipeline = _sealed_pair(clock)
    first, _ = builder.build_sealed({"action": "one"})
    pipeline.accept(first.to_bytes())
    sealed, opened = builder.build_sealed({"action": "two", "n": 2}, reply_to=first.id)
    data = sealed.to_bytes()
    assert pipeline._shape.parse(data) is not None  # this envelope takes the fast reader
    ciphertext = sealed.payload["ciphertext"]
    flipped = ("A" if ciphertext[0] != "A" else "B") + ciphertext[1:]
    cases = {
        data.replace(ciphertext.encode(), flipped.encode()): "envelope.bad_signature",
        data.replace(b'"p2p:two"', b'"p2p:owt"'): "envelope.decrypt_failed",
        data.replace(sealed.signature.encode(), b"0" * 64): "envelope.bad_signature",
        data.replace(b"2026-11-30T08", b"2026-11-30T07"): "envelope.bad_signature",
        data.replace(b"2026-11-30T08", b"2026-13-30T08"): "envelope.bad_timestamp",
    }
    for bent, code in cases.items():
        with pytest.raises(EnvelopeError) as info:
            pipeline.accept(bent)
        assert info.value.code == code, bent
    got = pipeline.accept(data)
    assert got.to_dict() == opened.to_dict() and got.wire == data
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(data)
    assert info.value.code == "envelope.replay"
    clock.now += 1000
    late, _ = builder.build_sealed({"action": "three"})
    clock.now -= 1000
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(late.to_bytes())
    assert info.value.code == "envelope.stale"


def test_another_sender_is_read_by_the_general_parser():
    clock = FakeClock()
    builder, pipeline = _sealed_pair(clock)
    pipeline.accept(builder.build_sealed({"action": "one"})[0].to_bytes())
    other = EnvelopeBuilder(HOST, HOST, KEY, clock=clock, conversation_id="c-1",
                            aead_key=AEAD_KEY)
    data = other.build_sealed({"action": "x"})[0].to_bytes()
    assert pipeline._shape.parse(data) is None
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(data)
    assert info.value.code == "envelope.bad_sender"


def test_no_form_is_learnt_from_forms_it_does_not_cover():
    clock = FakeClock()
    builder, pipeline = _sealed_pair(clock)
    pipeline.accept(builder.build_sealed({"action": "x"}, ttl=30)[0].to_bytes())
    assert pipeline._shape is None
    assert SealedShape.learn(builder.build({"action": "x"})) is None  # not sealed
    pipeline.accept(builder.build_sealed({"action": "x"})[0].to_bytes())
    assert pipeline._shape is not None


def test_envelopes_read_through_the_form_carry_the_expected_endpoints():
    clock = FakeClock()
    builder, pipeline = _sealed_pair(clock)
    pipeline.accept(builder.build_sealed({"action": "one"})[0].to_bytes())
    got = pipeline.accept(builder.build_sealed({"action": "two"})[0].to_bytes())
    assert got.sender is GUEST and got.receiver is HOST
    other = SealedShape.learn(builder.build_sealed({"action": "x"})[0],
                              sender=HOST, receiver="agent-host-01")
    assert other is not None and other.sender == GUEST and other.receiver == HOST
