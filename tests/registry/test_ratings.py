"""Reputation from proof: only a session with both verified, agreeing receipts moves a rating;
every change is a log record with a proof, and the audit recomputes ratings from the log."""

from __future__ import annotations

import copy

from sqlalchemy import select, update

from lingxi.registry.models.audit import audit_records
from lingxi.registry.models.proofs import Proven
from lingxi.registry.storage import schema as t
from lingxi.session.record.receipts import receipt_body, sign_receipt
from lingxi.session.record.transcript import Transcript

ENDPOINT = "tcp://127.0.0.1:9000"


def _receipt(who, role, pid, *, result="host", wire="wire-1", best_of=3):
    transcript = Transcript()
    transcript.add("guest_to_host", {"payload": {"action": "join"}}, "sent")
    transcript.add("host_to_guest", {"payload": {"action": "ready", "best_of": best_of}}, "sent")
    body = receipt_body(
        transcript,
        session_id=wire,
        protocol_id=pid,
        role=role,
        public_key=who.public_hex,
        status="completed",
        handshake="ab" * 32,
    )
    if result is not None:
        body["result"] = result
    return sign_receipt(body, who)


async def _session(api, pid, alice, bob):
    iid = (
        await api.signed(
            alice, "POST", "/v1/invitations", {"protocol_id": pid, "endpoint": ENDPOINT}
        )
    ).json()["invitation"]["invitation_id"]
    claim = (await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})).json()
    return claim["session_id"]


async def _post(api, who, sid, receipt):
    return await api.signed(who, "POST", f"/v1/sessions/{sid}/receipts", {"receipt": receipt})


async def _rating(api, who, pid):
    answer = (await api.get("/v1/ratings", agent=who.agent_id, protocol_id=pid)).json()
    item = answer["items"][0]
    return item["rating"], item["games"]


async def test_both_verified_receipts_move_the_rating_and_log_it(api, world, alice, bob):
    assert await _rating(api, alice, world) == (None, 0)
    sid = await _session(api, world, alice, bob)
    await _post(api, alice, sid, _receipt(alice, "host", world))
    answer = await _post(api, bob, sid, _receipt(bob, "guest", world))
    assert answer.status_code == 201, answer.text
    assert answer.json()["logged"][0]["record"]["kind"] == "rating"
    assert await _rating(api, alice, world) == (1516, 1)
    assert await _rating(api, bob, world) == (1484, 1)
    served = (await api.get("/v1/ratings", agent=alice.agent_id)).json()
    proven = Proven(served, pinned_key=api.store.key.public_hex, now=api.store.clock())
    rating = proven.find("rating", sid)
    assert rating["server"]["host"] == {
        "agent_id": alice.agent_id,
        "before": 1500,
        "after": 1516,
        "games": 1,
    }
    entries = api.store.log_entries(0, 1000, records=True)["entries"]
    assert audit_records(entries)[0] == []


async def test_an_unverified_session_does_not_move_the_rating(api, world, alice, bob):
    one = await _session(api, world, alice, bob)
    await _post(api, alice, one, _receipt(alice, "host", world))  # the guest never posts
    assert await _rating(api, alice, world) == (None, 0)
    api.store.max_live_claims = 10
    two = await _session(api, world, alice, bob)  # receipts of two different runs
    await _post(api, alice, two, _receipt(alice, "host", world, wire="w2"))
    answer = await _post(api, bob, two, _receipt(bob, "guest", world, wire="w2", best_of=5))
    assert answer.json()["session"]["verified"] is False and "logged" not in answer.json()
    three = await _session(api, world, alice, bob)  # the two name different winners
    await _post(api, alice, three, _receipt(alice, "host", world, wire="w3"))
    await _post(api, bob, three, _receipt(bob, "guest", world, wire="w3", result="guest"))
    four = await _session(api, world, alice, bob)  # no result signed at all
    await _post(api, alice, four, _receipt(alice, "host", world, wire="w4", result=None))
    await _post(api, bob, four, _receipt(bob, "guest", world, wire="w4", result=None))
    five = await _session(api, world, alice, bob)  # a forged second receipt is refused
    await _post(api, alice, five, _receipt(alice, "host", world, wire="w5"))
    forged = copy.deepcopy(_receipt(bob, "guest", world, wire="w5", result="guest"))
    forged["result"] = "host"
    assert (await _post(api, bob, five, forged)).status_code == 422
    assert await _rating(api, alice, world) == (None, 0)
    assert await _rating(api, bob, world) == (None, 0)


async def test_a_run_never_counts_twice(api, world, alice, bob):
    first = await _session(api, world, alice, bob)
    host, guest = _receipt(alice, "host", world), _receipt(bob, "guest", world)
    await _post(api, alice, first, host)
    await _post(api, bob, first, guest)
    assert (await _post(api, bob, first, guest)).status_code == 409  # resubmission
    again = await _session(api, world, alice, bob)  # the same run under another session
    await _post(api, alice, again, host)
    answer = await _post(api, bob, again, guest)
    assert answer.json()["session"]["verified"] is True and "logged" not in answer.json()
    assert await _rating(api, alice, world) == (1516, 1)


async def test_an_edited_rating_is_caught_and_browse_shows_and_sorts(api, world, alice, bob):
    sid = await _session(api, world, alice, bob)
    await _post(api, alice, sid, _receipt(alice, "host", world))
    await _post(api, bob, sid, _receipt(bob, "guest", world))
    for who in (bob, alice):
        await api.signed(
            who, "POST", "/v1/invitations", {"protocol_id": world, "endpoint": ENDPOINT}
        )
    items = (await api.get("/v1/invitations")).json()["items"]
    shown = {i["host_agent_id"]: i["host_rating"] for i in items}
    assert shown == {
        alice.agent_id: {"rating": 1516, "games": 1},
        bob.agent_id: {"rating": 1484, "games": 1},
    }
    from lingxi.cli.registry import sort_by_rating

    assert [i["host_agent_id"] for i in sort_by_rating(items)] == [alice.agent_id, bob.agent_id]
    store = api.store
    with store.writer.begin() as conn:  # a hostile operator edits the log's rating record
        seq = conn.execute(select(t.rated_sessions.c.seq)).scalar()
        text = conn.execute(select(t.log.c.record).where(t.log.c.seq == seq)).scalar()
        conn.execute(
            update(t.log)
            .where(t.log.c.seq == seq)
            .values(record=text.replace('"after":1516', '"after":1600'))
        )
    entries = store.log_entries(0, 1000, records=True)["entries"]
    assert any("does not hash" in p for p in audit_records(entries)[0])
    entry = next(e for e in entries if e["kind"] == "rating")
    entry["record"]["server"]["host"]["after"] = 1600  # and a log re-hashed to match
    from lingxi.registry.models.log import record_hash

    entry["record_sha256"] = record_hash(entry["record"])
    assert any("Elo formula" in p for p in audit_records(entries)[0])
