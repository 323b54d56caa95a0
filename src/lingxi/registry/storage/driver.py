"""The write path's hot statements as driver SQL, written once per dialect.

Every write runs the same few statements under the log-head lock (spend the nonce,
insert the row, insert the log entry and the Merkle nodes, move the head). Through
SQLAlchemy Core each costs a cache-key walk, parameter processing and result setup,
more CPU than SQLite takes to run it; ``Connection.exec_driver_sql`` hands the text and
the parameters to the driver directly (engine events still see every statement). The
columns hold only strings, integers and floats, which both drivers bind as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from lingxi.registry.storage.browsing import invitation_insert


def _param(name: str, postgres: bool) -> str:
    return f"%({name})s" if postgres else f":{name}"


def insert_sql(table: str, columns: Sequence[str], postgres: bool, suffix: str = "",
               prefix: str = "") -> str:
    """``INSERT INTO table (columns) VALUES (named parameters)`` in the driver's style
    (each parameter named ``prefix`` + its column). An invitation's also stores its
    browse item, rendered from the same parameters (``browsing.invitation_insert``)."""
    if table == "invitations":
        return invitation_insert(postgres, tuple(columns), prefix) + suffix
    names = ", ".join(f'"{c}"' for c in columns)
    values = ", ".join(_param(prefix + c, postgres) for c in columns)
    return f'INSERT INTO "{table}" ({names}) VALUES ({values}){suffix}'


class WriteSQL:
    """The statements of one dialect, as text."""

    def __init__(self, postgres: bool) -> None:
        p = postgres

        def param(name: str) -> str:
            return _param(name, p)

        self.postgres = postgres
        self.nonce_spend = insert_sql("nonces", ("agent_id", "nonce", "ts"), p,
                                      " ON CONFLICT DO NOTHING RETURNING ts")
        self.log_add = insert_sql("log", ("seq", "kind", "record_id", "record_sha256", "hash",
                                          "time", "record"), p)
        self.node_add = insert_sql("merkle_nodes", ("id", "hash"), p)
        # PostgreSQL: the log entry and the tree nodes it completes in one statement (one
        # round trip); a data-modifying WITH runs whether or not it is referenced
        self.log_and_nodes_add = (
            f"WITH entry AS ({self.log_add}) INSERT INTO merkle_nodes (id, hash) "
            "SELECT * FROM unnest(%(node_ids)s::bigint[], %(node_hashes)s::text[])"
            if p else None)
        self._spend_and: dict[str, str] = {}
        self._inserts: dict[tuple[str, tuple[str, ...]], str] = {}
        self._with_entry: dict[tuple[str, tuple[str, ...]], str] = {}
        self.head = "SELECT size, head FROM log_head WHERE id = 1"
        self.head_locked = self.head + (" FOR UPDATE" if p else "")
        # on PostgreSQL moving the head also notifies every listening process, at commit
        # (``changes``): no statement of its own
        self.head_set = (f"UPDATE log_head SET size = {param('new_size')}, "
                         f"head = {param('new_head')} WHERE id = 1"
                         + (" RETURNING pg_notify('lingxi_log', '')" if p else ""))
        # a host's open or claimed invitations, counted up to the cap only (an absent
        # host's withdrawn ones do not count)
        self.open_count = (
            "SELECT count(*) FROM (SELECT 1 FROM invitations "
            f"WHERE host_agent_id = {param('host')} AND status IN ('open', 'claimed') "
            f"AND expires_at > {param('now')} "
            f"AND (host_seen_at > {param('seen')} OR claim_deadline > {param('now')}) "
            f"LIMIT {param('cap')}) AS counted"
        )

    def insert(self, table: str, row: dict[str, Any]) -> str:
        """The insert of ``row`` (its keys are the columns) into ``table``."""
        key = (table, tuple(row))
        sql = self._inserts.get(key)
        if sql is None:
            sql = self._inserts[key] = insert_sql(table, key[1], self.postgres)
        return sql

    def row_log_and_nodes_add(self, table: str, row: dict[str, Any]) -> str:
        """PostgreSQL: :attr:`log_and_nodes_add` that also inserts ``row`` into ``table``
        (its parameters named ``row_`` + its column), one statement."""
        key = (table, tuple(row))
        sql = self._with_entry.get(key)
        if sql is None:
            assert self.log_and_nodes_add is not None
            own = insert_sql(table, key[1], True, prefix="row_")
            sql = self._with_entry[key] = (
                f"WITH own_row AS ({own}), " + self.log_and_nodes_add.removeprefix("WITH "))
        return sql

    def nonce_spend_and(self, probe: str) -> str:
        """PostgreSQL: the nonce spend and the one-value SELECT ``probe`` in one statement,
        answering one row ``(spent, probe's value)`` (a data-modifying WITH runs whether or
        not it is read; its row is not visible to ``probe``, which reads other tables)."""
        sql = self._spend_and.get(probe)
        if sql is None:
            sql = self._spend_and[probe] = (
                f"WITH spent AS ({self.nonce_spend}) "
                f"SELECT EXISTS (SELECT 1 FROM spent), ({probe})")
        return sql


_BY_BACKEND = {False: WriteSQL(False), True: WriteSQL(True)}

def sql_for(conn: Connection) -> WriteSQL:
    """The statements in ``conn``'s dialect."""
    return _BY_BACKEND[conn.dialect.name == "postgresql"]


