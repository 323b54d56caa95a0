"""Invitations: options checked, TTL bounds, browse and paging, expiry, cancel, claim, confirm."""

from __future__ import annotations

import pytest

from lingxi.registry.models.ticket import verify_ticket
from lingxi.wire.identity import Identity

from .conftest import builtin_spec

ENDPOINT = "tcp://127.0.0.1:9000"


async def post(api, who, pid, **extra):
    body = {"protocol_id": pid, "endpoint": ENDPOINT, "options": {"best_of": 3}, **extra}
    return await api.signed(who, "POST", "/v1/invitations", body)


async def test_post_and_fetch(api, world, alice, clock):
    answer = await post(api, alice, world)
    assert answer.status_code == 201, answer.text
    inv = answer.json()["invitation"]
    assert inv["status"] == "open" and inv["host_agent_id"] == alice.agent_id
    assert inv["host_public_key"] == alice.public_hex and inv["options"] == {"best_of": 3}
    fetched = (await api.get(f"/v1/invitations/{inv['invitation_id']}")).json()
    assert fetched["invitation_id"] == inv["invitation_id"]
    # TTL default: two hours.
    from datetime import datetime

    expires = datetime.fromisoformat(inv["expires_at"].replace("Z", "+00:00")).timestamp()
    assert abs(expires - (clock() + 7200)) < 1


@pytest.mark.parametrize("extra,code", [
    ({"options": {"best_of": 0}}, "options."),
    ({"options": {"best_of": "three"}}, "options."),
    ({"options": {"termination": "sudden_death"}}, "options."),
    ({"options": []}, "options.not_object"),
    ({"ttl_seconds": 72 * 3600 + 1}, "registry.bad_ttl"),
    ({"ttl_seconds": 10}, "registry.bad_ttl"),
    ({"ttl_seconds": True}, "registry.bad_ttl"),
    ({"endpoint": "http://127.0.0.1:80"}, "registry.bad_endpoint"),
    ({"endpoint": "tcp://127.0.0.1:70000"}, "registry.bad_endpoint"),
    ({"protocol_id": "abc"}, "registry.bad_request"),
])
async def test_bad_invitations_are_refused_and_nothing_stored(api, world, alice, extra, code):
    before = await api.log_size()
    response = await post(api, alice, world, **extra)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"].startswith(code)
    assert await api.log_size() == before
    assert (await api.get("/v1/invitations")).json()["items"] == []


async def test_unknown_protocol_is_404(api, world, alice):
    response = await post(api, alice, "f" * 64)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "registry.protocol_not_found"


async def test_table_options_are_checked_with_dotted_paths(api, world, alice):
    spec = builtin_spec("hero-duel")
    pid = (await api.signed(alice, "POST", "/v1/protocols", {"spec": spec})).json()["protocol_id"]
    response = await api.signed(alice, "POST", "/v1/invitations", {
        "protocol_id": pid, "endpoint": ENDPOINT, "options": {"balance": {"nope": 1}}})
    assert response.status_code == 422
    assert response.json()["error"]["findings"]


async def test_browse_filters_and_paging(api, world, alice, bob):
    chat = (await api.signed(alice, "POST", "/v1/protocols",
                             {"spec": builtin_spec("chat")})).json()["protocol_id"]
    ids = []
    for i in range(5):
        ids.append((await post(api, alice if i % 2 else bob, world)).json()["invitation"]
                   ["invitation_id"])
    await api.signed(alice, "POST", "/v1/invitations",
                     {"protocol_id": chat, "endpoint": ENDPOINT})
    everything = (await api.get("/v1/invitations")).json()["items"]
    assert len(everything) == 6 and everything[0]["protocol_id"] == chat  # newest first
    assert everything[1]["protocol_name"].startswith("Rock")
    pages, cursor = [], None
    while True:
        page = (await api.get("/v1/invitations", limit=4, protocol_id=world,
                              **({"cursor": cursor} if cursor else {}))).json()
        pages.append([i["invitation_id"] for i in page["items"]])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert pages == [ids[::-1][:4], ids[::-1][4:]]
    mine = (await api.get("/v1/invitations", host=bob.agent_id)).json()["items"]
    assert {i["host_agent_id"] for i in mine} == {bob.agent_id} and len(mine) == 3
    assert len((await api.get("/v1/invitations", type="game")).json()["items"]) == 5
    assert len((await api.get("/v1/invitations", name="rock")).json()["items"]) == 5
    for key in ("protocol_id", "host", "type", "name"):  # never cut short at the NUL
        refused = await api.get("/v1/invitations", **{key: "rock\x00x"})
        assert refused.status_code == 400, key
        assert refused.json()["error"]["code"] == "registry.bad_request"


async def test_expired_invitations_disappear(api, world, alice, bob, clock):
    inv = (await post(api, alice, world, ttl_seconds=60)).json()["invitation"]
    assert len((await api.get("/v1/invitations")).json()["items"]) == 1
    clock.now += 61
    assert (await api.get("/v1/invitations")).json()["items"] == []
    assert (await api.get(f"/v1/invitations/{inv['invitation_id']}")).json()["status"] == \
        "expired"
    claim = await api.signed(bob, "POST", f"/v1/invitations/{inv['invitation_id']}/claim", {})
    assert claim.status_code == 409
    assert claim.json()["error"]["code"] == "registry.invitation_expired"


