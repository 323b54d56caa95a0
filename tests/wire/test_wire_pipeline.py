"""The receive pipeline: tampering, binding rules, replay, window, TTL, encryption."""

from __future__ import annotations

import copy

import pytest
from wirehelpers import AEAD_KEY, GUEST, HOST, KEY, FakeClock

from lingxi.wire import (
    Envelope,
    EnvelopeError,
    ReceivePipeline,
    ReplayGuard,
    compute_signature,
    open_envelope,
    sign_envelope,
)

MOVE = {"action": "move", "turn": 3, "row": 2, "col": 5}


def strict_pipeline(clock) -> ReceivePipeline:
    return ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY, expect_conversation_id="sess-1",
                           expect_sender=GUEST, expect_receiver=HOST)


def accept_strict(pipeline, data):
    return pipeline.accept(data, expect_reply_to="r-1", expect_correlation_id="c-1",
                           expect_group_id=None)


def set_path(raw, path, value):
    *parents, last = path.split(".")
    target = raw
    for part in parents:
        target = target[part]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value


class _Deleted:
    """The marker for "remove this field" (a stable repr: test ids must not hold addresses)."""

    def __repr__(self) -> str:
        return "<deleted>"


DELETE = _Deleted()

# (field path, new value, expected code) for a plaintext envelope.
PLAIN_TAMPERING = [
    # fields the signature covers
    ("sender.agent_id", "agent-mallory", "envelope.bad_signature"),
    ("receiver.agent_id", "agent-other", "envelope.bad_signature"),
    ("timestamp", "2026-11-30T08:00:01.000000Z", "envelope.bad_signature"),
    ("payload.row", 3, "envelope.bad_signature"),
    ("payload.extra", True, "envelope.bad_signature"),
    ("payload.action", "resign", "envelope.bad_signature"),
    ("signature", "0" * 64, "envelope.bad_signature"),
    ("signature_algorithm", "HMAC-SHA512", "envelope.bad_signature"),
    ("signature_algorithm", "HMAC-MD5", "envelope.unknown_algorithm"),
    # fields it does not cover, caught by binding rules and expectations
    ("type", "p2p:resign", "envelope.type_mismatch"),
    ("type", "caller:move", "envelope.type_mismatch"),
    ("type", "group:move", "envelope.missing_field"),
    ("version", "2.0.0", "envelope.bad_version"),
    ("reply_to", "r-2", "envelope.bad_reply_to"),
    ("correlation_id", "c-2", "envelope.bad_correlation"),
    ("conversation_id", "sess-2", "envelope.bad_conversation"),
    ("broadcast", True, "envelope.malformed"),
    ("encrypt", True, "envelope.decrypt_failed"),
    ("sender.system_id", "sys-evil", "envelope.bad_sender"),
    ("sender.endpoint", "tcp://10.0.0.1:1", "envelope.bad_sender"),
    ("receiver.endpoint", "tcp://10.0.0.1:1", "envelope.bad_receiver"),
    ("receiver.agent_name", "Somebody", "envelope.bad_receiver"),
    ("receiver", DELETE, "envelope.missing_field"),
    ("ttl", -1, "envelope.malformed"),
]


@pytest.fixture
def signed_move(builder):
    return builder.build(MOVE, reply_to="r-1", correlation_id="c-1", ttl=60)


def test_untampered_envelope_passes_every_check(clock, signed_move):
    accepted = accept_strict(strict_pipeline(clock), signed_move.to_bytes())
    assert accepted == signed_move


@pytest.mark.parametrize(("path", "value", "code"), PLAIN_TAMPERING,
                         ids=[f"{p}={v!r}" for p, v, _ in PLAIN_TAMPERING])
def test_altering_a_field_is_rejected_with_its_code(clock, signed_move, path, value, code):
    raw = copy.deepcopy(signed_move.to_dict())
    set_path(raw, path, value)
    with pytest.raises(EnvelopeError) as info:
        accept_strict(strict_pipeline(clock), raw)
    assert info.value.code == code


