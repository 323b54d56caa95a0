"""Role: the two sides of a session, still the strings on the wire."""

from __future__ import annotations

import json

import pytest

from lingxi.roles import ROLES, Role, peer_of


def test_each_side_has_exactly_one_peer() -> None:
    assert peer_of("host") is Role.GUEST and peer_of("guest") is Role.HOST
    assert {role.peer for role in ROLES} == set(ROLES)
    assert all(role.peer.peer is role for role in ROLES)


def test_a_role_is_its_string_in_records_and_messages() -> None:
    assert Role.HOST == "host" and f"the {Role.GUEST}" == "the guest"
    assert json.dumps({"from": Role.HOST}) == '{"from": "host"}'
    assert "guest" in ROLES and {"host": 1}[Role.HOST] == 1


@pytest.mark.parametrize("bad", ["", "Host", "referee", "guest "])
def test_a_side_that_is_neither_never_becomes_the_host(bad: str) -> None:
    with pytest.raises(ValueError):
        peer_of(bad)


def test_a_peer_name_is_an_exact_str_for_payload_validators() -> None:
    from lingxi.roles import peer_name

    assert type(peer_name("host")) is str and peer_name("host") == "guest"


def test_a_card_table_moves_through_its_six_phases_by_name() -> None:
    from lingxi.cards.table import Phase

    assert [p.value for p in Phase] == ["hello", "shuffle", "deal", "play", "opening", "done"]
    assert Phase.PLAY == "play" and json.dumps({"phase": Phase.DONE}) == '{"phase": "done"}'
