"""Proofs attached to served facts: the log records behind an answer, each with its
inclusion proof against a checkpoint signed now (checked by
:mod:`lingxi.registry.models.proofs` on the client)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from lingxi.registry.models.log import sign_head
from lingxi.registry.storage import schema as t
from lingxi.registry.storage import tree

_ROWS = select(t.log.c.seq, t.log.c.kind, t.log.c.record_id, t.log.c.record_sha256,
               t.log.c.time, t.log.c.record).where(
    t.log.c.seq.in_(bindparam("seqs", expanding=True)))
_BY_ID = select(t.log.c.seq).where(t.log.c.kind == bindparam("kind"),
                                   t.log.c.record_id.in_(bindparam("ids", expanding=True)))
_IDENTITY_SEQ = select(t.agents.c.seq).where(
    t.agents.c.agent_id.in_(bindparam("agents", expanding=True)))
_SIZE = select(t.log_head.c.size).where(t.log_head.c.id == 1)


def seqs_of(conn: Connection, kind: str, record_ids: Iterable[str]) -> list[int]:
    ids = list(record_ids)
    return list(conn.execute(_BY_ID, {"kind": kind, "ids": ids}).scalars()) if ids else []


def identity_seqs(conn: Connection, agent_ids: Iterable[str]) -> list[int]:
    agents = [a for a in agent_ids if a]
    return list(conn.execute(_IDENTITY_SEQ, {"agents": agents}).scalars()) if agents else []


def proof(uow: Any, conn: Connection, seqs: Iterable[int]) -> dict[str, Any]:
    """``{"checkpoint", "records"}`` for the log records ``seqs``, the checkpoint signed
    with ``uow``'s key, origin and clock (a :class:`.unit.UnitOfWork`)."""
    wanted = sorted({int(s) for s in seqs if s})
    rows = conn.execute(_ROWS, {"seqs": wanted}).mappings().all() if wanted else []
    size = conn.execute(_SIZE).scalar() or 0  # read last: every row above is inside it
    paths = tree.inclusions(conn, [r["seq"] - 1 for r in rows], size)
    records = []
    for row in rows:
        entry = {k: row[k] for k in ("seq", "kind", "record_id", "record_sha256", "time")}
        records.append({"seq": row["seq"], "entry": entry, "record": json.loads(row["record"]),
                        "path": [h.hex() for h in paths[row["seq"] - 1]]})
    root = tree.root(conn, size)
    return {"checkpoint": sign_head(uow.key, uow.origin, size, root, int(uow.clock())),
            "records": records}
