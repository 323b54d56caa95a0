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

from sqlalchemy.engine import Connection


def _param(name: str, postgres: bool) -> str:
    return f"%({name})s" if postgres else f":{name}"


def insert_sql(table: str, columns: Sequence[str], postgres: bool, suffix: str = "") -> str:
    """``INSERT INTO table (columns) VALUES (named parameters)`` in the driver's style."""
    names = ", ".join(f'"{c}"' for c in columns)
    values = ", ".join(_param(c, postgres) for c in columns)
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
        self.head = "SELECT size, head FROM log_head WHERE id = 1"
        self.head_locked = self.head + (" FOR UPDATE" if p else "")
        # on PostgreSQL moving the head also notifies every listening process, at commit
        # (``changes``): no statement of its own
        self.head_set = (f"UPDATE log_head SET size = {param('new_size')}, "
                         f"head = {param('new_head')} WHERE id = 1"
                         + (" RETURNING pg_notify('lingxi_log', '')" if p else ""))
        self.invitation_add = insert_sql("invitations", (
            "invitation_id", "protocol_id", "host_agent_id", "host_public_key", "endpoint",
            "options", "note", "status", "created_at", "expires_at", "seq", "session_id",
            "guest_agent_id", "claim_deadline", "host_seen_at"), p)
        # a host's open or claimed invitations, counted up to the cap only (an absent
        # host's withdrawn ones do not count)
        self.open_count = (
            "SELECT count(*) FROM (SELECT 1 FROM invitations "
            f"WHERE host_agent_id = {param('host')} AND status IN ('open', 'claimed') "
            f"AND expires_at > {param('now')} "
            f"AND (host_seen_at > {param('seen')} OR claim_deadline > {param('now')}) "
            f"LIMIT {param('cap')}) AS counted"
        )


_BY_BACKEND = {False: WriteSQL(False), True: WriteSQL(True)}


def sql_for(conn: Connection) -> WriteSQL:
    """The statements in ``conn``'s dialect."""
    return _BY_BACKEND[conn.dialect.name == "postgresql"]


def savepoint(conn: Connection) -> None:
    conn.exec_driver_sql("SAVEPOINT write")


def release(conn: Connection) -> None:
    conn.exec_driver_sql("RELEASE SAVEPOINT write")


def roll_back(conn: Connection) -> None:
    """Undo everything since :func:`savepoint` (the transaction stays open)."""
    conn.exec_driver_sql("ROLLBACK TO SAVEPOINT write")
    conn.exec_driver_sql("RELEASE SAVEPOINT write")
