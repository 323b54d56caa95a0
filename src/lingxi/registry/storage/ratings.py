"""Ratings: the Elo update a settled session's agreed receipts make (each run counted once,
never against oneself), and an agent's ratings with the log records of their games (and its
posted tables' outcome counts, :mod:`.tables`)."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlalchemy.engine import Connection

from lingxi.canonical import canonical_json
from lingxi.registry.models import rating as elo
from lingxi.registry.models.keys import is_hex
from lingxi.registry.storage import proofs
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad
from lingxi.registry.storage.unit import UnitOfWork

HISTORY = 100  # counted games listed per rating


def _sha(value: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def _counted_before(conn: Connection, session_id: str, run: str) -> bool:
    return (
        conn.execute(
            select(t.rated_sessions.c.session_id).where(
                or_(t.rated_sessions.c.session_id == session_id, t.rated_sessions.c.run == run)
            )
        ).first()
        is not None
    )


def rate(
    conn: Connection,
    row: Any,
    host: dict[str, Any],
    guest: dict[str, Any],
    pair: list[str],
    seq: int,
) -> dict[str, Any] | None:
    """The facts of the rating record for a session whose second receipt (logged at
    ``seq``) just came in, with the ``ratings`` rows updated, or None when it does not
    count: the receipts disagree, name no agreed result, or their run already counted.
    Both receipts were verified against the session's parties' logged keys."""
    if pair:
        return None
    result, _ = elo.agreed_result(host, guest)
    if result is None:
        return None
    sid, pid = row["session_id"], row["protocol_id"]
    run = _sha({"session_id": host["session_id"], "handshake": host.get("handshake")})
    if _counted_before(conn, sid, run):
        return None
    parties = (row["host_agent_id"], row["guest_agent_id"])
    if parties[0] == parties[1]:  # claims refuse this; a rating against oneself never counts
        return None
    found = {
        r.agent_id: r
        for r in conn.execute(
            select(t.ratings).where(
                t.ratings.c.protocol_id == pid, t.ratings.c.agent_id.in_(parties)
            )
        )
    }
    before = tuple(
        elo.Standing(found[a].rating, found[a].games) if a in found else elo.Standing()
        for a in parties
    )
    earlier = proofs.seqs_of(conn, "receipt", [f"{sid}:host", f"{sid}:guest"])
    receipts = {
        "host": {"sha256": _sha(host)},
        "guest": {"sha256": _sha(guest)},
        "seqs": sorted([*earlier, seq]),
    }
    facts = elo.rating_record(
        session_id=sid,
        protocol_id=pid,
        result=result,
        host_agent_id=parties[0],
        guest_agent_id=parties[1],
        before=(before[0], before[1]),
        receipts=receipts,
    )
    mine = seq + 1  # the rating record follows the receipt record
    for side in ("host", "guest"):
        agent, now = facts[side]["agent_id"], facts[side]
        values = {"rating": now["after"], "games": now["games"], "seq": mine}
        if agent in found:
            conn.execute(
                update(t.ratings)
                .where(t.ratings.c.agent_id == agent, t.ratings.c.protocol_id == pid)
                .values(**values)
            )
        else:
            conn.execute(insert(t.ratings).values(agent_id=agent, protocol_id=pid, **values))
    conn.execute(insert(t.rated_sessions).values(session_id=sid, run=run, seq=mine))
    return facts


def _history(conn: Connection, agent_id: str, protocol_id: str) -> list[int]:
    s = t.sessions
    return list(
        conn.execute(
            select(t.rated_sessions.c.seq)
            .join(s, s.c.session_id == t.rated_sessions.c.session_id)
            .where(
                s.c.protocol_id == protocol_id,
                or_(s.c.host_agent_id == agent_id, s.c.guest_agent_id == agent_id),
            )
            .order_by(t.rated_sessions.c.seq.desc())
            .limit(HISTORY)
        ).scalars()
    )


def ratings(uow: UnitOfWork, agent_id: str, protocol_id: str | None = None) -> dict[str, Any]:
    """``agent_id``'s ratings (one protocol's, or every protocol it played), each with
    the log records of its counted games (newest 100) and their inclusion proofs."""
    if not isinstance(agent_id, str) or not agent_id or len(agent_id) > 32:
        raise bad("agent is required (an agent id)")
    if protocol_id is not None and not is_hex(protocol_id, 64):
        raise bad("protocol_id must be 64 lowercase hex chars")
    query = select(t.ratings).where(t.ratings.c.agent_id == agent_id)
    if protocol_id is not None:
        query = query.where(t.ratings.c.protocol_id == protocol_id)
    with uow.reader.connect() as conn:
        rows = conn.execute(query.order_by(t.ratings.c.protocol_id)).mappings().all()
        items: list[dict[str, Any]] = []
        seqs: list[int] = []
        for r in rows:
            history = _history(conn, agent_id, r["protocol_id"])
            items.append(
                {
                    "protocol_id": r["protocol_id"],
                    "rating": r["rating"],
                    "games": r["games"],
                    "last_seq": r["seq"],
                    "history": sorted(history),
                }
            )
            seqs += history
        if protocol_id is not None and not items:
            items.append(
                {
                    "protocol_id": protocol_id,
                    "rating": None,
                    "games": 0,
                    "last_seq": None,
                    "history": [],
                }
            )
        tables = _tables(conn, agent_id, protocol_id)
        seqs += [item["last_seq"] for item in tables]
        proof = proofs.proof(uow, conn, [*seqs, *proofs.identity_seqs(conn, [agent_id])])
    return {
        "agent_id": agent_id,
        "system": {"name": "elo", "k": elo.K, "initial": elo.INITIAL},
        "items": items,
        "tables": tables,
        "proof": proof,
    }


def _tables(conn: Connection, agent_id: str, protocol_id: str | None) -> list[dict[str, Any]]:
    """``agent_id``'s table outcomes per protocol (posted tables rate no Elo: see
    :mod:`lingxi.registry.models.rating`), each with its last group receipt record."""
    query = select(t.table_standings).where(t.table_standings.c.agent_id == agent_id)
    if protocol_id is not None:
        query = query.where(t.table_standings.c.protocol_id == protocol_id)
    rows = conn.execute(query.order_by(t.table_standings.c.protocol_id)).mappings().all()
    return [{"protocol_id": r["protocol_id"], "completed": r["completed"], "left": r["left"],
             "timed_out": r["timed_out"], "last_seq": r["seq"]} for r in rows]