def test_group_id_is_bound_when_the_caller_expects_one(clock, builder):
    builder.prefix, builder.receiver, builder.group_id = "group", None, "room-7"
    raw = builder.build({"action": "vote", "choice": "yes"}).to_dict()
    pipeline = ReceivePipeline(KEY, clock=clock)
    assert pipeline.accept(raw, expect_prefix="group", expect_group_id="room-7").group_id == "room-7"
    raw["group_id"] = "room-8"
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock).accept(raw, expect_prefix="group",
                                                 expect_group_id="room-7")
    assert info.value.code == "envelope.bad_group"


def test_a_raised_ttl_cannot_outlive_the_window(clock, signed_move):
    raw = signed_move.to_dict()
    raw["ttl"] = 10**6
    clock.now += 121
    with pytest.raises(EnvelopeError) as info:
        strict_pipeline(clock).accept(raw, expect_reply_to="r-1")
    assert info.value.code == "envelope.stale"


def test_a_lowered_ttl_expires_the_envelope(clock, signed_move):
    raw = signed_move.to_dict()
    raw["ttl"] = 5
    clock.now += 6
    with pytest.raises(EnvelopeError) as info:
        strict_pipeline(clock).accept(raw)
    assert info.value.code == "envelope.expired"


# ---- replay ---------------------------------------------------------------

def test_the_same_envelope_twice_is_a_replay(clock, pipeline, signed_move):
    data = signed_move.to_bytes()
    pipeline.accept(data)
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(data)
    assert info.value.code == "envelope.replay"


def test_a_replay_with_a_fresh_id_is_still_a_replay(clock, pipeline, signed_move):
    pipeline.accept(signed_move.to_bytes())
    raw = signed_move.to_dict()
    raw["id"] = "00000000-0000-4000-8000-00000000ffff"
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(raw)
    assert info.value.code == "envelope.replay"


def test_a_replay_with_an_uppercase_signature_is_not_a_new_message(pipeline, signed_move):
    pipeline.accept(signed_move.to_bytes())
    raw = signed_move.to_dict()
    raw["signature"] = raw["signature"].upper()
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(raw)
    assert info.value.code == "envelope.bad_signature"


def test_an_old_timestamp_is_stale_even_when_freshly_signed(clock, builder, pipeline):
    env = builder.build(MOVE)
    clock.now += 120.5
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(env.to_bytes())
    assert info.value.code == "envelope.stale"


def test_a_future_timestamp_beyond_the_window_is_stale(clock, builder, pipeline):
    clock.now += 500
    env = builder.build(MOVE)
    clock.now -= 500
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(env.to_bytes())
    assert info.value.code == "envelope.stale"


def test_window_is_configurable(clock, builder):
    env = builder.build(MOVE)
    clock.now += 20
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock, window_seconds=10).accept(env.to_bytes())
    assert info.value.code == "envelope.stale"
    assert ReceivePipeline(KEY, clock=clock, window_seconds=30).accept(env.to_bytes())


def test_expired_ttl_is_rejected_inside_the_window(clock, builder, pipeline):
    env = builder.build(MOVE, ttl=30)
    clock.now += 31
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(env.to_bytes())
    assert info.value.code == "envelope.expired"


def test_replay_guard_forgets_entries_once_the_window_has_passed():
    guard = ReplayGuard(capacity=2)
    guard.check_and_remember("a", expires_at=100.0, now=0.0)
    guard.check_and_remember("b", expires_at=200.0, now=0.0)
    with pytest.raises(EnvelopeError) as info:
        guard.check_and_remember("c", expires_at=300.0, now=50.0)
    assert info.value.code == "envelope.replay_capacity"
    guard.check_and_remember("c", expires_at=300.0, now=150.0)  # "a" expired and was dropped
    assert "a" not in guard and len(guard) == 2


def test_replay_guard_memory_is_bounded_by_the_window(clock, builder, pipeline):
    for _ in range(50):
        pipeline.accept(builder.build(MOVE).to_bytes())
        clock.now += 10
    # only envelopes from the last ~120 s can still pass the window, so only they are kept
    assert len(pipeline.guard) <= 13


