"""The explorer actor and greedy-match3's hand-over to it, on synthetic views (issue 24.6)."""

from __future__ import annotations

from typing import Any

from lingxi.actor.actors import create_actor
from lingxi.actor.actors.greedy import HANDOVER_AFTER
from lingxi.actor.contracts import validate_selection

from .views import make_view


class Game:
    """A pretend game: which arms answer, what they score, which one resets the score."""

    source = "bridge"  # where the score events come from

    def __init__(self, answers, *, scores=None, reset=None):
        self.answers, self.scores, self.reset = answers, scores or {}, reset
        self.score, self.history, self.frame = 0, [], 0

    @staticmethod
    def arm(selection: dict[str, Any]) -> str:
        if selection["type"] == "key":
            return f"key:{selection['key']}"
        if selection["type"] == "tap":
            return "cells" if "cell" in selection["target"] else f"tap:{selection['target']['targetId']}"
        return selection["type"]

    def view(self, **kwargs):
        view = make_view(bytes([self.frame % 256]), **kwargs)
        view["history"] = self.history[-64:]
        return view

    def play(self, actor, steps, **kwargs):
        arms = []
        for _ in range(steps):
            selection = actor.select(self.view(**kwargs), b"")
            validate_selection(selection)
            arm = self.arm(selection)
            arms.append(arm)
            events = []
            answered = arm in self.answers or arm == self.reset
            if arm == self.reset:
                self.score = 0
                events.append({"seq": 1, "source": self.source, "type": "score",
                               "virtualTimeMs": 0, "data": {"score": 0}})
            elif arm in self.scores:
                self.score += self.scores[arm]
                events.append({"seq": 1, "source": self.source, "type": "score",
                               "virtualTimeMs": 0, "data": {"score": self.score}})
            if answered:
                self.frame += 1
            self.history.append({"actionId": f"action-{len(self.history) + 1}",
                                 "causalGameResponse": answered, "gameEvents": events})
        return arms


def test_explorer_finds_the_keys_that_play_and_repeats_what_scores():
    game = Game({"key:ArrowLeft", "key:ArrowUp"}, scores={"key:ArrowLeft": 4})
    arms = game.play(create_actor("explorer", seed=1), 20, rows=4, columns=4, with_candidates=False)
    assert arms.count("key:ArrowLeft") >= 10  # the arm that scores is played most
    assert game.score >= 40
    assert all(a.startswith("key:") or a in ("cells", "drag") for a in arms[:6])  # board first


def test_explorer_learns_from_the_score_the_page_shows():
    """A game not written for Lingxi sends no score; the harness's observed score events
    (read from the page) teach the explorer the same as the bridge's."""
    game = Game({"key:ArrowLeft", "key:ArrowUp"}, scores={"key:ArrowLeft": 4})
    game.source = "observed"
    arms = game.play(create_actor("explorer", seed=1), 20, rows=4, columns=4, with_candidates=False)
    assert arms.count("key:ArrowLeft") >= 10
    assert game.score >= 40


def test_explorer_never_presses_a_reset_twice():
    game = Game({"key:ArrowLeft"}, scores={"key:ArrowLeft": 4}, reset="tap:r00")
    arms = game.play(create_actor("explorer", seed=3), 40, rows=4, columns=4, with_candidates=False)
    assert arms.count("tap:r00") <= 1
    assert game.score > 0


def test_explorer_does_not_repeat_an_unanswered_input_on_the_same_frame():
    game = Game(set())  # nothing answers: the frame never changes
    arms = game.play(create_actor("explorer", seed=1), 12, rows=None, columns=None, regions=3)
    assert len(set(arms[:12])) == 12  # each try is a different input
    assert arms[:3] == ["tap:r00", "tap:r01", "tap:r02"]  # no board: regions (a start screen) first


def test_explorer_taps_cells_of_a_tap_only_board():
    game = Game({"cells"}, scores={"cells": 1})
    arms = game.play(create_actor("explorer", seed=2), 20, rows=4, columns=4, with_candidates=False)
    assert arms.count("cells") >= 14 and arms.count("drag") <= 1  # tried once, never again


def _blank_png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (390, 844), (250, 248, 239)).save(out, format="PNG")
    return out.getvalue()


def test_greedy_says_a_game_is_not_match3_and_hands_over():
    greedy = create_actor("greedy-match3", seed=1)
    blank = _blank_png()
    game = Game({"key:ArrowUp"}, scores={"key:ArrowUp": 2})
    reasons = []
    for _ in range(HANDOVER_AFTER + 8):
        selection = greedy.select(game.view(rows=4, columns=4, with_candidates=False), blank)
        validate_selection(selection)
        reasons.append(selection.get("reason", ""))
        game.history.append({"actionId": f"action-{len(game.history) + 1}",
                             "causalGameResponse": game.arm(selection) == "key:ArrowUp",
                             "gameEvents": []})
    assert not any("not a Match-3 game" in r for r in reasons[:HANDOVER_AFTER])
    assert all(r.startswith("not a Match-3 game") and "explorer" in r
               for r in reasons[HANDOVER_AFTER:])
    assert greedy.explorer is not None
    back = greedy.select(make_view(b"board", rows=8, columns=8), blank)
    assert back["type"] in ("swap_pair", "drag") and greedy.explorer is None
