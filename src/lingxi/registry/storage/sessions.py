"""Sessions and their receipts: reading one with the proof of its receipts and parties,
listing them, and posting a party's signed receipt — the second one settles the session
(verified when both agree) and, when it counts, rates it (:mod:`.ratings`)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from lingxi.canonical import canonical_json
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.receipt import MAX_BYTES as RECEIPT_MAX
from lingxi.registry.models.receipt import pair_problems, receipt_problems
from lingxi.registry.models.records import decode_cursor, encode_cursor, iso
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import proofs, ratings
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad, not_found, page_limit
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.unit import Change, UnitOfWork

_FIELDS = ("session_id", "invitation_id", "protocol_id", "host_agent_id", "guest_agent_id",
           "status", "verified", "seq")


def view(row: Any) -> dict[str, Any]:
    """The session as the API serves it."""
    out = {k: row[k] for k in _FIELDS}
    out.update(
        created_at=iso(row["created_at"]),
        updated_at=iso(row["updated_at"]),
        outcome=json.loads(row["outcome"]) if row["outcome"] else None,
        receipts={
            "host": json.loads(row["host_receipt"]) if row["host_receipt"] else None,
            "guest": json.loads(row["guest_receipt"]) if row["guest_receipt"] else None,
        },
    )
    return out


def _row(conn: Connection, session_id: str) -> Any:
    return (
        conn.execute(select(t.sessions).where(t.sessions.c.session_id == session_id))
        .mappings()
        .first()
    )


def _role(signed: SignedRequest, row: Any) -> str:
    if signed.agent_id == row["host_agent_id"]:
        return "host"
    if signed.agent_id == row["guest_agent_id"]:
        return "guest"
    raise RegistryError(
        "registry.not_party",
        "only the host or the guest of this session may post its receipt",
        status=403,
    )


def _settle(conn: Connection, row: Any, role: str, receipt: dict[str, Any], other: str,
            seq: int, values: dict[str, Any], facts: dict[str, Any]
            ) -> list[tuple[str, str, dict[str, Any]]]:
    """The second receipt came in: the outcome into ``values``, the verdict into ``facts``,
    the invitation finished; the rating record to log after the receipt, if it counts."""
    session_id = row["session_id"]
    host, guest = (receipt, json.loads(other)) if role == "host" else (json.loads(other), receipt)
    pair = pair_problems(host, guest)
    values.update(
        status="finished",
        verified=not pair,
        outcome=json.dumps(
            {"host_status": host["status"], "guest_status": guest["status"], "problems": pair}
        ),
    )
    facts["verified"] = not pair
    counted = ratings.rate(conn, row, host, guest, pair, seq)
    facts["rated"] = counted is not None
    conn.execute(
        update(t.invitations)
        .where(
            t.invitations.c.invitation_id == row["invitation_id"],
            t.invitations.c.session_id == session_id,
        )
        .values(status="finished")
    )
    return [("rating", session_id, counted)] if counted is not None else []


class Sessions:
    """The ``sessions`` aggregate (created by claims, settled by receipts)."""

    def __init__(self, uow: UnitOfWork, identities: Identities) -> None:
        self.uow, self.identities = uow, identities

    def session(self, session_id: str) -> dict[str, Any]:
        """One session, with the proof of its receipt records and its parties' identities."""
        with self.uow.reader.connect() as conn:
            row = _row(conn, session_id)
            if row is None:
                raise not_found("session", session_id)
            seqs = proofs.seqs_of(conn, "receipt", [f"{session_id}:host", f"{session_id}:guest"])
            proof = proofs.proof(
                self.uow,
                conn,
                [*seqs, *proofs.identity_seqs(conn, [row["host_agent_id"], row["guest_agent_id"]])],
            )
        return {**view(row), "proof": proof}

    def sessions(
        self,
        *,
        status: str | None = None,
        protocol_id: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        limit, before = page_limit(limit), decode_cursor(cursor)
        query = select(t.sessions)
        if status:
            query = query.where(t.sessions.c.status == status)
        if protocol_id:
            query = query.where(t.sessions.c.protocol_id == protocol_id)
        if before is not None:
            query = query.where(t.sessions.c.seq < before)
        with self.uow.reader.connect() as conn:
            rows = (
                conn.execute(query.order_by(t.sessions.c.seq.desc()).limit(limit + 1))
                .mappings()
                .all()
            )
        items = [view(r) for r in rows[:limit]]
        return {
            "items": items,
            "next_cursor": encode_cursor(items[-1]["seq"]) if len(rows) > limit else None,
        }

    def post_receipt(
        self, signed: SignedRequest, session_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        key = self.identities.authenticate(signed)
        receipt = body.get("receipt")
        if not isinstance(receipt, dict) or len(canonical_json(receipt)) > RECEIPT_MAX:
            raise bad(f"receipt must be an object of at most {RECEIPT_MAX} bytes", status=422)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = _row(conn, session_id)
            if row is None:
                raise not_found("session", session_id)
            role = _role(signed, row)
            if row["status"] not in ("claimed", "confirmed", "receipted"):
                raise RegistryError(
                    "registry.session_closed", f"this session is {row['status']}", status=409
                )
            problems = receipt_problems(
                receipt, role=role, public_key=key, protocol_id=row["protocol_id"]
            )
            if problems:
                raise RegistryError(
                    "registry.receipt_invalid",
                    problems[0],
                    status=422,
                    details={"problems": problems},
                )
            column = f"{role}_receipt"
            if row[column] is not None:
                if json.loads(row[column]) == receipt:
                    return Change(None, session_id, {}, {"session": view(row)})
                raise RegistryError(
                    "registry.receipt_exists", f"the {role} receipt was already posted", status=409
                )
            values: dict[str, Any] = {
                column: canonical_json(receipt),
                "updated_at": now,
                "status": "receipted",
            }
            other = row["guest_receipt" if role == "host" else "host_receipt"]
            facts: dict[str, Any] = {"session_id": session_id, "role": role}
            extra: list[tuple[str, str, dict[str, Any]]] = []
            if other is not None:
                extra = _settle(conn, row, role, receipt, other, seq, values, facts)
            conn.execute(
                update(t.sessions).where(t.sessions.c.session_id == session_id).values(**values)
            )
            fresh = (
                conn.execute(select(t.sessions).where(t.sessions.c.session_id == session_id))
                .mappings()
                .one()
            )
            return Change(
                "receipt",
                f"{session_id}:{role}",
                facts,
                {"session": view(fresh)},
                extra=extra,
            )

        return self.uow.write(signed, text, decide)
