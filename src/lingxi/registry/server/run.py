"""Run the registry on uvicorn: ``lingxi server`` and the tests' server processes.

With ``workers`` above 1 the server is that many uvicorn worker processes on one
listening socket, each with its own store on the one database (multi-process safe,
see :func:`check_workers`). The parent process
migrates the database and opens the server key first, so the workers never race to
create either; each worker then builds its app from :func:`worker_app`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from typing import Any

from starlette.applications import Starlette

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.records import (
    DEFAULT_CLAIMS_PER_MINUTE,
    DEFAULT_PRESENCE_TIMEOUT,
    DEFAULT_WRITES_PER_MINUTE,
)
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.engine import resolve_url
from lingxi.registry.storage.store import Store

# how the parent hands a worker its store's settings (uvicorn spawns the workers)
WORKER_SETTINGS = "LINGXI_REGISTRY_WORKER_SETTINGS"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """What a server process needs to open its store and build its app (a worker gets
    it from the parent as JSON)."""

    url: str
    claim_timeout: float
    key_file: str | None
    endpoint_policy: str
    presence_timeout: float
    writes_per_minute: int | None
    claims_per_minute: int | None
    max_open_invitations: int | None
    relay: list[str]
    loopback: bool


def serve(host: str = "127.0.0.1", port: int = 8470, database_url: str | None = None, *,
          claim_timeout: float = 60.0, access_log: bool = False,
          ready: object = None, relay: tuple[str, ...] = (),
          key_file: str | None = None, endpoint_policy: str = "lan",
          max_open_invitations: int | None = None,
          presence_timeout: float = DEFAULT_PRESENCE_TIMEOUT,
          writes_per_minute: int | None = DEFAULT_WRITES_PER_MINUTE,
          claims_per_minute: int | None = DEFAULT_CLAIMS_PER_MINUTE,
          workers: int = 1) -> None:
    """Open (and migrate) the database, then serve until interrupted.

    ``relay``: the NATS URLs of the relay (``lingxi relay serve``) whose
    credentials this registry signs; ``key_file``: the signing key's file (see
    :mod:`lingxi.registry.storage.secrets` for the default); ``workers``: server
    processes on one socket (each keeps its own rate-limit counts)."""
    import uvicorn

    settings = ServerSettings(
        url=resolve_url(database_url), claim_timeout=claim_timeout, key_file=key_file,
        endpoint_policy=endpoint_policy, presence_timeout=presence_timeout,
        writes_per_minute=writes_per_minute, claims_per_minute=claims_per_minute,
        max_open_invitations=max_open_invitations, relay=list(relay),
        loopback=host in LOOPBACK)
    check_workers(workers)
    store = open_store(settings)
    logging.basicConfig(level=logging.WARNING)
    common: dict[str, Any] = {"host": host, "port": port, "access_log": access_log,
                              "log_level": "warning", "lifespan": "off"}
    if workers > 1:
        if callable(ready):
            ready(store)
        store.close()  # migrated and keyed: each worker opens its own
        os.environ[WORKER_SETTINGS] = json.dumps(dataclasses.asdict(settings))
        uvicorn.run("lingxi.registry.server.run:worker_app", factory=True, workers=workers,
                    **common)
        return
    server = uvicorn.Server(uvicorn.Config(app_for(store, settings), **common))
    if callable(ready):
        ready(store)
    try:
        server.run()
    finally:
        store.close()


def check_workers(workers: int) -> None:
    """Any number of worker processes may share the database: on PostgreSQL each commit
    notifies every other process (their list caches) and the head row lock serialises
    writes; on SQLite the list cache reads the log size and the writers of every
    process queue on one file lock (``storage.unit.WriterLock``)."""
    if workers < 1:
        raise RegistryError("registry.bad_workers", "--workers must be at least 1")


def open_store(settings: ServerSettings) -> Store:
    store = Store(settings.url, claim_timeout=settings.claim_timeout,
                  key_file=settings.key_file, endpoint_policy=settings.endpoint_policy,
                  presence_timeout=settings.presence_timeout,
                  writes_per_minute=settings.writes_per_minute,
                  claims_per_minute=settings.claims_per_minute)
    if settings.max_open_invitations is not None:
        store.max_open_invitations = settings.max_open_invitations
    if settings.relay:
        store.relay_servers = list(settings.relay)  # type: ignore[attr-defined]
    return store


def app_for(store: Store, settings: ServerSettings) -> Starlette:
    return create_app(store, allowed_hosts=LOOPBACK if settings.loopback else None)


def worker_app() -> Starlette:
    """One worker process's app (uvicorn's factory), from the parent's settings."""
    settings = ServerSettings(**json.loads(os.environ[WORKER_SETTINGS]))
    return app_for(open_store(settings), settings)
