"""Issue 23.4: Hold'em for 2-6 seats on N-party mental poker over one group log."""

from __future__ import annotations

import random

import pytest

from lingxi.cards import group as g
from lingxi.contract import load_spec
from lingxi.contract.catalog import template_document
from lingxi.group import verify_records
from lingxi.group.holdem import HoldemHand, Rules
from lingxi.group.holdem_play import HoldemTable
from lingxi.group.log import replay
from lingxi.group.memory import spec_validator

SPEC = load_spec(template_document("group-poker"))


def _entropy(seed: int):
    rng = random.Random(seed)
    return lambda n: rng.randbytes(n)


def _aggressive(rng: random.Random):
    def strategy(hand, seat, legal):
        if "raise" in legal and rng.random() < 0.4:
            return "raise"
        if "fold" in legal and "call" in legal and rng.random() < 0.15:
            return "fold"
        return "check" if "check" in legal else "call"
    return strategy


def _third_party(table: HoldemTable, seat: int = 1) -> HoldemHand:
    receipts = table.group.close()
    record = table.group.record(seat, receipts)
    assert verify_records([record], spec_validator(SPEC)).ok
    hand = HoldemHand(table.rules)
    replay(record["group"], record["entries"], spec_validator(SPEC), [hand])
    return hand


@pytest.mark.parametrize("seats", [4, 6])
def test_a_hand_is_played_and_every_member_and_a_third_party_agree(seats) -> None:
    rng = random.Random(seats)
    table = HoldemTable(SPEC, seats, _entropy(seats),
                        strategies=[_aggressive(rng) for _ in range(seats)])
    result = table.play()
    assert sum(result["delta"]) == 0 and result["pot"] > 0
    assert all(h.result == result for h in table.hands)
    assert _third_party(table).result == result
    # every seat saw its own hole cards; only showdown seats are in `shown`
    for seat, (hand, player) in enumerate(zip(table.hands, table.players, strict=True)):
        mine = player.cards(hand, seat)
        assert len(mine) == 2 and all(mine)
        if str(seat) in result["shown"]:
            assert result["shown"][str(seat)] == mine
    folded = {s for s, move, _ in table.hands[0].moves if move == "fold"}
    assert not folded & {int(s) for s in result["shown"]}


def test_folded_hands_stay_hidden_from_the_other_seats() -> None:
    def fold_first(hand, seat, legal):
        return "fold" if seat == 1 and "fold" in legal else (
            "check" if "check" in legal else "call")
    table = HoldemTable(SPEC, 3, _entropy(7), strategies=[fold_first] * 3)
    result = table.play()
    assert result["kind"] == "showdown" and "1" not in result["shown"]
    deck = table.hands[0].deck
    assert all(p not in deck.opened for p in deck.hole(1))  # nobody can see them
    assert set(result["shown"]) == {"0", "2"}


def test_blinds_and_fixed_limit_bets() -> None:
    raiser = lambda hand, seat, legal: "raise" if "raise" in legal else "call"  # noqa: E731
    table = HoldemTable(SPEC, 3, _entropy(8), strategies=[raiser] * 3,
                        rules=Rules(stack=200, small_blind=1, big_blind=2))
    result = table.play()
    # capped at four bets a street: 8 preflop and flop, 16 turn and river, per seat
    assert result["pot"] == 3 * (8 + 8 + 16 + 16)
    moves = table.hands[0].moves
    assert [m for m in moves if m[1] == "raise"] and sum(1 for m in moves if m[1] == "check") == 0


def test_a_seat_that_leaves_mid_hand_folds_and_the_table_finishes() -> None:
    table = HoldemTable(SPEC, 4, _entropy(9))
    while table.hands[0].stage != "flop":
        table.step()
    table.group.send(2, table.players[2].leave_payload())
    table.group.membership(2, "leave")
    result = table.play()
    assert result["kind"] == "showdown" and "2" not in result["shown"]
    assert result["delta"][2] == -2 and len(result["board"]) == 5
    assert _third_party(table, 0).result == result


def _tampered(seats, seed, tamper):
    table = HoldemTable(SPEC, seats, _entropy(seed))
    result, error = table.play_catching(tamper)
    assert error is not None and result is not None
    return table, result, error


def test_a_stacked_shuffle_is_named_by_identity() -> None:
    def stack(seat, hand, payload):
        if seat == 2 and payload["action"] == "hp_shuffle":
            deck = list(payload["deck"])
            deck[0], deck[1] = deck[1], deck[0]  # not the permutation the proof is about
            return dict(payload, deck=deck)
        return None
    table, result, error = _tampered(4, 10, stack)
    assert error.code == "cards.bad_shuffle" and error.culprit == table.group.signers[2].key
    assert result["kind"] == "cheat" and result["culprit"] == error.culprit
    assert result["pot"] == 0  # before the blinds: nobody pays, the hand ends with the evidence


