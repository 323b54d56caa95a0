"""Invitations: posting one (options checked against the spec, a cap per host), reading one
with its proof, browsing the open ones, and the status an invitation row has at a given
time (expiry, a lapsed claim and a silent host are time's doing, not a write's). The
claim lifecycle on top of these rows is :mod:`.claims`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from lingxi.canonical import canonical_json
from lingxi.contract import OptionsError
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import is_hex
from lingxi.registry.models.records import (
    check_endpoint,
    check_ttl,
    decode_cursor,
    encode_cursor,
    iso,
    new_id,
)
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import proofs
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.browsing import browse_sql
from lingxi.registry.storage.common import bad, like, not_found, page_limit
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.protocols import Protocols
from lingxi.registry.storage.unit import Change, UnitOfWork

MAX_OPEN_INVITATIONS = 20
MAX_LIVE_CLAIMS = 3


@dataclass
class Rules:
    """The matchmaking rules (the store exposes each as an attribute one may change)."""

    claim_timeout: float
    presence_timeout: float  # a silent host's open invitation is withdrawn after this
    endpoint_policy: str = "lan"  # records.check_endpoint: "lan" or "public"
    reclaim_backoff: float = 0.0  # a lapsed or released claimant waits this long
    max_open_invitations: int = MAX_OPEN_INVITATIONS  # per host
    max_live_claims: int = MAX_LIVE_CLAIMS  # per guest


def host_present(rules: Rules, row: Any, now: float) -> bool:
    """Heard from within the presence timeout. Once not, the invitation is withdrawn for
    good: a later heartbeat is refused, so the status depends on the time alone."""
    return bool(now < row["host_seen_at"] + rules.presence_timeout)


def status(rules: Rules, row: Any, now: float) -> str:
    """The invitation's status at ``now``: the stored one, aged by the clock."""
    stored = row["status"]
    if stored == "claimed" and row["claim_deadline"] <= now:
        stored = "open"
    if stored == "open" and row["expires_at"] <= now:
        return "expired"
    if stored == "open" and not host_present(rules, row, now):
        return "withdrawn"
    return str(stored)


def view(rules: Rules, row: Any, now: float) -> dict[str, Any]:
    """The invitation as the API serves it (browse rows also carry protocol, nickname and
    rating columns)."""
    state = status(rules, row, now)
    out = {
        "invitation_id": row["invitation_id"],
        "protocol_id": row["protocol_id"],
        "host_agent_id": row["host_agent_id"],
        "host_public_key": row["host_public_key"],
        "endpoint": row["endpoint"],
        "options": json.loads(row["options"]),
        "note": row["note"],
        "status": state,
        "created_at": iso(row["created_at"]),
        "expires_at": iso(row["expires_at"]),
        "seq": row["seq"],
    }
    if "protocol_name" in row:
        out["protocol_name"] = row["protocol_name"]
        out["protocol_type"] = row["protocol_type"]
    if "host_nickname" in row:
        out["host_nickname"] = row["host_nickname"]
    if "host_rating" in row:  # browse: the host's Elo in this protocol, or None (unrated)
        out["host_rating"] = (
            None
            if row["host_rating"] is None
            else {"rating": row["host_rating"], "games": row["host_games"]}
        )
    if "host_tables_completed" in row:  # browse: the host's posted tables in this protocol
        out["host_tables"] = (
            None
            if row["host_tables_completed"] is None
            else {k: row[f"host_tables_{k}"] for k in ("completed", "left", "timed_out")}
        )
    if state in ("claimed", "in_session", "finished"):
        out["session_id"] = row["session_id"]
        out["guest_agent_id"] = row["guest_agent_id"]
    if state == "claimed":
        out["claim_deadline"] = iso(row["claim_deadline"])
    if state in ("open", "claimed"):
        out["host_seen_at"] = iso(row["host_seen_at"])
    return out


