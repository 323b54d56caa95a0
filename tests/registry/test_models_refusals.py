"""Refusal paths of the registry's pure models: relay credentials, signed checkpoints and
cosignatures. Each case is what a verifier relies on when a registry, a witness or a peer
hands it something forged, truncated or meant for somebody else."""

from __future__ import annotations

import base64
import struct

import pytest

from lingxi.natsauth import NatsAuthError, NKey, decode_jwt
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.checkpoint import (
    DASH,
    MAX_NOTE,
    CheckpointError,
    Note,
    checkpoint_text,
    cosign,
    cosignatures,
    key_id,
    merge_signatures,
    open_checkpoint,
    parse_checkpoint,
    parse_note,
    sign_checkpoint,
)
from lingxi.registry.models.keyrecord import key_record, key_record_problems
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.merkle import leaf_hash, node_hash
from lingxi.registry.models.relay import (
    DEFAULT_TTL,
    FRAME_CAP,
    MAX_TTL,
    RELAY_OVERHEAD,
    RelayKeys,
    probe_credential,
    server_config,
    session_subject,
)
from lingxi.registry.models.witness import Fork, Witness, consistent, require_cosignatures

NOW = 1_700_000_000
ROOT = bytes(range(32))
ORIGIN = "registry.example/log"


# --- relay credentials -------------------------------------------------------------------


@pytest.fixture(scope="module")
def relay() -> RelayKeys:
    return RelayKeys.generate()


def test_a_credential_allows_only_its_own_session_and_direction(relay):
    user = NKey.generate("user")
    cred = relay.credential(user_key=user.public, role="guest", session_id="s1", now=NOW)
    claims = decode_jwt(cred["jwt"], issuer=relay.account.public)
    assert claims["sub"] == user.public
    assert claims["nats"]["pub"]["allow"] == ["lingxi.relay.s1.guest"]
    assert claims["nats"]["sub"]["allow"] == ["lingxi.relay.s1.host"]
    assert claims["exp"] == NOW + DEFAULT_TTL == cred["expires_at"]
    assert claims["nats"]["payload"] == FRAME_CAP + RELAY_OVERHEAD == cred["max_payload"]
    other = relay.credential(user_key=user.public, role="guest", session_id="s2", now=NOW)
    assert decode_jwt(other["jwt"])["nats"]["pub"]["allow"] != claims["nats"]["pub"]["allow"]


@pytest.mark.parametrize(("ttl", "lives"), [(10**9, MAX_TTL), (1, 30), (-5, 30)])
def test_a_credential_lifetime_is_clamped(relay, ttl, lives):
    cred = relay.credential(user_key=NKey.generate("user").public, role="host",
                            session_id="s1", now=NOW, ttl=ttl)
    assert decode_jwt(cred["jwt"])["exp"] == NOW + lives == cred["expires_at"]


def test_a_credential_signed_by_another_account_is_not_this_registrys(relay):
    forger = RelayKeys.generate()
    cred = forger.credential(user_key=NKey.generate("user").public, role="host",
                             session_id="s1", now=NOW)
    with pytest.raises(NatsAuthError):
        decode_jwt(cred["jwt"], issuer=relay.account.public)


def test_a_credential_with_an_edited_claim_does_not_verify(relay):
    cred = relay.credential(user_key=NKey.generate("user").public, role="host",
                            session_id="s1", now=NOW)
    head, body, sig = cred["jwt"].split(".")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    edited = raw.replace(b"lingxi.relay.s1.host", b"lingxi.relay.s9.host")
    assert edited != raw
    forged = base64.urlsafe_b64encode(edited).rstrip(b"=").decode()
    with pytest.raises(NatsAuthError):
        decode_jwt(f"{head}.{forged}.{sig}", issuer=relay.account.public)


@pytest.mark.parametrize("key", ["not-a-key", "account", "operator"])
def test_a_credential_is_only_for_a_public_user_key(relay, key):
    user_key = {"account": NKey.generate("account").public,
                "operator": NKey.generate("operator").public}.get(key, key)
    with pytest.raises(ValueError):
        relay.credential(user_key=user_key, role="host", session_id="s1", now=NOW)


@pytest.mark.parametrize("session_id", ["", "a.b", "a*", "a>", "a b", "a\nb"])
def test_a_session_id_that_would_widen_the_subject_is_refused(session_id):
    with pytest.raises(ValueError):
        session_subject(session_id, "host")


