"""Claims on an invitation: a guest claims it (and gets a ticket), the host confirms the
handshake, either side releases the claim (the host may refuse that guest for good), the
host cancels or keeps the invitation alive with heartbeats. Fairness lives here: the
re-claim back-off, refused guests and the per-guest limit of live claims."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.records import iso, new_id
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.models.ticket import issue_ticket
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.invitations import Rules, load, status, view
from lingxi.registry.storage.unit import Change, UnitOfWork

# act(conn, invitation row, now) -> the facts to log: a host's change to its invitation
HostAct = Callable[[Connection, Any, float], dict[str, Any]]


def _taken() -> RegistryError:
    return RegistryError(
        "registry.invitation_taken", "another guest claimed this invitation first", status=409
    )


def _closed(state: str, already: bool = False) -> RegistryError:
    word = "already " if already else ""
    return RegistryError(
        "registry.invitation_closed", f"this invitation is {word}{state}", status=409
    )


class Claims:
    """Claims, confirmations, releases, cancellations and heartbeats."""

    def __init__(self, uow: UnitOfWork, identities: Identities, rules: Rules) -> None:
        self.uow, self.identities, self.rules = uow, identities, rules

    def absent(self) -> RegistryError:
        return RegistryError(
            "registry.host_absent",
            f"this invitation's host sent no heartbeat for {int(self.rules.presence_timeout)}"
            " s; the invitation is withdrawn",
            status=409,
        )

    def allowed(self, conn: Connection, row: Any, guest: str, now: float) -> None:
        """Refused guests, the re-claim back-off and the per-guest limit of live claims."""
        if guest in json.loads(row["refused"] or "[]"):
            raise RegistryError(
                "registry.claim_refused",
                "the host refused this agent's claims on this invitation",
                status=403,
            )
        last, backoff = row["claim_deadline"], self.rules.reclaim_backoff
        if row["guest_agent_id"] == guest and last is not None and now < last + backoff:
            raise RegistryError(
                "registry.reclaim_backoff",
                f"this agent's last claim on this invitation ended "
                f"{max(0, int(now - last))} s ago; others go first for "
                f"{int(backoff)} s",
                status=409,
            )
        live = (
            conn.execute(
                select(func.count())
                .select_from(t.sessions)
                .where(
                    t.sessions.c.guest_agent_id == guest,
                    t.sessions.c.status == "claimed",
                    t.sessions.c.claim_deadline > now,
                )
            ).scalar()
            or 0
        )
        if live >= self.rules.max_live_claims:
            raise RegistryError(
                "registry.too_many_claims",
                f"this agent holds {live} live claims (at most "
                f"{self.rules.max_live_claims}); finish or release one",
                status=429,
            )

    def claim(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        guest_key = self.identities.authenticate(signed)
        self.uow.charge_claim(invitation_id)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = load(conn, invitation_id)
            state = status(self.rules, row, now)
            if state in ("claimed", "in_session"):
                raise _taken()
            if state == "expired":
                raise RegistryError(
                    "registry.invitation_expired", "this invitation expired", status=409
                )
            if state == "withdrawn":
                raise self.absent()
            if state != "open":
                raise _closed(state)
            if row["host_agent_id"] == signed.agent_id:
                raise RegistryError(
                    "registry.own_invitation", "a host cannot claim its own invitation", status=409
                )
            self.allowed(conn, row, signed.agent_id, now)
            session_id = new_id("ses")
            deadline = min(now + self.rules.claim_timeout, row["expires_at"])
            if row["session_id"]:  # an earlier claim lapsed without a handshake
                conn.execute(
                    update(t.sessions)
                    .where(
                        t.sessions.c.session_id == row["session_id"],
                        t.sessions.c.status == "claimed",
                    )
                    .values(status="abandoned", updated_at=now)
                )
            won = conn.execute(
                update(t.invitations)
                .where(
                    t.invitations.c.invitation_id == invitation_id,
                    t.invitations.c.seq == row["seq"],
                    or_(
                        t.invitations.c.status == "open",
                        and_(
                            t.invitations.c.status == "claimed",
                            t.invitations.c.claim_deadline <= now,
                        ),
                    ),
                )
                .values(
                    status="claimed",
                    session_id=session_id,
                    guest_agent_id=signed.agent_id,
                    claim_deadline=deadline,
                )
            ).rowcount
            if won != 1:  # cannot happen under the head lock; kept as the last line of defence
                raise _taken()
            conn.execute(
                insert(t.sessions).values(
                    session_id=session_id,
                    invitation_id=invitation_id,
                    protocol_id=row["protocol_id"],
                    host_agent_id=row["host_agent_id"],
                    guest_agent_id=signed.agent_id,
                    status="claimed",
                    created_at=now,
                    updated_at=now,
                    claim_deadline=deadline,
                    seq=seq,
                )
            )
            ticket = issue_ticket(
                self.uow.key,
                invitation_id=invitation_id,
                session_id=session_id,
                host_agent_id=row["host_agent_id"],
                guest_public_key=guest_key,
                expires_at=int(deadline),
            )
            invitation = view(
                self.rules,
                {
                    **row,
                    "status": "claimed",
                    "session_id": session_id,
                    "guest_agent_id": signed.agent_id,
                    "claim_deadline": deadline,
                },
                now,
            )
            return Change(
                "claim",
                session_id,
                {
                    "session_id": session_id,
                    "invitation_id": invitation_id,
                    "guest_agent_id": signed.agent_id,
                    "claim_deadline": iso(deadline),
                },
                {
                    "session_id": session_id,
                    "ticket": ticket,
                    "claim_deadline": iso(deadline),
                    "invitation": invitation,
                    "server_public_key": self.uow.key.public_hex,
                },
            )

        return self.uow.write(signed, text, decide)

    def host_action(
        self, signed: SignedRequest, invitation_id: str, text: str, kind: str | None,
        act: HostAct, answer: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``act`` on the signer's own invitation, logged as ``kind`` (None: not logged);
        ``answer``: more fields of the answer."""
        self.identities.authenticate(signed)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = load(conn, invitation_id)
            if row["host_agent_id"] != signed.agent_id:
                raise RegistryError("registry.not_host", "only the host may do this", status=403)
            facts = act(conn, row, now)
            fresh = load(conn, invitation_id)
            return Change(
                kind,
                invitation_id,
                {"invitation_id": invitation_id, **facts},
                {"invitation": view(self.rules, fresh, now), **(answer or {})},
                created=False,
            )

        return self.uow.write(signed, text, decide)

    def confirm(
        self, signed: SignedRequest, invitation_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        """The host says the claimed guest completed its handshake: the claim stays."""
        session_id = body.get("session_id")
        if not isinstance(session_id, str):
            raise bad("session_id is required", status=422)

        def act(conn: Connection, row: Any, now: float) -> dict[str, Any]:
            state = status(self.rules, row, now)
            if row["session_id"] != session_id or state not in ("claimed", "in_session"):
                code = (
                    "registry.claim_expired"
                    if row["session_id"] == session_id
                    else "registry.session_not_current"
                )
                raise RegistryError(
                    code,
                    f"session {session_id} is not this invitation's "
                    f"current claim (invitation is {state})",
                    status=409,
                )
            conn.execute(
                update(t.invitations)
                .where(t.invitations.c.invitation_id == row["invitation_id"])
                .values(status="in_session")
            )
            conn.execute(
                update(t.sessions)
                .where(t.sessions.c.session_id == session_id)
                .values(status="confirmed", updated_at=now)
            )
            return {"session_id": session_id}

        return self.host_action(signed, invitation_id, text, "confirm", act)

    def release(
        self, signed: SignedRequest, invitation_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        """End the current claim now: by its guest (its connection failed) or by the host
        (``refuse: true`` also bars that guest from this invitation). The invitation is
        open again at once; the released guest waits the back-off before re-claiming."""
        self.identities.authenticate(signed)
        session_id, refuse = body.get("session_id"), body.get("refuse", False)
        if not isinstance(session_id, str) or not isinstance(refuse, bool):
            raise bad("session_id (string) is required; refuse is a boolean", status=422)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = load(conn, invitation_id)
            host = row["host_agent_id"] == signed.agent_id
            if not host and row["guest_agent_id"] != signed.agent_id:
                raise RegistryError(
                    "registry.not_party",
                    "only the host or the claiming guest may release a claim",
                    status=403,
                )
            if refuse and not host:
                raise RegistryError(
                    "registry.not_host", "only the host may refuse a guest", status=403
                )
            if row["session_id"] != session_id or status(self.rules, row, now) != "claimed":
                raise RegistryError(
                    "registry.session_not_current",
                    f"session {session_id} is not this invitation's live claim",
                    status=409,
                )
            refused = json.loads(row["refused"] or "[]")
            if refuse:
                refused.append(row["guest_agent_id"])
            conn.execute(
                update(t.invitations)
                .where(t.invitations.c.invitation_id == invitation_id)
                .values(status="open", claim_deadline=now, refused=json.dumps(refused[-100:]))
            )
            conn.execute(
                update(t.sessions)
                .where(t.sessions.c.session_id == session_id)
                .values(status="abandoned", updated_at=now)
            )
            fresh = load(conn, invitation_id)
            return Change(
                "release",
                invitation_id,
                {
                    "invitation_id": invitation_id,
                    "session_id": session_id,
                    "by": "host" if host else "guest",
                    "refused": refuse,
                },
                {"invitation": view(self.rules, fresh, now)},
                created=False,
            )

        return self.uow.write(signed, text, decide)

    def cancel(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        def act(conn: Connection, row: Any, now: float) -> dict[str, Any]:
            state = status(self.rules, row, now)
            if state in ("cancelled", "finished", "expired", "withdrawn"):
                raise _closed(state, already=True)
            conn.execute(
                update(t.invitations)
                .where(t.invitations.c.invitation_id == row["invitation_id"])
                .values(status="cancelled")
            )
            if row["session_id"]:
                conn.execute(
                    update(t.sessions)
                    .where(
                        t.sessions.c.session_id == row["session_id"],
                        t.sessions.c.status.in_(("claimed", "confirmed")),
                    )
                    .values(status="abandoned", updated_at=now)
                )
            return {}

        return self.host_action(signed, invitation_id, text, "cancel", act)

    def heartbeat(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        """The host is still there: its open or claimed invitation stays served. A spent
        nonce, not a log record: presence is the registry's observation, like expiry."""

        def act(conn: Connection, row: Any, now: float) -> dict[str, Any]:
            state = status(self.rules, row, now)
            if state == "withdrawn":
                raise self.absent()
            if state not in ("open", "claimed"):
                raise _closed(state)
            conn.execute(
                update(t.invitations)
                .where(t.invitations.c.invitation_id == row["invitation_id"])
                .values(host_seen_at=now)
            )
            return {}

        return self.host_action(signed, invitation_id, text, None, act,
                                {"presence_timeout_seconds": self.rules.presence_timeout})
