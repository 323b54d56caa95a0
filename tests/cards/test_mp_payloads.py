"""The declared message fields accept every message of a real game, and leave
deck cheats to the cards layer's own codes."""

from __future__ import annotations

import pytest

from lingxi.cards import CardsError
from lingxi.cards.cheats import CHEATS, missing_card
from lingxi.cards.driver import Wire, make_pair, play_game
from lingxi.cards.messages import FIELDS
from lingxi.cards.payloads import from_payload, spec_messages, to_payload
from lingxi.contract import load_spec


def _spec(n: int):
    return load_spec({"name": "cards", "spec_version": "1.0", "type": "game",
                      "messages": spec_messages(n), "flow": {"mode": "mental_poker"}})


def test_spec_declares_every_step_and_loads_cleanly() -> None:
    spec = _spec(52)
    assert {m["name"] for m in spec_messages(52)} == {f"mp_{k}" for k in FIELDS}
    assert not [w for w in spec.warnings if w.is_error]


@pytest.mark.parametrize("game", ["crazy_eights", "trick"])
def test_every_message_of_a_game_is_a_valid_payload(game) -> None:
    result = play_game(game, seed=4)
    spec = _spec(result.host.params.n)
    for msg in result.host.table.messages:
        payload = to_payload(msg)
        assert spec.validate_message(payload, None) == [], msg["mp"]
        assert from_payload(payload) == msg


def test_a_short_deck_passes_the_contract_and_gets_its_cards_code() -> None:
    host, guest = make_pair("crazy_eights", "short")
    wire = Wire(host, guest)
    wire.send(host.hello())
    wire.send(host.shuffle())
    bad = missing_card(guest, host)
    assert _spec(52).validate_message(to_payload(bad), None) == []
    with pytest.raises(CardsError) as err:
        host.receive(from_payload(to_payload(bad)))
    assert err.value.code == CHEATS["missing_card"].code


def test_foreign_payloads_are_refused() -> None:
    for payload in ({"action": "move"}, {"action": "mp_nope"}, [], {"mp": "hello"}):
        with pytest.raises(CardsError) as err:
            from_payload(payload)
        assert err.value.code == "cards.malformed"