def test_unknown_sender_has_no_key(clock, signed_move):
    pipeline = ReceivePipeline({"someone-else": KEY}.get, clock=clock)
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(signed_move.to_bytes())
    assert info.value.code == "envelope.bad_sender"


def test_key_is_looked_up_by_sender(clock, signed_move):
    keys = {GUEST.agent_id: KEY}
    assert ReceivePipeline(keys.__getitem__, clock=clock).accept(signed_move.to_bytes())


def test_unsigned_envelope_is_rejected(clock, signed_move, pipeline):
    raw = signed_move.to_dict()
    del raw["signature"]
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(raw)
    assert info.value.code == "envelope.bad_signature"


def test_payload_without_action_breaks_the_binding(clock, builder, pipeline):
    env = builder.build({"note": "hi"}, type="p2p:note")
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(env.to_bytes())
    assert info.value.code == "envelope.type_mismatch"


def test_agent_id_with_separator_is_refused(signed_move, pipeline):
    # "a|b" + "c" and "a" + "b|c" would sign the same bytes
    raw = signed_move.to_dict()
    raw["sender"]["agent_id"] = "agent|x"
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(raw)
    assert info.value.code == "envelope.malformed"


# ---- encrypt: true ----------------------------------------------------------

@pytest.fixture
def sealed_move(builder):
    return builder.build(MOVE, reply_to="r-1", correlation_id="c-1", encrypt=True, ttl=60)


def test_sealed_payload_hides_the_plaintext_and_opens_in_the_pipeline(clock, sealed_move):
    assert sealed_move.encrypt is True
    assert set(sealed_move.payload) == {"alg", "nonce", "ciphertext"}
    assert b"turn" not in sealed_move.to_bytes()
    accepted = accept_strict(strict_pipeline(clock), sealed_move.to_bytes())
    assert accepted.payload == MOVE


def test_signature_covers_the_sealed_form(sealed_move):
    assert sealed_move.signature == compute_signature(sealed_move, KEY)


SEALED_HEADER_TAMPERING = [
    ("id", "00000000-0000-4000-8000-00000000ffff"),
    ("type", "p2p:resign"),
    ("ttl", 59),
    ("reply_to", "r-9"),
    ("correlation_id", "c-9"),
    ("conversation_id", "sess-9"),
    ("group_id", "room-1"),
    ("sender.endpoint", "tcp://10.0.0.1:1"),
    ("receiver.system_id", "sys-z"),
    ("version", "1.0.1"),
]


@pytest.mark.parametrize(("path", "value"), SEALED_HEADER_TAMPERING,
                         ids=[p for p, _ in SEALED_HEADER_TAMPERING])
def test_altered_header_fails_to_open(clock, sealed_move, path, value):
    raw = copy.deepcopy(sealed_move.to_dict())
    set_path(raw, path, value)
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY).accept(raw)
    assert info.value.code == "envelope.decrypt_failed"


def test_wrong_aead_key_fails_to_open(clock, sealed_move):
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock, aead_key=bytes(32)).accept(sealed_move.to_bytes())
    assert info.value.code == "envelope.decrypt_failed"


def test_resigned_tampered_ciphertext_fails_to_open(sealed_move):
    # an insider with the HMAC key but not the AEAD key cannot forge a payload
    payload = dict(sealed_move.payload)
    payload["ciphertext"] = "A" + payload["ciphertext"][1:]
    forged = sign_envelope(sealed_move.replace(payload=payload), KEY)
    with pytest.raises(EnvelopeError) as info:
        open_envelope(forged, AEAD_KEY)
    assert info.value.code == "envelope.decrypt_failed"


def test_dropping_encrypt_flag_leaves_a_payload_without_action(clock, sealed_move):
    raw = sealed_move.to_dict()
    del raw["encrypt"]
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY).accept(raw)
    assert info.value.code == "envelope.type_mismatch"


def test_sealed_envelope_without_session_key_cannot_be_read(clock, sealed_move):
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=FakeClock(clock.now)).accept(sealed_move.to_bytes())
    assert info.value.code == "envelope.decrypt_failed"


def test_envelope_roundtrip_keeps_identity(signed_move):
    assert Envelope.parse(signed_move.to_bytes()) == signed_move
