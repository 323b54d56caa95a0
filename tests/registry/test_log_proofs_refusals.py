"""A client's checks of a log copy and of a served answer's proof refuse what a lying
registry could serve: a head that does not verify, entries out of order, records that differ,
an earlier head that is no prefix, and proof records that are malformed or signed by
somebody else."""

from __future__ import annotations

from typing import Any

import pytest

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.log import (
    LogCheck,
    check_log,
    entry_leaf,
    head_problem,
    make_entry,
    root_of,
    sign_head,
)
from lingxi.registry.models.merkle import MemoryTree
from lingxi.registry.models.proofs import Proven, check_identity, check_session
from lingxi.wire.identity import Identity

from .test_audit_refusals import identity, signed_record

NOW = 1_700_000_000
ORIGIN = "registry.example/log"


@pytest.fixture(scope="module")
def key() -> ServerKey:
    return ServerKey.generate()


@pytest.fixture(scope="module")
def alice() -> Identity:
    return Identity.generate()


def build(key: ServerKey, records: list[dict[str, Any]]):
    """``(head, entries, tree)`` of a log holding ``records`` in order."""
    entries = [make_entry(seq, r["kind"], r["id"], r, NOW)
               for seq, r in enumerate(records, 1)]
    tree = MemoryTree()
    for entry in entries:
        tree.append(entry_leaf(entry))
    return sign_head(key, ORIGIN, tree.size, tree.root(), NOW), entries, tree


