"""Host presence (issue 18.6): an open invitation is served only while its host sends
heartbeats; a silent host's invitation is withdrawn for good. Only the host may send them,
each once, and only while the invitation is open or claimed."""

from __future__ import annotations

import json
import secrets

from lingxi.registry.models.signing import sign_request
from lingxi.wire.identity import Identity

CAROL = Identity.from_seed(b"c" * 32)
MALLORY = Identity.from_seed(b"m" * 32)
BODY = {"endpoint": "tcp://127.0.0.1:7001", "options": {"best_of": 3}}


async def _invite(api, host, pid) -> str:
    answer = await api.signed(host, "POST", "/v1/invitations", {**BODY, "protocol_id": pid})
    assert answer.status_code == 201, answer.text
    return answer.json()["invitation"]["invitation_id"]


async def _beat(api, who, iid, **kw):
    return await api.signed(who, "POST", f"/v1/invitations/{iid}/heartbeat", {}, **kw)


async def _listed(api) -> list[str]:
    return [i["invitation_id"] for i in (await api.get("/v1/invitations")).json()["items"]]


def _code(answer) -> str:
    return answer.json()["error"]["code"]


async def test_a_silent_host_is_withdrawn_and_a_beating_one_stays(api, alice, bob, world,
                                                                   clock, store):
    assert store.presence_timeout == 60  # the default, also what /v1/info says
    assert (await api.get("/v1/info")).json()["presence_timeout_seconds"] == 60
    store.max_open_invitations = 1
    iid = await _invite(api, alice, world)
    size = await api.log_size()
    clock.now += 40
    beat = await _beat(api, alice, iid)
    assert beat.status_code == 200, beat.text
    assert beat.json()["presence_timeout_seconds"] == 60
    assert beat.json()["invitation"]["status"] == "open"
    assert await api.log_size() == size  # presence is observed, not logged
    clock.now += 50  # 90 s after the post, 50 s after the heartbeat: still served
    assert await _listed(api) == [iid]
    clock.now += 11  # 61 s of silence
    assert await _listed(api) == []
    shown = (await api.get(f"/v1/invitations/{iid}")).json()
    assert shown["status"] == "withdrawn" and "host_seen_at" not in shown
    claim = await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})
    assert claim.status_code == 409 and _code(claim) == "registry.host_absent"
    late = await _beat(api, alice, iid)  # the host comes back too late: withdrawn for good
    assert late.status_code == 409 and _code(late) == "registry.host_absent"
    assert await _listed(api) == []
    cancel = await api.signed(alice, "POST", f"/v1/invitations/{iid}/cancel", {})
    assert _code(cancel) == "registry.invitation_closed"
    # a withdrawn invitation no longer counts against the host's cap of open ones
    assert await _invite(api, alice, world)


async def test_only_the_host_may_beat_and_forgeries_are_refused(api, alice, bob, world,
                                                                 clock, store):
    iid = await _invite(api, alice, world)
    other = await _beat(api, bob, iid)
    assert other.status_code == 403 and _code(other) == "registry.not_host"
    stranger = await _beat(api, CAROL, iid)  # never registered
    assert stranger.status_code == 401 and _code(stranger) == "registry.unknown_agent"
    # mallory signs with her key but names alice as the signer
    path = f"/v1/invitations/{iid}/heartbeat"
    headers = sign_request(MALLORY, "POST", path, b"{}", now=clock())
    headers = {k.lower(): v for k, v in headers.items()} | {"x-lingxi-agent": alice.agent_id}
    forged = await api.http.post(path, content=b"{}",
                                 headers={**headers, "content-type": "application/json"})
    assert forged.status_code == 401 and _code(forged).startswith("registry.signature")
    # a heartbeat signed for another invitation's path does not count for this one
    second = await _invite(api, alice, world)
    moved = sign_request(alice, "POST", f"/v1/invitations/{second}/heartbeat", b"{}",
                         now=clock())
    wrong = await api.http.post(path, content=b"{}",
                                headers={**moved, "content-type": "application/json"})
    assert wrong.status_code == 401
    clock.now += 61  # none of those kept the invitation alive
    assert iid not in await _listed(api)


async def test_a_replayed_heartbeat_is_refused(api, alice, world, clock):
    iid = await _invite(api, alice, world)
    nonce = secrets.token_hex(16)
    clock.now += 30
    first = await _beat(api, alice, iid, nonce=nonce, now=clock())
    assert first.status_code == 200
    clock.now += 20
    again = await _beat(api, alice, iid, nonce=nonce, now=clock() - 20)
    assert again.status_code == 401 and _code(again) == "registry.request_replayed"
    clock.now += 11  # 61 s after the post, 31 s after the one accepted beat: still served
    assert await _listed(api) == [iid]
    clock.now += 30  # the replay did not count: withdrawn 60 s after the real beat
    assert await _listed(api) == []


async def test_heartbeats_while_claimed_and_refused_once_closed(api, alice, bob, world, clock,
                                                                store):
    iid = await _invite(api, alice, world)
    claim = (await api.signed(bob, "POST", f"/v1/invitations/{iid}/claim", {})).json()
    clock.now += 25
    beat = await _beat(api, alice, iid)  # the host waits for the claimed guest's handshake
    assert beat.status_code == 200 and beat.json()["invitation"]["status"] == "claimed"
    clock.now += 35  # the claim lapsed (30 s); the host was heard 35 s ago: open again
    assert await _listed(api) == [iid]
    clock.now += 26  # a host that died during the claim: withdrawn, not reopened
    assert await _listed(api) == []
    assert (await api.get(f"/v1/invitations/{iid}")).json()["status"] == "withdrawn"
    # confirmed (in session) and cancelled invitations take no heartbeats
    played = await _invite(api, alice, world)
    won = (await api.signed(bob, "POST", f"/v1/invitations/{played}/claim", {})).json()
    assert won["session_id"] != claim["session_id"]
    await api.signed(alice, "POST", f"/v1/invitations/{played}/confirm",
                     {"session_id": won["session_id"]})
    closed = await _beat(api, alice, played)
    assert closed.status_code == 409 and _code(closed) == "registry.invitation_closed"
    gone = await _invite(api, alice, world)
    await api.signed(alice, "POST", f"/v1/invitations/{gone}/cancel", {})
    assert _code(await _beat(api, alice, gone)) == "registry.invitation_closed"
    missing = await _beat(api, alice, "inv-" + "0" * 32)
    assert missing.status_code == 404 and _code(missing) == "registry.invitation_not_found"
    kinds = {e["kind"] for e in (await api.get("/v1/log")).json()["entries"]}
    assert "heartbeat" not in kinds


async def test_a_heartbeat_body_is_bounded_like_every_write(api, alice, world):
    iid = await _invite(api, alice, world)
    big = json.dumps({"pad": "x" * (300 * 1024)}).encode()
    answer = await api.signed(alice, "POST", f"/v1/invitations/{iid}/heartbeat", raw=big)
    assert answer.status_code == 413 and _code(answer) == "registry.body_too_large"
    bad = await api.signed(alice, "POST", f"/v1/invitations/{iid}/heartbeat", raw=b"[1, 2")
    assert bad.status_code == 400
