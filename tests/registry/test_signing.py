"""Signed requests: missing, malformed, forged, replayed and stale ones are refused, nothing stored."""

from __future__ import annotations

import json

import pytest

from lingxi.registry.models.signing import sign_request
from lingxi.wire.identity import Identity

from .conftest import rps_spec


async def _refused(api, response, code: str, status: int = 401) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


async def test_register_identity_is_idempotent_and_logged(api, alice):
    first = await api.register(alice, "alice")
    assert first.status_code == 201
    assert first.json()["agent_id"] == alice.agent_id
    again = await api.register(alice, "alice")
    assert again.status_code == 200 and again.json()["created"] is False
    assert await api.log_size() == 2  # the server key's record, then alice's
    record = (await api.get(f"/v1/identities/{alice.agent_id}")).json()
    assert record["public_key"] == alice.public_hex and record["nickname"] == "alice"


async def test_nickname_belongs_to_the_first_key(api, alice, bob):
    await api.register(alice, "alice")
    await _refused(api, await api.register(bob, "alice"), "registry.nickname_taken", 409)
    await _refused(api, await api.register(alice, "alicia"), "registry.identity_exists", 409)
    assert await api.log_size() == 2  # the server key's record, then alice's


async def test_identity_needs_proof_of_possession(api, alice, bob):
    # Bob signs a registration of Alice's key: the key in the body is not the signer's.
    body = json.dumps({"nickname": "mallory", "public_key": alice.public_hex}).encode()
    headers = sign_request(bob, "POST", "/v1/identities", body)
    response = await api.http.post("/v1/identities", content=body, headers=headers)
    await _refused(api, response, "registry.signature_invalid")
    # Bob claims Alice's agent id but signs with his own key.
    headers["x-lingxi-agent"] = alice.agent_id
    response = await api.http.post("/v1/identities", content=body, headers=headers)
    await _refused(api, response, "registry.signature_invalid")
    assert await api.log_size() == 1  # the server key's record only


@pytest.mark.parametrize("drop", ["x-lingxi-agent", "x-lingxi-timestamp", "x-lingxi-nonce",
                                  "x-lingxi-signature"])
async def test_missing_signature_header(api, world, alice, drop):
    body = json.dumps({"spec": rps_spec()}).encode()
    headers = sign_request(alice, "POST", "/v1/protocols", body)
    del headers[drop]
    before = await api.log_size()
    await _refused(api, await api.http.post("/v1/protocols", content=body, headers=headers),
                   "registry.signature_missing")
    assert await api.log_size() == before


async def test_unsigned_writes_are_refused_everywhere(api, world):
    for path in ("/v1/identities", "/v1/protocols", "/v1/invitations",
                 f"/v1/protocols/{world}/bundles", "/v1/invitations/inv-x/claim",
                 "/v1/invitations/inv-x/cancel", "/v1/invitations/inv-x/confirm",
                 "/v1/sessions/ses-x/receipts"):
        response = await api.http.post(path, json={})
        await _refused(api, response, "registry.signature_missing")


async def test_forged_signature_and_tampered_body(api, world, alice, bob):
    body = json.dumps({"spec": rps_spec()}).encode()
    headers = sign_request(alice, "POST", "/v1/protocols", body)
    flipped = dict(headers, **{"x-lingxi-signature": ("0" if headers["x-lingxi-signature"][0] != "0"
                                                      else "1") + headers["x-lingxi-signature"][1:]})
    before = await api.log_size()
    await _refused(api, await api.http.post("/v1/protocols", content=body, headers=flipped),
                   "registry.signature_invalid")
    # The signature is right but the body is not the one signed.
    other = json.dumps({"spec": {**rps_spec(), "name": "Changed"}}).encode()
    await _refused(api, await api.http.post("/v1/protocols", content=other, headers=headers),
                   "registry.signature_invalid")
    # Signed for another route.
    await _refused(api, await api.http.post("/v1/invitations", content=body, headers=headers),
                   "registry.signature_invalid")
    # Signed by Bob, claimed to be Alice.
    bobs = sign_request(bob, "POST", "/v1/protocols", body)
    bobs["x-lingxi-agent"] = alice.agent_id
    await _refused(api, await api.http.post("/v1/protocols", content=body, headers=bobs),
                   "registry.signature_invalid")
    assert await api.log_size() == before


