"""The list cache on PostgreSQL: a cached answer asks the database nothing, yet a write
shows at once through the process that made it, through another process once its
notification arrives, and a lost listening connection never hides one."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from sqlalchemy import event

from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store

from .conftest import Api, empty_postgres

pytestmark = pytest.mark.postgres
ENDPOINT = "tcp://127.0.0.1:9000"
FOREVER = 10 ** 6  # no answer ages out during a test: only a write can refresh it


@pytest.fixture
def pg_url(postgres_database) -> str:
    empty_postgres(postgres_database)
    return postgres_database


@pytest.fixture
async def two(pg_url, alice):
    """Two stores (two server processes, as far as the cache can tell) on one database,
    each behind its app, both caching for good; alice registered and a protocol."""
    from .conftest import rps_spec

    first, second = Store(pg_url), Store(pg_url)
    try:
        apps = [create_app(s, cache_ttl=FOREVER) for s in (first, second)]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=apps[0]),
                                     base_url="http://a") as a, \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=apps[1]),
                                  base_url="http://b") as b:
            one, other = Api(a, first), Api(b, second)
            assert (await one.register(alice, "alice")).status_code == 201
            spec = await one.signed(alice, "POST", "/v1/protocols", {"spec": rps_spec()})
            yield one, other, spec.json()["protocol_id"]
    finally:
        first.close()
        second.close()


async def until(check, what: str, deadline: float = 30.0) -> None:
    """Wait for ``check()`` to hold (a notification travels between processes)."""
    end = time.monotonic() + deadline
    while not await check():
        if time.monotonic() > end:
            pytest.fail(f"never happened: {what}")
        await asyncio.sleep(0.01)


async def listening(api: Api) -> None:
    await api.get("/v1/invitations")  # the first list read starts the listener

    async def ready() -> bool:
        return api.store.log_reads.changes.listening

    await until(ready, "the store listens for log changes")


async def ids(api: Api) -> list[str]:
    return [i["invitation_id"] for i in (await api.get("/v1/invitations")).json()["items"]]


async def post(api: Api, who, pid: str) -> str:
    answer = await api.signed(who, "POST", "/v1/invitations",
                              {"protocol_id": pid, "endpoint": ENDPOINT})
    assert answer.status_code == 201, answer.text
    return answer.json()["invitation"]["invitation_id"]


async def test_a_cached_list_answer_runs_no_statement(two, alice):
    one, _, pid = two
    await listening(one)
    posted = await post(one, alice, pid)
    assert await ids(one) == [posted]  # the writer's own process shows it at once
    statements: list[str] = []

    def seen(_conn, _cursor, statement, *_rest) -> None:  # noqa: ANN001
        statements.append(statement)

    event.listen(one.store.reader, "before_cursor_execute", seen)
    try:
        assert await ids(one) == [posted]
    finally:
        event.remove(one.store.reader, "before_cursor_execute", seen)
    assert statements == []


async def test_another_process_write_shows_once_notified(two, alice):
    one, other, pid = two
    await listening(one)
    assert await ids(one) == []  # cached, for good unless a write is heard of
    posted = await post(other, alice, pid)

    async def shown() -> bool:
        return await ids(one) == [posted]

    await until(shown, "the other process's write shows in the cached list")


async def test_a_lost_listening_connection_does_not_hide_a_write(two, alice):
    one, other, pid = two
    await listening(one)
    assert await ids(one) == []
    with one.store.writer.connect() as conn:  # the server drops the listener's connection
        killed = conn.exec_driver_sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE query = 'LISTEN lingxi_log' AND pid <> pg_backend_pid() "
            "AND datname = current_database()").all()
        conn.commit()
    assert killed == [(True,)]
    posted = await post(other, alice, pid)  # no notification reaches the dead connection

    async def shown() -> bool:
        return await ids(one) == [posted]

    await until(shown, "the write shows after the listener's connection was lost")
