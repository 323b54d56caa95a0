"""Which database, how to connect, and bringing its schema up to date.

SQLite connections run in WAL mode with a busy timeout; a write transaction
starts with ``BEGIN IMMEDIATE`` so it holds the one write lock from its first
statement (reads use a plain ``BEGIN``). PostgreSQL URLs are routed to
psycopg 3. Migrations run under a PostgreSQL advisory lock, so server
processes starting together do not race to create the schema.
"""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError

from lingxi.home import lingxi_home
from lingxi.registry.errors import RegistryError

ENV = "LINGXI_DATABASE_URL"
MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x6C696E67  # "ling"


def default_url() -> str:
    return f"sqlite:///{lingxi_home() / 'registry' / 'registry.db'}"


def resolve_url(explicit: str | None = None) -> str:
    """``explicit``, else ``$LINGXI_DATABASE_URL``, else the SQLite file under the home."""
    url = explicit or os.environ.get(ENV) or default_url()
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix):]
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise RegistryError("registry.bad_database_url", f"not a database URL: {url!r}") from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise RegistryError("registry.bad_database_url",
                            "the registry stores in SQLite or PostgreSQL only")
    return url


def _sqlite_engine(url: str, immediate: bool) -> Engine:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30,
                                              "isolation_level": None},
                           pool_size=8, max_overflow=16)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):  # noqa: ANN001
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        if immediate:
            # a write's savepoint keeps the pages it changes in a statement journal, read
            # only by a rollback to that savepoint (never by crash recovery, which is the
            # WAL's): in memory, not a temporary file, which tripled each insert's cost
            cursor.execute("PRAGMA temp_store=MEMORY")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):  # noqa: ANN001
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def make_engines(url: str) -> tuple[Engine, Engine]:
    """``(reader, writer)`` engines.

    On PostgreSQL the reader's pool pings a connection at checkout; the writer's does
    not (a ping is a round trip per write transaction): every write transaction begins
    by locking the log head, and one whose connection turns out dead there is begun
    again on a new connection (``UnitOfWork.transaction``). Writes of a process run one
    transaction at a time (the group commit), so its pool stays small."""
    if make_url(url).get_backend_name() == "sqlite":
        return _sqlite_engine(url, False), _sqlite_engine(url, True)
    reader = create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
    writer = create_engine(url, pool_size=2, max_overflow=8, pool_pre_ping=False)
    return reader, writer


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision shipped in this package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.connect() as conn:
        postgres = engine.dialect.name == "postgresql"
        if postgres:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
            conn.commit()
        try:
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
            conn.commit()
        finally:
            if postgres:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})
                conn.commit()
