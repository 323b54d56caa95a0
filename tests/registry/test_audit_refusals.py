"""The offline audit of a log's records catches what a lying operator could edit in: a record
that names another entry, a request that does not match its body or its signer, and a rating
that does not rest on the two receipts of its session."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from lingxi.registry.models.audit import audit_records
from lingxi.registry.models.log import record_hash
from lingxi.registry.models.signing import SignedRequest, body_hash, sign_request
from lingxi.session.record.receipts import receipt_body, sign_receipt
from lingxi.session.record.transcript import Transcript
from lingxi.wire.identity import Identity

PID = "ab" * 32
NOW = 1_700_000_000


def signed_record(who: Identity, kind: str, rid: str, body: dict[str, Any] | str) -> dict:
    text = body if isinstance(body, str) else json.dumps(body)
    headers = sign_request(who, "POST", f"/v1/{kind}", text.encode(), now=NOW)
    request = SignedRequest(who.agent_id, "POST", f"/v1/{kind}", headers["x-lingxi-timestamp"],
                            headers["x-lingxi-nonce"], body_hash(text.encode()),
                            headers["x-lingxi-signature"])
    return {"kind": kind, "id": rid, "request": request.to_dict(), "body": text}


def identity(who: Identity) -> dict:
    return signed_record(who, "identity", who.agent_id, {"public_key": who.public_hex})


def entries(*records: dict) -> list[dict]:
    return [{"seq": i, "record": r, "record_sha256": record_hash(r), "kind": r.get("kind"),
             "record_id": r.get("id")} for i, r in enumerate(records)]


def receipt(who: Identity, role: str, *, result: str | None = "host") -> dict:
    transcript = Transcript()
    transcript.add("guest_to_host", {"payload": {"action": "join"}}, "sent")
    body = receipt_body(transcript, session_id="wire-1", protocol_id=PID, role=role,
                        public_key=who.public_hex, status="completed", handshake="cd" * 32)
    if result is not None:
        body["result"] = result
    return sign_receipt(body, who)


@pytest.fixture(scope="module")
def parties() -> tuple[Identity, Identity]:
    return Identity.generate(), Identity.generate()


def session_records(alice: Identity, bob: Identity, **kw: Any) -> list[dict]:
    return [identity(alice), identity(bob),
            signed_record(alice, "receipt", "s1:host", {"receipt": receipt(alice, "host", **kw)}),
            signed_record(bob, "receipt", "s1:guest", {"receipt": receipt(bob, "guest", **kw)})]


def rating(alice: Identity, bob: Identity, **facts: Any) -> dict:
    server = {"session_id": "s1", "protocol_id": PID, "result": "host",
              "host": {"agent_id": alice.agent_id}, "guest": {"agent_id": bob.agent_id},
              **facts}
    return {"kind": "rating", "id": "s1", "request": None, "server": server}


def problems(*records: dict) -> list[str]:
    return audit_records(entries(*records))[0]


def test_a_clean_log_of_identities_and_receipts_audits_clean(parties):
    found, checked = audit_records(entries(*session_records(*parties)))
    assert found == [] and checked == 4


def test_a_record_filed_under_another_id_is_caught(parties):
    alice, _ = parties
    log = entries(identity(alice))
    log[0]["record_id"] = "lx-0000000000000000"
    assert audit_records(log)[0] == ["record 0 names another kind or id than its entry"]


def test_a_record_without_a_signed_request_is_caught(parties):
    record = identity(parties[0])
    record["request"] = {"agent_id": "lx-1"}
    assert problems(record) == ["record 0 carries no well-formed signed request"]


def test_a_body_swapped_under_its_signature_is_caught(parties):
    record = identity(parties[0])
    record["body"] = json.dumps({"public_key": parties[1].public_hex})
    assert problems(record) == ["record 0: the body is not the one its request signed"]


@pytest.mark.parametrize("body", ["not json", "[1, 2]", json.dumps({"public_key": "zz"})])
def test_an_identity_whose_body_holds_no_key_is_caught(parties, body):
    record = signed_record(parties[0], "identity", parties[0].agent_id, body)
    assert problems(record) == ["record 0: an identity whose key is not its signer's"]


def test_an_identity_registering_somebody_elses_key_is_caught(parties):
    alice, bob = parties
    record = signed_record(alice, "identity", alice.agent_id, {"public_key": bob.public_hex})
    assert problems(record) == ["record 0: an identity whose key is not its signer's"]


def test_a_record_by_an_agent_the_log_never_registered_is_caught(parties):
    alice, bob = parties
    record = signed_record(bob, "invitation", "i1", {"protocol_id": PID})
    assert problems(identity(alice), record) == [
        f"record 1 is signed by {bob.agent_id}, which the log never registered"]


def test_a_request_signed_by_another_key_is_caught(parties):
    alice, bob = parties
    record = signed_record(bob, "invitation", "i1", {"protocol_id": PID})
    record["request"]["agent_id"] = alice.agent_id  # claims alice; bob's signature
    assert problems(identity(alice), record) == [
        f"record 1: the signed request does not verify with {alice.agent_id}'s key"]


def test_a_malformed_receipt_record_does_not_count_for_a_rating(parties):
    alice, bob = parties
    records = session_records(alice, bob)
    records[3] = signed_record(bob, "receipt", "s1:guest", {"receipt": "not a receipt"})
    found = problems(*records, rating(alice, bob))
    assert found == ["record 4: a rating for session s1 without its two valid receipts "
                     "earlier in the log"]


def test_a_rating_the_server_claims_with_a_request_is_caught(parties):
    alice, bob = parties
    forged = {**rating(alice, bob), "request": identity(alice)["request"]}
    assert problems(*session_records(alice, bob), forged) == [
        "record 4: a rating record that is not the server's facts"]


def test_a_rating_without_its_receipts_is_caught(parties):
    alice, bob = parties
    assert problems(identity(alice), identity(bob), rating(alice, bob)) == [
        "record 2: a rating for session s1 without its two valid receipts earlier in the log"]


def test_a_rating_without_its_parties_is_caught(parties):
    alice, bob = parties
    edited = rating(alice, bob)
    del edited["server"]["guest"]
    assert problems(*session_records(alice, bob), edited) == [
        "record 4: a rating record without its parties"]


def test_a_rating_of_other_agents_than_the_signers_is_caught(parties):
    alice, bob = parties
    swapped = rating(alice, bob, host={"agent_id": bob.agent_id},
                     guest={"agent_id": alice.agent_id})
    assert problems(*session_records(alice, bob), swapped) == [
        "record 4: the rated agents are not the receipts' signers"]


@pytest.mark.parametrize("facts", [{"result": "guest"}, {"protocol_id": "ef" * 32}])
def test_a_rating_that_counts_another_result_or_protocol_is_caught(parties, facts):
    alice, bob = parties
    assert problems(*session_records(alice, bob), rating(alice, bob, **facts)) == [
        "record 4: the receipts do not show the result this rating counts"]


def test_receipts_that_name_no_result_back_no_rating(parties):
    alice, bob = parties
    found = problems(*session_records(alice, bob, result=None), rating(alice, bob))
    assert found == ["record 4: the receipts do not show the result this rating counts"]


def test_an_edited_record_no_longer_hashes_to_its_entry(parties):
    log = entries(*session_records(*parties))
    log[2]["record"] = copy.deepcopy(log[2]["record"])
    log[2]["record"]["id"] = "s2:host"
    assert audit_records(log)[0] == ["record 2 does not hash to its log entry"]
