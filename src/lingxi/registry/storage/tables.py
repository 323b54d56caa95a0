"""Posted tables' group receipts: the final head with every seated member's receipt, checked
against the identities that claimed the table's seats, logged once per table; it settles
every seat's session and counts each member's table outcome (:mod:`.ratings`' tables)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from lingxi.canonical import canonical_json
from lingxi.registry.errors import RegistryError
from lingxi.registry.models import group_receipt as gr
from lingxi.registry.models import rating as elo
from lingxi.registry.models.keys import agent_id_for, is_hex
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad, not_found
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.unit import Change, UnitOfWork

TABLE_KEY = "lingxi.table"  # the invitation option a posted table's seats carry
_STATUS = {"invalid": 422, "missing": 422, "wrong_seat": 422}


def record_id(host_agent_id: str, table: str) -> str:
    return f"{host_agent_id}:{table}"


def refusal(problem: gr.GroupReceiptProblem) -> RegistryError:
    return RegistryError(f"registry.group_receipt_{problem.code}", problem.message,
                         status=_STATUS[problem.code])


def _offer(options_text: str, table: str) -> tuple[int, int] | None:
    """``(seat, seats)`` when the invitation's options name a seat of ``table``."""
    try:
        value = json.loads(options_text).get(TABLE_KEY)
    except (ValueError, AttributeError):
        return None
    if (not isinstance(value, dict) or value.get("table") != table
            or type(value.get("seat")) is not int or type(value.get("seats")) is not int):
        return None
    return value["seat"], value["seats"]


def _seat_sessions(conn: Connection, host: str, table: str
                   ) -> tuple[int, list[tuple[int, Any]]]:
    """The table's seat count and ``(seat, session row)`` of every claim of its seats."""
    inv = t.invitations
    rows = conn.execute(
        select(inv.c.invitation_id, inv.c.options).where(
            inv.c.host_agent_id == host, inv.c.options.contains(f'"table":"{table}"', autoescape=True))
    ).mappings().all()
    seats: dict[str, tuple[int, int]] = {}
    for row in rows:
        offer = _offer(row["options"], table)
        if offer is not None:
            seats[row["invitation_id"]] = offer
    counts = {n for _, n in seats.values()}
    if not seats:
        raise not_found("table", table)
    if len(counts) != 1:
        raise gr_refusal("invalid", "the table's invitations name different seat counts")
    sessions = conn.execute(
        select(t.sessions).where(t.sessions.c.invitation_id.in_(list(seats)))
    ).mappings().all()
    return counts.pop(), [(seats[s["invitation_id"]][0], s) for s in sessions]


def gr_refusal(code: str, message: str) -> RegistryError:
    return refusal(gr.GroupReceiptProblem(code, message))


