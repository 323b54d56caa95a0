"""Rules of the built-in games: legal actions, suits after an 8, blocked games,
trick winners and revokes found from the final opening."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lingxi.cards.driver import play_game, random_legal
from lingxi.cards.games import crazy_eights as c8
from lingxi.cards.games import trick


def test_crazy_eights_universe_and_deal() -> None:
    u = c8.universe()
    assert len(u) == 52 and len(set(u)) == 52
    assert c8.DEAL.total() == 15


def test_crazy_eights_legal_actions() -> None:
    s = c8.start("5H")
    acts = c8.legal_actions(s, "guest", ["5S", "9H", "8C", "KD"])
    plays = {(a["card"], a.get("suit")) for a in acts if a["action"] == "play"}
    assert ("5S", None) in plays and ("9H", None) in plays
    assert {("8C", x) for x in "SHDC"} <= plays
    assert ("KD", None) not in plays
    assert {"action": "draw"} in acts and {"action": "pass"} not in acts
    assert c8.legal_actions(s, "host", ["5S"]) == []


def test_crazy_eights_eight_names_the_suit_and_draw_then_pass() -> None:
    s = c8.start("5H")
    s = c8.apply(s, "guest", {"action": "play", "card": "8C", "suit": "D"})
    assert s.suit == "D" and s.turn == "host"
    assert c8.validate_play(s, "host", "5D", None) is None  # the named suit
    assert c8.validate_play(s, "host", "8S", "H") is None  # any 8
    assert c8.validate_play(s, "host", "KH", None) is not None
    assert c8.validate_play(s, "host", "8S", None) == "an 8 must name a suit"
    s = c8.apply(s, "host", {"action": "draw"})
    assert s.drew and {"action": "pass"} in c8.legal_actions(s, "host", ["KH"])
    assert {"action": "draw"} not in c8.legal_actions(s, "host", ["KH"])


def test_crazy_eights_winner_and_blocked_game() -> None:
    s = replace(c8.start("5H"), counts={"host": 3, "guest": 1})
    s = c8.apply(s, "guest", {"action": "play", "card": "5S"})
    assert c8.winner(s) == "guest"
    s = replace(c8.start("5H"), stock=0, counts={"host": 2, "guest": 4})
    s = c8.apply(s, "guest", {"action": "pass"})
    assert c8.winner(s) is None
    s = c8.apply(s, "host", {"action": "pass"})
    assert c8.winner(s) == "host"


def test_trick_follow_suit_trumps_and_result() -> None:
    s = trick.start("7H")  # hearts are trump
    assert trick.legal_actions(s, "guest", ["AS", "9D"]) == [
        {"action": "play", "card": "9D"}, {"action": "play", "card": "AS"}]
    s = trick.apply(s, "guest", {"action": "play", "card": "AS"})
    assert [a["card"] for a in trick.legal_actions(s, "host", ["KS", "7H"])] == ["KS"]
    t = trick.apply(s, "host", {"action": "play", "card": "7H"})  # a trump wins
    assert t.tricks["host"] == 1 and t.turn == "host"
    t = trick.apply(s, "host", {"action": "play", "card": "KS"})  # lower, same suit
    assert t.tricks["guest"] == 1 and t.turn == "guest"


def test_trick_revokes_are_found_from_the_opened_hands() -> None:
    plays = [("guest", "AS", None), ("host", "7H", "AS")]
    assert trick.revokes(plays, {"host": ["KS", "7H"], "guest": ["AS"]}) == [1]
    assert trick.revokes(plays, {"host": ["9D", "7H"], "guest": ["AS"]}) == []


@pytest.mark.parametrize("game", ["crazy_eights", "trick"])
def test_random_legal_games_finish(game) -> None:
    r = play_game(game, seed=f"random-{game}", strategy=random_legal)
    assert r.winner in ("host", "guest", "draw")
    assert r.reports["host"].faces == r.reports["guest"].faces
    assert r.revokes == []
