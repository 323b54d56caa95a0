"""Posted tables' group receipts at the registry (issue 23): the final head with every seated
member's receipt is checked against the identities that claimed the table's seats, logged
once as a ``group_receipt`` record the full audit re-checks, settles every seat's session
and counts each member's table outcome. Every bad receipt is one coded refusal that changes
nothing. Both backends (the ``api`` fixture)."""

from __future__ import annotations

import copy

from lingxi.contract.seats import Seats
from lingxi.group import Sequencer, Signer
from lingxi.group.log import entry_hash, make_receipt
from lingxi.group.sequencer import MemberView
from lingxi.registry.models import group_receipt as gr
from lingxi.registry.models.audit import audit_records
from lingxi.registry.models.proofs import Proven
from lingxi.wire.identity import Identity

from .conftest import builtin_spec

ENDPOINT = "tcp://127.0.0.1:9000"
SEEDS = {"alice": b"a" * 32, "bob": b"b" * 32, "carol": b"c" * 32, "dave": b"d" * 32}


def _ids() -> dict[str, Identity]:
    return {name: Identity.from_seed(seed) for name, seed in SEEDS.items()}


async def _table(api, gid: str, seats: int = 3, claimants=("bob", "carol")):
    """Everyone registered, group-vote published by alice, a table of ``seats`` posted by
    alice and its seats claimed in order; ``(protocol_id, {seat: session_id})``."""
    ids = _ids()
    for name, who in ids.items():
        assert (await api.register(who, name)).status_code in (200, 201)
    answer = await api.signed(ids["alice"], "POST", "/v1/protocols",
                              {"spec": builtin_spec("group-vote")})
    assert answer.status_code in (200, 201), answer.text
    pid = answer.json()["protocol_id"]
    sessions = {}
    for seat, name in zip(range(1, seats), claimants, strict=False):
        options = {"lingxi.table": {"table": gid, "seat": seat, "seats": seats}}
        posted = await api.signed(ids["alice"], "POST", "/v1/invitations",
                                  {"protocol_id": pid, "endpoint": ENDPOINT,
                                   "options": options})
        assert posted.status_code == 201, posted.text
        iid = posted.json()["invitation"]["invitation_id"]
        claim = await api.signed(ids[name], "POST", f"/v1/invitations/{iid}/claim", {})
        assert claim.status_code in (200, 201), claim.text
        sessions[seat] = claim.json()["session_id"]
    return pid, sessions


def _log(gid: str, pid: str, order=("alice", "bob", "carol"), leave: str | None = None):
    """A group log in memory: ``order`` join seats 0, 1, 2…, start, (``leave`` leaves),
    close; the close entry and every seated member's receipt."""
    signers = {name: Signer(seed) for name, seed in SEEDS.items()}
    seq = Sequencer(signers["alice"], gid, pid, Seats(3, 16, ()))
    views = {name: MemberView(signers[name], gid) for name in order}

    def deliver(entry):
        for view in views.values():
            view.receive(entry)

    deliver(seq.log.entries[0])
    for seat, name in enumerate(order):
        deliver(seq.submit(views[name].entry("join", {"seat": seat})))
    deliver(seq.author("start", {}))
    if leave:
        deliver(seq.submit(views[leave].entry("leave", {})))
    close = seq.close()
    deliver(close)
    receipts = [views[n].receipt() for n in order if n != leave]
    return close, receipts


async def _post(api, who: str, gid: str, close, receipts):
    return await api.signed(_ids()[who], "POST", f"/v1/tables/{gid}/receipts",
                            {"close": close, "receipts": receipts})


def _audit(api) -> list[str]:
    return audit_records(api.store.log_entries(0, 1000, records=True)["entries"])[0]


async def test_the_host_posts_the_final_head_and_every_seat_settles(api):
    gid = "group-aaaa01"
    pid, sessions = await _table(api, gid)
    close, receipts = _log(gid, pid)
    answer = await _post(api, "alice", gid, close, receipts)
    assert answer.status_code == 201, answer.text
    facts = answer.json()["table"]
    assert facts["head"] == entry_hash(close) and facts["seq"] == close["seq"] + 1
    assert [(s["seat"], s["outcome"]) for s in facts["seats"]] == [
        (0, "completed"), (1, "completed"), (2, "completed")]
    assert answer.json()["log"]["record"]["kind"] == "group_receipt"
    for seat, sid in sessions.items():
        session = (await api.get(f"/v1/sessions/{sid}")).json()
        assert session["status"] == "finished" and session["verified"] is True
        assert session["outcome"]["seat"] == seat
        assert session["outcome"]["head"] == facts["head"]
    assert _audit(api) == []
    again = await _post(api, "alice", gid, close, receipts)  # the same head: nothing new
    assert again.status_code == 200 and again.json()["created"] is False


