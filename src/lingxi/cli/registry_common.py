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

from lingxi.cli.common import safe_line
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


def registry_name(server: str) -> str:
    """Which registry ``server`` is, as a person needs to know it: the embedded one is a
    database of this home (others see it only when they share it), a URL is a server."""
    if server != EMBEDDED:
        return server

    try:
        from lingxi.registry.storage.engine import resolve_url

        where = resolve_url()
    except Exception:  # a bad database URL is reported by the command itself
        where = os.environ.get("LINGXI_DATABASE_URL") or "this home's database"
    where = where.split("@")[-1] if "://" in where and "@" in where else where  # no password
    return f"the embedded registry ({safe_line(where, 300)})"


def _text_mode() -> bool:
    context = click.get_current_context(silent=True)
    return not (context is not None and context.params.get("as_json"))


def announce(server: str) -> None:
    """Say on stderr which registry a command uses (text mode; --json keeps stdout pure)."""
    if _text_mode():
        click.echo(f"registry: {registry_name(server)}", err=True)


def explain(error: LingxiError, server: str) -> LingxiError:
    """``error`` naming the registry that was asked; a missing invitation, protocol or
    session adds how to reach another machine's registry."""
    if "(asked " in error.message:
        return error
    note = f" (asked {registry_name(server)})"
    if error.code.endswith("_not_found") and server == EMBEDDED:
        note += ("; the embedded registry is this home's own database: to meet another "
                 "machine, run `lingxi server` on one and pass --server http://HOST:8470 on "
                 "both")
    error.message += note
    error.args = (error.message,)
    return error


def make_client(server: str, *, identity: bool | str = False, quiet: bool = False) -> Any:
    """A RegistryClient for ``server``; ``identity`` "create" makes a key when missing.
    The command says which registry it uses (:func:`announce`) unless ``quiet``."""
    _import_registry()
    if not quiet:
        announce(server)
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
        identity: bool | str = False, quiet: bool = False) -> Any:
    """Run one async ``call(client)`` against ``server`` and close the client; a refusal
    names the registry that was asked (:func:`explain`)."""
    client = make_client(server, identity=identity, quiet=quiet)

    async def main() -> Any:
        async with client:
            return await call(client)

    try:
        return asyncio.run(main())
    except LingxiError as error:
        raise explain(error, server) from None
