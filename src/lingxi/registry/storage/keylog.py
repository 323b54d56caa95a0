"""What the log says about keys: the server key it names as current (its last
``server_key`` record) and the key an agent's identity record proves."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import select
from sqlalchemy.engine import Connection

from lingxi.registry.models.keyrecord import key_record
from lingxi.registry.models.keys import agent_id_for, is_hex
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import schema as t

_CURRENT = (select(t.log.c.record_id).where(t.log.c.kind == "server_key")
            .order_by(t.log.c.seq.desc()).limit(1))


_FIRST = (select(t.log.c.record_id).where(t.log.c.kind == "server_key")
          .order_by(t.log.c.seq).limit(1))


def first_key(conn: Connection) -> str | None:
    value = conn.execute(_FIRST).scalar()
    return str(value) if value is not None else None


def log_origin(first: str) -> str:
    """The checkpoint origin: named after the log's first key, so it survives rotations."""
    return f"lingxi.registry/{first[:16]}"


def logged_identity_key(record_text: str | None, agent_id: str) -> str | None:
    """The public key an identity record (JSON text) proves for ``agent_id``, or None."""
    if record_text is None:
        return None
    try:
        record = json.loads(record_text)
        key = json.loads(record["body"])["public_key"]
        request = SignedRequest(**record["request"])
    except (ValueError, KeyError, TypeError):
        return None
    if not is_hex(key, 64) or agent_id_for(key) != agent_id or request.agent_id != agent_id \
            or hashlib.sha256(record["body"].encode()).hexdigest() != request.body_sha256 \
            or not request.verify(key):
        return None
    return key


def current_key(conn: Connection) -> str | None:
    """The public hex of the log's current server key, or None before the first."""
    value = conn.execute(_CURRENT).scalar()
    return str(value) if value is not None else None


__all__ = ["current_key", "first_key", "key_record", "log_origin"]