def test_a_sender_is_host_or_guest():
    with pytest.raises(ValueError):
        session_subject("s1", "witness")


def test_relay_seeds_round_trip_and_wrong_roles_are_refused(relay):
    again = RelayKeys.from_seeds(relay.to_seeds())
    assert again.account.public == relay.account.public
    assert again.operator.public == relay.operator.public
    swapped = {**relay.to_seeds(), "operator": relay.account.seed}
    with pytest.raises(ValueError):
        RelayKeys.from_seeds(swapped)


def test_a_probe_credential_reaches_only_its_own_subject_for_a_minute(relay):
    user = NKey.generate("user")
    cred = probe_credential(relay, user_key=user.public, agent_id="lx-ab12", nonce="n0",
                            now=NOW)
    claims = decode_jwt(cred["jwt"], issuer=relay.account.public)
    assert claims["nats"]["pub"]["allow"] == ["lingxi.probe.lx-ab12.n0"]
    assert claims["nats"]["sub"]["allow"] == ["lingxi.probe.lx-ab12.n0"]
    assert claims["exp"] == NOW + 60 and claims["nats"]["subs"] == 1


@pytest.mark.parametrize(("agent_id", "nonce"), [("lx.*", "n0"), ("lx-a", "n>"), ("lx-a", "")])
def test_a_probe_subject_with_wildcards_is_refused(relay, agent_id, nonce):
    with pytest.raises(ValueError):
        probe_credential(relay, user_key=NKey.generate("user").public, agent_id=agent_id,
                         nonce=nonce, now=NOW)


def test_the_server_config_carries_the_trust_and_the_cluster(relay):
    trust = relay.trust(NOW)
    text = server_config(trust, listen="127.0.0.1:4222", monitor="127.0.0.1:8222",
                         cluster_listen="127.0.0.1:6222", routes=("nats://a:6222",),
                         cluster_name="lx")
    assert "listen: 127.0.0.1:4222\n" in text and "http: 127.0.0.1:8222\n" in text
    assert f"operator: {trust['operator_jwt']}\n" in text
    for account, token in trust["accounts"].items():
        assert f"  {account}: {token}\n" in text
    assert "cluster {\n  name: lx\n  listen: 127.0.0.1:6222\n  routes: [nats://a:6222]\n}\n" \
        in text
    fragment = server_config(trust)
    assert "listen:" not in fragment and "cluster {" not in fragment
    limits = decode_jwt(trust["accounts"][relay.account.public],
                        issuer=relay.operator.public)["nats"]["limits"]
    assert limits["wildcards"] is False


# --- signed notes and checkpoints ---------------------------------------------------------


@pytest.fixture(scope="module")
def log_key() -> ServerKey:
    return ServerKey.generate()


def _note(key: ServerKey, size: int = 1, root: bytes = ROOT, origin: str = ORIGIN) -> str:
    return sign_checkpoint(key, origin, size, root, NOW)


def test_a_signed_checkpoint_opens_with_its_key(log_key):
    point = open_checkpoint(_note(log_key, 3), log_key.public_hex, origin=ORIGIN)
    assert (point.origin, point.size, point.root, point.time) == (ORIGIN, 3, ROOT, NOW)
    assert point.to_dict() == {"origin": ORIGIN, "size": 3, "root": ROOT.hex(), "time": NOW}


def _sig_line(raw: bytes, name: str = ORIGIN) -> str:
    return f"{DASH} {name} {base64.b64encode(raw).decode()}\n"


@pytest.mark.parametrize("note", [
    "no blank line\n",
    12,
    "x" * (MAX_NOTE + 1) + "\n\n",
    f"{ORIGIN}\n1\n\n{DASH} {ORIGIN} AAAAAAAA",              # no final newline
    f"{ORIGIN}\n1\n\n- {ORIGIN} AAAAAAAA\n",                 # a hyphen, not an em dash
    f"{ORIGIN}\n1\n\n{DASH} two words AAAAAAAA\n",
    f"{ORIGIN}\n1\n\n{DASH} {ORIGIN} not*base64\n",
    f"{ORIGIN}\n1\n\n{DASH} {ORIGIN} AAAA\n",                # 3 bytes: no room for a key id
    f"{ORIGIN}\n1\n\n\n",                                   # no signature lines
])
def test_a_malformed_signed_note_is_refused(note):
    with pytest.raises(CheckpointError) as caught:
        parse_note(note)
    assert caught.value.code == "registry.checkpoint_invalid"


