"""Issue 23.2: the group log: hash chain, signatures, membership rules, forks, receipts."""

from __future__ import annotations

import copy

import pytest

from lingxi.group import GroupError, make_entry, make_record, replay, verify_records
from lingxi.group.log import entry_hash

from .helpers import deliver, seated, signer


def _say(view, text="hi"):
    return view.entry("message", {"payload": {"action": "say", "text": text}})


def test_every_member_holds_the_same_chain_and_a_third_party_verifies_it() -> None:
    seq, views = seated(4)
    for i in range(8):
        deliver(views, seq.submit(_say(views[i % 4], f"line {i}")))
    deliver(views, seq.author("close", {}))
    assert {v.log.head for v in views} == {seq.log.head}
    receipts = [v.receipt() for v in views]
    verdict = verify_records([make_record(v.log, receipts) for v in views])
    assert verdict.ok, verdict.to_dict()
    assert [m["seat"] for m in verdict.members] == [0, 1, 2, 3]
    assert all(m["receipt"] for m in verdict.members)


def test_a_stale_entry_is_refused_without_blame_and_resigned() -> None:
    seq, views = seated(3)
    first, second = _say(views[1]), _say(views[2])  # both on the same head
    deliver(views, seq.submit(first))
    with pytest.raises(GroupError) as caught:
        seq.submit(second)
    assert caught.value.code == "group.stale" and caught.value.culprit is None
    deliver(views, seq.submit(_say(views[2])))
    assert views[0].log.seq == seq.log.seq


def test_a_tampered_payload_breaks_the_senders_signature() -> None:
    seq, views = seated(3)
    entry = seq.submit(_say(views[1], "fold"))
    forged = copy.deepcopy(entry)
    forged["body"]["payload"]["text"] = "raise"
    with pytest.raises(GroupError) as caught:
        views[2].receive(forged)
    assert caught.value.code == "group.bad_signature"


def test_a_sequencer_that_reorders_is_caught_with_its_own_checkpoint() -> None:
    seq, views = seated(3)
    one = seq.submit(_say(views[1], "a"))
    views[2].receive(one)
    two = seq.submit(_say(views[2], "b"))
    with pytest.raises(GroupError) as caught:
        views[0].receive(two)  # delivered before `one`
    assert caught.value.code == "group.bad_seq" and caught.value.culprit == seq.signer.key
    views[0].receive(one)  # in order it is fine
    views[0].receive(two)


def test_a_sequencer_that_forks_is_named_with_both_signed_entries() -> None:
    seq, views = seated(3)
    good = seq.log.seq
    twin = copy.deepcopy(seq)  # a lying sequencer keeps two logs
    a = seq.submit(_say(views[1], "to seat 1"))
    b = twin.submit(_say(views[2], "to seat 2"))
    views[1].receive(a)
    views[2].receive(b)
    with pytest.raises(GroupError) as caught:
        views[1].receive(b)
    error = caught.value
    assert error.code == "group.forked" and error.culprit == seq.signer.key
    assert {entry_hash(error.evidence["one"]), entry_hash(error.evidence["other"])} == {
        entry_hash(a), entry_hash(b)} and error.evidence["seq"] == good
    # a third party with the two members' records reaches the same verdict
    records = [make_record(v.log, [v.receipt()]) for v in views[1:]]
    verdict = verify_records(records)
    codes = [p.code for p in verdict.problems]
    assert "group.forked" in codes
    assert next(p for p in verdict.problems if p.code == "group.forked").culprit == seq.signer.key


def test_splicing_an_entry_out_of_a_record_is_detected() -> None:
    seq, views = seated(3)
    for i in range(3):
        deliver(views, seq.submit(_say(views[i], str(i))))
    entries = list(views[0].log.entries)
    del entries[-2]
    verdict = verify_records([{"format": "lingxi.group-record/1", "group": "g1",
                               "entries": entries, "receipts": []}], require_receipts=False)
    assert [p.code for p in verdict.problems] == ["group.bad_seq"]


