"""Alembic 0001 -> 0002 keeps a registry's history: the old hash-chained entries become
Merkle leaves, the tree and its root are built, and down/up/down works on both backends."""

from __future__ import annotations

import json

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect, text

from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.log import entry_leaf, record_hash
from lingxi.registry.models.merkle import MemoryTree
from lingxi.registry.storage.engine import MIGRATIONS, resolve_url
from lingxi.registry.storage.store import Store


def _alembic(engine, target: str, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.connect() as conn:
        config.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(config, target)
        conn.commit()


def test_an_old_chained_log_becomes_a_merkle_tree(database_url, tmp_path):
    engine = create_engine(resolve_url(database_url))
    try:
        with engine.begin() as conn:  # the shared test database may be at head: start over
            for table in (
                "table_standings",
                "rated_sessions",
                "ratings",
                "idempotency",
                "merkle_nodes",
                "bundle_files",
                "bundles",
                "sessions",
                "invitations",
                "protocols",
                "agents",
                "nonces",
                "log",
                "log_head",
                "meta",
                "alembic_version",
            ):
                conn.execute(text(f"DROP TABLE IF EXISTS {table}"))
        _alembic(engine, "0001")
        legacy = ServerKey.generate()
        records = [
            {
                "kind": "identity",
                "id": f"lx-{i:016x}",
                "request": None,
                "body": "",
                "server": {"n": i},
            }
            for i in range(5)
        ]
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO meta (key, value) VALUES ('server_key', :v)"),
                {"v": legacy.private_hex()},
            )
            for seq, record in enumerate(records, 1):
                conn.execute(
                    text(
                        "INSERT INTO log (seq, kind, record_id, record_sha256, prev, "
                        "hash, time, record) VALUES (:s, 'identity', :i, :h, :p, "
                        ":x, :t, :r)"
                    ),
                    {
                        "s": seq,
                        "i": record["id"],
                        "h": record_hash(record),
                        "p": "0" * 64,
                        "x": "ab" * 32,
                        "t": 1000 + seq,
                        "r": json.dumps(record),
                    },
                )
            conn.execute(text("UPDATE log_head SET size = 5"))
        _alembic(engine, "head")
        expected = MemoryTree()
        for seq, record in enumerate(records, 1):
            expected.append(
                entry_leaf(
                    {
                        "seq": seq,
                        "kind": "identity",
                        "record_id": record["id"],
                        "record_sha256": record_hash(record),
                        "time": 1000 + seq,
                    }
                )
            )
        with engine.connect() as conn:
            assert conn.execute(text("SELECT head FROM log_head")).scalar() == expected.root().hex()
        assert "prev" not in {c["name"] for c in inspect(engine).get_columns("log")}
        store = Store(database_url, key_file=tmp_path / "server.key")
        try:
            head = store.head()
            assert head["size"] == 6  # the five old entries, then the moved key's record
            expected.append(bytes.fromhex(store.log_entries(5)["entries"][0]["hash"]))
            assert head["root"] == expected.root().hex()
            assert store.key.public_hex == legacy.public_hex
            proof = store.consistency_proof(5, 6)["proof"]
            from lingxi.registry.models.merkle import verify_consistency

            assert verify_consistency(
                5, 6, expected.root(5), expected.root(), [bytes.fromhex(h) for h in proof]
            )
        finally:
            store.close()
        _alembic(engine, "0001", down=True)
        assert "merkle_nodes" not in inspect(engine).get_table_names()
        _alembic(engine, "head")
    finally:
        engine.dispose()


def test_0007_counts_old_invitations_as_heard_from_when_posted(database_url):
    engine = create_engine(resolve_url(database_url))
    try:
        _alembic(engine, "head")  # an empty registry, or the shared test database at head
        _alembic(engine, "0006", down=True)
        assert "host_seen_at" not in {c["name"] for c in inspect(engine).get_columns("invitations")}
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM invitations"))
            conn.execute(
                text(
                    "INSERT INTO invitations (invitation_id, protocol_id, host_agent_id, "
                    "host_public_key, endpoint, options, note, status, created_at, expires_at, "
                    "seq) VALUES ('inv-old', :p, 'lx-0', :k, 'tcp://127.0.0.1:1', '{}', '', "
                    "'open', 1234.5, 9999.0, 999999)"
                ),
                {"p": "a" * 64, "k": "b" * 64},
            )
        _alembic(engine, "head")
        with engine.begin() as conn:
            seen = conn.execute(
                text("SELECT host_seen_at FROM invitations WHERE invitation_id = 'inv-old'")
            ).scalar()
            assert seen == 1234.5
            conn.execute(text("DELETE FROM invitations WHERE invitation_id = 'inv-old'"))
    finally:
        engine.dispose()
