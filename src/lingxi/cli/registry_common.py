"""Shared plumbing of the registry commands: ``--server``, the client, running a call.

``--server URL`` (or ``$LINGXI_REGISTRY``) names a running registry; the
default, ``embedded``, opens the local registry database (SQLite under
$LINGXI_HOME, or ``$LINGXI_DATABASE_URL``) inside this process, so every
command works without a server running. Heavy modules are imported only when
a command runs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

import click

from lingxi.errors import EXIT_USAGE, LingxiError

EMBEDDED = "embedded"
EMBEDDED_URL = "http://embedded.registry"

server_option = click.option(
    "--server", "server", default=lambda: os.environ.get("LINGXI_REGISTRY", EMBEDDED),
    show_default="embedded (or $LINGXI_REGISTRY)", metavar="URL",
    help="Registry base URL, or 'embedded' for the local registry database.")


def _import_registry() -> None:
    try:
        import httpx  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError as error:
        raise LingxiError("registry.not_installed",
                          f"the registry needs its extra: pip install 'lingxi[registry]' "
                          f"({error.name} is missing)", exit_code=EXIT_USAGE) from None


def make_client(server: str, *, identity: bool | str = False) -> Any:
    """A RegistryClient for ``server``; ``identity`` "create" makes a key when missing."""
    _import_registry()
    from lingxi.registry.client.api import RegistryClient
    from lingxi.registry.client.ledger import Ledger, ledger_dir
    from lingxi.wire.identity import Identity

    me = None
    if identity == "create":
        me, _ = Identity.load_or_create()
    elif identity:
        me = Identity.load()
    if server == EMBEDDED:
        import httpx

        from lingxi.registry.server.app import create_app
        from lingxi.registry.storage.store import Store

        app = create_app(Store())
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        return RegistryClient(EMBEDDED_URL, me, transport=transport,
                              ledger=Ledger(ledger_dir(f"embedded:{app.state.store.url}")))
    if not server.startswith(("http://", "https://")):
        raise LingxiError("registry.bad_server", f"--server must be an http(s) URL or "
                          f"'embedded', not {server!r}", exit_code=EXIT_USAGE)
    return RegistryClient(server, me, ledger=Ledger(ledger_dir(server)))


def run(server: str, call: Callable[[Any], Awaitable[Any]], *,
        identity: bool | str = False) -> Any:
    """Run one async ``call(client)`` against ``server`` and close the client."""
    client = make_client(server, identity=identity)

    async def main() -> Any:
        async with client:
            return await call(client)

    return asyncio.run(main())
