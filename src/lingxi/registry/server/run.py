"""Run the registry on uvicorn: ``lingxi server`` and the tests' server processes."""

from __future__ import annotations

import logging

from lingxi.registry.models.records import (
    DEFAULT_CLAIMS_PER_MINUTE,
    DEFAULT_PRESENCE_TIMEOUT,
    DEFAULT_WRITES_PER_MINUTE,
)
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store


def serve(host: str = "127.0.0.1", port: int = 8470, database_url: str | None = None, *,
          claim_timeout: float = 60.0, access_log: bool = False,
          ready: object = None, relay: tuple[str, ...] = (),
          key_file: str | None = None, endpoint_policy: str = "lan",
          max_open_invitations: int | None = None,
          presence_timeout: float = DEFAULT_PRESENCE_TIMEOUT,
          writes_per_minute: int | None = DEFAULT_WRITES_PER_MINUTE,
          claims_per_minute: int | None = DEFAULT_CLAIMS_PER_MINUTE) -> None:
    """Open (and migrate) the database, then serve until interrupted.

    ``relay``: the NATS URLs of the relay (``lingxi relay serve``) whose
    credentials this registry signs; ``key_file``: the signing key's file (see
    :mod:`lingxi.registry.storage.secrets` for the default)."""
    import uvicorn

    store = Store(database_url, claim_timeout=claim_timeout, key_file=key_file,
                  endpoint_policy=endpoint_policy, presence_timeout=presence_timeout,
                  writes_per_minute=writes_per_minute, claims_per_minute=claims_per_minute)
    if max_open_invitations is not None:
        store.max_open_invitations = max_open_invitations
    if relay:
        store.relay_servers = list(relay)  # type: ignore[attr-defined]
    loopback = host in ("127.0.0.1", "localhost", "::1")
    app = create_app(store, allowed_hosts=("127.0.0.1", "localhost", "::1") if loopback
                     else None)
    logging.basicConfig(level=logging.WARNING)
    config = uvicorn.Config(app, host=host, port=port, access_log=access_log,
                            log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    if callable(ready):
        ready(store)
    try:
        server.run()
    finally:
        store.close()
