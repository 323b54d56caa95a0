"""The registry's operations over the database: a thin facade over the aggregates.

Every write goes through one unit of work (:mod:`.unit`): it takes the log head (the
one lock every writer needs), spends the request nonce, lets one aggregate check and
change its tables, appends the record to the Merkle log and commits, or changes nothing
at all. The aggregates — :mod:`.identities`, :mod:`.protocols`, :mod:`.bundles`,
:mod:`.invitations`, :mod:`.claims`, :mod:`.sessions`, :mod:`.tables`, :mod:`.ratings` — do only their
own SQL and rules; :mod:`.logreads` reads the log, :mod:`.serverkey` keeps the key the
log names. Callers pass the already-parsed body, its exact text and the signed request;
signature checking against the signer's key happens in the store because only it knows
the keys.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable
from typing import Any

from lingxi.contract import Spec
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.log import ZERO
from lingxi.registry.models.records import (
    DEFAULT_CLAIM_TIMEOUT,
    DEFAULT_CLAIMS_PER_MINUTE,
    DEFAULT_PRESENCE_TIMEOUT,
    DEFAULT_WRITES_PER_MINUTE,
    iso,
)
from lingxi.registry.models.signing import WINDOW_SECONDS, SignedRequest
from lingxi.registry.storage import ratings as ratings_of
from lingxi.registry.storage import serverkey
from lingxi.registry.storage.bundles import Bundles
from lingxi.registry.storage.claims import Claims
from lingxi.registry.storage.engine import migrate, resolve_url
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.invitations import Invitations, Rules
from lingxi.registry.storage.logreads import LogReads
from lingxi.registry.storage.protocols import Protocols
from lingxi.registry.storage.relay import relay_servers
from lingxi.registry.storage.secrets import key_path
from lingxi.registry.storage.sessions import Sessions
from lingxi.registry.storage.tables import Tables
from lingxi.registry.storage.unit import UnitOfWork


class _Forward:
    """An attribute of the store that is another object's (read and set through)."""

    def __init__(self, owner: str, name: str) -> None:
        self.owner, self.name = owner, name

    def __get__(self, store: Any, kind: type | None = None) -> Any:
        return getattr(getattr(store, self.owner), self.name)

    def __set__(self, store: Any, value: Any) -> None:
        setattr(getattr(store, self.owner), self.name, value)


