"""Fifty guests race for one invitation: exactly one wins, on each backend and across processes."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from lingxi.registry.client.api import RegistryClient
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.log import check_log
from lingxi.registry.server.app import create_app
from lingxi.wire.identity import Identity

from .conftest import fresh_postgres_database, rps_spec
from .servers import ServerProcess

GUESTS = 50


async def _race(clients: list[RegistryClient], host: RegistryClient) -> tuple[list, list]:
    await asyncio.gather(host.register("host"),
                         *(client.register(f"guest{i}") for i, client in enumerate(clients)))
    pid = (await host.register_protocol(rps_spec()))["protocol_id"]
    inv = await host.post_invitation(pid, endpoint="tcp://127.0.0.1:9", options={"best_of": 3})

    async def attempt(client):
        try:
            return await client.claim(inv["invitation_id"])
        except RegistryError as error:
            return error

    results = await asyncio.gather(*(attempt(c) for c in clients))
    wins = [r for r in results if not isinstance(r, RegistryError)]
    losses = [r for r in results if isinstance(r, RegistryError)]
    return wins, losses


def _guests() -> list[Identity]:
    return [Identity.from_seed(bytes([i + 1]) * 32) for i in range(GUESTS)]


async def test_fifty_guests_one_winner_in_process(store):
    """Through one app: the writes run concurrently in the thread pool."""
    app = create_app(store)

    def client(who):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        return RegistryClient("http://r", who, transport=transport)

    clients = [client(g) for g in _guests()]
    host = client(Identity.from_seed(b"H" * 32))
    wins, losses = await _race(clients, host)
    assert len(wins) == 1
    assert {e.code for e in losses} == {"registry.invitation_taken"}
    session = await host.session(wins[0].session_id)
    assert session["status"] == "claimed"
    claims = [e for e in (await host.log_entries()) if e["kind"] == "claim"]
    assert len(claims) == 1
    for c in [*clients, host]:
        await c.aclose()


@pytest.mark.postgres
@pytest.mark.slow
async def test_fifty_guests_one_winner_across_two_server_processes(tmp_path):
    url, drop = fresh_postgres_database()
    servers = []
    try:
        servers = [ServerProcess(url, str(tmp_path / f"home{i}")) for i in range(2)]
        for server in servers:
            server.wait_ready()
        clients = [RegistryClient(servers[i % 2].url, g, timeout=60)
                   for i, g in enumerate(_guests())]
        host = RegistryClient(servers[0].url, Identity.from_seed(b"H" * 32), timeout=60)
        wins, losses = await _race(clients, host)
        assert len(wins) == 1, [w.session_id for w in wins]
        assert {e.code for e in losses} == {"registry.invitation_taken"}
        # Both processes serve one registry: the same key, the same log.
        a, b = (RegistryClient(s.url) for s in servers)
        assert (await a.info())["server_public_key"] == (await b.info())["server_public_key"]
        head, entries = await b.head(), await a.log_entries()
        assert check_log(head, entries).ok
        assert [e["kind"] for e in entries].count("claim") == 1
        assert len(entries) == 1 + 1 + GUESTS + 1 + 1 + 1  # the server key first
        for c in [*clients, host, a, b]:
            await c.aclose()
    finally:
        for server in servers:
            server.stop()
        drop()
