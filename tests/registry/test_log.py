"""The transparency log: every accepted write is chained, the head signed, rewrites caught."""

from __future__ import annotations

import httpx

from lingxi.registry.client.api import RegistryClient
from lingxi.registry.client.ledger import Ledger, verify_registry
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.log import check_log, head_signature_ok
from lingxi.registry.server.app import create_app

from .conftest import builtin_spec, rps_spec


def _client(store, who, folder) -> RegistryClient:
    transport = httpx.ASGITransport(app=create_app(store), raise_app_exceptions=False)
    return RegistryClient("http://registry.test", who, transport=transport,
                          ledger=Ledger(folder))


async def test_every_write_is_logged_and_verifies(store, alice, bob, tmp_path):
    async with _client(store, alice, tmp_path / "a") as a, _client(store, bob, tmp_path / "b") as b:
        await a.register("alice")
        await b.register("bob")
        pid = (await a.register_protocol(rps_spec()))["protocol_id"]
        await a.publish_bundle(pid, {"index.html": b"<p>hi</p>"})
        inv = await a.post_invitation(pid, endpoint="tcp://127.0.0.1:9", options={"best_of": 1})
        claim = await b.claim(inv["invitation_id"])
        await a.confirm(inv["invitation_id"], claim.session_id)
        await a.cancel(inv["invitation_id"])
        head = await a.head()
        assert head_signature_ok(head) and head["size"] == 9
        assert head["server_public_key"] == (await a.info())["server_public_key"]
        kinds = [e["kind"] for e in await a.log_entries()]
        assert kinds == ["server_key", "identity", "identity", "protocol", "bundle", "invitation", "claim",
                         "confirm", "cancel"]
        assert (await verify_registry(a, a.ledger))["ok"]
        result = await verify_registry(b, b.ledger)
        assert result["ok"] and result["records_checked"] == 2
        record = await a.log_record(4)
        assert record["kind"] == "protocol" and record["server"]["protocol_id"] == pid


async def test_records_are_signed_by_their_authors_offline(store, alice, tmp_path):
    import hashlib

    from lingxi.registry.models.signing import SignedRequest

    async with _client(store, alice, tmp_path / "a") as a:
        await a.register("alice")
        await a.register_protocol(rps_spec())
        record = await a.log_record(2)
    request = SignedRequest(**record["request"])
    assert request.body_sha256 == hashlib.sha256(record["body"].encode()).hexdigest()
    assert request.verify(alice.public_hex)


def rewrite(store, seq: int, edit) -> None:
    """The operator edits record ``seq`` and rebuilds every leaf, node and the head, so the
    database is a consistent tree again (only clients' own copies can tell)."""
    import json

    from lingxi.registry.models.log import make_entry
    from lingxi.registry.models.merkle import MemoryTree
    from lingxi.registry.storage import schema as t
    from lingxi.registry.storage.tree import node_id

    tree = MemoryTree()
    with store.writer.begin() as conn:
        rows = conn.execute(t.log.select().order_by(t.log.c.seq)).mappings().all()
        for row in rows:
            record = json.loads(row["record"])
            if row["seq"] == seq:
                edit(record)
            entry = make_entry(row["seq"], row["kind"], row["record_id"], record, row["time"])
            conn.execute(t.log.update().where(t.log.c.seq == row["seq"]).values(
                record=json.dumps(record), record_sha256=entry["record_sha256"],
                hash=entry["hash"]))
            tree.append(bytes.fromhex(entry["hash"]))
        conn.execute(t.merkle_nodes.delete())
        conn.execute(t.merkle_nodes.insert(), [{"id": node_id(*k), "hash": v.hex()}
                                               for k, v in tree.nodes.items()])
        conn.execute(t.log_head.update().values(head=tree.root().hex()))


async def test_a_rewritten_history_is_caught(store, alice, tmp_path):
    async with _client(store, alice, tmp_path / "a") as a:
        await a.register("alice")
        await a.register_protocol(rps_spec())
        assert (await verify_registry(a, a.ledger))["ok"]  # keeps this checkpoint
        await a.register_protocol(builtin_spec("chat"))
        rewrite(store, 3, lambda r: r["server"].update(protocol_id="f" * 64))
        result = await verify_registry(a, a.ledger)
    assert not result["ok"]
    assert any("record 3 differs" in p for p in result["problems"])
    assert any("forked" in p for p in result["problems"])
    assert len(result["evidence"]) == 2 and all("lingxi-time" in e for e in result["evidence"])