@pytest.mark.parametrize("text", [
    f"{ORIGIN}\n1\n",                                        # too few lines
    f"\n1\n{base64.b64encode(ROOT).decode()}\nlingxi-time 1\n",   # no origin
    f"{ORIGIN}\n-1\n{base64.b64encode(ROOT).decode()}\nlingxi-time 1\n",
    f"{ORIGIN}\n01\n{base64.b64encode(ROOT).decode()}\nlingxi-time 1\n",  # leading zero
    f"{ORIGIN}\n{'9' * 19}\n{base64.b64encode(ROOT).decode()}\nlingxi-time 1\n",
    f"{ORIGIN}\n1\nnot base64!\nlingxi-time 1\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT[:31]).decode()}\nlingxi-time 1\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT).decode()}\nother extension\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT).decode()}\nlingxi-time 1\nlingxi-time 2\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT).decode()}\nlingxi-time soon\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT).decode()}\nlingxi-time {'1' * 13}\n",
])
def test_a_malformed_checkpoint_is_refused(text):
    with pytest.raises(CheckpointError):
        parse_checkpoint(text)


def test_a_checkpoint_of_another_log_is_refused(log_key):
    with pytest.raises(CheckpointError, match="another log"):
        open_checkpoint(_note(log_key, origin="other.example/log"), log_key.public_hex,
                        origin=ORIGIN)


def test_a_checkpoint_signed_by_another_key_is_refused(log_key):
    with pytest.raises(CheckpointError, match="not signed by the log's key"):
        open_checkpoint(_note(ServerKey.generate()), log_key.public_hex)


def test_an_edited_checkpoint_does_not_verify(log_key):
    note = _note(log_key, size=5)
    parsed = parse_note(note)
    edited = Note(parsed.text.replace("\n5\n", "\n6\n"), parsed.signatures).render()
    assert parse_checkpoint(parse_note(edited).text).size == 6
    with pytest.raises(CheckpointError, match="not signed"):
        open_checkpoint(edited, log_key.public_hex)


def test_a_valid_signature_under_another_name_does_not_count(log_key):
    parsed = parse_note(_note(log_key))
    renamed = Note(parsed.text, [("someone.else", parsed.signatures[0][1])]).render()
    with pytest.raises(CheckpointError):
        open_checkpoint(renamed, log_key.public_hex)


def test_only_valid_cosignatures_of_named_witnesses_count(log_key):
    good, other = ServerKey.generate(), ServerKey.generate()
    note = cosign(good, "w1", _note(log_key), NOW + 5)
    note = cosign(other, "w2", note, NOW + 6)
    assert cosignatures(note, {"w1": good.public_hex, "w2": other.public_hex}) == \
        {"w1": NOW + 5, "w2": NOW + 6}
    # a witness named with the wrong key, one with a non-hex key, one never named
    assert cosignatures(note, {"w1": other.public_hex, "w2": "zz" * 32}) == {}
    # a cosignature whose signature bytes were flipped
    parsed = parse_note(note)
    name, raw = parsed.signatures[1]
    flipped = raw[:-1] + bytes([raw[-1] ^ 1])
    tampered = Note(parsed.text, [parsed.signatures[0], (name, flipped)]).render()
    assert cosignatures(tampered, {"w1": good.public_hex}) == {}
    # a cosignature whose timestamp was moved: the signature covers the time
    moved = raw[:4] + struct.pack(">Q", NOW + 999) + raw[12:]
    assert cosignatures(Note(parsed.text, [(name, moved)]).render(),
                        {"w1": good.public_hex}) == {}
    # a cosignature of the wrong length (the log's plain signature, relabelled)
    relabelled = Note(parsed.text, [("w1", parsed.signatures[0][1])]).render()
    assert cosignatures(relabelled, {"w1": good.public_hex}) == {}


def test_a_cosignature_with_a_key_id_of_the_wrong_type_does_not_count(log_key):
    witness = ServerKey.generate()
    note = cosign(witness, "w1", _note(log_key), NOW)
    parsed = parse_note(note)
    raw = parsed.signatures[1][1]
    wrong_id = key_id("w1", witness.public_hex, 0x01) + raw[4:]
    assert cosignatures(Note(parsed.text, [("w1", wrong_id)]).render(),
                        {"w1": witness.public_hex}) == {}


