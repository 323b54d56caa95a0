"""The registry's relay credentials: only the two parties of a current session get one,
for that session's subjects only, and the trust it publishes lets nats-server admit them."""

from __future__ import annotations

import time

import pytest
from registryhelpers import Registry

from lingxi.natsauth import NKey, decode_jwt
from lingxi.registry.models.relay import RelayKeys, server_config
from lingxi.wire.identity import Identity

HOST, GUEST, OTHER = (Identity.from_seed(bytes([n]) * 32) for n in (11, 12, 13))


@pytest.fixture
async def registry(tmp_path):
    registry = Registry(tmp_path, relay=["nats://127.0.0.1:4333"])
    yield registry
    await registry.close()


async def ask(registry, who, session_id, user_key=None):
    return await registry.signed(who, "POST", "/v1/relay/credentials",
                                 {"session_id": session_id,
                                  "user_key": user_key or NKey.generate("user").public})


async def test_host_and_guest_get_credentials_for_their_own_session_subjects(registry):
    claim = await registry.claimed_session(HOST, GUEST)
    sid = claim["session_id"]
    trust = (await registry.http.get("/v1/relay")).json()["trust"]
    for who, role, other in ((HOST, "host", "guest"), (GUEST, "guest", "host")):
        user = NKey.generate("user")
        answer = await ask(registry, who, sid, user.public)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["role"] == role and body["servers"] == ["nats://127.0.0.1:4333"]
        claims = decode_jwt(body["jwt"], issuer=trust["account"])  # signed by the account
        assert claims["sub"] == user.public
        assert claims["nats"]["pub"] == {"allow": [f"lingxi.relay.{sid}.{role}"]}
        assert claims["nats"]["sub"] == {"allow": [f"lingxi.relay.{sid}.{other}"]}
        assert 30 <= claims["exp"] - time.time() <= 3600  # short-lived
    info = (await registry.http.get("/v1/info")).json()
    assert info["relay"] == ["nats://127.0.0.1:4333"]


async def test_anyone_else_and_any_other_session_is_refused(registry):
    claim = await registry.claimed_session(HOST, GUEST)
    answer = await registry.signed(OTHER, "POST", "/v1/identities",
                                   {"nickname": "other", "public_key": OTHER.public_hex})
    assert answer.status_code == 201
    cases = [(OTHER, claim["session_id"], None, 403, "registry.not_party"),
             (GUEST, "ses-0000", None, 404, "registry.session_not_found"),
             (GUEST, "a.b", None, 422, "registry.bad_request"),
             (GUEST, claim["session_id"], "not-a-key", 422, "registry.bad_request"),
             (GUEST, claim["session_id"], NKey.generate("account").public, 422,
              "registry.bad_request")]
    for who, sid, key, status, code in cases:
        answer = await ask(registry, who, sid, key)
        assert answer.status_code == status and answer.json()["error"]["code"] == code
    unsigned = await registry.http.post("/v1/relay/credentials", json={
        "session_id": claim["session_id"], "user_key": NKey.generate("user").public})
    assert unsigned.status_code == 401


async def test_a_lapsed_claim_or_a_cancelled_session_gets_nothing(registry):
    claim = await registry.claimed_session(HOST, GUEST)
    registry.store.clock = lambda: time.time() + 120  # past the 30 s claim deadline
    answer = await ask(registry, GUEST, claim["session_id"])
    assert answer.status_code == 409 and answer.json()["error"]["code"] == \
        "registry.session_closed"


async def test_without_a_relay_there_are_no_credentials(tmp_path, monkeypatch):
    monkeypatch.delenv("LINGXI_RELAY", raising=False)
    registry = Registry(tmp_path)
    try:
        claim = await registry.claimed_session(HOST, GUEST)
        answer = await ask(registry, GUEST, claim["session_id"])
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "registry.no_relay"
    finally:
        await registry.close()


async def test_every_registry_process_on_one_database_signs_with_one_account(tmp_path):
    first, second = Registry(tmp_path), Registry(tmp_path)
    try:
        a = (await first.http.get("/v1/relay")).json()["trust"]["account"]
        b = (await second.http.get("/v1/relay")).json()["trust"]["account"]
        assert a == b
    finally:
        await first.close()
        await second.close()


def test_the_printed_config_admits_only_the_registry_users():
    keys = RelayKeys.generate()
    text = server_config(keys.trust(int(time.time())), listen="127.0.0.1:4222",
                         cluster_listen="127.0.0.1:6222", routes=("nats://127.0.0.1:6223",))
    assert f"system_account: {keys.system.public}" in text
    assert keys.account.public in text and "resolver: MEMORY" in text
    assert "routes: [nats://127.0.0.1:6223]" in text
    assert keys.operator.seed not in text and keys.account.seed not in text  # public only
