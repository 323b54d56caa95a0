"""Protocols: validated by the contract layer, id computed by the server, immutable, searchable."""

from __future__ import annotations

import copy

from lingxi.contract import protocol_id

from .conftest import builtin_spec, rps_spec


async def test_register_computes_the_id_and_fetch_returns_the_spec(api, world):
    assert world == protocol_id(rps_spec())
    record = (await api.get(f"/v1/protocols/{world}")).json()
    assert record["spec"] == rps_spec()
    assert record["name"] == "Rock-Paper-Scissors (Lingxi)" and record["type"] == "game"


async def test_same_contract_again_is_idempotent_and_the_first_name_stays(api, world, bob):
    renamed = {**rps_spec(), "name": "My RPS", "description": "mine now"}
    answer = await api.signed(bob, "POST", "/v1/protocols", {"spec": renamed})
    assert answer.status_code == 200 and answer.json()["created"] is False
    assert answer.json()["protocol_id"] == world
    record = (await api.get(f"/v1/protocols/{world}")).json()
    assert record["name"] == "Rock-Paper-Scissors (Lingxi)"
    assert record["registered_by"] != bob.agent_id


async def test_invalid_specs_are_refused_with_their_code_and_nothing_stored(api, world, alice):
    before = await api.log_size()
    cases = {
        "spec.unknown_version": {**rps_spec(), "spec_version": "9.9"},
        "registry.bad_spec": None,
    }
    broken = copy.deepcopy(rps_spec())
    broken["messages"][0]["fields"]["action"]["type"] = "no-such-type"
    for code, spec in cases.items():
        response = await api.signed(alice, "POST", "/v1/protocols", {"spec": spec})
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == code
    response = await api.signed(alice, "POST", "/v1/protocols", {"spec": broken})
    assert response.status_code == 422
    assert response.json()["error"]["code"].startswith(("spec.", "message.", "field."))
    assert response.json()["error"]["findings"]
    response = await api.signed(alice, "POST", "/v1/protocols", {"spec": {"name": "x"}})
    assert response.status_code == 422
    assert await api.log_size() == before
    assert len((await api.get("/v1/protocols")).json()["items"]) == 1


async def test_unknown_ids_are_404_with_codes(api, world):
    for path, code in [(f"/v1/protocols/{'0' * 64}", "registry.protocol_not_found"),
                       ("/v1/protocols/not-hex", "registry.protocol_not_found"),
                       ("/v1/invitations/inv-nothing", "registry.invitation_not_found"),
                       ("/v1/sessions/ses-nothing", "registry.session_not_found"),
                       ("/v1/identities/lx-0000000000000000", "registry.identity_not_found"),
                       ("/v1/log/99", "registry.log_entry_not_found"),
                       (f"/v1/protocols/{world}/bundles/{'1' * 64}", "registry.bundle_not_found")]:
        response = await api.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == code


async def test_search_by_name_type_text_with_cursor_paging(api, world, alice):
    for name in ("chat", "guess-number", "word-count", "hero-duel"):
        answer = await api.signed(alice, "POST", "/v1/protocols",
                                  {"spec": builtin_spec(name)})
        assert answer.status_code == 201, answer.text
    everything = (await api.get("/v1/protocols")).json()["items"]
    assert len(everything) == 5
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await api.get("/v1/protocols", **params)).json()
        seen += [p["protocol_id"] for p in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [p["protocol_id"] for p in everything]
    games = (await api.get("/v1/protocols", type="game")).json()["items"]
    assert games and all(p["type"] == "game" for p in games)
    rock = (await api.get("/v1/protocols", name="ROCK")).json()["items"]
    assert [p["protocol_id"] for p in rock] == [world]
    assert (await api.get("/v1/protocols", q="100%_none")).json()["items"] == []
    bad = await api.get("/v1/protocols", cursor="garbage!")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "registry.bad_cursor"
    bad = await api.get("/v1/protocols", limit="1000")
    assert bad.status_code == 400


def _variant() -> dict:
    """RPS with other numbers and choices only: the same message structure."""
    spec = copy.deepcopy(rps_spec())
    spec["name"] = "RPS Lizard Spock"
    spec["choices"] = ["rock", "paper", "scissors", "lizard", "spock"]
    for message in spec["messages"]:
        for field in message["fields"].values():
            if field.get("values") and "rock" in field["values"]:
                field["values"] = spec["choices"]
            if "max" in field:
                field["max"] = 99
    spec["parameters"]["best_of"]["max"] = 99
    return spec


async def test_preflight_reports_near_duplicates(api, world):
    report = (await api.http.post("/v1/protocols/preflight", json={"spec": _variant()})).json()
    assert report["converges"] is True and report["registered"] is False
    assert [n["protocol_id"] for n in report["near_duplicates"]] == [world]
    own = (await api.http.post("/v1/protocols/preflight", json={"spec": rps_spec()})).json()
    assert own["registered"] is True and own["converges"] is False
    other = (await api.http.post("/v1/protocols/preflight",
                                 json={"spec": builtin_spec("chat")})).json()
    assert other["near_duplicates"] == [] and other["converges"] is False


async def test_a_different_message_structure_is_not_a_near_duplicate(api, world):
    spec = copy.deepcopy(rps_spec())
    spec["messages"][3]["fields"]["salt"] = {"type": "nonce"}
    report = (await api.http.post("/v1/protocols/preflight", json={"spec": spec})).json()
    assert report["near_duplicates"] == []


async def test_near_duplicate_needs_allow_new_and_a_reason_which_is_shown(api, world, alice):
    before = await api.log_size()
    refused = await api.signed(alice, "POST", "/v1/protocols", {"spec": _variant()})
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "registry.near_duplicate"
    assert refused.json()["error"]["details"]["near_duplicates"][0]["protocol_id"] == world
    no_reason = await api.signed(alice, "POST", "/v1/protocols",
                                 {"spec": _variant(), "allow_new": True})
    assert no_reason.json()["error"]["code"] == "registry.reason_required"
    assert await api.log_size() == before
    reason = "five choices change what a round_result can say"
    accepted = await api.signed(alice, "POST", "/v1/protocols",
                                {"spec": _variant(), "allow_new": True, "reason": reason})
    assert accepted.status_code == 201, accepted.text
    record = (await api.get(f"/v1/protocols/{accepted.json()['protocol_id']}")).json()
    assert record["reason"] == reason
    assert record["near_duplicates"][0]["protocol_id"] == world
    page = (await api.http.get(f"/protocols/{record['protocol_id']}")).text
    assert reason in page
