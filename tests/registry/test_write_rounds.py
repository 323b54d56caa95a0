"""The write path's round trips: statements nobody reads sent with the next one, a dead writer connection replaced, and a browse page that
reads only its own rows whatever plan a prepared statement settles on."""

from __future__ import annotations

import json
import time

import psycopg
import pytest
from sqlalchemy import event

from lingxi.registry.models.records import encode_cursor
from lingxi.registry.storage import driver
from lingxi.registry.storage.browsing import browse_sql
from lingxi.registry.storage.store import Store

from .conftest import empty_postgres
from .test_write_path import _post, _setup, assert_tree_matches_log


def test_queued_statements_go_out_with_the_next_one_and_fail_there(database_url, alice):
    """A queued statement that fails is reported by the send it travels with, and the
    write it belongs to is refused alone: the batch's other writes commit."""
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        size = store.head()["size"]

        def poisoned(decide, conn, *args):  # a row that breaks, sent within the write
            _queue_poison(store, conn)
            driver.flush(conn)
            return decide(conn, *args)

        outcomes = store._commits.run_many([
            lambda: _post(store, alice, pid, 1),
            lambda: _poisoned_post(store, alice, pid, poisoned),
            lambda: _post(store, alice, pid, 3),
        ])
        errors = [error for _, error in outcomes]
        assert errors[0] is None and errors[2] is None
        assert errors[1] is not None
        assert store.head()["size"] == size + 2
        assert_tree_matches_log(store)
    finally:
        store.close()


def _queue_poison(store: Store, conn) -> None:
    """Queue a statement that fails (a duplicate key) on ``conn``."""
    driver.later(conn, "INSERT INTO nonces (agent_id, nonce, ts) VALUES "
                 + ("(%(a)s, %(a)s, 1), (%(a)s, %(a)s, 1)" if store.postgres
                    else "(:a, :a, 1), (:a, :a, 1)"), {"a": "dup"})


def _poisoned_post(store: Store, who, pid: str, poisoned) -> dict:
    """A post whose decision runs as ``poisoned(decide, conn, *args)``."""
    real = store.uow.write

    def write(signed, text, decide, *more):
        return real(signed, text, lambda *args: poisoned(decide, *args), *more)

    store.uow.write = write
    try:
        return _post(store, who, pid, 2)
    finally:
        del store.uow.write


def test_a_batch_sends_its_savepoints_with_its_nonces(database_url, alice):
    """Each batched write's savepoint goes out in the round trip of its nonce spend,
    and engine events still see every statement; on PostgreSQL the cap's count rides in
    the nonce spend's statement and the invitation's row in its log entry's."""
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        seen: list[str] = []
        event.listen(store.writer, "before_cursor_execute",
                     lambda _c, _k, sql, *_: seen.append(" ".join(sql.split()).upper()))
        outcomes = store._commits.run_many([lambda i=i: _post(store, alice, pid, i + 1)
                                            for i in range(3)])
        assert all(error is None for _, error in outcomes)
        savepoints = [i for i, s in enumerate(seen) if s == "SAVEPOINT WRITE"]
        assert len(savepoints) == 3
        assert all('INSERT INTO "NONCES"' in seen[i + 1] for i in savepoints)
        rows = [s for s in seen if 'INSERT INTO "INVITATIONS"' in s]
        assert len(rows) == 3
        # the invitation's row: on PostgreSQL in its log entry's statement
        assert all(('INSERT INTO "LOG"' in s) == store.postgres for s in rows)
        # the cap's count: on PostgreSQL in the nonce spend's statement, on SQLite its own
        counts = [s for s in seen if "SELECT COUNT(*)" in s]
        assert len(counts) == 3
        assert all(('INSERT INTO "NONCES"' in s) == store.postgres for s in counts)
        assert_tree_matches_log(store)
    finally:
        store.close()


@pytest.mark.postgres
def test_a_dead_writer_connection_is_replaced_at_the_head_lock(alice):
    from .conftest import fresh_postgres_database

    url, drop = fresh_postgres_database()
    store = Store(url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        with store.writer.connect() as conn:  # the connection the pool hands out next
            backend = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={name}",
                             autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
            for _ in range(100):  # until the server has ended it
                gone = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                                     (backend,)).fetchone()
                if gone == (0,):
                    break
                time.sleep(0.05)
        answer = _post(store, alice, pid, 1)
        assert answer["created"]
        assert_tree_matches_log(store)
    finally:
        store.close()
        drop()


