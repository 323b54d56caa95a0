"""The unit of work every write goes through: one transaction holding the log head, the
request's nonce spent, its rate charged, its idempotency key honoured, and what it
changed appended to the Merkle log before it commits, or nothing at all.

An aggregate (identities, protocols, invitations, …) only decides: it gets the
transaction's connection, the time and the sequence number its record will have, does
its own SQL and returns a :class:`Change`; this module logs it and answers. Concurrent
writes of one process share one transaction, each in its own savepoint (``batch``).
Reads never take the head lock.
"""

from __future__ import annotations

import fcntl
import math
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from lingxi.canonical import canonical_json
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.log import make_entry
from lingxi.registry.models.ratelimit import TokenBuckets
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import driver, idempotency, tree
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.batch import GroupCommit
from lingxi.registry.storage.driver import WriteSQL
from lingxi.registry.storage.engine import make_engines
from lingxi.registry.storage.rawreads import RawReads

HEAD = select(t.log_head.c.size, t.log_head.c.head).where(t.log_head.c.id == 1)
_ENTRY_COLUMNS = ("seq", "kind", "record_id", "record_sha256", "hash", "time")

# decide(conn, now, seq) -> Change: an aggregate's part of a write (seq: its record's);
# a write with a probe (below) calls decide(conn, now, seq, probed) instead
Decide = Callable[..., "Change"]
# probe(now) -> (sql, params): one read the decision needs, a driver-SQL SELECT of one
# value (in ``WriteSQL``'s parameter style, no name of the nonce spend's: agent_id, nonce,
# ts). It is run with the nonce spend, on PostgreSQL in the same statement (one round
# trip less per write), and its value is handed to ``decide``.
Probe = Callable[[float], tuple[str, dict[str, Any]]]


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
    # (table, row): one row the aggregate inserts, stored with the log entry (on PostgreSQL
    # in the entry's statement: one statement less per write); nobody reads it back before
    # the write ends
    row: tuple[str, dict[str, Any]] | None = None


class WriterLock:
    """One SQLite write transaction at a time: among this process's threads (a lock) and
    among processes on the same file (``flock`` on ``<database>-writer.lock``, which
    wakes a waiter as soon as it is let go; SQLite's own lock is waited on by sleeping
    and retrying). An in-memory database has no other process to meet."""

    def __init__(self, database: str | None) -> None:
        self._threads = threading.Lock()
        self._path = (f"{database}-writer.lock" if database and database != ":memory:"
                      else None)
        self._fd: int | None = None

    def __enter__(self) -> None:
        self._threads.acquire()
        try:
            if self._path is not None:
                if self._fd is None:
                    self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise

    def __exit__(self, *_: object) -> None:
        try:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()

    def close(self) -> None:
        with self._threads:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _nonce(signed: SignedRequest) -> dict[str, Any]:
    return {"agent_id": signed.agent_id, "nonce": signed.nonce, "ts": int(signed.timestamp)}


def _buckets(per_minute: int | None) -> TokenBuckets | None:
    return TokenBuckets(per_minute, 60.0) if per_minute else None


