"""Issue 23.3: the winners of two tables meet at a final table through inter_group envelopes."""

from __future__ import annotations

import copy
import random

import pytest

from lingxi.contract import load_spec
from lingxi.contract.catalog import template_document
from lingxi.contract.seats import Seats
from lingxi.group import GroupError, MemberView, Sequencer, make_entry, verify_records
from lingxi.group.escalate import check_escalation, cosign, make_escalation, statement
from lingxi.group.holdem_play import HoldemTable
from lingxi.group.memory import spec_validator
from lingxi.groupnet.frames import endpoint

SPEC = load_spec(template_document("group-poker"))
KEY = b"k" * 32
WHEN = "2026-12-02T06:00:00Z"


def _entropy(seed: int):
    rng = random.Random(seed)
    return lambda n: rng.randbytes(n)


def _table(name: str, seed: int):
    table = HoldemTable(SPEC, 3, _entropy(seed), group_id=name)
    result = table.play()
    winner = max(range(3), key=lambda s: result["delta"][s])
    return table, result, winner


def _escalate(table, result, winner, final_host):
    log = table.group.sequencer.log
    signers = [table.group.signers[0].key, table.group.signers[winner].key]
    stmt = statement(log, "final", {"winner": signers[1], "delta": result["delta"]}, signers)
    sigs = {table.group.signers[0].key: cosign(table.group.signers[0], stmt),
            signers[1]: cosign(table.group.signers[winner], stmt)}
    envelope = make_escalation(stmt, sigs, endpoint(signers[0]), endpoint(final_host.key), KEY,
                               WHEN)
    table.group.deliver(table.group.sequencer.author("escalate", {"envelope": envelope}))
    return envelope


def test_two_tables_escalate_their_winners_to_a_final_table_both_logs_record_it() -> None:
    a, ra, wa = _table("table-a", 1)
    b, rb, wb = _table("table-b", 2)
    host = a.group.signers[wa]  # the final table's sequencer: table A's winner
    envelopes = [_escalate(a, ra, wa, host), _escalate(b, rb, wb, host)]
    for table in (a, b):
        record = table.group.record(1, table.group.close())
        assert verify_records([record], spec_validator(SPEC)).ok
    # the final group records both envelopes and seats exactly the winners
    final = Sequencer(host, "final", SPEC.protocol_id, Seats(2, 6), spec_validator(SPEC))
    winners = []
    for env, source in zip(envelopes, (a, b), strict=True):
        stmt = check_escalation(env, hmac_key=KEY, source=source.group.views[0].log)
        final.author("escalate", {"envelope": env})
        winners.append(stmt["result"]["winner"])
    assert winners == [a.group.signers[wa].key, b.group.signers[wb].key]
    other = b.group.signers[wb]
    final.submit(make_entry(host, "final", final.log.seq, final.log.head, "join", {"seat": 0}))
    final.submit(make_entry(other, "final", final.log.seq, final.log.head, "join", {"seat": 1}))
    final.author("start", {})
    view = MemberView(other, "final", spec_validator(SPEC))
    for entry in final.log.entries:
        view.receive(entry)
    escalations = [e["body"]["envelope"] for e in view.log.entries if e["kind"] == "escalate"]
    assert escalations == envelopes  # the same signed envelopes as in the source logs
    in_a = [e["body"]["envelope"] for e in a.group.views[2].log.entries
            if e["kind"] == "escalate"]
    assert in_a == envelopes[:1]


def test_a_forged_or_misattributed_escalation_is_refused() -> None:
    a, ra, wa = _table("table-a", 3)
    host = a.group.signers[0]
    env = _escalate(a, ra, wa, host)
    source = a.group.views[0].log
    lie = copy.deepcopy(env)
    lie["payload"]["statement"]["result"]["winner"] = "00" * 32
    with pytest.raises(GroupError) as caught:
        check_escalation(lie, source=source)
    assert caught.value.code == "escalate.bad_signature"
    with pytest.raises(GroupError) as caught:
        check_escalation(lie, hmac_key=KEY)
    assert caught.value.code == "escalate.bad_envelope"  # the seed's HMAC covers the payload
    other, _, _ = _table("table-a", 4)  # same name, another history
    with pytest.raises(GroupError) as caught:
        check_escalation(env, source=other.group.views[0].log)
    assert caught.value.code == "escalate.unknown_head"
    with pytest.raises(GroupError) as caught:
        check_escalation({"type": "inter_group:escalate"})
    assert caught.value.code == "escalate.bad_envelope"
