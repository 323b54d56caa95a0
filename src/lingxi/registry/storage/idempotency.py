"""Idempotency keys: a write retried with the same key gets its first answer back.

A write that committed but whose answer was lost (a crash, a cut connection)
is retried by the client with a freshly signed request and the same
``Idempotency-Key`` header; the registry finds the key (per agent) inside
the write transaction and returns the stored answer instead of writing
again. The key is bound to the request — method, path and body hash — so
reusing one for another request is refused (``registry.idempotency_mismatch``,
422). Only accepted writes are remembered (a refusal can be retried), for
24 hours.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.engine import Connection

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import schema as t

HEADER = "idempotency-key"
KEEP_SECONDS = 24 * 3600
_KEY = re.compile(r"^[A-Za-z0-9_.:-]{16,128}$")
_FIND = select(t.idempotency.c.request_sha256, t.idempotency.c.response).where(
    t.idempotency.c.agent_id == bindparam("a"), t.idempotency.c.key == bindparam("k"))
_ADD = insert(t.idempotency)


def check_key(key: str) -> str:
    if not _KEY.match(key):
        raise RegistryError("registry.bad_idempotency_key",
                            "Idempotency-Key must be 16-128 letters, digits or _ . : -")
    return key


def _request_sha(signed: SignedRequest) -> str:
    text = "\n".join([signed.method, signed.path, signed.body_sha256])
    return hashlib.sha256(text.encode()).hexdigest()


def replay(conn: Connection, signed: SignedRequest, key: str) -> dict[str, Any] | None:
    """The stored answer for ``key`` if this agent made this very request with it."""
    row = conn.execute(_FIND, {"a": signed.agent_id, "k": key}).first()
    if row is None:
        return None
    if row.request_sha256 != _request_sha(signed):
        raise RegistryError("registry.idempotency_mismatch",
                            "this Idempotency-Key was used for another request", status=422)
    answer: dict[str, Any] = json.loads(row.response)
    return {**answer, "replayed": True}


def remember(conn: Connection, signed: SignedRequest, key: str, answer: dict[str, Any],
             now: float) -> None:
    conn.execute(_ADD, {"agent_id": signed.agent_id, "key": key,
                        "request_sha256": _request_sha(signed),
                        "response": json.dumps(answer, ensure_ascii=False), "ts": int(now)})


def purge(conn: Connection, now: float) -> None:
    conn.execute(delete(t.idempotency).where(t.idempotency.c.ts < int(now) - KEEP_SECONDS))