async def test_a_member_may_post_it_when_its_host_vanished(api):
    gid = "group-aaaa02"
    pid, _ = await _table(api, gid)
    close, receipts = _log(gid, pid)
    answer = await _post(api, "carol", gid, close, receipts)
    assert answer.status_code == 201, answer.text
    assert (await _post(api, "alice", gid, close, receipts)).json()["created"] is False
    outsider = await _post(api, "dave", gid, close, receipts)
    assert outsider.status_code == 403
    assert outsider.json()["error"]["code"] == "registry.not_party"


async def _refused(api, gid, close, receipts, status, code, who="alice"):
    size = await api.log_size()
    answer = await _post(api, who, gid, close, receipts)
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code
    assert await api.log_size() == size  # nothing changed


async def test_forged_missing_replayed_and_wrong_seat_receipts_are_refused(api):
    gid = "group-aaaa03"
    pid, sessions = await _table(api, gid)
    close, receipts = _log(gid, pid)

    forged = copy.deepcopy(receipts)
    forged[1]["sig"] = forged[2]["sig"]
    await _refused(api, gid, close, forged, 422, "registry.group_receipt_invalid")
    edited = copy.deepcopy(close)
    edited["body"]["seats"][1]["status"] = "left"  # the host rewrites how bob ended
    await _refused(api, gid, edited, receipts, 422, "registry.group_receipt_invalid")
    await _refused(api, gid, close, receipts[:2], 422, "registry.group_receipt_missing")
    other_close, other = _log("group-elsewhere", pid)  # another table's receipts
    await _refused(api, gid, close, other, 422, "registry.group_receipt_invalid")
    await _refused(api, "group-elsewhere", other_close, other, 404,
                   "registry.table_not_found")
    swapped_close, swapped = _log(gid, pid, order=("alice", "carol", "bob"))
    await _refused(api, gid, swapped_close, swapped, 422, "registry.group_receipt_wrong_seat")
    for sid in sessions.values():  # no refusal settled anything
        assert (await api.get(f"/v1/sessions/{sid}")).json()["status"] == "claimed"

    assert (await _post(api, "alice", gid, close, receipts)).status_code == 201
    later_close, later = _log(gid, pid, leave="carol")  # a second, different head
    await _refused(api, gid, later_close, later, 409, "registry.group_receipt_exists")
    assert _audit(api) == []


async def test_tables_count_each_members_outcome_and_the_audit_replays_them(api):
    gid = "group-aaaa04"
    pid, _ = await _table(api, gid)
    close, receipts = _log(gid, pid, leave="carol")
    answer = await _post(api, "alice", gid, close, receipts)
    assert answer.status_code == 201, answer.text
    ids = _ids()
    served = (await api.get("/v1/ratings", agent=ids["carol"].agent_id)).json()
    assert served["tables"] == [{"protocol_id": pid, "completed": 0, "left": 1,
                                 "timed_out": 0, "last_seq": answer.json()["log"]["seq"]}]
    proven = Proven(served, pinned_key=api.store.key.public_hex, now=api.store.clock())
    assert proven.find("group_receipt", f"{ids['alice'].agent_id}:{gid}")
    host = (await api.get("/v1/ratings", agent=ids["alice"].agent_id)).json()
    assert host["tables"][0]["completed"] == 1
    assert _audit(api) == []


async def test_the_audit_catches_an_edited_group_receipt_record(api):
    gid = "group-aaaa05"
    pid, _ = await _table(api, gid)
    close, receipts = _log(gid, pid)
    assert (await _post(api, "alice", gid, close, receipts)).status_code == 201
    entries = api.store.log_entries(0, 1000, records=True)["entries"]
    from lingxi.registry.models.log import record_hash

    last = copy.deepcopy(entries[-1])
    last["record"]["server"]["seats"][2]["outcome"] = "left"
    last["record_sha256"] = record_hash(last["record"])
    assert any("outcomes" in p for p in audit_records([*entries[:-1], last])[0])
    counts = copy.deepcopy(entries[-1])
    counts["record"]["server"]["seats"][1]["after"]["completed"] = 5
    counts["record_sha256"] = record_hash(counts["record"])
    assert any("table counts" in p for p in audit_records([*entries[:-1], counts])[0])


def test_the_registry_hashes_a_close_entry_as_the_group_log_does():
    gid = "group-aaaa06"
    close, receipts = _log(gid, "ab" * 32)
    final, held = gr.check_group_receipt({"close": close, "receipts": receipts}, gid, 3)
    assert final.head == entry_hash(close)
    assert set(held) == {r["member"] for r in receipts}
    assert make_receipt(Signer(SEEDS["bob"]), gid, final.seq, final.head) in receipts