def test_membership_rules() -> None:
    seq, views = seated(2, start=False)
    with pytest.raises(GroupError) as caught:
        seq.submit(make_entry(signer("x"), "g1", seq.log.seq, seq.log.head, "join",
                              {"seat": 1}))
    assert caught.value.code == "group.seat_taken"
    with pytest.raises(GroupError) as caught:
        seq.submit(_say(views[1]))
    assert caught.value.code == "group.bad_rule"  # no message before the start
    deliver(views, seq.author("start", {}))
    outsider = make_entry(signer("x"), "g1", seq.log.seq, seq.log.head, "message",
                          {"payload": {"action": "say", "text": "let me in"}})
    with pytest.raises(GroupError) as caught:
        seq.submit(outsider)
    assert caught.value.code == "group.not_member" and caught.value.culprit == signer("x").key
    deliver(views, seq.submit(views[1].entry("leave", {})))
    with pytest.raises(GroupError) as caught:
        seq.submit(_say(views[1]))
    assert caught.value.code == "group.not_member"
    newcomer = make_entry(signer("y"), "g1", seq.log.seq, seq.log.head, "replace", {"seat": 1})
    deliver(views, seq.submit(newcomer))
    assert seq.log.seat_of(signer("y").key) == 1
    deliver(views, seq.author("timeout", {"member": signer("y").key}))
    assert seq.log.seat_of(signer("y").key) is None
    deliver(views, seq.author("close", {}))
    with pytest.raises(GroupError) as caught:
        seq.submit(views[0].entry("leave", {}))
    assert caught.value.code == "group.closed"


def test_the_group_starts_only_with_enough_members_and_never_beyond_max() -> None:
    from lingxi.contract.seats import Seats

    seq, views = seated(2, start=False, seats=Seats(3, 3))
    with pytest.raises(GroupError) as caught:
        seq.author("start", {})
    assert caught.value.code == "group.too_few"
    seq.submit(make_entry(signer("c"), "g1", seq.log.seq, seq.log.head, "join", {"seat": 2}))
    with pytest.raises(GroupError) as caught:
        seq.submit(make_entry(signer("d"), "g1", seq.log.seq, seq.log.head, "join",
                              {"seat": 0}))
    assert caught.value.code == "group.full"
    seq.author("start", {})


def test_receipts_for_another_head_and_missing_receipts_are_reported() -> None:
    seq, views = seated(3)
    early = views[2].receipt()
    deliver(views, seq.submit(_say(views[0])))
    receipts = [views[0].receipt(), views[1].receipt(), early]
    verdict = verify_records([make_record(views[0].log, receipts)])
    assert [p.code for p in verdict.problems] == ["group.bad_receipt", "group.missing_receipt"]
    assert not verdict.ok


@pytest.mark.parametrize("mutation", [
    lambda e: e.pop("sig"), lambda e: e.update(seq=-1), lambda e: e.update(seq=True),
    lambda e: e.update(prev="zz"), lambda e: e.update(kind="nope"),
    lambda e: e.update(body=[]), lambda e: e.update(extra=1),
    lambda e: e["body"].update(blob="x" * 70000), lambda e: e.update(sender="00" * 32),
    lambda e: e.update(group="other")])
def test_malformed_or_forged_entries_get_a_code_not_a_crash(mutation) -> None:
    seq, views = seated(2)
    entry = copy.deepcopy(_say(views[1]))
    mutation(entry)
    with pytest.raises(GroupError) as caught:
        seq.submit(entry)
    assert caught.value.code in {"group.malformed", "group.bad_signature", "group.wrong_group"}


def test_replay_rebuilds_membership() -> None:
    seq, views = seated(3)
    log = replay("g1", views[1].log.entries)
    assert [m.seat for m in log.seated()] == [0, 1, 2] and log.head == seq.log.head