def test_recosigning_replaces_the_witness_line(log_key):
    witness = ServerKey.generate()
    once = cosign(witness, "w1", _note(log_key), NOW)
    twice = cosign(witness, "w1", once, NOW + 1)
    assert [n for n, _ in parse_note(twice).signatures] == [ORIGIN, "w1"]
    assert cosignatures(twice, {"w1": witness.public_hex}) == {"w1": NOW + 1}


def test_merging_notes_adds_missing_lines_once_and_refuses_other_text(log_key):
    base = _note(log_key)
    a = cosign(ServerKey.generate(), "w1", base, NOW)
    b = cosign(ServerKey.generate(), "w2", base, NOW)
    merged = merge_signatures(a, b)
    assert [n for n, _ in parse_note(merged).signatures] == [ORIGIN, "w1", "w2"]
    assert merge_signatures(merged, b) == merged
    with pytest.raises(CheckpointError, match="different checkpoints"):
        merge_signatures(a, _note(log_key, size=2))


# --- witnesses --------------------------------------------------------------------------


def _root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaf_hash(leaves[0])
    return node_hash(leaf_hash(leaves[0]), leaf_hash(leaves[1]))


def test_a_log_that_shrank_or_changed_origin_is_not_consistent(log_key):
    one = sign_checkpoint(log_key, ORIGIN, 1, _root([b"a"]), NOW)
    two = sign_checkpoint(log_key, ORIGIN, 2, _root([b"a", b"b"]), NOW)
    assert "shrank" in (consistent(two, one, [], log_key.public_hex) or "")
    elsewhere = sign_checkpoint(log_key, "other/log", 2, _root([b"a", b"b"]), NOW)
    assert "two logs" in (consistent(one, elsewhere, [], log_key.public_hex) or "")
    assert consistent(one, two, [leaf_hash(b"b")], log_key.public_hex) is None


def test_a_witness_refuses_a_fork_and_keeps_both_notes(log_key):
    witness = Witness(ServerKey.generate(), "w1")
    one = sign_checkpoint(log_key, ORIGIN, 1, _root([b"a"]), NOW)
    witness.observe(one, [], log_key=log_key.public_hex, now=NOW)
    forked = sign_checkpoint(log_key, ORIGIN, 2, _root([b"x", b"b"]), NOW)
    with pytest.raises(Fork) as caught:
        witness.observe(forked, [leaf_hash(b"b")], log_key=log_key.public_hex, now=NOW)
    assert caught.value.code == "registry.fork" and caught.value.evidence == [one, forked]
    assert witness.last(ORIGIN) == one


def test_cosignatures_required_refuse_stale_missing_and_unparseable(log_key):
    witness = ServerKey.generate()
    note = cosign(witness, "w1", _note(log_key), NOW)
    keys = {"w1": witness.public_hex}
    assert require_cosignatures(note, keys, 1, now=NOW + 10) == {"w1": NOW}
    for bad_note, now in ((note, NOW + 3601), (_note(log_key), NOW), ("garbage", NOW)):
        with pytest.raises(RegistryError) as caught:
            require_cosignatures(bad_note, keys, 1, now=now)
        assert caught.value.code == "registry.not_witnessed"


def test_checkpoint_text_is_c2sp_shaped():
    text = checkpoint_text(ORIGIN, 7, ROOT, NOW)
    assert text == f"{ORIGIN}\n7\n{base64.b64encode(ROOT).decode()}\nlingxi-time {NOW}\n"
    assert parse_checkpoint(text).text == text


# --- server key records -------------------------------------------------------------------


def test_a_key_record_without_a_key_or_proof_of_possession_is_refused():
    assert key_record_problems({"server": {"public_key": "nope"}}, previous=None) == [
        "a server_key record without a public key"]
    assert key_record_problems("not a record", previous=None) == [
        "a server_key record without a public key"]
    first = ServerKey.generate()
    record = key_record(first, None, reason="first")
    assert key_record_problems(record, previous=None) == []
    stolen = {**record, "server": {**record["server"],
                                   "proof": key_record(ServerKey.generate(), None,
                                                       reason="x")["server"]["proof"]}}
    found = key_record_problems(stolen, previous=None)
    assert len(found) == 1 and found[0].endswith("carries no proof of possession")
