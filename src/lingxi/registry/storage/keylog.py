"""Which server key the log names as current (its last ``server_key`` record)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection

from lingxi.registry.models.keyrecord import key_record
from lingxi.registry.storage import schema as t

_CURRENT = (select(t.log.c.record_id).where(t.log.c.kind == "server_key")
            .order_by(t.log.c.seq.desc()).limit(1))


def current_key(conn: Connection) -> str | None:
    """The public hex of the log's current server key, or None before the first."""
    value = conn.execute(_CURRENT).scalar()
    return str(value) if value is not None else None


__all__ = ["current_key", "key_record"]
