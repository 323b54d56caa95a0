"""SIGKILL during 200 concurrent invitation posts: nothing acknowledged is lost, the log verifies."""

from __future__ import annotations

import asyncio

import pytest

from lingxi.registry.client.api import RegistryClient
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.log import check_log, record_hash
from lingxi.registry.storage.store import Store
from lingxi.wire.identity import Identity

from .conftest import fresh_postgres_database, rps_spec
from .servers import ServerProcess

POSTS = 200
MANY = ("--max-open-invitations", "1000", "--rate-limit", "0")  # one host posts them all


async def _post_and_kill(server: ServerProcess) -> list[dict]:
    host = RegistryClient(server.url, Identity.from_seed(b"K" * 32), timeout=30)
    await host.register("host")
    pid = (await host.register_protocol(rps_spec()))["protocol_id"]
    acknowledged: list[dict] = []
    enough = asyncio.Event()

    async def post(i: int) -> None:
        try:
            answer = await host._call("POST", "/v1/invitations", signed=True, body={
                "protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{1000 + i}",
                "options": {"best_of": 3}})
        except RegistryError:
            return  # cut off by the kill: never acknowledged
        acknowledged.append(answer)
        if len(acknowledged) >= POSTS // 4:
            enough.set()

    tasks = [asyncio.ensure_future(post(i)) for i in range(POSTS)]
    await asyncio.wait_for(enough.wait(), timeout=120)
    server.kill()
    await asyncio.gather(*tasks)
    await host.aclose()
    return acknowledged


def _check(url: str, acknowledged: list[dict], key_file) -> None:
    assert POSTS // 4 <= len(acknowledged) < POSTS  # the kill landed mid-burst
    store = Store(url, key_file=key_file)  # the server processes' key file
    try:
        head = store.head()
        entries = store.log_entries(0, 1000)["entries"]
        records = {a["log"]["seq"]: a["log"]["record"] for a in acknowledged}
        result = check_log(head, entries, records=records)
        assert result.ok, result.problems
        for answer in acknowledged:
            stored = store.invitation(answer["invitation"]["invitation_id"])
            assert stored["endpoint"] == answer["invitation"]["endpoint"]
            assert entries[answer["log"]["seq"] - 1]["record_sha256"] == record_hash(
                answer["log"]["record"])
    finally:
        store.close()


@pytest.mark.slow  # a stress case: 200 concurrent posts, then SIGKILL
async def test_sigkill_on_sqlite_loses_nothing_acknowledged(tmp_path):
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    server = ServerProcess(url, str(tmp_path / "home"), extra=MANY).wait_ready()
    try:
        acknowledged = await _post_and_kill(server)
    finally:
        server.stop()
    _check(url, acknowledged, tmp_path / "server.key")


@pytest.mark.postgres
@pytest.mark.slow  # a stress case: 200 concurrent posts, then SIGKILL
async def test_sigkill_on_postgres_loses_nothing_acknowledged(tmp_path):
    url, drop = fresh_postgres_database()
    try:
        server = ServerProcess(url, str(tmp_path / "home"), extra=MANY).wait_ready()
        try:
            acknowledged = await _post_and_kill(server)
        finally:
            server.stop()
        _check(url, acknowledged, tmp_path / "server.key")
    finally:
        drop()
