"""Fair matchmaking (issue 18.6): a lapsed or released claimant waits before re-claiming,
the host can release or refuse a claim, a guest can give its claim back at once, and
per-agent limits on open invitations and live claims."""

from __future__ import annotations

from lingxi.wire.identity import Identity

CAROL = Identity.from_seed(b"c" * 32)
BODY = {"endpoint": "tcp://127.0.0.1:7001", "options": {"best_of": 3}}


async def _invite(api, host, pid) -> str:
    answer = await api.signed(host, "POST", "/v1/invitations", {**BODY, "protocol_id": pid})
    assert answer.status_code == 201, answer.text
    return answer.json()["invitation"]["invitation_id"]


async def _claim(api, who, iid):
    return await api.signed(who, "POST", f"/v1/invitations/{iid}/claim", {})


def _code(answer) -> str:
    return answer.json()["error"]["code"]


async def test_a_lapsed_claimant_waits_while_others_go_first(api, alice, bob, world, clock,
                                                            store):
    store.presence_timeout = 3600  # the clock moves by minutes; presence has its own tests
    await api.register(CAROL, "carol")
    iid = await _invite(api, alice, world)
    assert (await _claim(api, bob, iid)).status_code == 201
    clock.now += 31  # bob's claim lapses (claim timeout 30 s)
    again = await _claim(api, bob, iid)
    assert again.status_code == 409 and _code(again) == "registry.reclaim_backoff"
    assert (await _claim(api, CAROL, iid)).status_code == 201  # the honest guest wins
    clock.now += 31 + 31  # carol's lapses too; bob's back-off is over
    assert (await _claim(api, bob, iid)).status_code == 201


async def test_the_host_releases_or_refuses_and_the_guest_gives_back(api, alice, bob, world,
                                                                     clock, store):
    store.presence_timeout = 3600  # the clock moves by minutes; presence has its own tests
    await api.register(CAROL, "carol")
    iid = await _invite(api, alice, world)
    won = (await _claim(api, bob, iid)).json()
    outsider = await api.signed(CAROL, "POST", f"/v1/invitations/{iid}/release",
                                {"session_id": won["session_id"]})
    assert outsider.status_code == 403
    released = await api.signed(alice, "POST", f"/v1/invitations/{iid}/release",
                                {"session_id": won["session_id"]})
    assert released.status_code == 200 and released.json()["invitation"]["status"] == "open"
    session = (await api.get(f"/v1/sessions/{won['session_id']}")).json()
    assert session["status"] == "abandoned"
    carol = (await _claim(api, CAROL, iid)).json()
    refused = await api.signed(alice, "POST", f"/v1/invitations/{iid}/release",
                               {"session_id": carol["session_id"], "refuse": True})
    assert refused.status_code == 200
    clock.now += 120  # long past any back-off: a refusal stays
    assert _code(await _claim(api, CAROL, iid)) == "registry.claim_refused"
    bob_again = (await _claim(api, bob, iid)).json()  # released, not refused: back after back-off
    given = await api.signed(bob, "POST", f"/v1/invitations/{iid}/release",
                             {"session_id": bob_again["session_id"]})
    assert given.status_code == 200 and given.json()["invitation"]["status"] == "open"
    guest_refuse = await api.signed(bob, "POST", f"/v1/invitations/{iid}/release",
                                    {"session_id": bob_again["session_id"], "refuse": True})
    assert guest_refuse.status_code in (403, 409)
    kinds = [e["kind"] for e in (await api.get("/v1/log")).json()["entries"]]
    assert kinds.count("release") == 3


async def test_limits_on_open_invitations_and_live_claims(api, alice, bob, world, store):
    store.max_open_invitations, store.max_live_claims = 4, 2
    iids = [await _invite(api, alice, world) for _ in range(4)]
    over = await api.signed(alice, "POST", "/v1/invitations", {**BODY, "protocol_id": world})
    assert over.status_code == 429 and _code(over) == "registry.too_many_invitations"
    assert (await _claim(api, bob, iids[0])).status_code == 201
    assert (await _claim(api, bob, iids[1])).status_code == 201
    third = await _claim(api, bob, iids[2])
    assert third.status_code == 429 and _code(third) == "registry.too_many_claims"
    await api.signed(alice, "POST", f"/v1/invitations/{iids[3]}/cancel", {})
    assert (await api.signed(alice, "POST", "/v1/invitations",
                             {**BODY, "protocol_id": world})).status_code == 201
