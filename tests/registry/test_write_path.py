"""The write path's shortcuts (one-statement nonce spend, the cached Merkle frontier) store
exactly what the long way stored, and a stale or poisoned cache is never trusted."""

from __future__ import annotations

import json
import threading
import time

import pytest
from sqlalchemy import event, select

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.merkle import MemoryTree
from lingxi.registry.models.signing import parse_signed, sign_request
from lingxi.registry.storage import idempotency
from lingxi.registry.storage import invitations as inv
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.store import Store
from lingxi.registry.storage.tree import node_id

from .conftest import rps_spec


def _signed(who, path: str, body: dict, nonce: str | None = None):
    text = json.dumps(body)
    headers = sign_request(who, "POST", path, text.encode(), nonce=nonce)
    return parse_signed(headers, "POST", path, text.encode(), now=time.time()), body, text


def _setup(store: Store, who, name: str) -> str:
    store.register_identity(*_signed(who, "/v1/identities",
                                     {"nickname": name, "public_key": who.public_hex}))
    return store.register_protocol(*_signed(who, "/v1/protocols",
                                            {"spec": rps_spec()}))["protocol_id"]


def _post(store: Store, who, pid: str, port: int, nonce: str | None = None):
    return store.post_invitation(*_signed(who, "/v1/invitations", {
        "protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{port}"}, nonce=nonce))


def assert_tree_matches_log(store: Store) -> None:
    """Every stored node, the head row and the signed head equal a tree rebuilt from the
    log's leaves."""
    rebuilt = MemoryTree()
    with store.reader.connect() as conn:
        for leaf in conn.execute(select(t.log.c.hash).order_by(t.log.c.seq)).scalars():
            rebuilt.append(bytes.fromhex(leaf))
        nodes = dict(conn.execute(select(t.merkle_nodes.c.id, t.merkle_nodes.c.hash)).all())
        head = conn.execute(select(t.log_head.c.size, t.log_head.c.head)).one()
    assert nodes == {node_id(*k): v.hex() for k, v in rebuilt.nodes.items()}
    assert (head.size, head.head) == (rebuilt.size, rebuilt.root().hex())
    assert store.head()["root"] == rebuilt.root().hex()


def test_two_stores_appending_in_turn_keep_one_tree(database_url, alice, bob):
    """Each store's cached frontier goes stale whenever the other appends; it must notice."""
    one = Store(database_url, writes_per_minute=None)
    two = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(one, alice, "alice")
        two.register_identity(*_signed(bob, "/v1/identities",
                                       {"nickname": "bob", "public_key": bob.public_hex}))
        for i in range(13):
            _post(one, alice, pid, 1000 + i)
            _post(two, bob, pid, 2000 + i)
            if i % 3 == 0:
                _post(two, bob, pid, 3000 + i)
        assert_tree_matches_log(one)
    finally:
        one.close()
        two.close()


def test_a_post_after_a_post_reads_no_tree_nodes(database_url, alice):
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        _post(store, alice, pid, 1)
        statements: list[str] = []
        event.listen(store.writer, "before_cursor_execute",
                     lambda _c, _k, sql, *_: statements.append(sql))
        _post(store, alice, pid, 2)
        assert not [s for s in statements if s.lstrip().upper().startswith("SELECT")
                    and "merkle_nodes" in s]
        assert sum("nonces" in s for s in statements) == 1  # spent in one statement
        assert_tree_matches_log(store)
    finally:
        store.close()


