"""One-statement reads on the driver's own connections, in autocommit.

The hottest reads (a browse page, the log size) are one statement each, which in
autocommit is its own consistent snapshot. Through a pooled SQLAlchemy connection each
would also pay the pool's checkout and return, a liveness ping, and a ``BEGIN`` and a
``ROLLBACK`` — on PostgreSQL four round trips for the one that matters. These
connections are the driver's, opened outside the engine's pool (so holding some never
starves the writers of theirs), a few kept idle for the next read; one that failed is
closed, not reused. On PostgreSQL psycopg prepares a statement it sees repeatedly, so a
page's query is parsed and planned once per connection.

On PostgreSQL a read may also run on the calling event loop (:meth:`RawReads.fetch_async`,
psycopg's async connections, kept idle per loop): the server's browse waits on the
database without a hand-off to a worker thread and back.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import weakref
from typing import Any

from sqlalchemy.engine import Engine

KEEP = 16  # idle connections kept for the next read (a server's concurrent reads)


class RawReads:
    """Autocommit driver connections of one database, for one-statement reads."""

    def __init__(self, engine: Engine, keep: int = KEEP) -> None:
        self.engine, self.keep = engine, keep
        self.postgres = engine.dialect.name == "postgresql"
        self._idle: list[Any] = []
        self._idle_async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()
        self._closed = False

    def _params(self) -> dict[str, Any]:
        _, params = self.engine.dialect.create_connect_args(self.engine.url)
        params.pop("context", None)  # SQLAlchemy's adapters; these rows are plain values
        return dict(params)

    def _connect(self) -> Any:
        if self.postgres:
            import psycopg

            return psycopg.connect(**self._params(), autocommit=True)
        database = self.engine.url.database
        if not database or database == ":memory:":
            return self.engine.raw_connection()  # a memory database is the pool's own
        conn = sqlite3.connect(database, timeout=30, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    def rows(self, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Every row of ``sql`` (driver SQL in the dialect's parameter style) as a dict."""
        names, rows = self.fetch(sql, params)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def fetch(self, sql: str, params: dict[str, Any]) -> tuple[list[str], list[Any]]:
        """``(column names, rows as tuples)`` of ``sql``."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            cursor = conn.cursor()
            try:
                cursor.execute(sql, params)
                rows = cursor.fetchall()
                names = [d[0] for d in cursor.description]
            finally:
                cursor.close()
        except BaseException:
            conn.close()  # whatever failed, this connection is not trusted again
            raise
        with self._lock:
            if not self._closed and len(self._idle) < self.keep:
                self._idle.append(conn)
                conn = None
        if conn is not None:
            conn.close()
        return names, rows

    async def fetch_async(self, sql: str, params: dict[str, Any]
                          ) -> tuple[list[str], list[Any]]:
        """:meth:`fetch` on the running event loop (PostgreSQL only)."""
        import psycopg

        assert self.postgres
        idle = self._idle_async.setdefault(asyncio.get_running_loop(), [])
        conn = idle.pop() if idle else None
        if conn is None:
            conn = await psycopg.AsyncConnection.connect(**self._params(), autocommit=True)
        try:
            cursor = conn.cursor()
            await cursor.execute(sql, params)
            rows = await cursor.fetchall()
            names = [d[0] for d in cursor.description or ()]
            await cursor.close()
        except BaseException:
            conn.pgconn.finish()  # whatever failed (a cancelled request too): not reused
            raise
        if not self._closed and len(idle) < self.keep:
            idle.append(conn)
        else:
            await conn.close()
        return names, rows

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()
        for conns in list(self._idle_async.values()):  # from any thread: the sockets only
            while conns:
                conns.pop().pgconn.finish()
