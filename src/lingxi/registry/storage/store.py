"""The registry's operations over the database, each write atomic.

A write takes the log head first (the one lock every writer needs), spends the
request nonce, checks and changes the domain tables, appends its record to
the hash-chained log and commits, or changes nothing at all; concurrent writes
of one process share a transaction, each in its own savepoint (``batch``). Reads never take
that lock. Callers pass the already-parsed body, its exact text and the
signed request; signature checking against the signer's key happens here
because only the store knows the keys.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from lingxi.canonical import canonical_json
from lingxi.contract import OptionsError, Spec, SpecError, load_spec
from lingxi.registry.errors import RegistryError
from lingxi.registry.models import bundle as bundles_model
from lingxi.registry.models import rating as elo
from lingxi.registry.models.convergence import fingerprint
from lingxi.registry.models.keys import ServerKey, agent_id_for, is_hex
from lingxi.registry.models.log import ZERO, make_entry, sign_head
from lingxi.registry.models.ratelimit import TokenBuckets
from lingxi.registry.models.receipt import MAX_BYTES as RECEIPT_MAX
from lingxi.registry.models.receipt import pair_problems, receipt_problems
from lingxi.registry.models.records import (
    DEFAULT_CLAIM_TIMEOUT,
    DEFAULT_CLAIMS_PER_MINUTE,
    DEFAULT_PRESENCE_TIMEOUT,
    DEFAULT_WRITES_PER_MINUTE,
    NICKNAME,
    check_endpoint,
    check_ttl,
    decode_cursor,
    encode_cursor,
    iso,
    new_id,
    nickname_skeleton,
)
from lingxi.registry.models.signing import WINDOW_SECONDS, SignedRequest, check_signature
from lingxi.registry.models.ticket import issue_ticket
from lingxi.registry.storage import idempotency, proofs, tree
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.batch import GroupCommit
from lingxi.registry.storage.engine import make_engines, migrate, resolve_url
from lingxi.registry.storage.keylog import (
    current_key,
    first_key,
    key_record,
    log_origin,
    logged_identity_key,
)
from lingxi.registry.storage.secrets import ENV, key_path, load_server_key, write_secret

MAX_LIMIT = 100
MAX_OPEN_INVITATIONS = 20
MAX_LIVE_CLAIMS = 3


def _relay_servers(store: Store) -> list[str]:
    from lingxi.registry.storage.relay import relay_servers

    return relay_servers(store)


# The statements every write runs, built once: constructing SQLAlchemy statements per call
# costs more than executing them on SQLite.
_HEAD = select(t.log_head.c.size, t.log_head.c.head).where(t.log_head.c.id == 1)
_HEAD_LOCKED = _HEAD.with_for_update()
_HEAD_SET = (
    update(t.log_head)
    .where(t.log_head.c.id == 1)
    .values(size=bindparam("new_size"), head=bindparam("new_head"))
)
# spend a nonce in one statement: a row comes back only if it was not spent before
_NONCE_SPEND = {
    name: dialect_insert(t.nonces).on_conflict_do_nothing().returning(t.nonces.c.ts)
    for name, dialect_insert in (("postgresql", pg_insert), ("sqlite", sqlite_insert))
}
_LOG_ADD = insert(t.log)
_INVITATION_ADD = insert(t.invitations)


@dataclass
class Change:
    """What a write function decided: the record to log and the answer to give."""

    kind: str | None
    record_id: str
    facts: dict[str, Any]
    response: dict[str, Any]
    created: bool = True
    # records the server logs after the main one, in order: (kind, record_id, server facts)
    extra: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)


def _bad(message: str, code: str = "registry.bad_request", status: int = 400) -> RegistryError:
    return RegistryError(code, message, status=status)


def _not_found(what: str, ident: str) -> RegistryError:
    return RegistryError(f"registry.{what}_not_found", f"no {what} {ident}", status=404)


def _limit(value: int | None) -> int:
    if value is None:
        return 20
    if not 1 <= value <= MAX_LIMIT:
        raise _bad(f"limit must be 1-{MAX_LIMIT}")
    return value


def _buckets(per_minute: int | None) -> TokenBuckets | None:
    return TokenBuckets(per_minute, 60.0) if per_minute else None


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Store:
    """One registry database (SQLite or PostgreSQL) and its server key."""

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
        self.reader, self.writer = make_engines(self.url)
        self.postgres = self.writer.dialect.name == "postgresql"
        self._nonce_spend = _NONCE_SPEND[self.writer.dialect.name]
        self.claim_timeout = claim_timeout
        self.endpoint_policy = endpoint_policy  # records.check_endpoint: "lan" or "public"
        self.reclaim_backoff = claim_timeout  # a lapsed or released claimant waits this long
        self.max_open_invitations = MAX_OPEN_INVITATIONS  # per host
        self.max_live_claims = MAX_LIVE_CLAIMS  # per guest
        if presence_timeout <= 0:
            raise ValueError("presence_timeout must be positive")
        self.presence_timeout = presence_timeout  # a silent host's open invitation is withdrawn
        self.set_limits(writes_per_minute, claims_per_minute)
        self.clock = clock
        self.window = window
        # SQLite's busy handler waits by sleeping with back-off, which gives long tails when
        # this process's own threads contend; they queue on a lock instead (other processes
        # still meet the database lock and its timeout).
        self._local_writes = threading.Lock() if not self.postgres else None
        self._raw = threading.local()
        self._thread = threading.local()
        self._frontier: tuple[int, str, tree.Frontier] | None = None  # see _append
        self._commits = GroupCommit(self._tx)
        migrate(self.writer)
        self.key_file = key_path(
            key_file, sqlite_file=None if self.postgres else self.writer.url.database
        )
        self.key = self._server_key()
        self._keys: dict[str, str] = {}
        self._specs: OrderedDict[str, Spec] = OrderedDict()
        self._spec_lock = threading.Lock()

    def set_limits(self, writes_per_minute: int | None, claims_per_minute: int | None) -> None:
        """Signed requests per agent and claim attempts per invitation, each per minute
        (``None`` or 0: no limit). The buckets are this process's (see ``ratelimit``)."""
        self.writes_per_minute, self.claims_per_minute = writes_per_minute, claims_per_minute
        self._write_buckets = _buckets(writes_per_minute)
        self._claim_buckets = _buckets(claims_per_minute)

    def close(self) -> None:
        raw = getattr(self._raw, "conn", None)
        if raw is not None:
            self._raw.conn = None
            raw.close()
        self.reader.dispose()
        if self.writer is not self.reader:
            self.writer.dispose()

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _tx(self) -> Iterator[tuple[Connection, Any]]:
        """A write transaction holding the log head row; yields ``(conn, head)``."""
        with self._local_writes or nullcontext(), self.writer.begin() as conn:
            yield conn, conn.execute(_HEAD_LOCKED if self.postgres else _HEAD).one()

    def _server_key(self) -> ServerKey:
        """Load the key file (moving a key an older version kept in ``meta`` out to it) and
        make sure the log names this key as current: a first key is logged, another
        process's key is refused (``registry.key_mismatch``)."""
        with self._tx() as (conn, head):
            legacy = conn.execute(
                select(t.meta.c.value).where(t.meta.c.key == "server_key")
            ).scalar()
            key = load_server_key(self.key_file, fallback=legacy)
            if legacy is not None:
                if legacy != key.private_hex():
                    raise RegistryError(
                        "registry.key_mismatch",
                        f"{self.key_file} holds another key than the "
                        "one this database kept in its meta table; move one of them away",
                        status=500,
                        exit_code=2,
                    )
                conn.execute(delete(t.meta).where(t.meta.c.key == "server_key"))
            current = current_key(conn)
            if current is None:
                record = key_record(key, None, reason="migrated" if legacy else "first")
                self._append(conn, head, "server_key", key.public_hex, record, self.clock())
            elif current != key.public_hex:
                raise RegistryError(
                    "registry.key_mismatch",
                    f"the log's current server key is "
                    f"{current[:16]}…, but {self.key_file} holds {key.public_hex[:16]}…; give "
                    "this process the same key file as the others (--key-file or "
                    f"${ENV})",
                    status=500,
                    exit_code=2,
                )
            self.origin = log_origin(first_key(conn) or key.public_hex)
            return key

    def rotate_key(self, new: ServerKey) -> dict[str, Any]:
        """Log ``new`` as the server key, cross-signed by the current one, then put it in
        the key file. Other processes on the database must be restarted with the file."""
        with self._tx() as (conn, head):
            if current_key(conn) != self.key.public_hex:
                raise RegistryError(
                    "registry.key_mismatch",
                    "this process's key is no longer the log's current key",
                    status=409,
                )
            record = key_record(new, self.key, reason="rotation")
            log = self._append(conn, head, "server_key", new.public_hex, record, self.clock())
        write_secret(self.key_file, new.private_hex(), replace=True)
        self.key = new
        return log

    def public_key_of(self, agent_id: str) -> str | None:
        """The key of ``agent_id``'s identity *record in the log*, never a mutable row: the
        ``agents`` row only says where the record is, and a record that is not that
        agent's self-signed identity (an edited row) counts as no key at all."""
        key = self._keys.get(agent_id)
        if key is None:
            with self.reader.connect() as conn:
                text = conn.execute(
                    select(t.log.c.record)
                    .join(t.agents, t.agents.c.seq == t.log.c.seq)
                    .where(
                        t.agents.c.agent_id == agent_id,
                        t.log.c.kind == "identity",
                        t.log.c.record_id == agent_id,
                    )
                ).scalar()
            key = logged_identity_key(text, agent_id)
            if key is not None:
                self._keys[agent_id] = key
        return key

    def authenticate(self, signed: SignedRequest) -> str:
        """The signer's public key once its signature verifies (before any lock)."""
        key = self.public_key_of(signed.agent_id)
        if key is None:
            raise RegistryError(
                "registry.unknown_agent",
                f"{signed.agent_id} is not registered; run `lingxi register`",
                status=401,
            )
        check_signature(signed, key)
        self._charge_writes(signed)
        return key

    def _charge_writes(self, signed: SignedRequest) -> None:
        """Spend one of the signer's tokens once its signature holds, so nobody spends
        another agent's with forged requests. A replay spends one too: only who sees the
        agent's traffic can replay it, and that one can already drop it."""
        if self._write_buckets is None:
            return
        self._charge(self._write_buckets, signed.agent_id, "signed requests from this agent",
                     self.writes_per_minute)

    def _charge(self, buckets: TokenBuckets, key: str, what: str, limit: int | None) -> None:
        wait = buckets.take(key, self.clock())
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise RegistryError(
                "registry.rate_limited",
                f"too many {what} (at most {limit} a minute); try again in {seconds} s",
                status=429,
                details={"retry_after_seconds": seconds},
            )

    def _write(
        self,
        signed: SignedRequest,
        body_text: str,
        decide: Callable[[Connection, float, int], Change],
    ) -> dict[str, Any]:
        """Run ``decide`` and log what it changed, in a transaction it may share with other
        writes of this process (``batch``: its own savepoint, one commit for all).

        A request that ``decide`` refuses still spends its nonce (after its savepoint is
        rolled back), so a refused claim cannot be replayed later when the invitation has
        reopened.
        """
        now = self.clock()
        idem = getattr(self._thread, "idempotency_key", None)

        def work(conn: Connection, head: Any) -> tuple[dict[str, Any], Any]:
            return self._write_once(conn, head, signed, body_text, decide, now, idem)

        def refused(conn: Connection, error: BaseException) -> None:
            if getattr(error, "spend_nonce", False):
                conn.execute(self._nonce_spend, {"agent_id": signed.agent_id,
                                                 "nonce": signed.nonce,
                                                 "ts": int(signed.timestamp)})

        return self._commits.run(work, refused)

    def _write_once(
        self,
        conn: Connection,
        head: Any,
        signed: SignedRequest,
        body_text: str,
        decide: Callable[[Connection, float, int], Change],
        now: float,
        idem: str | None,
    ) -> tuple[dict[str, Any], Any]:
        """One write in the caller's transaction: its answer and the head after it."""
        if idem is not None:
            earlier = idempotency.replay(conn, signed, idem)
            if earlier is not None:
                return earlier, head
        spent = conn.execute(
            self._nonce_spend,
            {"agent_id": signed.agent_id, "nonce": signed.nonce, "ts": int(signed.timestamp)},
        ).first()
        if spent is None:
            raise RegistryError(
                "registry.request_replayed", "this request nonce was already used", status=401
            )
        seq = head.size + 1
        try:
            change = decide(conn, now, seq)
        except RegistryError as error:
            error.spend_nonce = True
            raise
        if change.kind is None:
            answer = {**change.response, "created": False}
        else:
            record = {
                "kind": change.kind,
                "id": change.record_id,
                "request": signed.to_dict(),
                "body": body_text,
                "server": change.facts,
            }
            log = self._append(conn, head, change.kind, change.record_id, record, now)
            answer = {**change.response, "created": change.created, "log": log}
            for kind, record_id, facts in change.extra:
                more = {"kind": kind, "id": record_id, "request": None, "body": "",
                        "server": facts}
                done = self._append(conn, self._appended(), kind, record_id, more, now)
                answer.setdefault("logged", []).append(done)
            head = self._appended()
        if idem is not None:
            idempotency.remember(conn, signed, idem, answer, now)
        if seq % 64 == 0:
            conn.execute(delete(t.nonces).where(t.nonces.c.ts < int(now) - 2 * self.window))
            idempotency.purge(conn, now)
        return answer, head

    def _appended(self) -> Any:
        """The head this process's last append made (its transaction still holds it)."""
        assert self._frontier is not None
        return SimpleNamespace(size=self._frontier[0], head=self._frontier[1])

    def idempotent(
        self, key: str | None, action: Callable[..., dict[str, Any]]
    ) -> Callable[..., dict[str, Any]]:
        """``action`` run with ``key`` as the idempotency key of the write it makes (in the
        calling thread): a retry with the same key and request gets the first answer."""
        if key is None:
            return action

        def run(*args: Any) -> dict[str, Any]:
            self._thread.idempotency_key = idempotency.check_key(key)
            try:
                return action(*args)
            finally:
                self._thread.idempotency_key = None

        return run

    def _append(
        self, conn: Connection, head: Any, kind: str, record_id: str, record: dict[str, Any],
        now: float,
    ) -> dict[str, Any]:
        """Append ``record`` as the next leaf (the caller's transaction holds the head).

        The frontier this process computed at its last append is reused when the head it
        holds is the one that append made (same size and root), so no other writer has
        appended since; otherwise the tree's nodes are read. It is set under the lock."""
        seq = head.size + 1
        entry = make_entry(seq, kind, record_id, record, int(now))
        conn.execute(
            _LOG_ADD,
            {
                "record": canonical_json(record),
                **{
                    k: entry[k]
                    for k in ("seq", "kind", "record_id", "record_sha256", "hash", "time")
                },
            },
        )
        cached = self._frontier
        known = cached[2] if cached and cached[:2] == (head.size, head.head) else None
        root, frontier = tree.append(conn, seq - 1, bytes.fromhex(entry["hash"]), known)
        conn.execute(_HEAD_SET, {"new_size": seq, "new_head": root.hex()})
        self._frontier = (seq, root.hex(), frontier)
        return {"seq": seq, "hash": entry["hash"], "entry": entry, "record": record}

    def spec(self, protocol_id: str) -> Spec:
        with self._spec_lock:
            cached = self._specs.get(protocol_id)
            if cached is not None:
                self._specs.move_to_end(protocol_id)
                return cached
        with self.reader.connect() as conn:
            text = conn.execute(
                select(t.protocols.c.spec).where(t.protocols.c.protocol_id == protocol_id)
            ).scalar()
        if text is None:
            raise _not_found("protocol", protocol_id)
        spec = load_spec(json.loads(text))
        with self._spec_lock:
            self._specs[protocol_id] = spec
            while len(self._specs) > 256:
                self._specs.popitem(last=False)
        return spec

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
            "relay": _relay_servers(self),
        }

    def version(self) -> int:
        """The log size: it grows with every accepted write, in any server process.

        Read on a raw autocommit connection kept per thread: this runs on every
        cached list read, where the pool checkout and transaction of a normal
        read would cost more than the answer itself.
        """
        raw = getattr(self._raw, "conn", None)
        try:
            if raw is None:
                raw = self._raw.conn = self.reader.raw_connection()
                if self.postgres:
                    raw.driver_connection.autocommit = True  # type: ignore[union-attr]
            cursor = raw.cursor()
            try:
                cursor.execute("SELECT size FROM log_head WHERE id = 1")
                row = cursor.fetchone()
                assert row is not None  # log_head always has its one row
                return int(row[0])
            finally:
                cursor.close()
        except Exception:
            self._raw.conn = None
            if raw is not None:
                raw.invalidate()
            raise

    def head(self) -> dict[str, Any]:
        """The signed checkpoint of the tree as it is now."""
        with self.reader.connect() as conn:
            size = conn.execute(_HEAD).one().size
            root = tree.root(conn, size)
        return sign_head(self.key, self.origin, size, root, int(self.clock()))

    def inclusion_proof(self, seq: int, size: int) -> dict[str, Any]:
        """The audit path of entry ``seq`` (1-based) in the tree of ``size`` entries."""
        with self.reader.connect() as conn:
            current = conn.execute(_HEAD).one().size
            if not 1 <= seq <= size <= current:
                raise _bad(f"need 1 <= seq <= size <= {current} (the log's size)")
            leaf = conn.execute(select(t.log.c.hash).where(t.log.c.seq == seq)).scalar()
            path = tree.inclusion(conn, seq - 1, size)
        return {"seq": seq, "size": size, "leaf": leaf, "path": [h.hex() for h in path]}

    def consistency_proof(self, old: int, new: int) -> dict[str, Any]:
        """The proof that the tree of ``old`` entries is a prefix of the one of ``new``."""
        with self.reader.connect() as conn:
            current = conn.execute(_HEAD).one().size
            if not 0 <= old <= new <= current:
                raise _bad(f"need 0 <= from <= to <= {current} (the log's size)")
            proof = tree.consistency(conn, old, new)
        return {"from": old, "to": new, "proof": [h.hex() for h in proof]}

    def log_entries(
        self, after: int = 0, limit: int = 1000, *, records: bool = False
    ) -> dict[str, Any]:
        """Entries after ``after``; with ``records`` each carries its record (full audits)."""
        if after < 0 or not 1 <= limit <= 1000:
            raise _bad("after must be >= 0 and limit 1-1000")
        names = ["seq", "kind", "record_id", "record_sha256", "hash", "time"]
        cols = [t.log.c[k] for k in names + (["record"] if records else [])]
        with self.reader.connect() as conn:
            rows = (
                conn.execute(
                    select(*cols).where(t.log.c.seq > after).order_by(t.log.c.seq).limit(limit)
                )
                .mappings()
                .all()
            )
        out = [dict(r) for r in rows]
        if records:
            for item in out:
                item["record"] = json.loads(item["record"])
        return {"entries": out}

    def log_record(self, seq: int) -> dict[str, Any]:
        with self.reader.connect() as conn:
            text = conn.execute(select(t.log.c.record).where(t.log.c.seq == seq)).scalar()
        if text is None:
            raise _not_found("log_entry", str(seq))
        return {"seq": seq, "record": json.loads(text)}

    # ------------------------------------------------------------------ identities
    def register_identity(
        self, signed: SignedRequest, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        nickname, public_key = body.get("nickname"), body.get("public_key")
        if not isinstance(nickname, str) or not NICKNAME.match(nickname):
            raise _bad(
                "nickname must be 1-64 ASCII letters, digits, '_', '.' or '-'",
                "registry.bad_nickname",
                422,
            )
        if not is_hex(public_key, 64):
            raise _bad(
                "public_key must be 64 lowercase hex chars (Ed25519)", "registry.bad_key", 422
            )
        if agent_id_for(public_key) != signed.agent_id:
            raise RegistryError(
                "registry.signature_invalid",
                "the signing agent id is not the one of this public key",
                status=401,
            )
        check_signature(signed, public_key)  # proof of possession of the key
        self._charge_writes(signed)
        skeleton = nickname_skeleton(nickname)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            mine = (
                conn.execute(select(t.agents).where(t.agents.c.agent_id == signed.agent_id))
                .mappings()
                .first()
            )
            answer = {"agent_id": signed.agent_id, "nickname": nickname, "public_key": public_key}
            if mine is not None:
                if mine["nickname"] != nickname:
                    raise RegistryError(
                        "registry.identity_exists",
                        f"this key is registered as {mine['nickname']!r}",
                        status=409,
                    )
                return Change(None, signed.agent_id, {}, answer)
            taken = conn.execute(
                select(t.agents.c.nickname).where(
                    or_(t.agents.c.nickname == nickname, t.agents.c.skeleton == skeleton)
                )
            ).first()
            if taken is not None and taken.nickname == nickname:
                raise RegistryError(
                    "registry.nickname_taken",
                    f"the nickname {nickname!r} belongs to another key",
                    status=409,
                )
            if taken is not None:
                raise RegistryError(
                    "registry.nickname_confusable",
                    f"{nickname!r} reads like the registered nickname "
                    f"{taken.nickname!r}; choose another",
                    status=409,
                )
            conn.execute(
                insert(t.agents).values(
                    agent_id=signed.agent_id,
                    nickname=nickname,
                    skeleton=skeleton,
                    public_key=public_key,
                    created_at=now,
                    seq=seq,
                )
            )
            return Change(
                "identity",
                signed.agent_id,
                {"agent_id": signed.agent_id, "created_at": iso(now)},
                answer,
            )

        return self._write(signed, text, decide)

    def identity(self, agent_id: str) -> dict[str, Any]:
        """The agent's nickname and key, with the proof of its identity record."""
        with self.reader.connect() as conn:
            row = (
                conn.execute(select(t.agents).where(t.agents.c.agent_id == agent_id))
                .mappings()
                .first()
            )
            if row is None:
                raise _not_found("identity", agent_id)
            proof = proofs.proof(self, conn, [row["seq"]])
        return {
            "agent_id": row["agent_id"],
            "nickname": row["nickname"],
            "public_key": row["public_key"],
            "created_at": iso(row["created_at"]),
            "seq": row["seq"],
            "proof": proof,
        }

    # ------------------------------------------------------------------ protocols
    @staticmethod
    def _load_draft(spec: Any) -> Spec:
        if not isinstance(spec, dict):
            raise _bad("spec must be a JSON object (the spec.json)", "registry.bad_spec", 422)
        try:
            return load_spec(spec)
        except SpecError as error:
            raise RegistryError(
                error.code,
                error.message,
                status=422,
                findings=error.findings,
                details={"findings": [f.to_dict() for f in error.findings]},
            ) from None

    def _near(self, conn: Connection, draft: Spec) -> list[dict[str, Any]]:
        rows = conn.execute(
            select(t.protocols.c.protocol_id, t.protocols.c.name)
            .where(
                t.protocols.c.fingerprint == fingerprint(draft.raw),
                t.protocols.c.protocol_id != draft.protocol_id,
            )
            .order_by(t.protocols.c.seq)
            .limit(20)
        ).all()
        return [{"protocol_id": r.protocol_id, "name": r.name} for r in rows]

    def preflight(self, spec: Any) -> dict[str, Any]:
        draft = self._load_draft(spec)
        with self.reader.connect() as conn:
            exists = (
                conn.execute(
                    select(t.protocols.c.protocol_id).where(
                        t.protocols.c.protocol_id == draft.protocol_id
                    )
                ).first()
                is not None
            )
            near = self._near(conn, draft)
        return {
            "protocol_id": draft.protocol_id,
            "fingerprint": fingerprint(draft.raw),
            "registered": exists,
            "near_duplicates": near,
            "converges": bool(near) and not exists,
        }

    def register_protocol(
        self, signed: SignedRequest, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        self.authenticate(signed)
        draft = self._load_draft(body.get("spec"))
        allow_new, reason = body.get("allow_new", False), body.get("reason")
        if not isinstance(allow_new, bool) or (
            reason is not None and (not isinstance(reason, str) or len(reason) > 2000)
        ):
            raise _bad("allow_new is a boolean and reason a string of at most 2000 chars")
        if allow_new and not (reason or "").strip():
            raise _bad(
                "--allow-new needs --reason: say why a parameter cannot cover it",
                "registry.reason_required",
                422,
            )
        pid = draft.protocol_id

        def decide(conn: Connection, now: float, seq: int) -> Change:
            if (
                conn.execute(
                    select(t.protocols.c.protocol_id).where(t.protocols.c.protocol_id == pid)
                ).first()
                is not None
            ):
                return Change(None, pid, {}, {"protocol_id": pid})
            near = self._near(conn, draft)
            if near and not allow_new:
                raise RegistryError(
                    "registry.near_duplicate",
                    f"{len(near)} known protocol(s) have the same messages and flow once "
                    f"parameter values are set aside (first: {near[0]['name']} "
                    f"{near[0]['protocol_id'][:12]}); add parameters to it instead, or "
                    "register with --allow-new --reason",
                    status=409,
                    details={"near_duplicates": near},
                )
            raw = draft.raw
            conn.execute(
                insert(t.protocols).values(
                    protocol_id=pid,
                    name=draft.name[:200],
                    type=draft.type,
                    spec_version=draft.spec_version,
                    description=draft.description,
                    search=f"{draft.name}\n{draft.description}\n{draft.type or ''}".lower(),
                    fingerprint=fingerprint(raw),
                    spec=canonical_json(raw),
                    registered_by=signed.agent_id,
                    reason=reason if near else None,
                    near_duplicates=json.dumps(near) if near else None,
                    created_at=now,
                    seq=seq,
                )
            )
            return Change(
                "protocol",
                pid,
                {"protocol_id": pid, "fingerprint": fingerprint(raw), "near_duplicates": near},
                {"protocol_id": pid},
            )

        return self._write(signed, text, decide)

    def _protocol_summary(self, row: Any) -> dict[str, Any]:
        return {
            "protocol_id": row["protocol_id"],
            "name": row["name"],
            "type": row["type"],
            "spec_version": row["spec_version"],
            "description": row["description"],
            "registered_by": row["registered_by"],
            "created_at": iso(row["created_at"]),
            "reason": row["reason"],
            "near_duplicates": json.loads(row["near_duplicates"] or "[]"),
            "seq": row["seq"],
        }

    def protocol(self, protocol_id: str) -> dict[str, Any]:
        with self.reader.connect() as conn:
            row = (
                conn.execute(select(t.protocols).where(t.protocols.c.protocol_id == protocol_id))
                .mappings()
                .first()
            )
            if row is None:
                raise _not_found("protocol", protocol_id)
            found = (
                conn.execute(
                    select(t.bundles.c.bundle_id, t.bundles.c.size, t.bundles.c.created_by)
                    .where(t.bundles.c.protocol_id == protocol_id)
                    .order_by(t.bundles.c.seq)
                )
                .mappings()
                .all()
            )
            proof = proofs.proof(
                self, conn, [row["seq"], *proofs.identity_seqs(conn, [row["registered_by"]])]
            )
        return {
            **self._protocol_summary(row),
            "spec": json.loads(row["spec"]),
            "bundles": [dict(b) for b in found],
            "proof": proof,
        }

    def search_protocols(
        self,
        *,
        name: str | None = None,
        type: str | None = None,
        q: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        limit, after = _limit(limit), decode_cursor(cursor)
        cols = [c for c in t.protocols.c if c.name not in ("spec", "search", "fingerprint")]
        query = select(*cols)
        if name:
            query = query.where(func.lower(t.protocols.c.name).like(_like(name), escape="\\"))
        if type:
            query = query.where(t.protocols.c.type == type)
        if q:
            query = query.where(t.protocols.c.search.like(_like(q), escape="\\"))
        if after is not None:
            query = query.where(t.protocols.c.seq > after)
        with self.reader.connect() as conn:
            rows = conn.execute(query.order_by(t.protocols.c.seq).limit(limit + 1)).mappings().all()
        items = [self._protocol_summary(r) for r in rows[:limit]]
        return {
            "items": items,
            "next_cursor": encode_cursor(items[-1]["seq"]) if len(rows) > limit else None,
        }

    # ------------------------------------------------------------------ bundles
    def publish_bundle(
        self, signed: SignedRequest, protocol_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        self.authenticate(signed)
        raw_files = body.get("files")
        if not isinstance(raw_files, list) or not all(
            isinstance(f, dict)
            and isinstance(f.get("path"), str)
            and isinstance(f.get("content_base64"), str)
            for f in raw_files
        ):
            raise _bad("files must be a list of {path, content_base64}")
        files: dict[str, bytes] = {}
        for item in raw_files:
            try:
                files[item["path"]] = base64.b64decode(item["content_base64"], validate=True)
            except (binascii.Error, ValueError):
                raise _bad(f"{item['path']}: content_base64 is not base64") from None
        if len(files) != len(raw_files):
            raise _bad("a path appears twice in the bundle")
        manifest = bundles_model.check_files(files)
        bid = manifest["bundle_id"]

        def decide(conn: Connection, now: float, seq: int) -> Change:
            registrant = conn.execute(
                select(t.protocols.c.registered_by).where(t.protocols.c.protocol_id == protocol_id)
            ).scalar()
            if registrant is None:
                raise _not_found("protocol", protocol_id)
            if registrant != signed.agent_id:  # a page runs beside the person's session
                raise RegistryError(
                    "registry.not_registrant",
                    "only the agent that registered this protocol may publish UI bundles for it",
                    status=403,
                )
            answer = {"protocol_id": protocol_id, **manifest}
            if (
                conn.execute(
                    select(t.bundles.c.bundle_id).where(
                        t.bundles.c.protocol_id == protocol_id, t.bundles.c.bundle_id == bid
                    )
                ).first()
                is not None
            ):
                return Change(None, bid, {}, answer)
            stored = {
                r[0]
                for r in conn.execute(
                    select(t.bundle_files.c.path).where(t.bundle_files.c.bundle_id == bid)
                )
            }
            for path, content in files.items():
                if path not in stored:
                    conn.execute(
                        insert(t.bundle_files).values(bundle_id=bid, path=path, content=content)
                    )
            conn.execute(
                insert(t.bundles).values(
                    protocol_id=protocol_id,
                    bundle_id=bid,
                    size=manifest["size"],
                    manifest=json.dumps(manifest["files"], sort_keys=True),
                    created_by=signed.agent_id,
                    created_at=now,
                    seq=seq,
                )
            )
            return Change(
                "bundle", f"{protocol_id}:{bid}", {"protocol_id": protocol_id, **manifest}, answer
            )

        return self._write(signed, text, decide)

    def bundle(self, protocol_id: str, bundle_id: str) -> dict[str, Any]:
        with self.reader.connect() as conn:
            row = (
                conn.execute(
                    select(t.bundles).where(
                        t.bundles.c.protocol_id == protocol_id, t.bundles.c.bundle_id == bundle_id
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                raise _not_found("bundle", bundle_id)
            files = conn.execute(
                select(t.bundle_files.c.path, t.bundle_files.c.content)
                .where(t.bundle_files.c.bundle_id == bundle_id)
                .order_by(t.bundle_files.c.path)
            ).all()
        return {
            "protocol_id": protocol_id,
            "bundle_id": bundle_id,
            "size": row["size"],
            "created_by": row["created_by"],
            "created_at": iso(row["created_at"]),
            "files": [
                {"path": f.path, "content_base64": base64.b64encode(f.content).decode()}
                for f in files
            ],
        }

    # ------------------------------------------------------------------ invitations
    def _status(self, row: Any, now: float) -> str:
        status = row["status"]
        if status == "claimed" and row["claim_deadline"] <= now:
            status = "open"
        if status == "open" and row["expires_at"] <= now:
            return "expired"
        if status == "open" and not self._host_present(row, now):
            return "withdrawn"
        return status

    def _host_present(self, row: Any, now: float) -> bool:
        """Heard from within the presence timeout. Once not, the invitation is withdrawn for
        good: a later heartbeat is refused, so the status depends on the time alone."""
        return bool(now < row["host_seen_at"] + self.presence_timeout)

    def _invitation(self, row: Any, now: float) -> dict[str, Any]:
        status = self._status(row, now)
        out = {
            "invitation_id": row["invitation_id"],
            "protocol_id": row["protocol_id"],
            "host_agent_id": row["host_agent_id"],
            "host_public_key": row["host_public_key"],
            "endpoint": row["endpoint"],
            "options": json.loads(row["options"]),
            "note": row["note"],
            "status": status,
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
        if status in ("claimed", "in_session", "finished"):
            out["session_id"] = row["session_id"]
            out["guest_agent_id"] = row["guest_agent_id"]
        if status == "claimed":
            out["claim_deadline"] = iso(row["claim_deadline"])
        if status in ("open", "claimed"):
            out["host_seen_at"] = iso(row["host_seen_at"])
        return out

    def post_invitation(
        self, signed: SignedRequest, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        host_key = self.authenticate(signed)
        protocol_id = body.get("protocol_id")
        if not isinstance(protocol_id, str) or not is_hex(protocol_id, 64):
            raise _bad("protocol_id must be 64 lowercase hex chars", "registry.bad_request", 422)
        options = body.get("options", {})
        if not isinstance(options, dict):
            raise _bad("options must be a JSON object", "options.not_object", 422)
        spec = self.spec(protocol_id)
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
        endpoint = check_endpoint(body.get("endpoint"), self.endpoint_policy)
        ttl = check_ttl(body.get("ttl_seconds"))
        note = body.get("note", "")
        if not isinstance(note, str) or len(note) > 500:
            raise _bad("note must be a string of at most 500 chars", status=422)
        invitation_id = new_id("inv")

        def decide(conn: Connection, now: float, seq: int) -> Change:
            open_now = (
                conn.execute(
                    select(func.count())
                    .select_from(t.invitations)
                    .where(
                        t.invitations.c.host_agent_id == signed.agent_id,
                        t.invitations.c.status.in_(("open", "claimed")),
                        t.invitations.c.expires_at > now,
                        or_(  # an absent host's invitations are withdrawn: they do not count
                            t.invitations.c.host_seen_at > now - self.presence_timeout,
                            t.invitations.c.claim_deadline > now,
                        ),
                    )
                ).scalar()
                or 0
            )
            if open_now >= self.max_open_invitations:
                raise RegistryError(
                    "registry.too_many_invitations",
                    f"this host already has {open_now} open invitations (at "
                    f"most {self.max_open_invitations}); cancel one first",
                    status=429,
                )
            row = {
                "invitation_id": invitation_id,
                "protocol_id": protocol_id,
                "host_agent_id": signed.agent_id,
                "host_public_key": host_key,
                "endpoint": endpoint,
                "options": canonical_json(options),
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
            conn.execute(_INVITATION_ADD, row)
            return Change(
                "invitation",
                invitation_id,
                {
                    "invitation_id": invitation_id,
                    "created_at": iso(now),
                    "expires_at": iso(now + ttl),
                },
                {"invitation": self._invitation(row, now)},
            )

        return self._write(signed, text, decide)

    def _load_invitation(self, conn: Connection, invitation_id: str) -> Any:
        row = (
            conn.execute(
                select(t.invitations).where(t.invitations.c.invitation_id == invitation_id)
            )
            .mappings()
            .first()
        )
        if row is None:
            raise _not_found("invitation", invitation_id)
        return row

    def invitation(self, invitation_id: str) -> dict[str, Any]:
        """One invitation, with the proof of its record and of its host's identity."""
        with self.reader.connect() as conn:
            row = self._load_invitation(conn, invitation_id)
            proof = proofs.proof(
                self, conn, [row["seq"], *proofs.identity_seqs(conn, [row["host_agent_id"]])]
            )
        return {**self._invitation(row, self.clock()), "proof": proof}

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
        """Open invitations, newest first: unexpired, unclaimed or with a lapsed claim, and
        their host heard from within the presence timeout."""
        limit, before, now = _limit(limit), decode_cursor(cursor), self.clock()
        inv = t.invitations
        query = (
            select(
                inv,
                t.protocols.c.name.label("protocol_name"),
                t.protocols.c.type.label("protocol_type"),
                t.agents.c.nickname.label("host_nickname"),
                t.ratings.c.rating.label("host_rating"),
                t.ratings.c.games.label("host_games"),
            )
            .join(t.protocols, t.protocols.c.protocol_id == inv.c.protocol_id)
            .outerjoin(t.agents, t.agents.c.agent_id == inv.c.host_agent_id)
            .outerjoin(
                t.ratings,
                and_(
                    t.ratings.c.agent_id == inv.c.host_agent_id,
                    t.ratings.c.protocol_id == inv.c.protocol_id,
                ),
            )
            .where(
                inv.c.expires_at > now,
                inv.c.host_seen_at > now - self.presence_timeout,
                or_(
                    inv.c.status == "open",
                    and_(inv.c.status == "claimed", inv.c.claim_deadline <= now),
                ),
            )
        )
        if protocol_id:
            query = query.where(inv.c.protocol_id == protocol_id)
        if host:
            query = query.where(inv.c.host_agent_id == host)
        if type:
            query = query.where(t.protocols.c.type == type)
        if name:
            query = query.where(func.lower(t.protocols.c.name).like(_like(name), escape="\\"))
        if before is not None:
            query = query.where(inv.c.seq < before)
        with self.reader.connect() as conn:
            rows = conn.execute(query.order_by(inv.c.seq.desc()).limit(limit + 1)).mappings().all()
        items = [self._invitation(r, now) for r in rows[:limit]]
        return {
            "items": items,
            "next_cursor": encode_cursor(items[-1]["seq"]) if len(rows) > limit else None,
        }

    def claim(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        guest_key = self.authenticate(signed)
        if self._claim_buckets is not None:
            self._charge(self._claim_buckets, invitation_id, "claim attempts on this invitation",
                         self.claims_per_minute)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = self._load_invitation(conn, invitation_id)
            status = self._status(row, now)
            if status in ("claimed", "in_session"):
                raise RegistryError(
                    "registry.invitation_taken",
                    "another guest claimed this invitation first",
                    status=409,
                )
            if status == "expired":
                raise RegistryError(
                    "registry.invitation_expired", "this invitation expired", status=409
                )
            if status == "withdrawn":
                raise self._absent()
            if status != "open":
                raise RegistryError(
                    "registry.invitation_closed", f"this invitation is {status}", status=409
                )
            if row["host_agent_id"] == signed.agent_id:
                raise RegistryError(
                    "registry.own_invitation", "a host cannot claim its own invitation", status=409
                )
            self._claim_allowed(conn, row, signed.agent_id, now)
            session_id = new_id("ses")
            deadline = min(now + self.claim_timeout, row["expires_at"])
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
                raise RegistryError(
                    "registry.invitation_taken",
                    "another guest claimed this invitation first",
                    status=409,
                )
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
                self.key,
                invitation_id=invitation_id,
                session_id=session_id,
                host_agent_id=row["host_agent_id"],
                guest_public_key=guest_key,
                expires_at=int(deadline),
            )
            invitation = self._invitation(
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
                    "server_public_key": self.key.public_hex,
                },
            )

        return self._write(signed, text, decide)

    def _host_action(
        self,
        signed: SignedRequest,
        invitation_id: str,
        text: str,
        kind: str | None,
        act: Callable[[Connection, Any, float], dict[str, Any]],
    ) -> dict[str, Any]:
        self.authenticate(signed)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = self._load_invitation(conn, invitation_id)
            if row["host_agent_id"] != signed.agent_id:
                raise RegistryError("registry.not_host", "only the host may do this", status=403)
            facts = act(conn, row, now)
            fresh = self._load_invitation(conn, invitation_id)
            return Change(
                kind,
                invitation_id,
                {"invitation_id": invitation_id, **facts},
                {"invitation": self._invitation(fresh, now)},
                created=False,
            )

        return self._write(signed, text, decide)

    def confirm(
        self, signed: SignedRequest, invitation_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        """The host says the claimed guest completed its handshake: the claim stays."""
        session_id = body.get("session_id")
        if not isinstance(session_id, str):
            raise _bad("session_id is required", status=422)

        def act(conn: Connection, row: Any, now: float) -> dict[str, Any]:
            status = self._status(row, now)
            if row["session_id"] != session_id or status not in ("claimed", "in_session"):
                code = (
                    "registry.claim_expired"
                    if row["session_id"] == session_id
                    else "registry.session_not_current"
                )
                raise RegistryError(
                    code,
                    f"session {session_id} is not this invitation's "
                    f"current claim (invitation is {status})",
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

        return self._host_action(signed, invitation_id, text, "confirm", act)

    def _claim_allowed(self, conn: Connection, row: Any, guest: str, now: float) -> None:
        """Refused guests, the re-claim back-off and the per-guest limit of live claims."""
        if guest in json.loads(row["refused"] or "[]"):
            raise RegistryError(
                "registry.claim_refused",
                "the host refused this agent's claims on this invitation",
                status=403,
            )
        last = row["claim_deadline"]
        if (
            row["guest_agent_id"] == guest
            and last is not None
            and now < last + self.reclaim_backoff
        ):
            raise RegistryError(
                "registry.reclaim_backoff",
                f"this agent's last claim on this invitation ended "
                f"{max(0, int(now - last))} s ago; others go first for "
                f"{int(self.reclaim_backoff)} s",
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
        if live >= self.max_live_claims:
            raise RegistryError(
                "registry.too_many_claims",
                f"this agent holds {live} live claims (at most "
                f"{self.max_live_claims}); finish or release one",
                status=429,
            )

    def release(
        self, signed: SignedRequest, invitation_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        """End the current claim now: by its guest (its connection failed) or by the host
        (``refuse: true`` also bars that guest from this invitation). The invitation is
        open again at once; the released guest waits the back-off before re-claiming."""
        self.authenticate(signed)
        session_id, refuse = body.get("session_id"), body.get("refuse", False)
        if not isinstance(session_id, str) or not isinstance(refuse, bool):
            raise _bad("session_id (string) is required; refuse is a boolean", status=422)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = self._load_invitation(conn, invitation_id)
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
            if row["session_id"] != session_id or self._status(row, now) != "claimed":
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
            fresh = self._load_invitation(conn, invitation_id)
            return Change(
                "release",
                invitation_id,
                {
                    "invitation_id": invitation_id,
                    "session_id": session_id,
                    "by": "host" if host else "guest",
                    "refused": refuse,
                },
                {"invitation": self._invitation(fresh, now)},
                created=False,
            )

        return self._write(signed, text, decide)

    def cancel(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        def act(conn: Connection, row: Any, now: float) -> dict[str, Any]:
            status = self._status(row, now)
            if status in ("cancelled", "finished", "expired", "withdrawn"):
                raise RegistryError(
                    "registry.invitation_closed", f"this invitation is already {status}", status=409
                )
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

        return self._host_action(signed, invitation_id, text, "cancel", act)

    def _absent(self) -> RegistryError:
        return RegistryError(
            "registry.host_absent",
            f"this invitation's host sent no heartbeat for {int(self.presence_timeout)} s; "
            "the invitation is withdrawn",
            status=409,
        )

    def heartbeat(self, signed: SignedRequest, invitation_id: str, text: str) -> dict[str, Any]:
        """The host is still there: its open or claimed invitation stays served. A spent
        nonce, not a log record: presence is the registry's observation, like expiry."""

        def act(conn: Connection, row: Any, now: float) -> dict[str, Any]:
            status = self._status(row, now)
            if status == "withdrawn":
                raise self._absent()
            if status not in ("open", "claimed"):
                raise RegistryError(
                    "registry.invitation_closed", f"this invitation is {status}", status=409
                )
            conn.execute(
                update(t.invitations)
                .where(t.invitations.c.invitation_id == row["invitation_id"])
                .values(host_seen_at=now)
            )
            return {}

        answer = self._host_action(signed, invitation_id, text, None, act)
        return {**answer, "presence_timeout_seconds": self.presence_timeout}

    # ------------------------------------------------------------------ sessions
    def _session(self, row: Any) -> dict[str, Any]:
        out = {
            k: row[k]
            for k in (
                "session_id",
                "invitation_id",
                "protocol_id",
                "host_agent_id",
                "guest_agent_id",
                "status",
                "verified",
                "seq",
            )
        }
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

    def session(self, session_id: str) -> dict[str, Any]:
        """One session, with the proof of its receipt records and its parties' identities."""
        with self.reader.connect() as conn:
            row = (
                conn.execute(select(t.sessions).where(t.sessions.c.session_id == session_id))
                .mappings()
                .first()
            )
            if row is None:
                raise _not_found("session", session_id)
            seqs = proofs.seqs_of(conn, "receipt", [f"{session_id}:host", f"{session_id}:guest"])
            proof = proofs.proof(
                self,
                conn,
                [*seqs, *proofs.identity_seqs(conn, [row["host_agent_id"], row["guest_agent_id"]])],
            )
        return {**self._session(row), "proof": proof}

    def sessions(
        self,
        *,
        status: str | None = None,
        protocol_id: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        limit, before = _limit(limit), decode_cursor(cursor)
        query = select(t.sessions)
        if status:
            query = query.where(t.sessions.c.status == status)
        if protocol_id:
            query = query.where(t.sessions.c.protocol_id == protocol_id)
        if before is not None:
            query = query.where(t.sessions.c.seq < before)
        with self.reader.connect() as conn:
            rows = (
                conn.execute(query.order_by(t.sessions.c.seq.desc()).limit(limit + 1))
                .mappings()
                .all()
            )
        items = [self._session(r) for r in rows[:limit]]
        return {
            "items": items,
            "next_cursor": encode_cursor(items[-1]["seq"]) if len(rows) > limit else None,
        }

    def post_receipt(
        self, signed: SignedRequest, session_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        key = self.authenticate(signed)
        receipt = body.get("receipt")
        if not isinstance(receipt, dict) or len(canonical_json(receipt)) > RECEIPT_MAX:
            raise _bad(f"receipt must be an object of at most {RECEIPT_MAX} bytes", status=422)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            row = (
                conn.execute(select(t.sessions).where(t.sessions.c.session_id == session_id))
                .mappings()
                .first()
            )
            if row is None:
                raise _not_found("session", session_id)
            if signed.agent_id == row["host_agent_id"]:
                role = "host"
            elif signed.agent_id == row["guest_agent_id"]:
                role = "guest"
            else:
                raise RegistryError(
                    "registry.not_party",
                    "only the host or the guest of this session may post its receipt",
                    status=403,
                )
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
                    return Change(None, session_id, {}, {"session": self._session(row)})
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
                host, guest = (
                    (receipt, json.loads(other)) if role == "host" else (json.loads(other), receipt)
                )
                pair = pair_problems(host, guest)
                values.update(
                    status="finished",
                    verified=not pair,
                    outcome=json.dumps(
                        {
                            "host_status": host["status"],
                            "guest_status": guest["status"],
                            "problems": pair,
                        }
                    ),
                )
                facts["verified"] = not pair
                counted = self._rate(conn, row, host, guest, pair, seq)
                facts["rated"] = counted is not None
                if counted is not None:
                    extra.append(("rating", session_id, counted))
                conn.execute(
                    update(t.invitations)
                    .where(
                        t.invitations.c.invitation_id == row["invitation_id"],
                        t.invitations.c.session_id == session_id,
                    )
                    .values(status="finished")
                )
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
                {"session": self._session(fresh)},
                extra=extra,
            )

        return self._write(signed, text, decide)

    # ------------------------------------------------------------------ reputation
    def _rate(
        self,
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
        run = hashlib.sha256(
            canonical_json(
                {"session_id": host["session_id"], "handshake": host.get("handshake")}
            ).encode()
        ).hexdigest()
        if (
            conn.execute(
                select(t.rated_sessions.c.session_id).where(
                    or_(t.rated_sessions.c.session_id == sid, t.rated_sessions.c.run == run)
                )
            ).first()
            is not None
        ):
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
            "host": {"sha256": hashlib.sha256(canonical_json(host).encode()).hexdigest()},
            "guest": {"sha256": hashlib.sha256(canonical_json(guest).encode()).hexdigest()},
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

    def ratings(self, agent_id: str, protocol_id: str | None = None) -> dict[str, Any]:
        """``agent_id``'s ratings (one protocol's, or every protocol it played), each with
        the log records of its counted games (newest 100) and their inclusion proofs."""
        if not isinstance(agent_id, str) or not agent_id or len(agent_id) > 32:
            raise _bad("agent is required (an agent id)")
        if protocol_id is not None and not is_hex(protocol_id, 64):
            raise _bad("protocol_id must be 64 lowercase hex chars")
        query = select(t.ratings).where(t.ratings.c.agent_id == agent_id)
        if protocol_id is not None:
            query = query.where(t.ratings.c.protocol_id == protocol_id)
        s = t.sessions
        with self.reader.connect() as conn:
            rows = conn.execute(query.order_by(t.ratings.c.protocol_id)).mappings().all()
            items, seqs = [], []
            for r in rows:
                history = list(
                    conn.execute(
                        select(t.rated_sessions.c.seq)
                        .join(s, s.c.session_id == t.rated_sessions.c.session_id)
                        .where(
                            s.c.protocol_id == r["protocol_id"],
                            or_(s.c.host_agent_id == agent_id, s.c.guest_agent_id == agent_id),
                        )
                        .order_by(t.rated_sessions.c.seq.desc())
                        .limit(100)
                    ).scalars()
                )
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
            proof = proofs.proof(self, conn, [*seqs, *proofs.identity_seqs(conn, [agent_id])])
        return {
            "agent_id": agent_id,
            "system": {"name": "elo", "k": elo.K, "initial": elo.INITIAL},
            "items": items,
            "proof": proof,
        }

    def counts(self) -> dict[str, int]:
        with self.reader.connect() as conn:
            return {
                "log": conn.execute(select(t.log_head.c.size)).scalar() or 0,
                "protocols": conn.execute(select(func.count()).select_from(t.protocols)).scalar()
                or 0,
            }


__all__ = ["Store", "ZERO"]