@pytest.mark.parametrize("parity", [0, 1])
def test_a_rolled_back_append_does_not_poison_the_cache(database_url, alice, bob, monkeypatch,
                                                        parity):
    """A write that appended and then failed leaves this store's cache naming a head that
    never committed (and, at an odd index, a merged node that never existed); another
    store then appends there for real, and this store's next append must use the real
    tree."""
    one = Store(database_url, writes_per_minute=None)
    two = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(one, alice, "alice")
        two.register_identity(*_signed(bob, "/v1/identities",
                                       {"nickname": "bob", "public_key": bob.public_hex}))
        port = 1
        while one.head()["size"] % 2 != parity:
            _post(one, alice, pid, port := port + 1)

        def broken(*_args, **_kw):
            raise RuntimeError("disk full while remembering the answer")

        monkeypatch.setattr(idempotency, "remember", broken)
        run = one.idempotent("k" * 16, one.post_invitation)
        with pytest.raises(RuntimeError):
            run(*_signed(alice, "/v1/invitations",
                         {"protocol_id": pid, "endpoint": "tcp://127.0.0.1:2"}))
        monkeypatch.undo()
        size = one.head()["size"]
        _post(two, bob, pid, 3)
        _post(one, alice, pid, 4)
        _post(one, alice, pid, 5)
        assert one.head()["size"] == size + 3
        assert_tree_matches_log(one)
    finally:
        one.close()
        two.close()


def test_a_spent_nonce_is_refused_and_changes_nothing(database_url, alice):
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        nonce = "ab" * 16
        _post(store, alice, pid, 1, nonce=nonce)
        size = store.head()["size"]
        with pytest.raises(RegistryError) as refused:
            _post(store, alice, pid, 2, nonce=nonce)
        assert refused.value.code == "registry.request_replayed"
        assert store.head()["size"] == size
        assert_tree_matches_log(store)
    finally:
        store.close()


def _queued_together(store: Store, calls, commits_made: int = 1) -> list:
    """Run ``calls`` in threads while this test holds the commit lock, release it once all
    are queued, so they go into one batch; each call's answer or exception, in order."""
    commits = store._commits
    out: list = [None] * len(calls)

    def one(i, call):
        try:
            out[i] = call()
        except Exception as error:  # noqa: BLE001 - handed back to the test
            out[i] = error

    threads = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(calls)]
    with commits._commit_lock:
        for thread in threads:
            thread.start()
        while True:
            with commits._queue_lock:
                if len(commits._queue) == len(calls):
                    break
            time.sleep(0.001)
        before = commits.batches
    for thread in threads:
        thread.join()
    assert commits.batches == before + commits_made  # one transaction, one commit
    return out


def test_queued_writes_commit_together_each_with_its_own_entry(database_url, alice):
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        size = store.head()["size"]
        answers = _queued_together(store, [
            lambda i=i: _post(store, alice, pid, 100 + i) for i in range(8)])
        seqs = sorted(a["log"]["seq"] for a in answers)
        assert seqs == list(range(size + 1, size + 9))
        ids = {a["invitation"]["invitation_id"] for a in answers}
        assert len(ids) == 8
        for answer in answers:
            record = store.log_record(answer["log"]["seq"])["record"]
            assert record["id"] == answer["invitation"]["invitation_id"]
        assert_tree_matches_log(store)
    finally:
        store.close()


def test_a_refused_write_in_a_batch_fails_alone_and_spends_its_nonce(database_url, alice):
    store = Store(database_url, writes_per_minute=None)
    store.max_open_invitations = 3
    try:
        pid = _setup(store, alice, "alice")
        replayed = "cd" * 16
        _post(store, alice, pid, 1, nonce=replayed)
        size = store.head()["size"]
        over = "ef" * 16
        answers = _queued_together(store, [
            lambda: _post(store, alice, pid, 2),
            lambda: _post(store, alice, pid, 3, nonce=replayed),  # replay: refused
            lambda: _post(store, alice, pid, 4),
        ])
        assert isinstance(answers[1], RegistryError)
        assert answers[1].code == "registry.request_replayed"
        assert all(isinstance(a, dict) for a in (answers[0], answers[2]))
        answers = _queued_together(store, [
            lambda: _post(store, alice, pid, 5, nonce=over),  # a fourth open one: refused
        ])
        assert isinstance(answers[0], RegistryError)
        assert answers[0].code == "registry.too_many_invitations"
        assert store.head()["size"] == size + 2
        with pytest.raises(RegistryError) as again:  # the refusal spent the nonce
            _post(store, alice, pid, 5, nonce=over)
        assert again.value.code == "registry.request_replayed"
        assert_tree_matches_log(store)
    finally:
        store.close()


