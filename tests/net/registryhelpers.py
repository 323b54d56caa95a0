"""A registry in the test's own process (SQLite under tmp_path) and signed calls to it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from lingxi.registry.models.signing import sign_request
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store
from lingxi.wire.identity import Identity

PROTOCOLS = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "protocols"


class Registry:
    """``store``, ``http`` (an ASGI client) and ``signed(who, method, path, body)``."""

    def __init__(self, folder: Path, *, relay: list[str] | None = None,
                 claim_timeout: float = 30) -> None:
        self.store = Store(f"sqlite:///{folder / 'registry.db'}", claim_timeout=claim_timeout)
        if relay is not None:
            self.store.relay_servers = relay
        transport = httpx.ASGITransport(app=create_app(self.store), raise_app_exceptions=False)
        self.http = httpx.AsyncClient(transport=transport, base_url="http://registry.test")

    async def signed(self, who: Identity, method: str, path: str, body=None) -> httpx.Response:
        content = json.dumps(body if body is not None else {}).encode()
        headers = sign_request(who, method, path, content, now=self.store.clock())
        return await self.http.request(method, path, content=content,
                                       headers={**headers, "content-type": "application/json"})

    async def claimed_session(self, host: Identity, guest: Identity) -> dict:
        """Both registered, rock-paper-scissors published, an invitation posted and claimed."""
        for who, name in ((host, "host"), (guest, "guest")):
            answer = await self.signed(who, "POST", "/v1/identities",
                                       {"nickname": name, "public_key": who.public_hex})
            assert answer.status_code in (200, 201), answer.text
        spec = json.loads((PROTOCOLS / "rock-paper-scissors" / "spec.json").read_text())
        pid = (await self.signed(host, "POST", "/v1/protocols", {"spec": spec})).json()[
            "protocol_id"]
        invitation = (await self.signed(host, "POST", "/v1/invitations", {
            "protocol_id": pid, "endpoint": "tcp://127.0.0.1:9", "options": {}})).json()[
            "invitation"]
        claim = await self.signed(guest, "POST",
                                  f"/v1/invitations/{invitation['invitation_id']}/claim")
        assert claim.status_code == 201, claim.text
        return claim.json()

    async def close(self) -> None:
        await self.http.aclose()
        self.store.close()
