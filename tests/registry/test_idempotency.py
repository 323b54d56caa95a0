"""Knowable writes (issue 18.7): a retry under the same Idempotency-Key gets the first answer,
even when the first answer was lost after the commit."""

from __future__ import annotations

import httpx

from lingxi.registry.client.api import RegistryClient
from lingxi.registry.server.app import create_app

BODY = {"endpoint": "tcp://127.0.0.1:7001", "options": {"best_of": 3}}


async def test_a_retry_with_the_same_key_returns_the_first_answer(api, alice, bob, world):
    body = {**BODY, "protocol_id": world}
    key = {"idempotency-key": "retry-0123456789abcdef"}
    first = await api.signed(alice, "POST", "/v1/invitations", body, headers=key)
    assert first.status_code == 201
    size = await api.log_size()
    again = await api.signed(alice, "POST", "/v1/invitations", body, headers=key)  # re-signed
    assert again.status_code == 201, again.text
    assert again.json()["invitation"] == first.json()["invitation"]
    assert again.json()["log"]["seq"] == first.json()["log"]["seq"]
    assert again.json()["replayed"] is True
    assert await api.log_size() == size  # nothing written twice
    # the very same signed request (same nonce) too: not request_replayed
    nonce = "ab" * 16
    one = await api.signed(bob, "POST", "/v1/invitations", body, nonce=nonce,
                           headers={"idempotency-key": "bob-key-0123456789"})
    two = await api.signed(bob, "POST", "/v1/invitations", body, nonce=nonce,
                           headers={"idempotency-key": "bob-key-0123456789"})
    assert one.status_code == two.status_code == 201
    assert one.json()["invitation"]["invitation_id"] == two.json()["invitation"]["invitation_id"]
    # without a key the same nonce is a replay, as before
    three = await api.signed(bob, "POST", "/v1/invitations", body, nonce=nonce)
    assert three.json()["error"]["code"] == "registry.request_replayed"


async def test_a_key_is_bound_to_its_request_and_its_agent(api, alice, bob, world):
    body = {**BODY, "protocol_id": world}
    key = {"idempotency-key": "shared-0123456789abc"}
    assert (await api.signed(alice, "POST", "/v1/invitations", body, headers=key)
            ).status_code == 201
    other = await api.signed(alice, "POST", "/v1/invitations", {**body, "note": "x"},
                             headers=key)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "registry.idempotency_mismatch"
    bobs = await api.signed(bob, "POST", "/v1/invitations", body, headers=key)
    assert bobs.status_code == 201 and "replayed" not in bobs.json()  # keys are per agent
    bad = await api.signed(alice, "POST", "/v1/invitations", body,
                           headers={"idempotency-key": "short"})
    assert bad.json()["error"]["code"] == "registry.bad_idempotency_key"


class _LoseFirstAnswer(httpx.AsyncBaseTransport):
    """Delivers every request, but the first answer never reaches the client."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner, self.lost = inner, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and self.lost == 0:
            self.lost += 1
            await response.aread()
            raise httpx.ReadError("connection reset after the commit", request=request)
        return response


async def test_the_client_retries_a_lost_answer_and_writes_once(store, alice, world, api):
    transport = _LoseFirstAnswer(httpx.ASGITransport(app=create_app(store)))
    async with RegistryClient("http://registry.test", alice, transport=transport) as client:
        before = await api.log_size()
        invitation = await client.post_invitation(world, endpoint="tcp://127.0.0.1:7001",
                                                  options={"best_of": 3})
    assert transport.lost == 1
    assert await api.log_size() == before + 1
    assert (await api.get(f"/v1/invitations/{invitation['invitation_id']}")).status_code == 200
