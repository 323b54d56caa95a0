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
on psycopg's async connections, kept idle per loop): the server's browse waits on the
database without a hand-off to a worker thread and back. That read talks to libpq
directly (``AsyncConnection.pgconn``): the statement is prepared once per connection
with typed parameters, each execution sends the values as text and returns the text of
each column as bytes. A psycopg cursor would adapt every parameter, build a cursor, its
adapters map and its column descriptions per call and convert every value it reads,
about half the server's CPU for a page whose values are already the JSON it answers.
"""

from __future__ import annotations

import asyncio
import functools
import re
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine

KEEP = 16  # idle connections kept for the next read (a server's concurrent reads)
_NAMED = re.compile(r"%\((\w+)\)s")
# the parameter types a read's values have (PostgreSQL's OIDs: float8, int8, text)
_OIDS = {float: 701, int: 20, str: 25}


@functools.cache
def _positional(sql: str) -> tuple[bytes, tuple[str, ...]]:
    """``sql`` with its ``%(name)s`` parameters numbered ``$1``… in order of first use,
    and their names in that order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    return _NAMED.sub(number, sql).encode(), tuple(names)


def _text(value: Any) -> bytes:
    """A parameter as PostgreSQL's text input reads it back exactly (a float's repr is
    its shortest exact decimal). libpq ends a text value at a NUL, so one is refused
    as psycopg refuses it, never cut short."""
    text = repr(value) if isinstance(value, float) else str(value)
    if "\x00" in text:
        from psycopg import DataError

        raise DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
    return text.encode()


class _AsyncRead:
    """An async connection and the statements prepared on it (by SQL and parameter
    types: a value of another type gets a statement of its own)."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.pgconn = conn, conn.pgconn
        self.pgconn.nonblocking = 1  # a send never waits on the socket: flush says when
        self.prepared: dict[tuple[bytes, tuple[int, ...]], bytes] = {}

    async def _results(self) -> list[Any]:
        """Every result of what was sent, once the server has sent them all."""
        loop, fd = asyncio.get_running_loop(), self.pgconn.socket
        while self.pgconn.flush():  # the socket's buffer is full: wait until it drains
            await _ready(loop.add_writer, loop.remove_writer, fd)
        results: list[Any] = []
        while True:
            self.pgconn.consume_input()
            while not self.pgconn.is_busy():
                result = self.pgconn.get_result()
                if result is None:
                    return results
                results.append(result)
            await _ready(loop.add_reader, loop.remove_reader, fd)

    async def rows(self, sql: str, params: dict[str, Any]) -> list[tuple[bytes | None, ...]]:
        from psycopg import errors, pq

        text, names = _positional(sql)
        values = [params[n] for n in names]
        types = tuple(_OIDS.get(type(v), 0) for v in values)  # 0: the server infers it
        name = self.prepared.get((text, types))
        if name is None:
            name = f"lingxi_read_{len(self.prepared)}".encode()
            self.pgconn.send_prepare(name, text, types)
            _check(await self._results(), pq.ExecStatus.COMMAND_OK, errors)
            self.prepared[text, types] = name
        self.pgconn.send_query_prepared(name, [None if v is None else _text(v)
                                               for v in values])
        result = _check(await self._results(), pq.ExecStatus.TUPLES_OK, errors)
        width = result.nfields
        return [tuple(result.get_value(row, col) for col in range(width))
                for row in range(result.ntuples)]


async def _ready(add: Any, remove: Any, fd: int) -> None:
    """Until ``fd`` is readable (``add_reader``) or writable (``add_writer``)."""
    ready = asyncio.get_running_loop().create_future()
    add(fd, ready.set_result, None)
    try:
        await ready
    finally:
        remove(fd)


def _check(results: Sequence[Any], wanted: Any, errors: Any) -> Any:
    """The one result of a statement, or its error raised as psycopg raises it."""
    for result in results:
        if result.status != wanted:
            raise errors.error_from_result(result, encoding="utf-8")
    if len(results) != 1:
        raise errors.InterfaceError(f"{len(results)} results for one statement")
    return results[0]


class RawReads:
    """Autocommit driver connections of one database, for one-statement reads."""

    def __init__(self, engine: Engine, keep: int = KEEP) -> None:
        self.engine, self.keep = engine, keep
        self.postgres = engine.dialect.name == "postgresql"
        self._idle: list[Any] = []
        self._idle_async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                                    list[_AsyncRead]] = weakref.WeakKeyDictionary()
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

    async def fetch_async(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` on the running event loop (PostgreSQL only), each column's
        text as PostgreSQL sends it, UTF-8 bytes (None for NULL); ``params``: values of
        one type each (float, int, str or None) for the same statement every time."""
        import psycopg

        assert self.postgres
        idle = self._idle_async.setdefault(asyncio.get_running_loop(), [])
        read = idle.pop() if idle else None
        if read is None:
            read = _AsyncRead(await psycopg.AsyncConnection.connect(
                **self._params(), autocommit=True, client_encoding="utf-8"))
        try:
            rows = await read.rows(sql, params)
        except BaseException:
            read.pgconn.finish()  # whatever failed (a cancelled request too): not reused
            raise
        if not self._closed and len(idle) < self.keep:
            idle.append(read)
        else:
            await read.conn.close()
        return rows

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()
        for conns in list(self._idle_async.values()):  # from any thread: the sockets only
            while conns:
                conns.pop().pgconn.finish()