# ---------------------------------------------------------------- round trips
# On PostgreSQL a statement whose result nobody reads need not cost a round trip of its
# own: it is queued on the connection (``conn.info``) and goes out, in psycopg's
# pipeline mode, ahead of the next statement that is sent (:func:`send`), in one round
# trip; the pipeline's sync at its end reports any failure among them there. So a
# write's savepoint travels with its nonce spend, and its rows with its log entry.
# On SQLite (no round trips) each statement runs when it is given.
_QUEUED = "lingxi_queued"
SAVEPOINT = "SAVEPOINT write"


def _fire(conn: Connection, cursor: Any, sql: str, params: Any, many: bool) -> None:
    """Engine events see a statement sent past SQLAlchemy as they see any other."""
    if conn.dispatch.before_cursor_execute:  # a listener is there
        conn.dispatch.before_cursor_execute(conn, cursor, sql, params, None, many)


def later(conn: Connection, sql: str, params: Any = None, many: bool = False) -> None:
    """Run ``sql`` (no result wanted) with the next :func:`send`, or now on SQLite."""
    if conn.dialect.name == "postgresql":
        conn.info.setdefault(_QUEUED, []).append((sql, params, many))
    else:
        send(conn, sql, params, many=many)


def send(conn: Connection, sql: str, params: Any = None, *, many: bool = False,
         commit: bool = False) -> list[Any]:
    """Run the queued statements and ``sql`` (one round trip on PostgreSQL) on ``conn``'s
    driver connection, in its open transaction; ``sql``'s rows as tuples (none for a
    statement that returns none). A failure of any of them raises here. ``commit``
    (PostgreSQL): the transaction's ``COMMIT`` goes in the same pipeline, after them,
    so the caller's own commit then finds nothing open and sends nothing."""
    raw = conn.connection.driver_connection
    assert raw is not None
    statements = [*conn.info.pop(_QUEUED, ()), (sql, params, many)]
    # one cursor runs them all (it keeps the last statement's result, the one wanted)
    cursor = raw.cursor()
    if conn.dialect.name != "postgresql":
        try:
            for text, values, each in statements:
                _fire(conn, cursor, text, values, each)
                (cursor.executemany if each else cursor.execute)(text, values or {})
            return cursor.fetchall() if cursor.description else []
        finally:
            cursor.close()
    # statements queued before a savepoint are an earlier write's: if any of them fails,
    # that write was already counted done, so the failure is not this write's own
    earlier = any(text == SAVEPOINT for text, _, _ in statements[1:])
    try:
        with raw.pipeline():
            for text, values, each in statements:
                _fire(conn, cursor, text, values, each)
                (cursor.executemany if each else cursor.execute)(text, values)
            if commit:  # not reached if a statement failed: the pipeline stops there
                raw.commit()
    except Exception as error:
        if earlier:
            raise EarlierWriteFailed(str(error)) from error
        raise
    return cursor.fetchall() if cursor.description else []


class EarlierWriteFailed(Exception):  # noqa: N818 - a fact, not a condition
    """A statement of an earlier write of the transaction, sent with this one, failed:
    the transaction cannot commit (``batch`` fails the whole batch)."""


def flush(conn: Connection, *, commit: bool = False) -> None:
    """Send what is queued, if anything (its failures raise here); with ``commit``, the
    ``COMMIT`` rides with it on PostgreSQL (the transaction's last round trip)."""
    queued = conn.info.pop(_QUEUED, None)
    if queued:
        *first, (sql, params, many) = queued
        conn.info[_QUEUED] = first
        send(conn, sql, params, many=many, commit=commit)


def savepoint(conn: Connection) -> None:
    """A savepoint before a write; on PostgreSQL it travels with the write's first
    statement, which every write sends through :func:`send` (its nonce spend)."""
    later(conn, SAVEPOINT)


def roll_back(conn: Connection) -> None:
    """Undo everything since :func:`savepoint` (the transaction stays open), including
    what is still queued."""
    queued = conn.info.pop(_QUEUED, [])
    mark = [i for i, (text, _, _) in enumerate(queued) if text == SAVEPOINT]
    if mark:  # it never went out, nor did anything after it; what came before still goes
        if queued[:mark[-1]]:
            conn.info[_QUEUED] = queued[:mark[-1]]
        return
    conn.exec_driver_sql("ROLLBACK TO SAVEPOINT write")
    conn.exec_driver_sql("RELEASE SAVEPOINT write")


def discard(conn: Connection) -> None:
    """Forget what is queued (its transaction is being rolled back)."""
    conn.info.pop(_QUEUED, None)