def test_a_browse_page_reads_only_the_rows_near_its_cursor(database_url, alice):
    """Whatever the plan (PostgreSQL's generic one for a prepared statement included), a
    page far from the newest invitation reads about a page of rows, not every row above
    its cursor."""
    store = Store(database_url, writes_per_minute=None)
    store.max_open_invitations = 10 ** 6
    try:
        pid = _setup(store, alice, "alice")
        for port in range(1, 301):
            _post(store, alice, pid, port)
        page = store.browse(cursor=encode_cursor(40), limit=10)
        assert [item["seq"] for item in page["items"]] == list(range(39, 29, -1))
        # the page as rows, and as the server asks for it: each item's JSON
        statements = [browse_sql(store.postgres, False, False, False, False, True, encoded)
                      for encoded in (False, True)]
        now = store.clock()
        params = {"now": now, "presence": store.presence_timeout, "n": 11, "before": 40}
        raw = store.writer.raw_connection()
        try:
            cursor = raw.cursor()
            if store.postgres:
                cursor.execute("ANALYZE")
                cursor.execute("SET plan_cache_mode = force_generic_plan")
                for i, text in enumerate(statements):
                    prepared = text
                    for name in params:
                        prepared = prepared.replace(f"%({name})s",
                                                    f"${list(params).index(name) + 1}")
                    cursor.execute(f"PREPARE page{i} AS {prepared}")
                    cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE page{i}("
                                   + ", ".join(repr(v) for v in params.values()) + ")")
                    plan = cursor.fetchone()[0]
                    plan = plan if isinstance(plan, list) else json.loads(plan)
                    assert max(_rows_read(plan[0]["Plan"])) <= 3 * 11
            else:
                for text in statements:
                    cursor.execute("EXPLAIN QUERY PLAN " + text, params)
                    steps = [row[3] for row in cursor.fetchall()]
                    assert not [s for s in steps if s.startswith("SCAN") and "page" not in s]
            cursor.close()
        finally:
            raw.rollback()
            raw.close()
    finally:
        store.close()


def _rows_read(node: dict) -> list[int]:
    """Rows each scan of ``invitations`` in a PostgreSQL plan produced (all loops)."""
    own = ([node["Actual Rows"] * node.get("Actual Loops", 1)]
           if node.get("Relation Name") == "invitations" else [])
    return own + [n for child in node.get("Plans", []) for n in _rows_read(child)]


def test_a_queued_statement_failing_with_the_next_write_fails_the_batch(database_url, alice):
    """On PostgreSQL a write's last statements travel with the next write's first: if one
    of them fails there, the earlier write was already counted done, so nothing of the
    batch commits and every write is told so. (On SQLite each runs when given, and the
    write that made it is refused alone.)"""
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        size = store.head()["size"]

        def poisoned_after(decide, conn, *args):  # queued with the write's own rows
            change = decide(conn, *args)
            _queue_poison(store, conn)
            return change

        outcomes = store._commits.run_many([
            lambda: _post(store, alice, pid, 1),
            lambda: _poisoned_post(store, alice, pid, poisoned_after),
            lambda: _post(store, alice, pid, 3),
        ])
        errors = [error for _, error in outcomes]
        if store.postgres:
            assert all(error is not None for error in errors)
            assert isinstance(errors[2], driver.EarlierWriteFailed)
            assert store.head()["size"] == size
        else:
            assert errors[0] is None and errors[1] is not None and errors[2] is None
            assert store.head()["size"] == size + 2
        assert_tree_matches_log(store)
        assert _post(store, alice, pid, 4)["created"]  # the writer carries on
        assert_tree_matches_log(store)
    finally:
        store.close()


@pytest.mark.postgres
def test_the_commit_rides_with_the_last_queued_rows(postgres_database, alice, monkeypatch):
    """A write transaction's COMMIT goes in the pipeline of its last queued statements
    (the head move): SQLAlchemy's own commit after it finds the transaction closed and
    sends nothing, and the write is committed (another connection sees it)."""
    empty_postgres(postgres_database)
    store = Store(postgres_database, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        size = store.head()["size"]
        seen = []
        real = psycopg.Connection.commit

        def commit(self):
            seen.append((self._pipeline is not None, self.pgconn.transaction_status))
            return real(self)

        monkeypatch.setattr(psycopg.Connection, "commit", commit)
        _post(store, alice, pid, 1)
        monkeypatch.undo()
        idle = psycopg.pq.TransactionStatus.IDLE
        assert seen[0][0] and seen[0][1] != idle  # in the pipeline, the transaction open
        assert all(status == idle for _, status in seen[1:])  # nothing left to commit
        assert store.head()["size"] == size + 1
        assert_tree_matches_log(store)
    finally:
        store.close()