def load(conn: Connection, invitation_id: str) -> Any:
    """The invitation's row, or ``registry.invitation_not_found``."""
    row = (
        conn.execute(
            select(t.invitations).where(t.invitations.c.invitation_id == invitation_id)
        )
        .mappings()
        .first()
    )
    if row is None:
        raise not_found("invitation", invitation_id)
    return row


ACCEPTED_OPTIONS = 1024  # options texts a process remembers as accepted, across specs


def check_options(protocols: Protocols, protocol_id: str, options: Any,
                  accepted: dict[tuple[str, str], None] | None = None) -> str | None:
    """``options`` are an object the spec ``protocol_id`` accepts, or a 422; their
    canonical JSON text (None if they have none: the encoder refuses NaN).

    ``accepted``: the ``(protocol_id, text)`` pairs checked before, which pass without
    being checked again (a spec is fixed by its id, and hosts repost the same options);
    each that passes is added, and the whole is forgotten past ``ACCEPTED_OPTIONS``."""
    if not isinstance(options, dict):
        raise bad("options must be a JSON object", "options.not_object", 422)
    try:
        text: str | None = canonical_json(options)
    except ValueError:
        text = None
    if accepted is not None and text is not None and (protocol_id, text) in accepted:
        return text
    spec = protocols.spec(protocol_id)
    try:
        spec.check_options(options)
    except OptionsError as error:
        raise RegistryError(
            error.code,
            error.message,
            status=422,
            findings=error.findings,
            details={"findings": [f.to_dict() for f in error.findings]},
        ) from None
    if accepted is not None and text is not None:
        if len(accepted) >= ACCEPTED_OPTIONS:
            accepted.clear()
        accepted[(protocol_id, text)] = None
    return text