def answer(key: ServerKey, records: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    head, entries, tree = build(key, records)
    items = [{"seq": e["seq"], "entry": e, "record": r,
              "path": [h.hex() for h in tree.inclusion(e["seq"] - 1)]}
             for e, r in zip(entries, records, strict=True)]
    return {**fields, "proof": {"checkpoint": head, "records": items}}


# --- heads and the full log check ------------------------------------------------------------


def test_a_head_that_is_not_an_object_or_whose_checkpoint_is_forged_is_refused(key):
    assert head_problem(["not", "a", "head"]) == "the log head is malformed"
    head, _, _ = build(key, [{"kind": "k", "id": "1"}])
    forged = {**head, "checkpoint": build(ServerKey.generate(), [{"kind": "k", "id": "1"}])[0][
        "checkpoint"]}
    problem = head_problem(forged) or ""
    assert problem.startswith("the log head's checkpoint does not verify")
    assert root_of(head) == bytes.fromhex(head["root"])


def test_a_complete_log_checks_out_and_reports_what_it_checked(key):
    records = [{"kind": "k", "id": str(i)} for i in range(3)]
    head, entries, tree = build(key, records)
    earlier = sign_head(key, ORIGIN, 2, tree.root(2), NOW)
    check = check_log(head, entries, records={1: records[0]}, earlier_heads=[earlier],
                      pinned_key=key.public_hex)
    assert check.to_dict() == {"ok": True, "size": 3, "root": tree.root().hex(),
                               "records_checked": 1, "heads_checked": 1,
                               "requests_checked": 0, "problems": []}


def test_a_malformed_entry_stops_the_rebuild(key):
    head, entries, _ = build(key, [{"kind": "k", "id": "1"}, {"kind": "k", "id": "2"}])
    broken = [entries[0], {k: v for k, v in entries[1].items() if k != "time"}]
    check = check_log(head, broken)
    assert check.problems == ["log entry 2 is malformed, out of order or does not hash to its "
                              "leaf"]
    assert check.size == 1 and not check.ok


def test_records_missing_from_or_differing_from_the_log_are_caught(key):
    records = [{"kind": "k", "id": "1"}]
    head, entries, _ = build(key, records)
    check = check_log(head, entries, records={1: {"kind": "k", "id": "edited"},
                                              5: records[0]})
    assert check.problems == ["record 1 differs from what the log recorded",
                              "record 5 is missing from the log"]
    assert check.records_checked == 2


def test_an_earlier_head_longer_than_the_log_or_not_a_prefix_is_caught(key):
    head, entries, _ = build(key, [{"kind": "k", "id": "1"}, {"kind": "k", "id": "2"}])
    other_head, _, _ = build(key, [{"kind": "k", "id": "X"}])
    check = check_log(head, entries, earlier_heads=[{"size": 9, "root": "00"},
                                                    {"size": "1"}, other_head])
    assert check.problems == [
        "an earlier head of size 9 is longer than this log",
        "an earlier head of size 1 is longer than this log",
        "the log was rewritten: an earlier signed head of size 1 is not a prefix of it"]
    assert check.heads_checked == 3


def test_a_log_check_without_problems_is_ok():
    assert LogCheck().ok and not LogCheck(problems=["x"]).ok


# --- proofs of a served answer -----------------------------------------------------------------


def proven(key: ServerKey, records: list[dict[str, Any]]) -> Proven:
    return Proven(answer(key, records), pinned_key=key.public_hex, now=NOW)


def test_a_proof_record_with_a_malformed_path_is_refused(key, alice):
    served = answer(key, [identity(alice)])
    served["proof"]["records"][0]["path"] = ["zz"]
    with pytest.raises(RegistryError, match="not in the signed tree") as caught:
        Proven(served, pinned_key=key.public_hex, now=NOW)
    assert caught.value.code == "registry.unproven"


def test_a_served_identity_matches_its_proven_record(key, alice):
    checked = proven(key, [identity(alice)])
    check_identity({"agent_id": alice.agent_id, "public_key": alice.public_hex,
                    "nickname": None}, checked)
    with pytest.raises(RegistryError, match="public key differs"):
        check_identity({"agent_id": alice.agent_id, "public_key": "00" * 32}, checked)


def test_an_identity_record_for_another_key_is_refused(key, alice):
    other = Identity.generate()
    record = signed_record(alice, "identity", alice.agent_id, {"public_key": other.public_hex})
    with pytest.raises(RegistryError, match="is for another key"):
        proven(key, [record]).identity(alice.agent_id)


@pytest.mark.parametrize(("body", "why"), [("not json", "is not JSON"),
                                           ("[1]", "is not an object")])
def test_a_record_body_that_is_not_a_json_object_is_refused(key, alice, body, why):
    record = signed_record(alice, "identity", alice.agent_id, body)
    with pytest.raises(RegistryError, match=why):
        proven(key, [record]).identity(alice.agent_id)


def test_a_record_without_its_signed_request_is_refused(key, alice):
    invitation = signed_record(alice, "invitation", "i1", {"endpoint": "tcp://x:1"})
    invitation["request"] = None
    checked = proven(key, [identity(alice), invitation])
    with pytest.raises(RegistryError, match="carries no signed request"):
        checked.signed_by(checked.find("invitation", "i1"), alice.agent_id)


def test_a_record_signed_by_another_agent_is_refused(key, alice):
    bob = Identity.generate()
    invitation = signed_record(bob, "invitation", "i1", {"endpoint": "tcp://x:1"})
    checked = proven(key, [identity(alice), identity(bob), invitation])
    with pytest.raises(RegistryError, match=f"not signed by {alice.agent_id}"):
        checked.signed_by(checked.find("invitation", "i1"), alice.agent_id)


def test_served_receipts_must_be_the_logged_ones(key, alice):
    receipt = {"kind": "lingxi.receipt/v1", "role": "host", "note": "as posted"}
    record = signed_record(alice, "receipt", "s1:host", {"receipt": receipt})
    checked = proven(key, [identity(alice), record])
    good = {"session_id": "s1", "host_agent_id": alice.agent_id,
            "receipts": {"host": receipt, "guest": None}}
    check_session(good, checked)
    edited = {**good, "receipts": {"host": {**receipt, "note": "edited"}}}
    with pytest.raises(RegistryError, match="host receipt differs"):
        check_session(edited, checked)
