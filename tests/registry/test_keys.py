"""The registry's key is not a row (issue 18.4): a 0600 file, moved out of ``meta``,
one current key named by the log, rotation endorsed by the previous key."""

from __future__ import annotations

import json
import os
import stat

import pytest
from sqlalchemy import create_engine, insert, select, text

from lingxi.errors import LingxiError
from lingxi.registry.models.keyrecord import key_record_problems
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.relay import RelayKeys
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.engine import migrate
from lingxi.registry.storage.relay import relay_keys
from lingxi.registry.storage.secrets import relay_path
from lingxi.registry.storage.store import Store


def dump(store: Store) -> str:
    """Every value in every table, as one text (what a stolen backup holds)."""
    out = []
    with store.reader.connect() as conn:
        for table in t.metadata.sorted_tables:
            out += [repr(tuple(row)) for row in conn.execute(select(table))]
    return "\n".join(out)


def key_records(store: Store) -> list[dict]:
    with store.reader.connect() as conn:
        rows = conn.execute(select(t.log.c.record).where(t.log.c.kind == "server_key")
                            .order_by(t.log.c.seq)).scalars().all()
    return [json.loads(r) for r in rows]


def test_the_key_lives_in_a_0600_file_and_nowhere_in_the_database(database_url, tmp_path):
    path = tmp_path / "keys" / "server.key"
    store = Store(database_url, key_file=path)
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_text().strip() == store.key.private_hex()
        relay_keys(store)
        seeds = relay_path(path)
        assert stat.S_IMODE(seeds.stat().st_mode) == 0o600
        backup = dump(store)
        assert store.key.private_hex() not in backup
        for seed in json.loads(seeds.read_text()).values():
            assert str(seed) not in backup
        [record] = key_records(store)
        assert record["server"]["public_key"] == store.key.public_hex
        assert key_record_problems(record, previous=None) == []
    finally:
        store.close()
    again = Store(database_url, key_file=path)  # the same file: the same key, no new record
    try:
        assert again.key.public_hex == store.key.public_hex and len(key_records(again)) == 1
    finally:
        again.close()


def test_keys_an_older_version_kept_in_meta_are_moved_out(database_url, tmp_path):
    legacy = ServerKey.generate()
    old_seeds = RelayKeys.generate().to_seeds()
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        migrate(engine)
        with engine.begin() as conn:
            conn.execute(insert(t.meta).values(key="server_key", value=legacy.private_hex()))
            conn.execute(insert(t.meta).values(key="relay_keys",
                                               value=json.dumps(old_seeds)))
    finally:
        engine.dispose()
    path = tmp_path / "server.key"
    store = Store(database_url, key_file=path)
    try:
        assert store.key.public_hex == legacy.public_hex
        assert path.read_text().strip() == legacy.private_hex()
        with store.reader.connect() as conn:
            assert conn.execute(select(t.meta.c.key).where(t.meta.c.key == "server_key")
                                ).first() is None
        assert key_records(store)[0]["server"]["reason"] == "migrated"
        assert relay_keys(store).to_seeds() == old_seeds
        assert json.loads(relay_path(path).read_text()) == old_seeds
        backup = dump(store)
        assert legacy.private_hex() not in backup
        assert not any(str(seed) in backup for seed in old_seeds.values())
    finally:
        store.close()


def test_a_key_file_others_can_read_is_refused(database_url, tmp_path):
    path = tmp_path / "server.key"
    path.write_text(ServerKey.generate().private_hex())
    os.chmod(path, 0o644)
    with pytest.raises(LingxiError) as caught:
        Store(database_url, key_file=path)
    assert caught.value.code == "registry.key_file_unsafe"


def test_a_process_with_another_key_refuses_to_start(database_url, tmp_path):
    first = Store(database_url, key_file=tmp_path / "a.key")
    first.close()
    with pytest.raises(LingxiError) as caught:
        Store(database_url, key_file=tmp_path / "b.key")
    assert caught.value.code == "registry.key_mismatch"


def test_rotation_is_logged_and_endorsed_by_the_previous_key(database_url, tmp_path):
    path = tmp_path / "server.key"
    store = Store(database_url, key_file=path)
    try:
        old, new = store.key, ServerKey.generate()
        log = store.rotate_key(new)
        assert log["record"]["server"]["previous"] == old.public_hex
        assert path.read_text().strip() == new.private_hex()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        first, second = key_records(store)
        assert key_record_problems(second, previous=old.public_hex) == []
        forged = json.loads(json.dumps(second))
        forged["server"]["endorsement"] = ServerKey.generate().sign(b"x").hex()
        assert "not endorsed" in " ".join(key_record_problems(forged, previous=old.public_hex))
        assert key_record_problems(second, previous=None)  # it does claim a previous key
    finally:
        store.close()
    reopened = Store(database_url, key_file=path)
    try:
        assert reopened.key.public_hex == new.public_hex
    finally:
        reopened.close()
    with pytest.raises(LingxiError):  # a process still holding the old key cannot sign on
        stale = tmp_path / "old.key"
        stale.write_text(old.private_hex())
        os.chmod(stale, 0o600)
        Store(database_url, key_file=stale)


def test_no_table_has_a_row_named_server_key(database_url, tmp_path):
    store = Store(database_url, key_file=tmp_path / "k")
    try:
        with store.reader.connect() as conn:
            keys = conn.execute(text("SELECT key FROM meta")).scalars().all()
        assert "server_key" not in keys
    finally:
        store.close()