class UnitOfWork:
    """The database's engines, the write transaction and everything each write spends.

    ``key`` and ``origin`` (the server key and the checkpoint origin) are set once the
    log has named the key (:mod:`.serverkey`); ``clock`` may be replaced (tests)."""

    key: ServerKey
    origin: str

    def __init__(self, url: str, *, clock: Callable[[], float], window: int,
                 writes_per_minute: int | None, claims_per_minute: int | None) -> None:
        self.reader, self.writer = make_engines(url)
        self.postgres = self.writer.dialect.name == "postgresql"
        self.raw = RawReads(self.reader)  # one-statement hot reads (browse, the log size)
        self.clock = clock
        self.window = window
        # the statements every write runs, as driver SQL (see ``driver``)
        self.sql = WriteSQL(self.postgres)
        # SQLite's busy handler waits by sleeping with back-off, which gives long tails (and
        # starves a process whose writer keeps losing the race) when writers contend; they
        # queue on a lock instead, this process's and every lingxi process's (see
        # ``WriterLock``). PostgreSQL's head row lock wakes its waiters itself.
        self._local_writes = (None if self.postgres
                              else WriterLock(self.writer.url.database))
        self._thread = threading.local()
        self._frontier: tuple[int, str, tree.Frontier] | None = None  # see append
        self.commits = GroupCommit(self.transaction, finish=self.move_head)
        # told after every committed write transaction (``changes``, for the list cache)
        self.after_commit: Callable[[], None] = lambda: None
        self.set_limits(writes_per_minute, claims_per_minute)

    def close(self) -> None:
        if self._local_writes is not None:
            self._local_writes.close()
        self.raw.close()
        self.reader.dispose()
        if self.writer is not self.reader:
            self.writer.dispose()

    @contextmanager
    def transaction(self) -> Iterator[tuple[Connection, Any]]:
        """A write transaction holding the log head row; yields ``(conn, head)``. It
        commits when the block ends and rolls back if it raises."""
        with self._local_writes or nullcontext():
            conn, head = self._begin()
            try:
                yield conn, head
                # on PostgreSQL the COMMIT travels with the last queued rows; SQLAlchemy's
                # commit then finds the driver's transaction closed and sends nothing
                driver.flush(conn, commit=True)
                conn.commit()
            except BaseException:
                driver.discard(conn)
                conn.rollback()
                raise
            finally:
                driver.discard(conn)  # the connection goes back to the pool with its info
                conn.close()
        self.after_commit()  # reached only once the commit returned

    def _begin(self) -> tuple[Connection, Any]:
        """A writer connection in a transaction holding the head, and the head. The
        writer's pool does not ping (``engine.make_engines``): a pooled connection that
        died is seen on this first statement, and the transaction is begun once more on
        a new one (nothing was written on the dead one)."""
        for attempt in (1, 2):
            conn = self.writer.connect()
            try:
                head = conn.exec_driver_sql(self.sql.head_locked).one()
            except DBAPIError as error:
                conn.close()
                if attempt == 2 or not error.connection_invalidated:
                    raise
                continue
            except BaseException:
                conn.close()
                raise
            return conn, head
        raise AssertionError("unreachable")  # pragma: no cover

    # ------------------------------------------------------------------ rate charges
    def set_limits(self, writes_per_minute: int | None, claims_per_minute: int | None) -> None:
        """Signed requests per agent and claim attempts per invitation, each per minute
        (``None`` or 0: no limit). The buckets are this process's (see ``ratelimit``)."""
        self.writes_per_minute, self.claims_per_minute = writes_per_minute, claims_per_minute
        self.write_buckets = _buckets(writes_per_minute)
        self.claim_buckets = _buckets(claims_per_minute)

    def charge_writes(self, signed: SignedRequest) -> None:
        """Spend one of the signer's tokens once its signature holds, so nobody spends
        another agent's with forged requests. A replay spends one too: only who sees the
        agent's traffic can replay it, and that one can already drop it."""
        if self.write_buckets is not None:
            self._charge(self.write_buckets, signed.agent_id, "signed requests from this agent",
                         self.writes_per_minute)

    def charge_claim(self, invitation_id: str) -> None:
        """Spend one of the invitation's claim attempts (any claimant's)."""
        if self.claim_buckets is not None:
            self._charge(self.claim_buckets, invitation_id, "claim attempts on this invitation",
                         self.claims_per_minute)

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

    # ------------------------------------------------------------------ idempotency
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

    # ------------------------------------------------------------------ writes
    def write(self, signed: SignedRequest, body_text: str, decide: Decide,
              probe: Probe | None = None) -> dict[str, Any]:
        """Run ``decide`` and log what it changed, in a transaction it may share with other
        writes of this process (``batch``: its own savepoint, one commit for all).
        ``probe``: the one read ``decide`` needs, run with the nonce spend (``Probe``).

        A request that ``decide`` refuses still spends its nonce (after its savepoint is
        rolled back), so a refused claim cannot be replayed later when the invitation has
        reopened.
        """
        now = self.clock()
        idem = getattr(self._thread, "idempotency_key", None)

        def work(conn: Connection, head: Any) -> tuple[dict[str, Any], Any]:
            return self.write_once(conn, head, signed, body_text, decide, now, idem, probe)

        def refused(conn: Connection, error: BaseException) -> None:
            if getattr(error, "spend_nonce", False):
                self._spend(conn, signed)

        return self.commits.run(work, refused)

    def _spend(self, conn: Connection, signed: SignedRequest) -> bool:
        """Spend ``signed``'s nonce in one statement: False when it was spent before."""
        rows = driver.send(conn, self.sql.nonce_spend, _nonce(signed))
        return bool(rows)

    def _spend_and_probe(self, conn: Connection, signed: SignedRequest, probe: Probe,
                         now: float) -> tuple[bool, Any]:
        """:meth:`_spend` and ``probe``'s value; on PostgreSQL one statement (the probe
        reads other tables than ``nonces``, so it cannot see the spend either way)."""
        sql, params = probe(now)
        if not self.postgres:
            return self._spend(conn, signed), driver.send(conn, sql, params)[0][0]
        (spent, value), = driver.send(conn, self.sql.nonce_spend_and(sql),
                                      {**params, **_nonce(signed)})
        return bool(spent), value

    def write_once(
        self,
        conn: Connection,
        head: Any,
        signed: SignedRequest,
        body_text: str,
        decide: Decide,
        now: float,
        idem: str | None,
        probe: Probe | None = None,
    ) -> tuple[dict[str, Any], Any]:
        """One write in the caller's transaction: its answer and the head after it."""
        if idem is not None:
            earlier = idempotency.replay(conn, signed, idem)
            if earlier is not None:
                return earlier, head
        if probe is None:
            spent, probed = self._spend(conn, signed), None
        else:
            spent, probed = self._spend_and_probe(conn, signed, probe, now)
        if not spent:
            raise RegistryError(
                "registry.request_replayed", "this request nonce was already used", status=401
            )
        seq = head.size + 1
        try:
            change = decide(conn, now, seq) if probe is None else decide(conn, now, seq, probed)
        except RegistryError as error:
            error.spend_nonce = True
            raise
        if change.kind is None:
            if change.row is not None:
                driver.later(conn, self.sql.insert(*change.row), change.row[1])
            driver.flush(conn)  # what decide queued goes before anything else
            answer = {**change.response, "created": False}
        else:
            record = {
                "kind": change.kind,
                "id": change.record_id,
                "request": signed.to_dict(),
                "body": body_text,
                "server": change.facts,
            }
            log = self.append(conn, head, change.kind, change.record_id, record, now,
                              move_head=False, row=change.row)
            answer = {**change.response, "created": change.created, "log": log}
            for kind, record_id, facts in change.extra:
                more = {"kind": kind, "id": record_id, "request": None, "body": "",
                        "server": facts}
                done = self.append(conn, self.appended(), kind, record_id, more, now,
                                   move_head=False)
                answer.setdefault("logged", []).append(done)
            head = self.appended()
        if idem is not None:
            idempotency.remember(conn, signed, idem, answer, now)
        if seq % 64 == 0:
            conn.execute(delete(t.nonces).where(t.nonces.c.ts < int(now) - 2 * self.window))
            idempotency.purge(conn, now)
        return answer, head

    # ------------------------------------------------------------------ log appends
    def move_head(self, conn: Connection, start: Any, end: Any) -> None:
        """Set the head row to ``end`` if the batch that began at ``start`` appended."""
        if (end.size, end.head) != (start.size, start.head):
            # sent with the batch's last rows when it commits (one round trip on PostgreSQL)
            driver.later(conn, self.sql.head_set, {"new_size": end.size, "new_head": end.head})

    def appended(self) -> Any:
        """The head this process's last append made (its transaction still holds it)."""
        assert self._frontier is not None
        return SimpleNamespace(size=self._frontier[0], head=self._frontier[1])

    def append(
        self, conn: Connection, head: Any, kind: str, record_id: str, record: dict[str, Any],
        now: float, *, move_head: bool = True, row: tuple[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Append ``record`` as the next leaf (the caller's transaction holds the head) and
        move the head row, unless ``move_head`` is False (a batch moves it once at its end,
        :meth:`move_head`).

        ``row``: ``(table, row)`` to insert with the entry (``Change.row``).

        The frontier this process computed at its last append is reused when the head it
        holds is the one that append made (same size and root), so no other writer has
        appended since; otherwise the tree's nodes are read. It is set under the lock."""
        seq = head.size + 1
        text = canonical_json(record)
        entry = make_entry(seq, kind, record_id, record, int(now), text)
        log_row = {"record": text, **{k: entry[k] for k in _ENTRY_COLUMNS}}
        cached = self._frontier
        known = cached[2] if cached and cached[:2] == (head.size, head.head) else None
        root, frontier = tree.append(conn, seq - 1, bytes.fromhex(entry["hash"]), known,
                                     log_row, row)
        if move_head:
            conn.exec_driver_sql(self.sql.head_set, {"new_size": seq, "new_head": root.hex()})
        self._frontier = (seq, root.hex(), frontier)
        return {"seq": seq, "hash": entry["hash"], "entry": entry, "record": record}
