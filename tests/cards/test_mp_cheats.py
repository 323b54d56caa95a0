"""Every cheat of the library is caught at once, with its own code, and the
offline audit reaches the same verdict from the honest side's transcript."""

from __future__ import annotations

import pytest

from lingxi.cards import CODES, CardsError
from lingxi.cards.cheats import CHEATS, run_abort_after_draw, run_cheat

# the 32-card trick deck keeps the suite fast; two cheats also run on the 52-card game
CASES = [(name, "trick") for name in sorted(CHEATS)] + [
    ("stacked_shuffle", "crazy_eights"), ("wrong_share", "crazy_eights")]


@pytest.mark.parametrize("name,game", CASES)
def test_cheat_is_caught_at_once_with_its_code(name: str, game: str) -> None:
    cheat = CHEATS[name]
    outcome = run_cheat(name, seed=name, game=game)
    assert isinstance(outcome.error, CardsError)
    assert outcome.error.code == cheat.code
    assert outcome.error.code in CODES
    if cheat.code == "cards.bad_signature":
        # not attributable: nobody is blamed and nothing is kept as evidence
        assert outcome.error.culprit is None
        assert "rejected" not in outcome.transcript
        assert not outcome.report.ok
        return
    assert outcome.error.culprit == cheat.cheater
    # the signed bad message is evidence a third party can re-check
    assert outcome.transcript["rejected"]["code"] == cheat.code
    assert not outcome.report.ok
    assert outcome.report.code == cheat.code
    assert outcome.report.culprit == cheat.cheater


def test_cheat_codes_are_distinct_per_kind_of_cheat() -> None:
    kinds = {
        "wrong face": "wrong_face", "wrong share": "wrong_share",
        "wrong proof": "bad_share_proof", "not in hand": "not_in_hand",
        "played twice": "double_play", "forged response": "forged_response",
        "corrupted entry": "corrupt_entry", "duplicated entry": "duplicate_entry",
        "missing card": "missing_card", "stacked": "stacked_shuffle", "rogue key": "rogue_key",
        "false opening": "false_opening", "skipped opening": "skipped_opening", "peek": "peek",
    }
    codes = [CHEATS[v].code for v in kinds.values()]
    # stacked and non-permutation share cards.bad_shuffle; every other kind has its own
    assert len(set(codes)) == len(codes)


def test_abort_after_a_draw_is_a_forfeit_with_evidence() -> None:
    outcome = run_abort_after_draw(seed=3)
    report = outcome.report
    assert report.code == "cards.forfeit"
    assert report.culprit == "guest"
    assert report.forfeit["claimant"] == "host"
    # the guest's draw and the host's share are in the signed record before the claim
    kinds = [m["mp"] for m in outcome.transcript["messages"]]
    assert kinds[-3:] == ["draw", "share", "forfeit"]


def test_a_kept_message_that_passes_is_not_evidence() -> None:
    outcome = run_cheat("wrong_face", seed=1)
    transcript = dict(outcome.transcript)
    # swap the rejected message for an honest-looking replay of an accepted one
    transcript["rejected"] = {"message": transcript["messages"][-1], "code": "cards.wrong_face"}
    from lingxi.cards import audit
    report = audit(transcript)
    assert not report.ok and report.culprit is None


def test_end_audit_catches_a_wrong_share_even_if_its_proof_was_skipped() -> None:
    """Defence in depth: the opening re-checks shares independently of their proofs."""
    from lingxi.cards import audit as run_audit
    from lingxi.cards.cheats import wrong_share
    from lingxi.cards.driver import Wire, make_pair

    host, guest = make_pair("crazy_eights", "depth")
    wire = Wire(host, guest)
    wire.send(host.hello())
    wire.send(host.shuffle())
    wire.send(guest.shuffle())
    wire.send(host.play(14))
    host.table.apply(guest.draw())
    bad = wrong_share(host, guest)
    for party in (host, guest):
        party.table.apply(bad, verified=True)  # as if nobody had checked the proof
    opening = guest.open()
    reply = host.receive(opening)
    with pytest.raises(CardsError) as err:
        guest.receive(reply[0])
    assert err.value.code == "cards.audit_mismatch"
    assert err.value.culprit == "host"
    # and a third party, who verifies every proof, blames the same message earlier
    report = run_audit(host.transcript())
    assert report.code == "cards.bad_share" and report.culprit == "host"


def test_a_claim_by_the_side_to_move_is_refused_by_the_table_and_the_audit() -> None:
    """During play the cards layer has no due step: the game says whose move it is."""
    from lingxi.cards import audit
    from lingxi.cards.driver import Wire, make_pair
    from lingxi.cards.games import GAMES, turns

    due = turns.game_due(GAMES["crazy_eights"])

    def started():
        host, guest = make_pair("crazy_eights", "turns")
        for party in (host, guest):
            party.table.game_due = due
        wire = Wire(host, guest)
        wire.send(host.hello())
        wire.send(host.shuffle())
        wire.send(guest.shuffle())
        wire.send(host.play(14))  # the starter: the guest moves first
        return host, guest

    host, guest = started()
    assert host.table.owing() == ("guest", "move")
    with pytest.raises(CardsError) as refused:
        guest.forfeit("made up")  # an honest party never makes it
    assert refused.value.code == "cards.state"
    bad = guest.sign("forfeit", {"against": "host", "reason": "made up"})
    with pytest.raises(CardsError) as caught:
        host.receive(bad)
    assert caught.value.code == "cards.false_forfeit" and caught.value.culprit == "guest"
    report = audit(host.transcript(), game_due=due)
    assert report.code == "cards.false_forfeit" and report.culprit == "guest"
    # the host's claim against the guest, whose move it is, stands
    host, guest = started()
    claim = host.forfeit("no move")
    assert claim["against"] == "guest"
    assert audit(host.transcript(), game_due=due).culprit == "guest"
    # without the game's rules the audit cannot say whose move it was
    assert audit(host.transcript()).culprit is None
    # the turn follows the plays: after the guest's play it is the host's move
    from lingxi.cards.games import crazy_eights

    host, guest = started()
    state = crazy_eights.start(host.table.played[14])
    play = next(a for a in crazy_eights.legal_actions(state, "guest", list(guest.hand().values()))
                if a["action"] in ("play", "draw"))
    if play["action"] == "play":
        pos = next(p for p, c in guest.hand().items() if c == play["card"])
        Wire(host, guest).send(guest.play(pos, note=play.get("suit")))
        assert host.table.owing() == ("host", "move")
    else:
        Wire(host, guest).send(guest.draw())
        assert host.table.owing() == ("guest", "move")