async def test_cancel_only_by_the_host(api, world, alice, bob):
    iid = (await post(api, alice, world)).json()["invitation"]["invitation_id"]
    refused = await api.signed(bob, "POST", f"/v1/invitations/{iid}/cancel", {})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "registry.not_host"
    done = await api.signed(alice, "POST", f"/v1/invitations/{iid}/cancel", {})
    assert done.status_code == 200 and done.json()["invitation"]["status"] == "cancelled"
    assert (await api.get("/v1/invitations")).json()["items"] == []
    again = await api.signed(alice, "POST", f"/v1/invitations/{iid}/cancel", {})
    assert again.json()["error"]["code"] == "registry.invitation_closed"
    claim = await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})
    assert claim.json()["error"]["code"] == "registry.invitation_closed"


async def test_claim_issues_a_ticket_the_host_can_verify(api, world, alice, bob, clock):
    iid = (await post(api, alice, world)).json()["invitation"]["invitation_id"]
    answer = await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})
    assert answer.status_code == 201, answer.text
    claim = answer.json()
    server_key = (await api.get("/v1/info")).json()["server_public_key"]
    claims = verify_ticket(claim["ticket"], server_public_key=server_key, invitation_id=iid,
                           host_agent_id=alice.agent_id, guest_public_key=bob.public_hex,
                           now=clock())
    assert claims.session_id == claim["session_id"] and claims.guest_agent_id == bob.agent_id
    assert len(claim["ticket"]) <= 2048
    session = (await api.get(f"/v1/sessions/{claim['session_id']}")).json()
    assert session["status"] == "claimed" and session["guest_agent_id"] == bob.agent_id
    assert (await api.get("/v1/invitations")).json()["items"] == []
    own = await api.signed(alice, "POST", f"/v1/invitations/{iid}/claim", {})
    assert own.status_code == 409


async def test_second_claim_is_taken_and_a_lapsed_claim_reopens(api, world, alice, bob, clock):
    carol = Identity.from_seed(b"c" * 32)
    await api.register(carol, "carol")
    iid = (await post(api, alice, world)).json()["invitation"]["invitation_id"]
    first = (await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})).json()
    taken = await api.signed(carol, "POST", f"/v1/invitations/{iid}/claim", {})
    assert taken.status_code == 409
    assert taken.json()["error"]["code"] == "registry.invitation_taken"
    clock.now += 31  # the claim deadline (30 s in these tests) passes unconfirmed
    assert [i["invitation_id"] for i in (await api.get("/v1/invitations")).json()["items"]] == \
        [iid]
    late = await api.signed(alice, "POST", f"/v1/invitations/{iid}/confirm",
                            {"session_id": first["session_id"]})
    assert late.json()["error"]["code"] == "registry.claim_expired"
    second = await api.signed(carol, "POST", f"/v1/invitations/{iid}/claim", {})
    assert second.status_code == 201
    old = (await api.get(f"/v1/sessions/{first['session_id']}")).json()
    assert old["status"] == "abandoned"


async def test_confirm_keeps_the_claim_past_the_deadline(api, world, alice, bob, clock):
    iid = (await post(api, alice, world)).json()["invitation"]["invitation_id"]
    claim = (await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})).json()
    not_host = await api.signed(bob, "POST", f"/v1/invitations/{iid}/confirm",
                                {"session_id": claim["session_id"]})
    assert not_host.status_code == 403
    wrong = await api.signed(alice, "POST", f"/v1/invitations/{iid}/confirm",
                             {"session_id": "ses-other"})
    assert wrong.json()["error"]["code"] == "registry.session_not_current"
    ok = await api.signed(alice, "POST", f"/v1/invitations/{iid}/confirm",
                          {"session_id": claim["session_id"]})
    assert ok.status_code == 200 and ok.json()["invitation"]["status"] == "in_session"
    clock.now += 120
    assert (await api.get(f"/v1/invitations/{iid}")).json()["status"] == "in_session"
    assert (await api.get("/v1/invitations")).json()["items"] == []
    assert (await api.get(f"/v1/sessions/{claim['session_id']}")).json()["status"] == \
        "confirmed"


async def test_cached_lists_show_writes_from_another_process_at_once(api, world, alice,
                                                                     database_url, clock):
    import httpx

    from lingxi.registry.server.app import create_app
    from lingxi.registry.storage.store import Store

    assert (await api.get("/v1/invitations")).json()["items"] == []  # now cached
    other = Store(database_url, clock=clock)
    try:
        transport = httpx.ASGITransport(app=create_app(other), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://b") as second:
            from .conftest import Api

            posted = await Api(second, other).signed(alice, "POST", "/v1/invitations", {
                "protocol_id": world, "endpoint": ENDPOINT})
            assert posted.status_code == 201
    finally:
        other.close()
    items = (await api.get("/v1/invitations")).json()["items"]
    assert [i["invitation_id"] for i in items] == [posted.json()["invitation"]["invitation_id"]]


async def test_a_refused_claim_cannot_be_replayed_once_the_invitation_reopens(api, world, alice,
                                                                             bob, clock):
    from lingxi.registry.models.signing import sign_request

    carol = Identity.from_seed(b"c" * 32)
    await api.register(carol, "carol")
    iid = (await post(api, alice, world)).json()["invitation"]["invitation_id"]
    await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})
    path = f"/v1/invitations/{iid}/claim"
    captured = sign_request(carol, "POST", path, b"{}", now=clock())
    taken = await api.http.post(path, content=b"{}", headers=captured)
    assert taken.json()["error"]["code"] == "registry.invitation_taken"
    clock.now += 31  # Bob's claim lapses: the invitation is open again
    replayed = await api.http.post(path, content=b"{}", headers=captured)
    assert replayed.status_code == 401
    assert replayed.json()["error"]["code"] == "registry.request_replayed"
    assert (await api.get(f"/v1/invitations/{iid}")).json()["status"] == "open"