def test_a_failed_commit_fails_every_write_in_the_batch(database_url, alice, monkeypatch):
    """Nothing is acknowledged that did not commit: a batch whose transaction breaks gives
    every writer in it the error, and none of their writes is stored."""
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        size = store.head()["size"]
        real = store._commits._one
        seen: list = []

        def breaks_after(conn, head, job):
            head = real(conn, head, job)
            seen.append(job)
            if len(seen) == 3:
                raise RuntimeError("connection lost before the commit")
            return head

        monkeypatch.setattr(store._commits, "_one", breaks_after)
        answers = _queued_together(store, [
            lambda i=i: _post(store, alice, pid, 10 + i) for i in range(3)], commits_made=0)
        assert all(isinstance(a, RuntimeError) for a in answers)
        monkeypatch.undo()
        assert store.head()["size"] == size
        assert_tree_matches_log(store)
    finally:
        store.close()


def test_a_write_failing_after_its_append_is_undone_alone(database_url, alice, monkeypatch):
    """The middle write of a batch appends its leaf and then fails: its savepoint takes the
    leaf, the nodes and the head back, and the writes around it still chain correctly."""
    store = Store(database_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        size = store.head()["size"]
        real = idempotency.remember

        def remember(conn, signed, key, answer, now):
            if key == "b" * 16:
                raise RuntimeError("disk full while remembering the answer")
            real(conn, signed, key, answer, now)

        monkeypatch.setattr(idempotency, "remember", remember)
        answers = _queued_together(store, [
            lambda: store.idempotent("a" * 16, store.post_invitation)(*_signed(
                alice, "/v1/invitations", {"protocol_id": pid, "endpoint": "tcp://127.0.0.1:1"})),
            lambda: store.idempotent("b" * 16, store.post_invitation)(*_signed(
                alice, "/v1/invitations", {"protocol_id": pid, "endpoint": "tcp://127.0.0.1:2"})),
            lambda: _post(store, alice, pid, 3),
        ])
        assert isinstance(answers[1], RuntimeError)
        assert sorted(a["log"]["seq"] for a in (answers[0], answers[2])) == [size + 1, size + 2]
        assert store.head()["size"] == size + 2
        assert_tree_matches_log(store)
    finally:
        store.close()


def test_options_once_accepted_pass_again_and_refused_ones_stay_refused(database_url, alice):
    """The options a spec accepted are remembered per protocol (canonical text): the same
    options pass again, others are still checked, and a refusal is never remembered."""
    store = Store(database_url, writes_per_minute=None)
    store.max_open_invitations = 100
    try:
        pid = _setup(store, alice, "alice")

        def post(port: int, options) -> dict:
            return store.post_invitation(*_signed(alice, "/v1/invitations", {
                "protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{port}",
                "options": options}))

        assert post(1, {"best_of": 5})["invitation"]["options"] == {"best_of": 5}
        assert (pid, '{"best_of":5}') in store.invitations._accepted
        assert post(2, {"best_of": 5})["created"]
        for port in (3, 4):  # refused each time, remembered never
            with pytest.raises(RegistryError) as refused:
                post(port, {"best_of": 0})
            assert refused.value.status == 422
        assert (pid, '{"best_of":0}') not in store.invitations._accepted
        # the memory is bounded: past the limit it starts over
        accepted = {(pid, str(i)): None for i in range(inv.ACCEPTED_OPTIONS)}
        store.invitations._accepted = accepted
        assert post(5, {"best_of": 7})["created"]
        assert store.invitations._accepted == {(pid, '{"best_of":7}'): None}
    finally:
        store.close()
