"""Registry fixtures: a store on each backend, the app over an in-process transport, agents.

PostgreSQL tests use a fresh database they create on 127.0.0.1:5432 (trust
auth, user postgres) and drop afterwards; they skip with the reason when no
server answers, and fail instead when CI=true.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lingxi.registry.models.signing import sign_request
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store
from lingxi.wire.identity import Identity

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ROOT / "src" / "lingxi" / "protocols"
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def rps_spec() -> dict:
    return json.loads((PROTOCOLS / "rock-paper-scissors" / "spec.json").read_text())


def builtin_spec(name: str) -> dict:
    return json.loads((PROTOCOLS / name / "spec.json").read_text())


def _postgres_up() -> str | None:
    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             connect_timeout=3):
            return None
    except Exception as error:  # noqa: BLE001 - any failure means "no server here"
        return f"no PostgreSQL at 127.0.0.1:5432 ({type(error).__name__}: {error})"


def require_postgres() -> None:
    reason = _postgres_up()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; .ci/run must start one")
        pytest.skip(reason)


def fresh_postgres_database() -> tuple[str, callable]:
    """``(url, drop)`` for a new empty database."""
    import psycopg

    require_postgres()
    name = "lingxi_test_" + secrets.token_hex(6)
    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", drop


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """One fresh database for the whole run (created here, dropped at the end)."""
    url, drop = fresh_postgres_database()
    try:
        yield url
    finally:
        drop()


def empty_postgres(url: str) -> None:
    """Bring the shared test database back to an empty, migrated registry."""
    from sqlalchemy import create_engine, text

    from lingxi.registry.storage.engine import migrate
    from lingxi.registry.storage.schema import metadata

    engine = create_engine(url)
    try:
        migrate(engine)
        with engine.begin() as conn:
            names = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
            conn.execute(text(f"TRUNCATE {names}"))
            conn.execute(text("INSERT INTO log_head (id, size, head) VALUES (1, 0, :z)"),
                         {"z": "0" * 64})
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'registry.db'}"
        return
    url = request.getfixturevalue("postgres_database")
    empty_postgres(url)
    yield url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'registry.db'}"


class Clock:
    """A settable clock for expiry tests (starts at the real time)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(database_url, clock) -> Iterator[Store]:
    s = Store(database_url, clock=clock, claim_timeout=30)
    try:
        yield s
    finally:
        s.close()


class Api:
    """Raw HTTP against the app, signing with any identity, with the real clock."""

    def __init__(self, http: httpx.AsyncClient, store: Store) -> None:
        self.http = http
        self.store = store

    async def get(self, path: str, **params) -> httpx.Response:
        return await self.http.get(path, params=params or None)

    async def signed(self, who: Identity, method: str, path: str, body=None, *,
                     headers: dict | None = None, now: float | None = None,
                     nonce: str | None = None, raw: bytes | None = None) -> httpx.Response:
        content = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
        signing = sign_request(who, method, path, content,
                               now=self.store.clock() if now is None else now, nonce=nonce)
        return await self.http.request(method, path, content=content,
                                       headers={**signing, **(headers or {}),
                                                "content-type": "application/json"})

    async def register(self, who: Identity, nickname: str) -> httpx.Response:
        return await self.signed(who, "POST", "/v1/identities",
                                 {"nickname": nickname, "public_key": who.public_hex})

    async def log_size(self) -> int:
        return (await self.get("/v1/log/head")).json()["size"]


@pytest.fixture
async def api(store) -> Iterator[Api]:
    app = create_app(store)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://registry.test") as http:
        yield Api(http, store)


@pytest.fixture
def alice() -> Identity:
    return Identity.from_seed(b"a" * 32)


@pytest.fixture
def bob() -> Identity:
    return Identity.from_seed(b"b" * 32)


@pytest.fixture
async def world(api, alice, bob):
    """Alice and Bob registered and rock-paper-scissors published by Alice."""
    assert (await api.register(alice, "alice")).status_code == 201
    assert (await api.register(bob, "bob")).status_code == 201
    answer = await api.signed(alice, "POST", "/v1/protocols", {"spec": rps_spec()})
    assert answer.status_code == 201, answer.text
    return answer.json()["protocol_id"]
