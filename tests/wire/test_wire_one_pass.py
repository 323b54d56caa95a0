"""A sealed session's one-pass send and receive (issue 22.3) agree with the general code.

The usual envelope of a sealed session is built by ``build_sealed_opened`` and,
once the peer's form is learnt, checked by the pipeline in one pass. Each must
give what the general path gives, byte for byte, and the one-pass check must
decline (leaving nothing behind) whatever the general path would refuse, so that
the general path names it. The keyed HMAC of both is RFC 2104 over two copied
hash states; it must equal :func:`hmac.new`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac

import pytest
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from hypothesis import example, given, settings
from hypothesis import strategies as st
from wirehelpers import (
    AEAD_KEY,
    ENDPOINTS,
    GUEST,
    HOST,
    KEY,
    PAYLOADS,
    TEXTS,
    FakeClock,
    counting_ids,
    counting_nonces,
    handshake_pair,
)

from lingxi.canonical import canonical_bytes as reference_canonical
from lingxi.wire import EnvelopeBuilder, ReceivePipeline
from lingxi.wire.codec import DigestGuard, SessionCodec
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.signature import KeyedHmac, keyed_hmac
from lingxi.wire.transport import memory_pair

# ---- the keyed HMAC ----------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@example(key=b"k" * 64, message=b"m", digest="sha256")   # exactly one block
@example(key=b"k" * 65, message=b"m", digest="sha256")   # longer than a block: hashed first
@example(key=b"k" * 129, message=b"", digest="sha512")
@given(key=st.binary(max_size=300), message=st.binary(max_size=400),
       digest=st.sampled_from(["sha256", "sha512"]))
def test_the_keyed_hmac_is_hmac_for_keys_of_every_length(key, message, digest):
    mac = KeyedHmac(key, digest)
    assert mac.hexdigest(message) == hmac.new(key, message, digest).hexdigest()
    assert mac.hexdigest(message + b"!") == hmac.new(key, message + b"!", digest).hexdigest()


def test_keyed_hmac_refuses_what_it_always_refused():
    assert keyed_hmac("text key", "HMAC-SHA512").hexdigest(b"m") == \
        hmac.new(b"text key", b"m", hashlib.sha512).hexdigest()
    with pytest.raises(EnvelopeError) as info:
        keyed_hmac(KEY, "HMAC-MD5")
    assert info.value.code == "envelope.unknown_algorithm"
    with pytest.raises(ValueError):
        keyed_hmac(b"")


# ---- sending ---------------------------------------------------------------------------

def _twins(sender, receiver, conversation_id, group_id, algorithm, instant):
    """Two builders that draw the same ids and nonces."""
    return [EnvelopeBuilder(sender, receiver, KEY, clock=lambda: instant,
                            id_factory=counting_ids(), conversation_id=conversation_id,
                            group_id=group_id, algorithm=algorithm, aead_key=AEAD_KEY,
                            nonce_factory=counting_nonces()) for _ in range(2)]


@settings(max_examples=120, deadline=None)
@given(sender=ENDPOINTS, receiver=st.none() | ENDPOINTS, conversation_id=st.none() | TEXTS,
       group_id=st.none() | TEXTS, algorithm=st.sampled_from(["HMAC-SHA256", "HMAC-SHA512"]),
       reply_to=st.none() | TEXTS, kind=st.none() | TEXTS, payload=PAYLOADS,
       action=TEXTS, instant=st.floats(0, 4e9))
def test_the_one_pass_build_is_the_opened_twin_of_build_sealed(
        sender, receiver, conversation_id, group_id, algorithm, reply_to, kind, payload,
        action, instant):
    one_pass, general = _twins(sender, receiver, conversation_id, group_id, algorithm, instant)
    body = {**payload, "action": action}
    for _ in range(2):  # the second time from the cached template
        got = one_pass.build_sealed_opened(dict(body), type=kind, reply_to=reply_to)
        sealed, opened = general.build_sealed(dict(body), type=kind, reply_to=reply_to)
        assert got.to_dict() == opened.to_dict()
        assert got.wire == opened.wire == sealed.to_bytes()
        assert got.wire == reference_canonical(sealed.to_dict())
        assert got.payload_json() == reference_canonical(body)


def test_the_one_pass_build_refuses_what_build_sealed_refuses():
    one_pass, general = _twins(GUEST, HOST, "c-1", None, "HMAC-SHA256", 1e9)
    for build in (one_pass.build_sealed_opened, lambda p: general.build_sealed(p)[1]):
        with pytest.raises(ValueError, match="action"):
            build({"action": 7})
        with pytest.raises(EnvelopeError) as info:
            build({"action": "x", "n": float("nan")})
        assert info.value.code == "envelope.malformed"
    short = EnvelopeBuilder(GUEST, HOST, KEY, clock=lambda: 1e9, aead_key=AEAD_KEY,
                            nonce_factory=lambda size: b"\0" * (size - 1))
    with pytest.raises(ValueError, match="12 bytes"):
        short.build_sealed_opened({"action": "x"})
    keyless = EnvelopeBuilder(GUEST, HOST, KEY, clock=lambda: 1e9)
    with pytest.raises(ValueError, match="aead_key"):
        keyless.build_sealed_opened({"action": "x"})


def test_a_reassigned_aead_key_seals_with_the_new_key():
    clock = FakeClock()
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, aead_key=AEAD_KEY)
    builder.build_sealed_opened({"action": "warm"})
    builder.aead_key = bytes(32)
    env = builder.build_sealed_opened({"action": "x"})
    assert ReceivePipeline(KEY, clock=clock, aead_key=bytes(32)).accept(env.wire).payload == \
        {"action": "x"}
    with pytest.raises(EnvelopeError) as info:
        ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY).accept(env.wire)
    assert info.value.code == "envelope.decrypt_failed"


async def _session_keys():
    a, b = memory_pair()
    return await handshake_pair(a, b, FakeClock())


def _codec(keys, clock):
    return SessionCodec(keys, clock=clock, id_factory=counting_ids(),
                        nonce_factory=counting_nonces())


def test_a_sealed_codec_builds_in_one_pass_what_the_general_steps_build():
    guest_keys, host_keys = asyncio.run(_session_keys())
    clock = FakeClock()
    one_pass, general, host = _codec(guest_keys, clock), _codec(guest_keys, clock), \
        _codec(host_keys, clock)
    for options in ({}, {"reply_to": "r-1"}, {"type": "p2p:move"}, {"correlation_id": "c"},
                    {"ttl": 30}, {"encrypt": True}):
        env, frame = one_pass.build({"action": "move", "n": 1}, **options)
        general_env, data = general.envelope({"action": "move", "n": 1}, **options)
        assert env.to_dict() == general_env.to_dict() and env.wire == data
        assert frame == general.frame_for(data)
        got = host.accept(host.open_frame(frame))
        assert got.to_dict() == env.to_dict() and got.wire == env.wire
    with pytest.raises(ValueError, match="sealed"):
        one_pass.build({"action": "move"}, encrypt=False)


# ---- receiving -------------------------------------------------------------------------

def _learnt(clock, **pipeline_options):
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, conversation_id="c-1",
                              aead_key=AEAD_KEY, id_factory=counting_ids(),
                              nonce_factory=counting_nonces())
    options = {"expect_sender": GUEST, "expect_receiver": HOST,
               "expect_conversation_id": "c-1", **pipeline_options}
    pipeline = ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY, **options)
    pipeline.accept(builder.build_sealed_opened({"action": "warm"}).wire)
    assert pipeline._shape is not None
    return builder, pipeline


def test_the_one_pass_check_takes_the_usual_envelope():
    clock = FakeClock()
    builder, pipeline = _learnt(clock)
    for reply_to in (None, "r-1"):
        sent = builder.build_sealed_opened({"action": "move", "n": 2}, reply_to=reply_to)
        got = pipeline._accept_learnt(pipeline._shape, sent.wire, "p2p")
        assert got is not None
        assert got.to_dict() == sent.to_dict() and got.wire == sent.wire
        assert got.sender is GUEST and got.receiver is HOST
        assert got.instant == sent.instant and got.payload_json() == sent.payload_json()
        assert sent.signature in pipeline.guard


def _declined(pipeline, data, code, expect_prefix="p2p"):
    """The one-pass check declines ``data`` and keeps nothing; accept raises ``code``."""
    before = len(pipeline.guard)
    assert pipeline._accept_learnt(pipeline._shape, data, expect_prefix) is None
    assert len(pipeline.guard) == before
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(data, expect_prefix=expect_prefix)
    assert info.value.code == code


def test_the_one_pass_check_declines_each_bad_envelope_and_the_general_path_names_it():
    clock = FakeClock()
    builder, pipeline = _learnt(clock)
    sent = builder.build_sealed_opened({"action": "move"}, reply_to="r-1")
    data = sent.wire
    ciphertext = data.split(b'"ciphertext":"')[1].split(b'"')[0]
    flipped = (b"A" if ciphertext[:1] != b"A" else b"B") + ciphertext[1:]
    _declined(pipeline, data.replace(ciphertext, flipped), "envelope.bad_signature")
    _declined(pipeline, data.replace(sent.signature.encode(), b"0" * 64),
              "envelope.bad_signature")
    _declined(pipeline, data.replace(b'"r-1"', b'"r-2"'), "envelope.decrypt_failed")
    _declined(pipeline, data.replace(b'"p2p:move"', b'"p2p:evom"'), "envelope.decrypt_failed")
    _declined(pipeline, data, "envelope.type_mismatch", expect_prefix="caller")
    other = builder.build_sealed_opened({"action": "move"}).wire
    assert pipeline._accept_learnt(pipeline._shape, other, None) is None  # no prefix asked:
    assert pipeline.accept(other, expect_prefix=None).payload == {"action": "move"}  # general
    pipeline.accept(data)
    with pytest.raises(EnvelopeError) as info:  # the guard is the one-pass check's own last step
        pipeline._accept_learnt(pipeline._shape, data, "p2p")
    assert info.value.code == "envelope.replay"
    clock.now += 1000
    late = builder.build_sealed_opened({"action": "x"}).wire
    clock.now -= 1000
    _declined(pipeline, late, "envelope.stale")


def test_a_full_guard_refuses_in_the_one_pass_check_as_in_the_general_path():
    clock = FakeClock()
    builder, pipeline = _learnt(clock, replay_capacity=1)
    data = builder.build_sealed_opened({"action": "move"}).wire
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(data)
    assert info.value.code == "envelope.replay_capacity"
    clock.now += 200  # the warm-up envelope left the window: room again
    assert pipeline.accept(builder.build_sealed_opened({"action": "move"}).wire).payload == \
        {"action": "move"}


def _signed_sealed(builder, plaintext: bytes, action: str) -> bytes:
    """A sealed envelope whose plaintext is ``plaintext`` exactly, sealed and signed with
    the session's own keys (an authentic envelope: only the payload inside is wrong)."""
    template = builder.build_sealed_opened({"action": action})
    header = {k: v for k, v in template.to_dict().items()
              if k not in ("payload", "signature", "signature_algorithm")}
    nonce = bytes(12)
    ciphertext = ChaCha20Poly1305(AEAD_KEY).encrypt(nonce, plaintext,
                                                    reference_canonical(header))
    payload = {"alg": "ChaCha20-Poly1305", "ciphertext": base64.b64encode(ciphertext).decode(),
               "nonce": nonce.hex()}
    content = (f"{GUEST.agent_id}|{HOST.agent_id}|{template.timestamp}|".encode()
               + reference_canonical(payload))
    return reference_canonical({**header, "payload": payload,
                                "signature_algorithm": "HMAC-SHA256",
                                "signature": hmac.new(KEY, content, hashlib.sha256).hexdigest()})


