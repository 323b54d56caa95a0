"""The shared signature vectors: content, verification, re-signing, round trip."""

from __future__ import annotations

import copy

import pytest

from lingxi.wire import (
    Envelope,
    EnvelopeError,
    ReceivePipeline,
    compute_signature,
    sign_envelope,
    signature_content,
    verify_signature,
)


def test_every_vector_has_the_documented_signature_content(signature_cases):
    for case in signature_cases:
        env = Envelope.from_dict(case["envelope"])
        assert signature_content(env).decode("utf-8") == case["signature_content"], case["name"]


def test_every_vector_verifies_with_its_key(signature_cases):
    for case in signature_cases:
        env = Envelope.from_dict(case["envelope"])
        verify_signature(env, case["key_utf8"].encode("utf-8"))


def test_resigning_a_vector_reproduces_its_signature(signature_cases):
    for case in signature_cases:
        raw = copy.deepcopy(case["envelope"])
        algorithm = raw["signature_algorithm"]
        unsigned = Envelope.from_dict({k: v for k, v in raw.items() if k != "signature"})
        signed = sign_envelope(unsigned, case["key_utf8"], algorithm)
        assert signed.signature == raw["signature"]


def test_vectors_round_trip_through_to_dict_and_bytes(signature_cases):
    for case in signature_cases:
        env = Envelope.from_dict(case["envelope"])
        assert env.to_dict() == case["envelope"]
        assert Envelope.parse(env.to_bytes()) == env


def test_vectors_fail_with_another_key(signature_cases):
    for case in signature_cases:
        env = Envelope.from_dict(case["envelope"])
        with pytest.raises(EnvelopeError) as info:
            verify_signature(env, b"not-the-key")
        assert info.value.code == "envelope.bad_signature"


def test_vectors_pass_the_full_pipeline_at_their_own_time(signature_cases):
    for case in signature_cases:
        env = Envelope.from_dict(case["envelope"])
        pipeline = ReceivePipeline(case["key_utf8"].encode(), clock=lambda e=env: e.instant + 1)
        accepted = pipeline.accept(case["envelope"], expect_prefix=env.prefix)
        assert accepted.payload == case["envelope"]["payload"]


def test_sha512_signature_is_128_hex(signature_cases):
    case = signature_cases[1]
    env = Envelope.from_dict(case["envelope"])
    assert len(compute_signature(env, case["key_utf8"], "HMAC-SHA512")) == 128


def test_the_fast_codec_agrees_with_lingxi_canonical(signature_cases):
    from lingxi.canonical import canonical_bytes as reference
    from lingxi.wire.envelope import canonical_bytes as fast
    for case in signature_cases:
        assert fast(case["envelope"]) == reference(case["envelope"])
    odd = {"z": [1.5, -0.0, 10**30, None, True], "é": {"\u2028": "\x00"}, "a": ""}
    assert fast(odd) == reference(odd)


def test_to_bytes_is_the_canonical_json_of_to_dict(signature_cases):
    from lingxi.canonical import canonical_bytes
    for case in signature_cases:
        env = Envelope.from_dict(case["envelope"])
        assert env.to_bytes() == canonical_bytes(env.to_dict())
    full = Envelope.from_dict({**signature_cases[0]["envelope"], "reply_to": "r\u2028\"é",
                               "group_id": "g", "broadcast": False, "encrypt": False, "ttl": 0,
                               "correlation_id": "c\\x"})
    assert full.to_bytes() == canonical_bytes(full.to_dict())


def test_every_documented_code_is_listed_and_every_listed_code_documented():
    import re
    from pathlib import Path

    from lingxi.wire import errors
    listed = set(errors.ENVELOPE_CODES + errors.TRANSPORT_CODES + errors.HANDSHAKE_CODES
                 + errors.IDENTITY_CODES)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "wire.md").read_text(encoding="utf-8")
    table = doc[doc.index("## Error codes"):]
    documented = set(re.findall(r"`((?:envelope|transport|handshake|identity)\.[a-z_]+)`", table))
    documented |= {f"envelope.{name}" for name in re.findall(r"/ `([a-z_]+)`", table)}
    assert listed <= documented, listed - documented
    assert documented <= listed, documented - listed
