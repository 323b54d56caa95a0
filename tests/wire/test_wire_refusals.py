"""The wire's refusals of input a peer or a caller controls: sealed payloads that are not
what they claim, frame keys and nonces of the wrong size, frames that come twice or leave
too long a gap, timestamps in every RFC 3339 spelling and none, endpoint escapes."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta, timezone

import pytest
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from wirehelpers import AEAD_KEY

from lingxi.canonical import canonical_bytes
from lingxi.wire import EnvelopeError, TransportError
from lingxi.wire.aead import aead_cipher, open_envelope, seal_envelope
from lingxi.wire.agent_fields import endpoint_url_problem
from lingxi.wire.frames import FrameOpener, FrameSealer
from lingxi.wire.timefmt import parse_rfc3339

MOVE = {"action": "move", "x": 1}


def sealed(builder):
    return builder.build(MOVE, encrypt=True)


def test_a_sealed_envelope_opens_with_its_key(builder) -> None:
    env = sealed(builder)
    assert env.encrypt and open_envelope(env, AEAD_KEY).payload == MOVE


@pytest.mark.parametrize("nonce,ciphertext,why", [
    ("zz" * 12, "AAAA", "not valid hex/base64"),
    ("00" * 12, "not base64!", "not valid hex/base64"),
    ("00" * 11, "AAAA", "nonce must be 12 bytes"),
])
def test_a_sealed_payload_of_the_wrong_encoding_is_refused(builder, nonce, ciphertext,
                                                           why) -> None:
    env = sealed(builder)
    forged = env.replace(payload={**env.payload, "nonce": nonce, "ciphertext": ciphertext})
    with pytest.raises(EnvelopeError) as info:
        open_envelope(forged, AEAD_KEY)
    assert info.value.code == "envelope.decrypt_failed" and why in info.value.message


def test_a_sealed_payload_that_opens_to_a_list_is_refused(builder) -> None:
    """Someone holding the key seals a JSON array: it opens, but it is not a payload."""
    env = sealed(builder)
    nonce = bytes(12)
    data = ChaCha20Poly1305(AEAD_KEY).encrypt(nonce, b"[1, 2]",
                                              canonical_bytes(env.header_dict()))
    forged = env.replace(payload={**env.payload, "nonce": nonce.hex(),
                                  "ciphertext": base64.b64encode(data).decode()})
    with pytest.raises(EnvelopeError) as info:
        open_envelope(forged, AEAD_KEY)
    assert "not an object" in info.value.message


def test_keys_and_nonces_of_the_wrong_size_are_refused(builder) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        aead_cipher(b"k" * 31)
    with pytest.raises(ValueError, match="32 bytes"):
        FrameSealer(b"k" * 16)
    with pytest.raises(ValueError, match="12 bytes"):
        seal_envelope(sealed(builder), AEAD_KEY, nonce_factory=lambda n: b"n" * (n - 1))


def test_a_held_frame_that_comes_twice_is_a_duplicate() -> None:
    sealer, opener = FrameSealer(b"f" * 32), FrameOpener(b"f" * 32)
    frames = [sealer.seal(bytes([i])) for i in range(3)]
    assert opener.open(frames[1]) is None and opener.holding  # frame 0 not here yet
    with pytest.raises(TransportError) as info:
        opener.open(frames[1])
    assert info.value.code == "transport.frame_duplicated"


def test_a_gap_longer_than_the_frames_held_is_a_loss() -> None:
    sealer, opener = FrameSealer(b"f" * 32), FrameOpener(b"f" * 32, max_held=2)
    frames = [sealer.seal(bytes([i])) for i in range(4)]
    opener.open(frames[1])
    opener.open(frames[2])
    with pytest.raises(TransportError) as info:
        opener.open(frames[3])  # frame 0 never came and a third frame waits behind it
    assert info.value.code.startswith("transport.frame_")


@pytest.mark.parametrize("text,offset", [
    ("2026-12-02T10:00:00+05:30", timedelta(hours=5, minutes=30)),
    ("2026-12-02t10:00:00-01:15", -timedelta(hours=1, minutes=15)),
    ("2026-12-02T10:00:00.000000009-00:00", timedelta(0)),  # nanoseconds: to microseconds
])
def test_every_offset_spelling_gives_the_same_instant(text, offset) -> None:
    expected = datetime(2026, 12, 2, 10, tzinfo=timezone(offset)).timestamp()
    assert parse_rfc3339(text) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("text", [12345, None, "2026-12-02T10:00:00+24:00",
                                  "2026-12-02T10:00:00", "2026-02-30T10:00:00Z"])
def test_a_timestamp_that_is_not_rfc3339_is_refused(text) -> None:
    with pytest.raises(EnvelopeError) as info:
        parse_rfc3339(text)
    assert info.value.code == "envelope.bad_timestamp"


def test_the_whole_second_cache_stays_bounded_and_right() -> None:
    """Many distinct seconds (a long session) fill the cache; answers stay exact after it
    is emptied."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(5000):
        moment = start + timedelta(seconds=n, microseconds=250)
        text = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert parse_rfc3339(text) == pytest.approx(moment.timestamp(), abs=1e-6)


