"""Issue 23.5: group-vote: commit-reveal ballots on the log; a third party recounts the tally."""

from __future__ import annotations

import random

import pytest

from lingxi.contract import load_spec
from lingxi.contract.catalog import template_document
from lingxi.group import GroupError, verify_records
from lingxi.group.memory import InMemoryGroup, spec_validator
from lingxi.group.vote import Ballot, Tally, recount

SPEC = load_spec(template_document("group-vote"))


def _entropy(seed: int):
    rng = random.Random(seed)
    return lambda n: rng.randbytes(n)


def _group(n: int, seed: int = 1):
    tallies = [Tally() for _ in range(n)]
    group = InMemoryGroup(SPEC, n, _entropy(seed), observers=lambda i: [tallies[i].apply])
    return group, tallies


def _vote(group, choices, entropy):
    ballots = [Ballot.draw(c, entropy) for c in choices]
    group.send(0, {"action": "motion", "text": "adopt the charter"})
    group.send(1, {"action": "say", "text": "I have doubts"})
    for seat, ballot in enumerate(ballots):
        group.send(seat, ballot.commit_payload())
    for seat, ballot in enumerate(ballots):
        group.send(seat, ballot.reveal_payload())
    return ballots


def test_five_members_vote_and_a_third_party_recounts_from_one_record() -> None:
    group, tallies = _group(5)
    _vote(group, ["yes", "no", "yes", "abstain", "yes"], _entropy(9))
    receipts = group.close()
    record = group.record(3, receipts)
    assert verify_records([record], spec_validator(SPEC)).ok
    log, recounted = recount(record["group"], record["entries"], spec_validator(SPEC))
    assert recounted.counts() == {"yes": 3, "no": 1, "abstain": 1}
    assert recounted.result() == "carried"
    assert all(t.counts() == recounted.counts() for t in tallies)  # every member agrees
    assert recounted.to_dict(log)["votes"] == {"0": "yes", "1": "no", "2": "yes",
                                               "3": "abstain", "4": "yes"}


def test_no_vote_is_visible_before_every_seat_has_committed() -> None:
    group, _ = _group(3)
    ballots = [Ballot.draw(c, _entropy(2)) for c in ("yes", "no", "no")]
    group.send(0, {"action": "motion", "text": "m"})
    group.send(0, ballots[0].commit_payload())
    group.send(1, ballots[1].commit_payload())
    with pytest.raises(GroupError) as caught:
        group.send(1, ballots[1].reveal_payload())
    assert caught.value.code == "vote.early_reveal"
    assert caught.value.culprit == group.signers[1].key


def test_a_reveal_that_does_not_open_its_commitment_names_the_member() -> None:
    group, _ = _group(3)
    ballots = [Ballot.draw("no", _entropy(3)) for _ in range(3)]
    group.send(0, {"action": "motion", "text": "m"})
    for seat, ballot in enumerate(ballots):
        group.send(seat, ballot.commit_payload())
    lie = dict(ballots[2].reveal_payload(), choice="yes")
    with pytest.raises(GroupError) as caught:
        group.send(2, lie)
    assert caught.value.code == "vote.bad_reveal"
    assert caught.value.culprit == group.signers[2].key
    # the lie is in every member's log: a third party reaches the same blame
    record = group.record(0, [])
    with pytest.raises(GroupError) as again:
        recount(record["group"], record["entries"], spec_validator(SPEC))
    assert again.value.code == "vote.bad_reveal" and again.value.culprit == group.signers[2].key


def test_double_commits_and_ballots_without_a_motion_are_refused() -> None:
    group, _ = _group(3)
    ballot = Ballot.draw("yes", _entropy(4))
    with pytest.raises(GroupError) as caught:
        group.send(0, ballot.commit_payload())
    assert caught.value.code == "vote.no_motion"
    group2, _ = _group(3, seed=5)
    group2.send(1, {"action": "motion", "text": "m"})
    group2.send(1, ballot.commit_payload())
    with pytest.raises(GroupError) as caught:
        group2.send(1, ballot.commit_payload())
    assert caught.value.code == "vote.double_commit"


def test_a_member_who_leaves_is_absent_and_the_rest_still_reveal() -> None:
    group, _ = _group(4)
    ballots = [Ballot.draw(c, _entropy(6)) for c in ("no", "no", "yes", "yes")]
    group.send(0, {"action": "motion", "text": "m"})
    for seat in range(3):
        group.send(seat, ballots[seat].commit_payload())
    group.membership(3, "leave")
    for seat in range(3):
        group.send(seat, ballots[seat].reveal_payload())
    receipts = group.close()
    record = group.record(0, receipts[:3])
    verdict = verify_records([record], spec_validator(SPEC))
    assert verdict.ok, verdict.to_dict()
    log, result = recount(record["group"], record["entries"])
    assert result.to_dict(log)["absent"] == [3] and result.result() == "rejected"


def test_a_payload_the_spec_refuses_never_enters_the_log() -> None:
    group, _ = _group(3)
    with pytest.raises(GroupError) as caught:
        group.send(1, {"action": "vote_commit", "commitment": "not a hash"})
    assert caught.value.code == "group.bad_message"
