"""Several server processes on one database are one registry: posts made through
either, interleaved, land in one ordered log, and every invitation's proof checks
through the other process (issues 22.4, 18.9: ``lingxi server --workers N``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lingxi.registry.client.api import RegistryClient
from lingxi.registry.models.log import check_log
from lingxi.registry.server.run import check_workers
from lingxi.wire.identity import Identity

from .conftest import fresh_postgres_database, rps_spec
from .servers import ServerProcess

HOSTS, POSTS = 4, 12  # per host, half through each process, all at once


async def _post_everywhere(urls: list[str]) -> tuple[list[dict], list[RegistryClient]]:
    """Every host posts ``POSTS`` invitations concurrently, alternating between ``urls``."""
    hosts = [Identity.from_seed(bytes([0x40 + h]) * 32) for h in range(HOSTS)]
    clients = [[RegistryClient(url, who, timeout=60) for url in urls] for who in hosts]
    await asyncio.gather(*(mine[0].register(f"host{h}") for h, mine in enumerate(clients)))
    pid = (await clients[0][-1].register_protocol(rps_spec()))["protocol_id"]

    async def post(h: int, i: int) -> dict:
        return await clients[h][i % len(urls)].post_invitation(
            pid, endpoint=f"tcp://127.0.0.1:{9000 + 100 * h + i}", options={"best_of": 3})

    posted = await asyncio.gather(*(post(h, i) for h in range(HOSTS) for i in range(POSTS)))
    return list(posted), [c for mine in clients for c in mine]


async def _assert_one_registry(urls: list[str], posted: list[dict]) -> None:
    readers = [RegistryClient(url, timeout=60) for url in urls]
    try:
        key = {(await r.info())["server_public_key"] for r in readers}
        assert len(key) == 1  # one server key
        head, entries = await readers[0].head(), await readers[-1].log_entries()
        assert check_log(head, entries).ok  # one ordered Merkle log, its head signed
        seqs = sorted(p["seq"] for p in posted)
        assert len(set(seqs)) == len(posted) == HOSTS * POSTS
        logged = {e["record_id"]: e["seq"] for e in entries if e["kind"] == "invitation"}
        assert {p["invitation_id"]: p["seq"] for p in posted} == logged
        for n, p in enumerate(posted):  # each proof checks, read through another process
            proven = await readers[(n + 1) % len(readers)].invitation(p["invitation_id"])
            assert (proven["seq"], proven["endpoint"]) == (p["seq"], p["endpoint"])
    finally:
        for reader in readers:
            await reader.aclose()


async def _two_processes(url: str, tmp_path) -> None:
    servers = [ServerProcess(url, str(tmp_path / f"home{i}"), extra=("--rate-limit", "0"))
               for i in range(2)]
    clients: list[RegistryClient] = []
    try:
        for server in servers:
            server.wait_ready()
        urls = [s.url for s in servers]
        posted, clients = await _post_everywhere(urls)
        await _assert_one_registry(urls, posted)
    finally:
        for client in clients:
            await client.aclose()
        for server in servers:
            server.stop()


@pytest.mark.postgres
@pytest.mark.slow
async def test_two_processes_on_postgres_keep_one_log(tmp_path):
    url, drop = fresh_postgres_database()
    try:
        await _two_processes(url, tmp_path)
    finally:
        drop()


@pytest.mark.slow
async def test_two_processes_on_sqlite_keep_one_log(tmp_path):
    """Their writers queue on one file lock (``unit.WriterLock``), not SQLite's retries."""
    await _two_processes(f"sqlite:///{tmp_path / 'registry.db'}", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres",
                                                            marks=pytest.mark.postgres)])
async def test_workers_serve_one_registry_on_one_port(backend, tmp_path):
    """``lingxi server --workers 2``: the parent migrates and keys the database, the
    workers share the port; concurrent posts through it all land in the one log."""
    url, drop = ((f"sqlite:///{tmp_path / 'registry.db'}", None) if backend == "sqlite"
                 else fresh_postgres_database())
    server = ServerProcess(url, str(tmp_path / "home"),
                           extra=("--rate-limit", "0", "--workers", "2"))
    clients: list[RegistryClient] = []
    try:
        server.wait_ready()
        assert len(_spawned_under(server.proc.pid)) == 2  # two workers serve the port
        posted, clients = await _post_everywhere([server.url])
        await _assert_one_registry([server.url], posted)
    finally:
        for client in clients:
            await client.aclose()
        server.stop()
        if drop:
            drop()


def _spawned_under(pid: int) -> list[int]:
    """The multiprocessing workers whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or it ended
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"spawn_main" in command:
            found.append(int(entry.name))
    return found


def test_workers_below_one_are_a_usage_error():
    from lingxi.registry.errors import RegistryError

    with pytest.raises(RegistryError) as refused:
        check_workers(0)
    assert refused.value.code == "registry.bad_workers" and refused.value.exit_code == 2
