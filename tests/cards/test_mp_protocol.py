"""Whole games between honest parties: both receipts agree, the audit passes,
and any alteration of the recorded transcript makes the audit fail."""

from __future__ import annotations

import copy
import json
import threading

import pytest

from lingxi.cards import CardsError, audit
from lingxi.cards.driver import Wire, make_pair, play_game
from lingxi.cards.shuffle import proof_items

FRAME_CAP = 1 << 20


@pytest.fixture(scope="module")
def game():
    return play_game("crazy_eights", seed=11, measure_sizes=True)


def test_full_game_audits_and_receipts_agree(game) -> None:
    assert game.winner in ("host", "guest", "draw")
    host, guest = game.reports["host"], game.reports["guest"]
    assert host.transcript_hash == guest.transcript_hash
    assert host.faces == guest.faces
    assert sorted(host.faces) == sorted(game.host.params.universe)
    report = audit(game.host.transcript())
    assert report.ok, report.message
    assert report.faces == host.faces
    assert report.transcript_hash == host.transcript_hash


def test_each_side_saw_exactly_its_own_cards(game) -> None:
    faces = game.reports["host"].faces
    for party in (game.host, game.guest):
        for pos, face in party.cards.items():
            assert faces[pos] == face
            assert party.table.owner[pos] == party.role


def test_largest_message_fits_frame_and_field_caps(game) -> None:
    assert game.largest_message < FRAME_CAP // 32
    shuffle_msg = next(m for m in game.host.table.messages if m["mp"] == "shuffle")
    assert len(shuffle_msg["proof"]) == proof_items(52)
    # contract defaults: array max_total_bytes 262144, ciphertext 512, ot_blob 16384
    assert sum(len(x) for x in shuffle_msg["proof"]) <= 262144
    for m in game.host.table.messages:
        if m["mp"] in ("share", "play"):
            assert len(m["proof"]) <= 512


@pytest.mark.parametrize("field", ["deck", "proof", "share", "card", "secret", "key", "position",
                                   "seq", "prev", "positions"])
def test_altering_any_step_fails_the_audit(game, field) -> None:
    transcript = game.host.transcript()
    hits = [i for i, m in enumerate(transcript["messages"]) if field in m]
    assert hits
    for i in sorted(set(hits[:2] + hits[-1:])):
        t = copy.deepcopy(transcript)
        m = t["messages"][i]
        v = m[field]
        if isinstance(v, list):
            m[field] = v[1:] + v[:1] if field != "positions" else [p + 1 for p in v]
        elif isinstance(v, int):
            m[field] = v + 1
        elif field == "card":
            m[field] = "KC" if v != "KC" else "QC"
        else:
            m[field] = ("0" if v[0] != "0" else "1") + v[1:]
        report = audit(t)
        assert not report.ok
        assert report.code in ("cards.bad_signature", "cards.bad_sequence", "cards.malformed")


def test_dropped_or_reordered_messages_fail_the_audit(game) -> None:
    transcript = game.host.transcript()
    for i in (0, 3, len(transcript["messages"]) // 2, len(transcript["messages"]) - 1):
        t = copy.deepcopy(transcript)
        del t["messages"][i]
        assert not audit(t).ok
    t = copy.deepcopy(transcript)
    t["messages"][4], t["messages"][5] = t["messages"][5], t["messages"][4]
    assert not audit(t).ok


def test_transcript_is_json_and_round_trips(game) -> None:
    text = json.dumps(game.host.transcript())
    assert audit(json.loads(text)).ok


def test_trick_game_full_run() -> None:
    result = play_game("trick", seed=2)
    assert result.winner in ("host", "guest", "draw")
    assert audit(result.guest.transcript()).ok


def test_heavy_steps_run_off_thread_and_stale_results_are_refused() -> None:
    host, guest = make_pair("crazy_eights", seed=5)
    wire = Wire(host, guest)
    wire.send(host.hello())
    out: dict = {}
    worker = threading.Thread(target=lambda: out.setdefault("prep", host.prepare_shuffle()))
    worker.start()
    worker.join()
    msg = host.shuffle(out["prep"])
    checked = {}
    t = threading.Thread(target=lambda: checked.setdefault("c", guest.check(msg)))
    t.start()
    t.join()
    assert guest.receive(msg, checked["c"]) == []
    # a check token for another message does not skip the proof
    prep = guest.prepare_shuffle()
    forged = guest.sign("shuffle", {"deck": [d.hex() for d in prep.deck],
                                    "proof": ["00" * 32] * len(prep.proof)})
    with pytest.raises(CardsError) as err:
        host.receive(forged, checked["c"])
    assert err.value.code == "cards.bad_shuffle"
    # a prepared shuffle made for an earlier transcript head is refused
    with pytest.raises(CardsError) as err:
        host.shuffle(out["prep"])
    assert err.value.code == "cards.state"


def test_a_party_refuses_local_calls_out_of_state() -> None:
    host, guest = make_pair("crazy_eights", seed=6)
    for call in (host.draw, guest.hello, guest.prepare_shuffle, lambda: host.play(0)):
        with pytest.raises(CardsError) as err:
            call()
        assert err.value.code == "cards.state"


def test_signed_receipts_match_the_offline_audit(game) -> None:
    from lingxi.cards import verify_receipt
    report = audit(game.host.transcript())
    for party in (game.host, game.guest):
        receipt = party.receipt()
        assert receipt["audit"]["ok"] is True
        assert verify_receipt(receipt, party.identity, report)
        other = game.guest if party is game.host else game.host
        assert not verify_receipt(receipt, other.identity)  # not signed by the other side
        forged = dict(receipt, transcript_hash="00" * 32)
        assert not verify_receipt(forged, party.identity)


def test_a_cheat_receipt_names_code_and_culprit() -> None:
    from lingxi.cards import verify_receipt
    from lingxi.cards.cheats import CHEATS
    host, guest = make_pair("trick", seed="receipt")
    wire = Wire(host, guest)
    wire.send(host.hello())
    wire.send(host.shuffle())
    bad = CHEATS["missing_card"].make(guest, host)
    with pytest.raises(CardsError):
        host.receive(bad)
    receipt = host.receipt()
    assert receipt["audit"] == {"ok": False, "code": "cards.deck_missing", "culprit": "guest"}
    assert verify_receipt(receipt, host.identity, audit(host.transcript()))
    with pytest.raises(CardsError) as err:
        guest.receipt()
    assert err.value.code == "cards.state"
