"""The server key as the log names it: loaded from its file at start-up (a first key is
logged, another process's key refused) and rotated with a cross-signed log record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.keylog import current_key, first_key, key_record, log_origin
from lingxi.registry.storage.secrets import ENV, load_server_key, write_secret
from lingxi.registry.storage.unit import UnitOfWork


def open_key(uow: UnitOfWork, key_file: Path) -> ServerKey:
    """Load the key file (moving a key an older version kept in ``meta`` out to it) and
    make sure the log names this key as current: a first key is logged, another
    process's key is refused (``registry.key_mismatch``). Sets ``uow.key`` and
    ``uow.origin``."""
    with uow.transaction() as (conn, head):
        legacy = conn.execute(
            select(t.meta.c.value).where(t.meta.c.key == "server_key")
        ).scalar()
        key = load_server_key(key_file, fallback=legacy)
        if legacy is not None:
            if legacy != key.private_hex():
                raise RegistryError(
                    "registry.key_mismatch",
                    f"{key_file} holds another key than the "
                    "one this database kept in its meta table; move one of them away",
                    status=500,
                    exit_code=2,
                )
            conn.execute(delete(t.meta).where(t.meta.c.key == "server_key"))
        current = current_key(conn)
        if current is None:
            record = key_record(key, None, reason="migrated" if legacy else "first")
            uow.append(conn, head, "server_key", key.public_hex, record, uow.clock())
        elif current != key.public_hex:
            raise RegistryError(
                "registry.key_mismatch",
                f"the log's current server key is "
                f"{current[:16]}…, but {key_file} holds {key.public_hex[:16]}…; give "
                "this process the same key file as the others (--key-file or "
                f"${ENV})",
                status=500,
                exit_code=2,
            )
        uow.origin = log_origin(first_key(conn) or key.public_hex)
    uow.key = key
    return key


def rotate(uow: UnitOfWork, key_file: Path, new: ServerKey) -> dict[str, Any]:
    """Log ``new`` as the server key, cross-signed by the current one, then put it in
    the key file. Other processes on the database must be restarted with the file."""
    with uow.transaction() as (conn, head):
        if current_key(conn) != uow.key.public_hex:
            raise RegistryError(
                "registry.key_mismatch",
                "this process's key is no longer the log's current key",
                status=409,
            )
        record = key_record(new, uow.key, reason="rotation")
        log = uow.append(conn, head, "server_key", new.public_hex, record, uow.clock())
    write_secret(key_file, new.private_hex(), replace=True)
    uow.key = new
    return log