async def test_replayed_request_is_refused(api, world, alice):
    spec = {**rps_spec(), "name": "renamed RPS"}  # same contract: an idempotent write
    body = json.dumps({"spec": spec}).encode()
    headers = sign_request(alice, "POST", "/v1/protocols", body)
    first = await api.http.post("/v1/protocols", content=body, headers=headers)
    assert first.status_code == 200
    await _refused(api, await api.http.post("/v1/protocols", content=body, headers=headers),
                   "registry.request_replayed")


async def test_replay_memory_is_shared_by_two_stores_on_one_database(api, world, alice,
                                                                     database_url, clock):
    from lingxi.registry.storage.store import Store

    body = json.dumps({"spec": rps_spec()}).encode()
    headers = sign_request(alice, "POST", "/v1/protocols", body, now=clock())
    assert (await api.http.post("/v1/protocols", content=body, headers=headers)).status_code == 200
    other = Store(database_url, clock=clock)
    try:
        import httpx

        from lingxi.registry.server.app import create_app

        transport = httpx.ASGITransport(app=create_app(other), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://b") as second:
            response = await second.post("/v1/protocols", content=body, headers=headers)
        assert response.json()["error"]["code"] == "registry.request_replayed"
    finally:
        other.close()


@pytest.mark.parametrize("skew", [-301, 301, -10_000])
async def test_stale_or_future_timestamp(api, world, alice, clock, skew):
    before = await api.log_size()
    response = await api.signed(alice, "POST", "/v1/protocols", {"spec": rps_spec()},
                                now=clock() + skew)
    await _refused(api, response, "registry.request_stale")
    assert await api.log_size() == before


@pytest.mark.parametrize("header,value", [("x-lingxi-timestamp", "yesterday"),
                                          ("x-lingxi-nonce", "short"),
                                          ("x-lingxi-nonce", "Z" * 32),
                                          ("x-lingxi-signature", "ab"),
                                          ("x-lingxi-agent", "someone")])
async def test_malformed_signature_headers(api, world, alice, header, value):
    response = await api.signed(alice, "POST", "/v1/protocols", {"spec": rps_spec()},
                                headers={header: value})
    await _refused(api, response, "registry.signature_malformed")


async def test_unknown_agent(api, world):
    stranger = Identity.from_seed(b"s" * 32)
    response = await api.signed(stranger, "POST", "/v1/protocols", {"spec": rps_spec()})
    await _refused(api, response, "registry.unknown_agent")


async def test_oversized_body_is_refused_before_parsing(api, world, alice):
    huge = {"spec": {**rps_spec(), "description": "x" * 300_000}}
    before = await api.log_size()
    response = await api.signed(alice, "POST", "/v1/protocols", huge)
    await _refused(api, response, "registry.body_too_large", 413)
    assert await api.log_size() == before


async def test_malformed_json_body(api, world, alice):
    response = await api.signed(alice, "POST", "/v1/protocols", raw=b"{not json")
    await _refused(api, response, "registry.bad_json", 400)
    response = await api.signed(alice, "POST", "/v1/protocols", raw=b"[1, 2]")
    await _refused(api, response, "registry.bad_json", 400)


def test_a_signature_check_refuses_every_malformed_or_wrong_part():
    """``keys.verify`` (libsodium): only the key's own 64-byte signature over exactly
    these bytes passes; a short signature, a key of the wrong size, a non-hex key, a
    zero signature or a tampered message is a plain False, never an exception."""
    from lingxi.registry.models.keys import verify

    who = Identity.generate()
    message = b"lingxi/registry/request/v1\nPOST\n/v1/invitations"
    good = who.sign(message)
    assert verify(who.public_hex, good, message)
    assert not verify(who.public_hex, good, message + b"!")
    # the same bytes split elsewhere: libsodium alone would take signature + message
    assert not verify(who.public_hex, good[:63], good[63:] + message)
    assert not verify(who.public_hex[:62], good, message)
    assert not verify("zz" * 32, good, message)
    assert not verify(who.public_hex, bytes(64), message)
    assert not verify(Identity.generate().public_hex, good, message)
