"""Issue 23.1: seats and group directions in the contract, their codes and the id rule."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.contract import inspect_spec, load_spec, protocol_id
from lingxi.contract.catalog import template_document


def _vote() -> dict:
    return template_document("group-vote")


def _codes(doc: dict) -> list[str]:
    return [f.code for f in inspect_spec(doc)[2] if f.is_error]


def test_group_templates_load_with_their_seats() -> None:
    poker = load_spec(template_document("group-poker"))
    assert (poker.seats.min, poker.seats.max) == (2, 6) and poker.flow.mode == "group"
    assert poker.validate_message({"action": "hp_bet", "move": "raise"}, "to_group") == []
    wrong = poker.validate_message({"action": "hp_bet", "move": "raise"}, "to_member")
    assert [f.code for f in wrong] == ["message.wrong_direction"]
    vote = load_spec(_vote())
    assert vote.validate_message({"action": "whisper", "text": "hi"}, "to_member") == []


def test_named_roles_seat_exactly_those_members() -> None:
    doc = _vote()
    doc["seats"] = {"roles": ["chair", "scribe", "member"]}
    seats = load_spec(doc).seats
    assert seats.roles == ("chair", "scribe", "member") and seats.admits(3)
    assert not seats.admits(2) and not seats.admits(4)


@pytest.mark.parametrize("seats", [
    {"min": 1, "max": 4}, {"min": 5, "max": 3}, {"min": 2, "max": 17}, {"min": 2},
    {"min": 2.0, "max": 4}, {"min": True, "max": 4}, {"min": 2, "max": 4, "extra": 1},
    {"roles": ["a"]}, {"roles": ["a", "a"]}, {"roles": ["A", "b"]}, {"roles": "ab"},
    {"roles": ["a", "b"], "min": 2}, [], "3..6"])
def test_malformed_seats_are_refused_with_one_code(seats) -> None:
    doc = _vote()
    doc["seats"] = seats
    assert set(_codes(doc)) == {"spec.bad_seats"}


def test_seats_and_mode_group_go_together() -> None:
    no_mode = _vote()
    del no_mode["flow"]
    assert "spec.bad_seats" in _codes(no_mode)
    no_seats = _vote()
    del no_seats["seats"]
    assert "spec.bad_seats" in _codes(no_seats)


def test_directions_belong_to_their_kind_of_spec() -> None:
    two_party = _vote()
    two_party["messages"][0]["direction"] = "host_to_guest"
    assert _codes(two_party) == ["spec.bad_direction"]
    plain = json.loads(json.dumps(template_document("free-chat")))
    plain["messages"][0]["direction"] = "to_group"
    assert _codes(plain) == ["spec.group_direction"]


def test_seats_are_part_of_a_group_specs_id_and_absent_from_two_party_ids() -> None:
    doc = _vote()
    wider = copy.deepcopy(doc)
    wider["seats"] = {"min": 3, "max": 12}
    assert protocol_id(doc) != protocol_id(wider)
    plain = template_document("free-chat")
    assert "seats" not in plain
    renamed = dict(plain, name="other name")  # name is not part of the id; nothing new is
    assert protocol_id(plain) == protocol_id(renamed)


def test_published_ids_are_unchanged(protocol_vectors) -> None:
    for path, expected in protocol_vectors.values():
        assert load_spec(path).protocol_id == expected


def test_protocol_validate_and_create_know_the_group_templates(tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "poker.json"
    made = runner.invoke(cli, ["protocol", "create", "-t", "group-poker", "-o", str(out)])
    assert made.exit_code == 0, made.output
    checked = runner.invoke(cli, ["protocol", "validate", str(out), "--json"])
    data = json.loads(checked.stdout)
    assert checked.exit_code == 0 and data["flow_mode"] == "group"
    doc = json.loads(out.read_text())
    doc["seats"] = {"min": 9, "max": 3}
    out.write_text(json.dumps(doc))
    bad = runner.invoke(cli, ["protocol", "validate", str(out)])
    assert bad.exit_code == 1 and "spec.bad_seats" in bad.output