@pytest.mark.parametrize(("plaintext", "code"), [
    (b'{"action":"x","action":"y"}', "envelope.decrypt_failed"),  # a repeated key
    (b'["action"]', "envelope.decrypt_failed"),                   # not an object
    (b"\xff\xfe", "envelope.decrypt_failed"),                     # not UTF-8
    (b'{"action":7}', "envelope.type_mismatch"),                  # action not a string
    (b'{"act":"x"}', "envelope.type_mismatch"),                   # no action
])
def test_a_bad_plaintext_inside_an_authentic_envelope_is_named_by_the_general_path(
        plaintext, code):
    clock = FakeClock()
    builder, pipeline = _learnt(clock)
    data = _signed_sealed(builder, plaintext, "x")
    assert pipeline._shape.fullmatch(data) is not None  # the learnt form reads it
    _declined(pipeline, data, code)


def test_changed_standing_expectations_send_envelopes_to_the_general_path():
    clock = FakeClock()
    builder, pipeline = _learnt(clock)

    def fresh() -> bytes:  # the general path remembers a signature before it checks the ends
        return builder.build_sealed_opened({"action": "move"}).wire

    pipeline.expect_sender = HOST
    _declined(pipeline, fresh(), "envelope.bad_sender")
    pipeline.expect_sender = GUEST
    pipeline.expect_receiver = GUEST
    _declined(pipeline, fresh(), "envelope.bad_receiver")
    pipeline.expect_receiver = HOST
    pipeline.expect_conversation_id = "c-2"
    _declined(pipeline, fresh(), "envelope.bad_conversation")
    pipeline.expect_conversation_id = "c-1"
    pipeline.aead_key = bytes(32)
    _declined(pipeline, fresh(), "envelope.decrypt_failed")
    pipeline.aead_key = None
    _declined(pipeline, fresh(), "envelope.decrypt_failed")
    pipeline.aead_key = AEAD_KEY
    assert pipeline._accept_learnt(pipeline._shape, fresh(), "p2p") is not None