class Tables:
    """The group receipts of posted tables (``POST /v1/tables/{table}/receipts``)."""

    def __init__(self, uow: UnitOfWork, identities: Identities) -> None:
        self.uow, self.identities = uow, identities

    def post_receipt(self, signed: SignedRequest, table: str, body: dict[str, Any],
                     text: str) -> dict[str, Any]:
        self.identities.authenticate(signed)
        if len(text.encode("utf-8")) > gr.MAX_BYTES:
            raise bad(f"a group receipt is at most {gr.MAX_BYTES} bytes",
                      "registry.body_too_large", 413)
        close = body.get("close")
        sender = close.get("sender") if isinstance(close, dict) else None
        if not is_hex(sender, 64):
            raise gr_refusal("invalid", "close must be the table's close entry, signed by its "
                             "host")
        host = agent_id_for(sender)
        if self.identities.public_key_of(host) != sender:
            raise gr_refusal("invalid", "the close entry's signer is no registered identity")

        def decide(conn: Connection, now: float, seq: int) -> Change:
            seats, claims = _seat_sessions(conn, host, table)
            parties = {host} | {row["guest_agent_id"] for _, row in claims}
            if signed.agent_id not in parties:
                raise RegistryError("registry.not_party", "only the table's host or a member "
                                    "that claimed one of its seats may post its receipt",
                                    status=403)
            try:
                final, _receipts = gr.check_group_receipt(body, table, seats)
            except gr.GroupReceiptProblem as problem:
                raise refusal(problem) from None
            name = record_id(host, table)
            earlier = self._earlier(conn, name)
            if earlier is not None:
                if earlier.get("head") == final.head:
                    return Change(None, name, {}, {"table": earlier})
                raise RegistryError("registry.group_receipt_exists", "this table's group "
                                    "receipt was already logged with another head", status=409)
            placed = self._place(final, claims)
            pid = self._protocol(conn, claims)
            facts = {"record_id": name, "table": table, "host_agent_id": host,
                     "protocol_id": pid, "seq": final.seq, "head": final.head,
                     "seats": self._count(conn, pid, final, placed, seq, host)}
            for seat in placed.values():
                if seat is not None:
                    self._settle(conn, seat, table, final, now)
            return Change(gr.KIND, name, facts, {"table": facts})

        return self.uow.write(signed, text, decide)

    def _place(self, final: gr.GroupClose, claims: list[tuple[int, Any]]
               ) -> dict[str, tuple[int, Any, str] | None]:
        """Each seat identity's claim (None for the host's seat 0): the claimant of that
        seat's invitation whose logged key is the member, or ``wrong_seat``."""
        placed: dict[str, tuple[int, Any, str] | None] = {}
        for seat in final.seats:
            if seat.seat == 0:
                placed[seat.member] = None
                continue
            found = next((row for number, row in claims if number == seat.seat
                          and self.identities.public_key_of(row["guest_agent_id"])
                          == seat.member), None)
            if found is None:
                raise gr_refusal("wrong_seat", f"the log seats {seat.member[:16]}… at seat "
                                 f"{seat.seat}, which no claim of that seat's invitation made")
            placed[seat.member] = (seat.seat, found, seat.outcome)
        return placed

    @staticmethod
    def _protocol(conn: Connection, claims: list[tuple[int, Any]]) -> str:
        pids = {row["protocol_id"] for _, row in claims}
        if len(pids) != 1:
            raise gr_refusal("invalid", "the table's seats name different protocols")
        return str(pids.pop())

    @staticmethod
    def _earlier(conn: Connection, name: str) -> dict[str, Any] | None:
        text = conn.execute(
            select(t.log.c.record).where(t.log.c.kind == gr.KIND, t.log.c.record_id == name)
        ).scalar()
        return None if text is None else dict(json.loads(text)["server"])

    @staticmethod
    def _count(conn: Connection, pid: str, final: gr.GroupClose,
               placed: dict[str, tuple[int, Any, str] | None], seq: int, host: str
               ) -> list[dict[str, Any]]:
        """Each seat identity's outcome, its table counts moved (the ``table_standings``
        rows) and stated in the record so the audit can replay them."""
        out = []
        for seat in final.seats:
            claim = placed[seat.member]
            agent = host if claim is None else str(claim[1]["guest_agent_id"])
            row = conn.execute(select(t.table_standings).where(
                t.table_standings.c.agent_id == agent,
                t.table_standings.c.protocol_id == pid)).mappings().first()
            before = elo.TableStanding(row["completed"], row["left"], row["timed_out"]) \
                if row is not None else elo.TableStanding()
            after = before.after(seat.outcome)
            values = {**after.to_dict(), "seq": seq}
            if row is None:
                conn.execute(insert(t.table_standings).values(agent_id=agent, protocol_id=pid,
                                                              **values))
            else:
                conn.execute(update(t.table_standings).where(
                    t.table_standings.c.agent_id == agent,
                    t.table_standings.c.protocol_id == pid).values(**values))
            out.append({"seat": seat.seat, "agent_id": agent, "member": seat.member,
                        "outcome": seat.outcome, "after": after.to_dict(),
                        "session_id": None if claim is None else claim[1]["session_id"]})
        return out

    @staticmethod
    def _settle(conn: Connection, claim: tuple[int, Any, str], table: str,
                final: gr.GroupClose, now: float) -> None:
        number, row, outcome = claim
        conn.execute(update(t.sessions).where(t.sessions.c.session_id == row["session_id"])
                     .values(status="finished", verified=True, updated_at=now,
                             outcome=canonical_json({"table": table, "seat": number,
                                                     "outcome": outcome, "seq": final.seq,
                                                     "head": final.head})))
        conn.execute(update(t.invitations).where(
            t.invitations.c.invitation_id == row["invitation_id"],
            t.invitations.c.session_id == row["session_id"]).values(status="finished"))
