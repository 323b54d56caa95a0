"""Rate limits (issue 18.6): signed requests per agent and claim attempts per invitation,
answered 429 ``registry.rate_limited`` with Retry-After; nobody can spend another agent's
tokens with forged requests, and the next window lets the agent through."""

from __future__ import annotations

from lingxi.registry.models.signing import sign_request
from lingxi.wire.identity import Identity

CAROL = Identity.from_seed(b"c" * 32)
DAVE = Identity.from_seed(b"d" * 32)
MALLORY = Identity.from_seed(b"m" * 32)
BODY = {"endpoint": "tcp://127.0.0.1:7001", "options": {"best_of": 3}}


async def _invite(api, host, pid):
    return await api.signed(host, "POST", "/v1/invitations", {**BODY, "protocol_id": pid})


def _code(answer) -> str:
    return answer.json()["error"]["code"]


async def test_the_defaults_are_generous_and_shown(api, store):
    limits = (await api.get("/v1/info")).json()["limits"]
    assert limits == {"writes_per_agent_per_minute": 120, "claims_per_invitation_per_minute": 60}
    assert store.writes_per_minute == 120


async def test_a_flood_hits_the_limit_and_the_next_window_passes(api, alice, bob, world,
                                                                 clock, store):
    store.set_limits(4, None)  # 4 a minute: one token back every 15 s
    iid = (await _invite(api, alice, world)).json()["invitation"]["invitation_id"]
    path = f"/v1/invitations/{iid}/heartbeat"
    for _ in range(3):  # with the post: four
        assert (await api.signed(alice, "POST", path, {})).status_code == 200
    body = b"{}"
    held = {**sign_request(alice, "POST", path, body, now=clock()),
            "content-type": "application/json"}
    over = await api.http.post(path, content=body, headers=held)
    assert over.status_code == 429 and _code(over) == "registry.rate_limited"
    assert over.headers["retry-after"] == "15"
    assert over.json()["error"]["details"] == {"retry_after_seconds": 15}
    post = await _invite(api, alice, world)  # every signed route shares the agent's bucket
    assert post.status_code == 429
    assert (await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})).status_code == 201
    clock.now += 14
    assert (await api.http.post(path, content=body, headers=held)).status_code == 429
    clock.now += 1  # the next window: the very request refused before goes through now
    again = await api.http.post(path, content=body, headers=held)
    assert again.status_code == 200, again.text
    assert (await api.signed(alice, "POST", path, {})).status_code == 429


async def test_forged_requests_do_not_spend_the_victim_s_tokens(api, alice, world, clock,
                                                                store):
    store.set_limits(3, None)
    iid = (await _invite(api, alice, world)).json()["invitation"]["invitation_id"]
    path = f"/v1/invitations/{iid}/heartbeat"
    for _ in range(10):  # mallory signs, but names alice as the signer
        forged = {k.lower(): v for k, v in sign_request(MALLORY, "POST", path, b"{}",
                                                        now=clock()).items()}
        forged["x-lingxi-agent"] = alice.agent_id
        answer = await api.http.post(path, content=b"{}",
                                     headers={**forged, "content-type": "application/json"})
        assert answer.status_code == 401
    assert (await api.signed(alice, "POST", path, {})).status_code == 200  # her second token
    assert (await api.signed(alice, "POST", path, {})).status_code == 200  # and her third
    assert (await api.signed(alice, "POST", path, {})).status_code == 429


async def test_claim_attempts_on_one_invitation_are_limited(api, alice, bob, world, clock,
                                                            store):
    store.set_limits(None, 3)
    for who, name in ((CAROL, "carol"), (DAVE, "dave")):
        assert (await api.register(who, name)).status_code == 201
    iid = (await _invite(api, alice, world)).json()["invitation"]["invitation_id"]
    other = (await _invite(api, alice, world)).json()["invitation"]["invitation_id"]
    claim = f"/v1/invitations/{iid}/claim"
    assert (await api.signed(bob, "POST", claim, {})).status_code == 201
    assert _code(await api.signed(CAROL, "POST", claim, {})) == "registry.invitation_taken"
    assert _code(await api.signed(DAVE, "POST", claim, {})) == "registry.invitation_taken"
    swarm = await api.signed(CAROL, "POST", claim, {})  # a fourth attempt, from anyone
    assert swarm.status_code == 429 and _code(swarm) == "registry.rate_limited"
    assert int(swarm.headers["retry-after"]) == 20
    assert (await api.signed(CAROL, "POST", f"/v1/invitations/{other}/claim", {})).status_code \
        == 201  # another invitation has its own count
    clock.now += 31  # bob's claim lapsed, and the window moved on
    assert (await api.signed(DAVE, "POST", claim, {})).status_code == 201


async def test_limits_off_means_no_limit(api, alice, world, store):
    store.set_limits(None, None)
    iid = (await _invite(api, alice, world)).json()["invitation"]["invitation_id"]
    for _ in range(150):  # more than the default 120 a minute, with the clock standing still
        assert (await api.signed(alice, "POST", f"/v1/invitations/{iid}/heartbeat",
                                 {})).status_code == 200