class Invitations:
    """The ``invitations`` aggregate: posts and reads."""

    def __init__(self, uow: UnitOfWork, identities: Identities, protocols: Protocols,
                 rules: Rules) -> None:
        self.uow, self.identities, self.protocols, self.rules = uow, identities, protocols, rules
        self._accepted: dict[tuple[str, str], None] = {}  # see check_options

    def open_count(self, host: str, now: float) -> tuple[str, dict[str, Any]]:
        """The read of how many of ``host``'s invitations are open or claimed (an absent
        host's withdrawn ones do not count), counted up to the cap: whether it is reached
        is all a post needs, so the count reads at most that many rows. A post's probe
        (``UnitOfWork.write``): it runs with the post's nonce spend."""
        return self.uow.sql.open_count, {
            "host": host, "now": now, "seen": now - self.rules.presence_timeout,
            "cap": self.rules.max_open_invitations}

    def post(self, signed: SignedRequest, body: dict[str, Any], text: str) -> dict[str, Any]:
        host_key = self.identities.authenticate(signed)
        protocol_id = body.get("protocol_id")
        if not isinstance(protocol_id, str) or not is_hex(protocol_id, 64):
            raise bad("protocol_id must be 64 lowercase hex chars", "registry.bad_request", 422)
        options = body.get("options", {})
        options_text = check_options(self.protocols, protocol_id, options, self._accepted)
        endpoint = check_endpoint(body.get("endpoint"), self.rules.endpoint_policy)
        ttl = check_ttl(body.get("ttl_seconds"))
        note = body.get("note", "")
        if not isinstance(note, str) or len(note) > 500:
            raise bad("note must be a string of at most 500 chars", status=422)
        invitation_id = new_id("inv")

        def decide(conn: Connection, now: float, seq: int, counted: int | None) -> Change:
            open_now = int(counted or 0)
            if open_now >= self.rules.max_open_invitations:
                raise RegistryError(
                    "registry.too_many_invitations",
                    f"this host already has {open_now} open invitations (at "
                    f"most {self.rules.max_open_invitations}); cancel one first",
                    status=429,
                )
            row = {
                "invitation_id": invitation_id,
                "protocol_id": protocol_id,
                "host_agent_id": signed.agent_id,
                "host_public_key": host_key,
                "endpoint": endpoint,
                "options": canonical_json(options) if options_text is None else options_text,
                "note": note,
                "status": "open",
                "created_at": now,
                "expires_at": now + ttl,
                "seq": seq,
                "session_id": None,
                "guest_agent_id": None,
                "claim_deadline": None,
                "host_seen_at": now,
            }
            return Change(
                "invitation",
                invitation_id,
                {
                    "invitation_id": invitation_id,
                    "created_at": iso(now),
                    "expires_at": iso(now + ttl),
                },
                {"invitation": view(self.rules, row, now)},
                row=("invitations", row),  # stored with the log entry
            )

        return self.uow.write(signed, text, decide,
                              lambda now: self.open_count(signed.agent_id, now))

    def invitation(self, invitation_id: str) -> dict[str, Any]:
        """One invitation, with the proof of its record and of its host's identity."""
        with self.uow.reader.connect() as conn:
            row = load(conn, invitation_id)
            proof = proofs.proof(
                self.uow, conn,
                [row["seq"], *proofs.identity_seqs(conn, [row["host_agent_id"]])],
            )
        return {**view(self.rules, row, self.uow.clock()), "proof": proof}

    def browse(self, **filters: Any) -> dict[str, Any]:
        """Open invitations, newest first: unexpired, unclaimed or with a lapsed claim, and
        their host heard from within the presence timeout. ``filters``: ``protocol_id``,
        ``host``, ``type``, ``name``, ``cursor``, ``limit``."""
        sql, params, limit, now = self._browse_query(False, **filters)
        rows = self.uow.raw.rows(sql, params)  # its own snapshot
        items = [view(self.rules, r, now) for r in rows[:limit]]
        return {
            "items": items,
            "next_cursor": encode_cursor(items[-1]["seq"]) if len(rows) > limit else None,
        }

    async def browse_encoded(self, **filters: Any) -> bytes:
        """:meth:`browse`'s answer as the API's JSON bytes, each item rendered by the
        database (``browsing``): the same bytes ``json.dumps`` of :meth:`browse`'s answer
        gives, compact and non-ASCII as itself. On PostgreSQL the query is awaited in the
        running event loop; SQLite answers in this thread."""
        sql, params, limit, _ = self._browse_query(True, **filters)
        rows: list[tuple[Any, ...]]
        if self.uow.postgres:  # (seq, item) as the UTF-8 text PostgreSQL sends (never NULL)
            rows = await self.uow.raw.fetch_async(sql, params)
            items = b",".join([item for _, item in rows[:limit]])
        else:
            _, rows = self.uow.raw.fetch(sql, params)
            items = ",".join([item for _, item in rows[:limit]]).encode()
        more = len(rows) > limit
        cursor = b'"%s"' % encode_cursor(int(rows[limit - 1][0])).encode() if more else b"null"
        return b'{"items":[%s],"next_cursor":%s}' % (items, cursor)

    def _browse_query(
        self,
        encoded: bool,
        *,
        protocol_id: str | None = None,
        host: str | None = None,
        type: str | None = None,
        name: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> tuple[str, dict[str, Any], int, float]:
        page, before, now = page_limit(limit), decode_cursor(cursor), self.uow.clock()
        for key, value in (("protocol_id", protocol_id), ("host", host), ("type", type),
                           ("name", name)):
            if value and "\x00" in value:  # no stored text holds one (PostgreSQL's can't)
                raise bad(f"{key} must not contain NUL")
        params: dict[str, Any] = {"now": now, "presence": self.rules.presence_timeout,
                                  "n": page + 1, "protocol": protocol_id, "host": host,
                                  "type": type, "name": like(name) if name else None,
                                  "before": before}
        sql = browse_sql(self.uow.postgres, bool(protocol_id), bool(host), bool(type),
                         bool(name), before is not None, encoded)
        return sql, params, page, now