def test_pipelines_the_one_pass_check_does_not_cover_still_accept():
    clock = FakeClock()
    for options in ({"expect_sender": GUEST.agent_id}, {"expect_receiver": None}):
        builder, pipeline = _learnt(clock, **options)
        data = builder.build_sealed_opened({"action": "move"}).wire
        assert pipeline.accept(data).payload == {"action": "move"}
    keyed_by_sender = ReceivePipeline(lambda agent: KEY, clock=clock, aead_key=AEAD_KEY)
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, conversation_id="c-1",
                              aead_key=AEAD_KEY)
    for action in ("one", "two"):
        got = keyed_by_sender.accept(builder.build_sealed_opened({"action": action}).wire)
        assert got.payload == {"action": action}
    assert keyed_by_sender._shape is not None and keyed_by_sender._shape_mac is None
    # asked expectations and check_clock=False take the general path too
    builder, pipeline = _learnt(clock)
    sent = [builder.build_sealed_opened({"action": "move"}, reply_to="r-1") for _ in range(3)]
    with pytest.raises(EnvelopeError) as info:
        pipeline.accept(sent[0].wire, expect_reply_to="r-2")
    assert info.value.code == "envelope.bad_reply_to"
    assert pipeline.accept(sent[1].wire, expect_reply_to="r-1").id == sent[1].id
    assert pipeline.accept(sent[2].wire, check_clock=False).payload == {"action": "move"}
    assert pipeline.accept(sent[2].wire, check_clock=False).id == sent[2].id  # no guard asked


