"""Issue 23: the close entry names who held each seat (what a posted table's group receipt
rests on), and a vote waits for a seat reopened mid-game, then counts its newcomer."""

from __future__ import annotations

import os

import pytest

from lingxi.contract.seats import Seats
from lingxi.group import GroupError, MemberView, make_entry, make_record, verify_records
from lingxi.group.agents import VoteAgent

from .helpers import deliver, seated, signer


def test_the_close_names_every_seat_and_how_it_ended() -> None:
    seq, views = seated(3)
    deliver(views, seq.submit(views[2].entry("leave", {})))
    close = seq.close()
    deliver(views[:2], close)
    assert close["body"] == {"seats": [
        {"seat": 0, "member": views[0].signer.key, "status": "seated"},
        {"seat": 1, "member": views[1].signer.key, "status": "seated"},
        {"seat": 2, "member": views[2].signer.key, "status": "left"}]}
    receipts = [v.receipt() for v in views[:2]]
    assert verify_records([make_record(views[1].log, receipts)]).ok


def test_a_close_that_misnames_the_seats_is_refused_naming_the_sequencer() -> None:
    seq, views = seated(3)
    body = {"seats": seq.log.seat_summary()}
    body["seats"][2]["status"] = "left"  # the sequencer claims a seated member left
    entry = make_entry(seq.signer, "g1", seq.log.seq, seq.log.head, "close", body)
    with pytest.raises(GroupError) as caught:
        seq.submit(entry)
    assert caught.value.code == "group.bad_rule" and caught.value.culprit == seq.signer.key


def _vote(n: int):
    """A vote of ``n`` seats in memory: each seat's agent observing its own view."""
    seq, views = seated(n, start=False, seats=Seats(3, 16))
    agents = [VoteAgent(("yes", "no", "yes")[i % 3], os.urandom) for i in range(n)]
    for view, agent in zip(views, agents, strict=True):
        for entry in view.log.entries:
            for observe in agent.observers:
                observe(view.log, entry)
        view.log.observers.extend(agent.observers)
    deliver(views, seq.author("start", {}))
    return seq, views, agents


def _run(seq, views, agents, seats) -> None:
    """Every seat sends what its agent says until nobody has anything to send."""
    for _ in range(200):
        moved = False
        for view, agent, seat in zip(views, agents, seats, strict=True):
            payload = agent.next_payload(view.log, seat)
            if payload is not None:
                deliver(views, seq.submit(view.entry("message", {"payload": payload})))
                moved = True
        if not moved:
            return


def test_a_vote_waits_for_a_reopened_seat_and_counts_its_newcomer() -> None:
    seq, views, agents = _vote(3)
    gone = views.pop(2)
    agents.pop(2)
    deliver(views, seq.author("timeout", {"member": gone.signer.key, "reopen": True}))
    _run(seq, views, agents, [0, 1])
    assert not agents[0].finished()
    assert agents[0].tally.motion is None  # nobody moved while the seat was open

    newcomer = MemberView(signer("newcomer"), "g1")
    late = VoteAgent("no", os.urandom)
    for entry in views[0].log.entries:
        newcomer.receive(entry)
        for observe in late.observers:
            observe(newcomer.log, entry)
    newcomer.log.observers.extend(late.observers)
    views.append(newcomer)
    agents.append(late)
    deliver(views, seq.submit(newcomer.entry("replace", {"seat": 2})))
    _run(seq, views, agents, [0, 1, 2])
    assert all(agent.finished() for agent in agents)
    tally = agents[0].result(views[0].log)
    assert tally is not None and tally["votes"] == {"0": "yes", "1": "no", "2": "no"}
    assert tally["counts"] == {"yes": 1, "no": 2, "abstain": 0}  # the newcomer's counted
