"""Sessions: a claim creates the record, both signed receipts are verified, outcome queryable."""

from __future__ import annotations

import copy

from lingxi.session.record.receipts import receipt_body, sign_receipt
from lingxi.session.record.transcript import Transcript

ENDPOINT = "tcp://127.0.0.1:9000"


def _transcript() -> Transcript:
    transcript = Transcript()
    transcript.add("guest_to_host", {"payload": {"action": "join"}}, "sent")
    transcript.add("host_to_guest", {"payload": {"action": "ready", "best_of": 3}}, "sent")
    return transcript


def _receipt(who, role: str, pid: str, *, wire_session="wire-1", status="completed",
             transcript=None):
    body = receipt_body(transcript or _transcript(), session_id=wire_session, protocol_id=pid,
                        role=role, public_key=who.public_hex, status=status,
                        handshake="ab" * 32)
    return sign_receipt(body, who)


async def _claimed(api, world, alice, bob):
    iid = (await api.signed(alice, "POST", "/v1/invitations",
                            {"protocol_id": world, "endpoint": ENDPOINT})).json()[
        "invitation"]["invitation_id"]
    claim = (await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})).json()
    return iid, claim["session_id"]


async def test_both_receipts_finish_the_session_verified(api, world, alice, bob):
    iid, sid = await _claimed(api, world, alice, bob)
    await api.signed(alice, "POST", f"/v1/invitations/{iid}/confirm", {"session_id": sid})
    first = await api.signed(alice, "POST", f"/v1/sessions/{sid}/receipts",
                             {"receipt": _receipt(alice, "host", world)})
    assert first.status_code == 201, first.text
    assert first.json()["session"]["status"] == "receipted"
    second = await api.signed(bob, "POST", f"/v1/sessions/{sid}/receipts",
                              {"receipt": _receipt(bob, "guest", world)})
    session = second.json()["session"]
    assert session["status"] == "finished" and session["verified"] is True
    assert session["outcome"]["host_status"] == "completed"
    assert (await api.get(f"/v1/invitations/{iid}")).json()["status"] == "finished"
    finished = (await api.get("/v1/sessions", status="finished")).json()["items"]
    assert [s["session_id"] for s in finished] == [sid]
    same = await api.signed(bob, "POST", f"/v1/sessions/{sid}/receipts",
                            {"receipt": _receipt(bob, "guest", world)})
    assert same.status_code == 409  # the session is finished: nothing more is taken


async def test_receipts_that_disagree_finish_unverified(api, world, alice, bob):
    iid, sid = await _claimed(api, world, alice, bob)
    await api.signed(alice, "POST", f"/v1/sessions/{sid}/receipts",
                     {"receipt": _receipt(alice, "host", world)})
    lying = Transcript()
    lying.add("guest_to_host", {"payload": {"action": "join"}}, "sent")
    lying.add("host_to_guest", {"payload": {"action": "ready", "best_of": 5}}, "sent")
    answer = await api.signed(bob, "POST", f"/v1/sessions/{sid}/receipts",
                              {"receipt": _receipt(bob, "guest", world, transcript=lying)})
    session = answer.json()["session"]
    assert session["status"] == "finished" and session["verified"] is False
    assert "host_to_guest" in session["outcome"]["problems"][0]


async def test_bad_receipts_are_refused_and_nothing_stored(api, world, alice, bob):
    iid, sid = await _claimed(api, world, alice, bob)
    good = _receipt(alice, "host", world)
    tampered = copy.deepcopy(good)
    tampered["status"] = "won"
    cases = [
        (alice, tampered, "signature"),
        (alice, _receipt(alice, "guest", world), "role"),
        (alice, _receipt(bob, "host", world), "identity key"),
        (alice, _receipt(alice, "host", "0" * 64), "another protocol"),
        (alice, {**good, "head": "0" * 64}, "head"),
        (alice, "not a receipt", "object"),
    ]
    before = await api.log_size()
    for who, receipt, part in cases:
        answer = await api.signed(who, "POST", f"/v1/sessions/{sid}/receipts",
                                  {"receipt": receipt})
        assert answer.status_code == 422, (part, answer.text)
        error = answer.json()["error"]
        assert error["code"] in ("registry.receipt_invalid", "registry.bad_request")
        assert part in error["message"] or any(part in p for p in
                                               error.get("details", {}).get("problems", []))
    from lingxi.wire.identity import Identity

    carol = Identity.from_seed(b"c" * 32)
    await api.register(carol, "carol")
    stranger = await api.signed(carol, "POST", f"/v1/sessions/{sid}/receipts",
                                {"receipt": _receipt(carol, "guest", world)})
    assert stranger.status_code == 403
    assert await api.log_size() == before + 1  # only carol's identity
    session = (await api.get(f"/v1/sessions/{sid}")).json()
    assert session["receipts"] == {"host": None, "guest": None}