def test_the_digest_guard_keeps_128_bits_of_each_signature():
    guard = DigestGuard(8)
    signature = "ab" * 32
    guard.check_and_remember(signature, 10.0, 0.0)
    assert signature in guard and "ab" * 16 + "cd" * 16 in guard  # its first 128 bits
    assert "cd" * 32 not in guard and 7 not in guard
    for other in ("not hex at all, but long enough to slice", "ab", "ab " * 16 + "x"):
        guard.check_and_remember(other, 10.0, 0.0)  # any other key: its BLAKE2b digest
        assert other in guard
    assert "ab " * 16 + "y" not in guard and len(guard) == 4
    with pytest.raises(EnvelopeError) as info:
        guard.check_and_remember(signature, 10.0, 1.0)
    assert info.value.code == "envelope.replay"
    guard.check_and_remember("ef" * 32, 20.0, 11.0)  # the first four left the window
    assert len(guard) == 1 and signature not in guard


# ---- ids and nonces drawn in blocks ----------------------------------------------------

def test_nonces_are_drawn_in_blocks_and_never_repeat():
    from lingxi.wire.builder import _NONCE_POOL, random_nonce

    drawn = [random_nonce(12) for _ in range(1000)]  # several blocks of 256
    assert all(len(nonce) == 12 for nonce in drawn) and len(set(drawn)) == len(drawn)
    assert len(random_nonce(7)) == 7 and len(random_nonce(32)) == 32  # other sizes: as asked
    _NONCE_POOL.clear()
    assert len(random_nonce(12)) == 12 and len(_NONCE_POOL) == 256  # refilled when empty
    assert EnvelopeBuilder(GUEST, HOST, KEY, clock=lambda: 0.0).nonce_factory is random_nonce


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_draws_ids_and_nonces_of_its_own():
    import os

    from lingxi.wire.builder import random_id, random_nonce

    random_id(), random_nonce(12)  # both pools filled in the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: what it draws next goes back to the parent
        try:
            os.write(write, (random_id() + random_nonce(12).hex()).encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 200).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert child[:36] != random_id() and child[36:] != random_nonce(12).hex()
