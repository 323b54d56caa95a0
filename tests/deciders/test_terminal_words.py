"""The terminal speaks the game: a choice typed as it is shown is taken, the state reads as
facts (not a trace), each event is one line in terms of "you" and "the peer", the end says
who won."""

from __future__ import annotations

import pytest

from lingxi.cli.console import Console, event_lines, outcome_words
from lingxi.deciders.terminal import Terminal, parse_answer, plain, view_lines
from lingxi.session.core.events import RequestDecision

EIGHTS = [{"action": "play", "card": "3S"}, {"action": "play", "card": "8H", "note": "S"},
          {"action": "play", "card": "8H", "note": "H"}, {"action": "draw"}]


def _request(legal, **extra) -> RequestDecision:
    return RequestDecision(point_id="d4", legal=legal, view=extra.pop("view", {}),
                           timeout_seconds=60.0, **extra)


@pytest.mark.parametrize("typed, value", [
    ("3S", EIGHTS[0]), ("3s", EIGHTS[0]), ("play 3S", EIGHTS[0]), ("8H S", EIGHTS[1]),
    ("play 8h h", EIGHTS[2]), ("draw", EIGHTS[3]), ("4", EIGHTS[3]), ("  8H   S ", EIGHTS[1])])
def test_a_card_typed_as_shown_is_taken(typed, value) -> None:
    assert parse_answer(typed, _request(EIGHTS)) == (True, value)


def test_an_ambiguous_or_unknown_card_is_asked_again_with_the_choices() -> None:
    ok, why = parse_answer("8H", _request(EIGHTS))
    assert not ok and why == ("8H fits 2 choices (play 8H S, play 8H H): type the whole "
                              "choice or its number")
    ok, why = parse_answer("KD", _request(EIGHTS))
    assert not ok and "is not one of the choices" in why


def test_a_number_that_is_a_legal_value_is_that_value_not_an_index() -> None:
    assert parse_answer("3", _request([1, 3, 5])) == (True, 3)
    assert parse_answer("2", _request([1, 3, 5])) == (True, 3)  # the second choice


def test_values_read_as_words_and_the_view_as_facts() -> None:
    assert [plain(v) for v in EIGHTS] == ["play 3S", "play 8H S", "play 8H H", "draw"]
    view = {"top_card": "8H", "suit_to_follow": "spades", "hand": ["3S", "9C"], "stock": 0,
            "history": [{"by": "guest", "action": "play", "card": "8H", "note": "S"}],
            "hand_sizes": {"host": 2, "guest": 5}, "role": "host", "suggested": "x",
            "peer_cards": 5, "none_left": []}
    assert view_lines(view) == ["top card: 8H", "suit to follow: spades", "hand: 3S 9C",
                                "stock: 0", "peer cards: 5", "none left: none"]


def test_moves_rounds_and_messages_are_one_line_each_in_terms_of_you() -> None:
    info = {"role": "host", "mode": "mental_poker"}
    assert event_lines({"event": "mp.move", "by": "guest", "action": "play", "card": "8H",
                        "note": "S", "role": "host"}, info) == [
        "the peer plays 8H and names S"]
    assert event_lines({"event": "mp.move", "by": "host", "action": "draw"}, info) == [
        "you draw a card"]
    assert event_lines({"event": "mp.move", "by": "guest", "action": "pass"}, info) == [
        "the peer passes"]
    # the cards layer's messages are told by their moves, never by their names
    assert event_lines({"event": "message.received", "message": "mp_play",
                        "text": "guest plays 8H"}, info) == []
    assert event_lines({"event": "message.sent", "message": "commit"}, {"role": "host"}) == []
    # a round result message is told once, by its round event (in the hooks' words)
    rps = {"role": "guest", "mode": "simultaneous_round"}
    assert event_lines({"event": "message.received", "message": "round_result",
                        "shown_as": "round", "text": "round 1: …"}, rps) == []
    assert event_lines({"event": "round", "round": 1, "host": "rock", "guest": "paper",
                        "role": "guest", "result": {}}, rps) == [
        "round 1: you paper, the peer rock"]


@pytest.mark.parametrize("summary, role, words", [
    ({"winner": "host", "score": {"host": 2, "guest": 1}}, "host", "you won 2–1"),
    ({"winner": "host", "score": {"host": 2, "guest": 1}}, "guest", "you lost 1–2"),
    ({"winner": "draw"}, "guest", "a draw"),
    ({"lines": 3}, "host", "the session completed")])
def test_the_end_in_terms_of_you(summary, role, words) -> None:
    assert outcome_words({"status": "completed", "summary": summary}, role) == words


def test_an_abort_by_the_peer_marks_its_words() -> None:
    words = outcome_words({"status": "aborted", "code": "x\x1b[2J", "by": "peer",
                           "reason": "bye"}, "host")
    assert words == ("the session was aborted: the peer stopped it (code «x\\x1b[2J», "
                     "reason «bye»)")


def test_the_peer_deciding_is_said_once() -> None:
    written: list[str] = []

    class Capture:
        def write(self, text: str) -> None:
            written.append(text)

        def flush(self) -> None:
            pass

    class Live:
        info = {"role": "host"}

    console = Console(Live(), Terminal(lambda: Capture()))
    for _ in range(3):
        console({"event": "peer.deciding", "seconds": 60})
    assert "".join(written) == "the peer decides by hand (up to 60 s a move)\n"


def test_a_prompt_has_the_hooks_title_and_no_engine_words() -> None:
    from lingxi.deciders.terminal import TerminalDecider

    decider = TerminalDecider(terminal=Terminal(lambda: None))  # type: ignore[arg-type]
    lines = decider._lines(_request(EIGHTS, message="your turn: play a card or draw on 8H",
                                    view={"top_card": "8H", "hand": ["3S"]}), 0.0)
    assert lines[0].startswith("-- your turn: play a card or draw on 8H (")
    assert lines[1:3] == ["  top card: 8H", "  hand: 3S"]
    assert lines[3:] == ["  1) play 3S", "  2) play 8H S", "  3) play 8H H", "  4) draw"]
    assert not any("d4" in line or "mp_play" in line for line in lines)