@pytest.mark.parametrize("url,problem", [
    ("https://agent.example/cb%2", "%XX escape"),
    ("https://agent.example/cb%zz", "%XX escape"),
    ("https://agent.example/cb%2F", None),
    ("not a url", "scheme://"),
])
def test_endpoint_escapes_must_be_complete(url, problem) -> None:
    found = endpoint_url_problem(url)
    assert (found is None) if problem is None else (problem in found)


def test_a_pem_key_of_another_algorithm_is_not_an_identity(tmp_path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    from lingxi.wire import IdentityError
    from lingxi.wire.identity import KEY_FILE, Identity

    pem = X25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    (tmp_path / KEY_FILE).write_bytes(pem)
    (tmp_path / KEY_FILE).chmod(0o600)
    with pytest.raises(IdentityError) as info:
        Identity.load(tmp_path)
    assert info.value.code == "identity.corrupt" and "not an Ed25519 key" in info.value.message


@pytest.mark.parametrize("info", ["{not json", "[1, 2]", '{"created": 7}'])
def test_a_damaged_identity_info_file_leaves_the_key_usable(tmp_path, info) -> None:
    from lingxi.wire.identity import INFO_FILE, Identity

    made, created = Identity.load_or_create(tmp_path)
    assert created
    (tmp_path / INFO_FILE).write_text(info)
    loaded = Identity.load(tmp_path)
    assert loaded.public_hex == made.public_hex and loaded.created is None


_ANSWER = {"servers": ["nats://127.0.0.1:4222"], "jwt": "eyJ0", "role": "guest",
           "session_id": "s-1", "send_subject": "a", "receive_subject": "b",
           "expires_at": 1e12, "max_payload": 65536}


@pytest.mark.parametrize("change,why", [
    ({"jwt": None, "servers": None}, "malformed"),
    ({"expires_at": "soon"}, "malformed"),
    ({"servers": []}, "no nats:// server"),
    ({"servers": ["http://127.0.0.1:4222"]}, "no nats:// server"),
    ({"role": "admin"}, "no known role"),
])
def test_a_relay_credential_the_registry_got_wrong_is_refused(change, why) -> None:
    """A registry is data: a malformed credential answer is one coded refusal."""
    from lingxi.natsauth import NKey
    from lingxi.wire.relay_link import RelayCredential

    answer = {k: v for k, v in {**_ANSWER, **change}.items() if v is not None}
    with pytest.raises(TransportError) as info:
        RelayCredential.from_answer(answer, NKey.generate("user"))
    assert info.value.code == "transport.relay_refused" and why in info.value.message


def test_a_well_formed_relay_credential_is_taken() -> None:
    from lingxi.natsauth import NKey
    from lingxi.wire.relay_link import RelayCredential

    credential = RelayCredential.from_answer(_ANSWER, NKey.generate("user"))
    assert credential.role == "guest" and credential.servers == ("nats://127.0.0.1:4222",)