def test_a_wrong_share_is_named_by_identity_and_the_cheat_pays() -> None:
    other = g.base(g.sc_from_int(12345)).hex()

    def wrong(seat, hand, payload):
        if seat == 3 and payload["action"] == "hp_shares" and payload["stage"] == "flop":
            return dict(payload, shares=[other] + payload["shares"][1:])
        return None
    table, result, error = _tampered(4, 11, wrong)
    assert error.code in {"cards.bad_share", "cards.bad_share_proof"}
    assert error.culprit == table.group.signers[3].key
    assert result["kind"] == "cheat" and result["culprit_seat"] == 3
    assert result["delta"][3] == -2 and sum(result["delta"]) == 0
    with pytest.raises(Exception) as again:  # a third party replaying the record agrees
        hand = HoldemHand(table.rules)
        replay("table-1", table.group.views[0].log.entries, spec_validator(SPEC), [hand])
    assert getattr(again.value, "culprit", None) == table.group.signers[3].key


def test_a_false_forfeit_blames_the_claimant_and_a_true_one_the_seat_that_owed() -> None:
    table = HoldemTable(SPEC, 4, _entropy(12))
    while table.hands[0].stage != "preflop":
        table.step()
    due = table.hands[0].due()
    innocent = (due + 1) % 4
    claimant = (due + 2) % 4
    from lingxi.group import GroupError
    with pytest.raises(GroupError) as caught:
        table.group.send(claimant, {"action": "hp_forfeit", "seat": innocent})
    assert caught.value.code == "holdem.false_forfeit"
    assert caught.value.culprit == table.group.signers[claimant].key
    fair = HoldemTable(SPEC, 4, _entropy(12))
    while fair.hands[0].stage != "flop":  # every seat has a stake by then
        fair.step()
    due = fair.hands[0].due()
    fair.group.send((due + 1) % 4, {"action": "hp_forfeit", "seat": due})
    result = fair.hands[0].result
    assert result["kind"] == "forfeit" and result["culprit"] == fair.group.signers[due].key
    assert result["delta"][due] < 0 and all(d >= 0 for s, d in enumerate(result["delta"])
                                            if s != due)


def test_a_sequencer_timeout_of_a_seat_that_owed_nothing_blames_the_sequencer() -> None:
    from lingxi.group import GroupError
    table = HoldemTable(SPEC, 3, _entropy(13))
    table.step()  # seat 0 sent its key; seat 1 owes
    with pytest.raises(GroupError) as caught:
        table.group.membership(2, "timeout")
    assert caught.value.code == "holdem.false_forfeit"
    assert caught.value.culprit == table.group.sequencer.signer.key
    fair = HoldemTable(SPEC, 3, _entropy(13))
    fair.step()
    fair.group.membership(1, "timeout")
    assert fair.hands[0].result["culprit"] == fair.group.signers[1].key


def test_out_of_turn_and_illegal_moves_are_named() -> None:
    from lingxi.group import GroupError
    table = HoldemTable(SPEC, 3, _entropy(14))
    while table.hands[0].stage != "preflop":
        table.step()
    due = table.hands[0].due()
    with pytest.raises(GroupError) as caught:
        table.group.send((due + 1) % 3, {"action": "hp_bet", "move": "call"})
    assert caught.value.code == "holdem.out_of_turn"
    table = HoldemTable(SPEC, 3, _entropy(14))
    while table.hands[0].stage != "preflop":
        table.step()
    due = table.hands[0].due()
    with pytest.raises(GroupError) as caught:
        table.group.send(due, {"action": "hp_bet", "move": "check"})  # facing the big blind
    assert caught.value.code == "holdem.illegal_move"
    assert caught.value.culprit == table.group.signers[due].key


def test_a_folded_seat_that_leaves_after_its_last_share_owes_nothing() -> None:
    def fold_one(hand, seat, legal):
        return "fold" if seat == 2 and "fold" in legal else (
            "check" if "check" in legal else "call")
    table = HoldemTable(SPEC, 3, _entropy(21), strategies=[fold_one] * 3)
    while table.hands[0].stage != "showdown":
        table.step()
    table.group.membership(2, "leave")  # folded, every board share given: it may go
    result = table.play()
    assert result["kind"] == "showdown" and "culprit" not in result
    early = HoldemTable(SPEC, 3, _entropy(21), strategies=[fold_one] * 3)
    while early.hands[0].stage != "flop":
        early.step()
    early.group.membership(2, "leave")  # folded but owes board shares: it forfeits
    assert early.hands[0].result["culprit_seat"] == 2