class Store:
    """One registry database (SQLite or PostgreSQL) and its server key."""

    # the write path's, settable (tests move the clock; a process may swap its key)
    clock = _Forward("uow", "clock")
    key = _Forward("uow", "key")
    origin = _Forward("uow", "origin")
    window = _Forward("uow", "window")
    writes_per_minute = _Forward("uow", "writes_per_minute")
    claims_per_minute = _Forward("uow", "claims_per_minute")
    # the matchmaking rules, settable (``lingxi server --max-open-invitations``, tests)
    claim_timeout = _Forward("rules", "claim_timeout")
    presence_timeout = _Forward("rules", "presence_timeout")
    endpoint_policy = _Forward("rules", "endpoint_policy")
    reclaim_backoff = _Forward("rules", "reclaim_backoff")
    max_open_invitations = _Forward("rules", "max_open_invitations")
    max_live_claims = _Forward("rules", "max_live_claims")

    def __init__(
        self,
        url: str | None = None,
        *,
        claim_timeout: float = DEFAULT_CLAIM_TIMEOUT,
        clock: Callable[[], float] = time.time,
        window: int = WINDOW_SECONDS,
        key_file: str | os.PathLike[str] | None = None,
        endpoint_policy: str = "lan",
        presence_timeout: float = DEFAULT_PRESENCE_TIMEOUT,
        writes_per_minute: int | None = DEFAULT_WRITES_PER_MINUTE,
        claims_per_minute: int | None = DEFAULT_CLAIMS_PER_MINUTE,
    ) -> None:
        self.url = resolve_url(url)
        self.uow = UnitOfWork(self.url, clock=clock, window=window,
                              writes_per_minute=writes_per_minute,
                              claims_per_minute=claims_per_minute)
        self.reader, self.writer, self.postgres = self.uow.reader, self.uow.writer, \
            self.uow.postgres
        if presence_timeout <= 0:
            raise ValueError("presence_timeout must be positive")
        self.rules = Rules(claim_timeout=claim_timeout, presence_timeout=presence_timeout,
                           endpoint_policy=endpoint_policy, reclaim_backoff=claim_timeout)
        migrate(self.writer)
        self.key_file = key_path(
            key_file, sqlite_file=None if self.postgres else self.writer.url.database
        )
        serverkey.open_key(self.uow, self.key_file)
        self.relay_key_cache: Any = None  # see relay.relay_keys
        self.identities = Identities(self.uow)
        self.protocols = Protocols(self.uow, self.identities)
        self.bundles = Bundles(self.uow, self.identities)
        self.invitations = Invitations(self.uow, self.identities, self.protocols, self.rules)
        self.claims = Claims(self.uow, self.identities, self.rules)
        self.session_store = Sessions(self.uow, self.identities)
        self.tables = Tables(self.uow, self.identities)
        self.log_reads = LogReads(self.uow)
        # what tests look into: the group commit and the cache of proven keys
        self._commits = self.uow.commits
        self._keys = self.identities.keys

    def set_limits(self, writes_per_minute: int | None, claims_per_minute: int | None) -> None:
        """Signed requests per agent and claim attempts per invitation, each per minute
        (``None`` or 0: no limit). The buckets are this process's (see ``ratelimit``)."""
        self.uow.set_limits(writes_per_minute, claims_per_minute)

    def close(self) -> None:
        self.log_reads.close()
        self.uow.close()

    # ------------------------------------------------------------------ keys and writes
    def rotate_key(self, new: ServerKey) -> dict[str, Any]:
        """Log ``new`` as the server key, cross-signed by the current one, then put it in
        the key file. Other processes on the database must be restarted with the file."""
        return serverkey.rotate(self.uow, self.key_file, new)

    def public_key_of(self, agent_id: str) -> str | None:
        return self.identities.public_key_of(agent_id)

    def authenticate(self, signed: SignedRequest) -> str:
        """The signer's public key once its signature verifies (before any lock)."""
        return self.identities.authenticate(signed)

    def idempotent(
        self, key: str | None, action: Callable[..., dict[str, Any]]
    ) -> Callable[..., dict[str, Any]]:
        """``action`` run with ``key`` as the idempotency key of the write it makes."""
        return self.uow.idempotent(key, action)

    def spec(self, protocol_id: str) -> Spec:
        return self.protocols.spec(protocol_id)

    # ------------------------------------------------------------------ info / log
    def info(self) -> dict[str, Any]:
        return {
            "name": "lingxi-registry",
            "api": "v1",
            "server_public_key": self.key.public_hex,
            "origin": self.origin,
            "backend": "postgresql" if self.postgres else "sqlite",
            "time": iso(self.clock()),
            "claim_timeout_seconds": self.claim_timeout,
            "presence_timeout_seconds": self.presence_timeout,
            "limits": {
                "writes_per_agent_per_minute": self.writes_per_minute,
                "claims_per_invitation_per_minute": self.claims_per_minute,
            },
            "signature_window_seconds": self.window,
            "relay": relay_servers(self),
        }

    def version(self) -> int:
        """The log size: it grows with every accepted write, in any server process."""
        return self.log_reads.version()

    def change_token(self) -> Hashable:
        """Equal to an earlier token only if no write committed since (``changes``): what
        the server's list cache keys on, without a query per request on PostgreSQL."""
        return self.log_reads.changes.token()

    def head(self) -> dict[str, Any]:
        return self.log_reads.head()

    def inclusion_proof(self, seq: int, size: int) -> dict[str, Any]:
        return self.log_reads.inclusion_proof(seq, size)

    def consistency_proof(self, old: int, new: int) -> dict[str, Any]:
        return self.log_reads.consistency_proof(old, new)

    def log_entries(
        self, after: int = 0, limit: int = 1000, *, records: bool = False
    ) -> dict[str, Any]:
        return self.log_reads.entries(after, limit, records=records)

    def log_record(self, seq: int) -> dict[str, Any]:
        return self.log_reads.record(seq)

    def counts(self) -> dict[str, int]:
        return self.log_reads.counts()

    # ------------------------------------------------------------------ identities
    def register_identity(
        self, signed: SignedRequest, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.identities.register(signed, body, text)

    def identity(self, agent_id: str) -> dict[str, Any]:
        return self.identities.identity(agent_id)

    # ------------------------------------------------------------------ protocols, bundles
    def preflight(self, spec: Any) -> dict[str, Any]:
        return self.protocols.preflight(spec)

    def register_protocol(
        self, signed: SignedRequest, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.protocols.register(signed, body, text)

    def protocol(self, protocol_id: str) -> dict[str, Any]:
        return self.protocols.protocol(protocol_id)

    def search_protocols(
        self,
        *,
        name: str | None = None,
        type: str | None = None,
        q: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return self.protocols.search(name=name, type=type, q=q, cursor=cursor, limit=limit)

    def publish_bundle(
        self, signed: SignedRequest, protocol_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.bundles.publish(signed, protocol_id, body, text)

    def bundle(self, protocol_id: str, bundle_id: str) -> dict[str, Any]:
        return self.bundles.bundle(protocol_id, bundle_id)

    # ------------------------------------------------------------------ invitations, claims
    def post_invitation(
        self, signed: SignedRequest, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.invitations.post(signed, body, text)

    def invitation(self, invitation_id: str) -> dict[str, Any]:
        return self.invitations.invitation(invitation_id)

    def browse(
        self,
        *,
        protocol_id: str | None = None,
        host: str | None = None,
        type: str | None = None,
        name: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return self.invitations.browse(protocol_id=protocol_id, host=host, type=type,
                                       name=name, cursor=cursor, limit=limit)

    async def browse_encoded(self, **filters: Any) -> bytes:
        """:meth:`browse`'s answer as JSON bytes, rendered by the database (same
        ``filters``; PostgreSQL's query awaited on the running event loop)."""
        return await self.invitations.browse_encoded(**filters)

    def claim(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        return self.claims.claim(signed, invitation_id, text)

    def confirm(
        self, signed: SignedRequest, invitation_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.claims.confirm(signed, invitation_id, body, text)

    def release(
        self, signed: SignedRequest, invitation_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.claims.release(signed, invitation_id, body, text)

    def cancel(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        return self.claims.cancel(signed, invitation_id, text)

    def heartbeat(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        return self.claims.heartbeat(signed, invitation_id, text)

    # ------------------------------------------------------------------ sessions, ratings
    def session(self, session_id: str) -> dict[str, Any]:
        return self.session_store.session(session_id)

    def sessions(
        self,
        *,
        status: str | None = None,
        protocol_id: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return self.session_store.sessions(status=status, protocol_id=protocol_id,
                                           cursor=cursor, limit=limit)

    def post_receipt(
        self, signed: SignedRequest, session_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.session_store.post_receipt(signed, session_id, body, text)

    def post_group_receipt(
        self, signed: SignedRequest, table: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        return self.tables.post_receipt(signed, table, body, text)

    def ratings(self, agent_id: str, protocol_id: str | None = None) -> dict[str, Any]:
        return ratings_of.ratings(self.uow, agent_id, protocol_id)


__all__ = ["Store", "ZERO"]