async def test_an_edited_record_row_is_caught_without_a_full_download(store, alice, bob,
                                                                      tmp_path):
    """``UPDATE log SET record=…`` with the tree untouched: the client re-fetches what it
    kept; a full audit catches it for records the client never kept too."""
    from lingxi.registry.storage import schema as t

    async with _client(store, alice, tmp_path / "a") as a, \
            _client(store, bob, tmp_path / "b") as b:
        await a.register("alice")
        await b.register("bob")
        assert (await verify_registry(a, a.ledger))["ok"]
        with store.writer.begin() as conn:
            text = conn.execute(t.log.select().where(t.log.c.seq == 2)).mappings().one()["record"]
            conn.execute(t.log.update().where(t.log.c.seq == 2).values(
                record=text.replace("alice", "mallory")))
        fast = await verify_registry(a, a.ledger)
        assert not fast["ok"] and any("record 2 differs" in p for p in fast["problems"])
        assert (await verify_registry(b, b.ledger))["ok"]  # bob kept only his own record
        full = await verify_registry(b, b.ledger, full=True)
    assert not full["ok"] and any("record 2 does not hash" in p for p in full["problems"])


async def test_full_audit_reverifies_every_signed_request(store, alice, bob, tmp_path):
    async with _client(store, alice, tmp_path / "a") as a, \
            _client(store, bob, tmp_path / "b") as b:
        await a.register("alice")
        await b.register("bob")
        await a.register_protocol(rps_spec())
        full = await verify_registry(b, b.ledger, full=True)
        assert full["ok"], full["problems"]
        assert full["requests_checked"] == 3 and full["entries_checked"] == 4
        # a forged request inside a record, the tree rebuilt around it: only the audit sees
        rewrite(store, 4, lambda r: r["request"].update(signature="00" * 64))
        assert not (await verify_registry(b, b.ledger))["ok"]  # bob's kept checkpoint: a fork
    async with _client(store, bob, tmp_path / "fresh") as newcomer:  # nothing kept yet
        assert (await verify_registry(newcomer, newcomer.ledger))["ok"]  # proofs hold...
        forged = await verify_registry(newcomer, newcomer.ledger, full=True)  # ...not audit
    assert not forged["ok"]
    assert any("does not verify" in p for p in forged["problems"]), forged["problems"]


async def test_verify_is_logarithmic_in_the_log_size(store, alice, tmp_path):
    """The proofs mode asks for one consistency proof and one inclusion proof per kept
    record, each of O(log n) hashes, never for the entries."""
    async with _client(store, alice, tmp_path / "a") as a:
        await a.register("alice")
        assert (await verify_registry(a, a.ledger))["ok"]
        for i in range(40):
            await a.post_invitation(await _rps(a, i == 0), endpoint="tcp://127.0.0.1:9",
                                    options={"best_of": 1})
        calls: list[str] = []
        original = a._call

        async def counting(method, path, **kw):
            calls.append(path)
            return await original(method, path, **kw)

        a._call = counting
        result = await verify_registry(a, a.ledger)
        assert result["ok"], result["problems"]
        assert "/v1/log" not in calls
        proof = await original("GET", "/v1/log/proof/consistency",
                               params={"from": 2, "to": result["size"]})
        assert len(proof["proof"]) <= 2 * result["size"].bit_length()


async def _rps(a, first: bool) -> str:
    if first:
        return (await a.register_protocol(rps_spec()))["protocol_id"]
    return (await a.search())["items"][0]["protocol_id"]


async def test_dropping_an_entry_breaks_the_chain(store, alice, tmp_path):
    async with _client(store, alice, tmp_path / "a") as a:
        await a.register("alice")
        await a.register_protocol(rps_spec())
        await a.register_protocol(builtin_spec("chat"))
        head, entries = await a.head(), await a.log_entries()
    assert check_log(head, entries).ok
    assert not check_log(head, entries[:1] + entries[2:]).ok
    assert not check_log(head, entries[:2]).ok  # a shorter log does not end at the head
    forged = {**head, "size": 2}
    assert not check_log(forged, entries[:2]).ok  # the signature no longer matches


async def test_a_changed_server_key_is_caught(store, alice, tmp_path):
    async with _client(store, alice, tmp_path / "a") as a:
        await a.register("alice")
        assert (await verify_registry(a, a.ledger))["ok"]
    store.key = ServerKey.generate()  # a process signing with a key the client never saw
    async with _client(store, alice, tmp_path / "a") as a:
        result = await verify_registry(a, a.ledger)
    assert not result["ok"] and "another key" in " ".join(result["problems"])
