"""What a write sends to the database: a lone write no savepoint, a batch one head move,
and the same stored state either way (the tree, the head row and the nonces)."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from lingxi.registry.errors import RegistryError
from lingxi.registry.storage.store import Store

from .test_write_path import _post, _queued_together, _setup, assert_tree_matches_log


def _statements(store: Store) -> list[str]:
    seen: list[str] = []
    event.listen(store.writer, "before_cursor_execute",
                 lambda _c, _k, sql, *_: seen.append(" ".join(sql.split()).upper()))
    return seen


def test_a_lone_write_takes_no_savepoint_and_moves_the_head_once(database_url, alice):
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        seen = _statements(store)
        _post(store, alice, pid, 1)
        assert not [s for s in seen if "SAVEPOINT" in s]
        assert sum(s.startswith("UPDATE LOG_HEAD") for s in seen) == 1
        assert_tree_matches_log(store)
    finally:
        store.close()


def test_a_batch_moves_the_head_once_to_its_last_good_write(database_url, alice):
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        _post(store, alice, pid, 1, nonce="ab" * 16)
        size = store.head()["size"]
        seen = _statements(store)
        answers = _queued_together(store, [
            lambda: _post(store, alice, pid, 2),
            lambda: _post(store, alice, pid, 3),
            lambda: _post(store, alice, pid, 4, nonce="ab" * 16),  # replayed: the last fails
        ])
        assert [type(a) for a in answers][:2] == [dict, dict]
        assert isinstance(answers[2], RegistryError)
        assert sum(s.startswith("UPDATE LOG_HEAD") for s in seen) == 1
        assert store.head()["size"] == size + 2
        assert_tree_matches_log(store)
    finally:
        store.close()


def test_a_lone_refused_write_changes_nothing_but_spends_its_nonce(database_url, alice):
    """Without a savepoint the refused write's transaction is rolled back whole, and its
    nonce is spent in a transaction of its own: the replay is still refused."""
    store = Store(database_url, writes_per_minute=None)
    store.max_open_invitations = 1
    try:
        pid = _setup(store, alice, "alice")
        _post(store, alice, pid, 1)
        size = store.head()["size"]
        with pytest.raises(RegistryError) as refused:
            _post(store, alice, pid, 2, nonce="cd" * 16)
        assert refused.value.code == "registry.too_many_invitations"
        assert store.head()["size"] == size
        store.max_open_invitations = 5
        with pytest.raises(RegistryError) as again:
            _post(store, alice, pid, 2, nonce="cd" * 16)
        assert again.value.code == "registry.request_replayed"
        assert_tree_matches_log(store)
    finally:
        store.close()
