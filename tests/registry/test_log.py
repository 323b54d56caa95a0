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


async def test_a_rewritten_history_is_caught(store, alice, tmp_path):
    async with _client(store, alice, tmp_path / "a") as a:
        await a.register("alice")
        await a.register_protocol(rps_spec())
        assert (await verify_registry(a, a.ledger))["ok"]  # keeps this head
        await a.register_protocol(builtin_spec("chat"))
        # The operator edits the protocol record and re-chains everything after it.
        from lingxi.registry.models.log import make_entry
        from lingxi.registry.storage import schema as t

        with store.writer.begin() as conn:
            rows = conn.execute(t.log.select().order_by(t.log.c.seq)).mappings().all()
            prev = "0" * 64
            for row in rows:
                import json

                record = json.loads(row["record"])
                if row["seq"] == 2:
                    record["server"]["protocol_id"] = "f" * 64
                entry = make_entry(row["seq"], row["kind"], row["record_id"], record, prev,
                                   row["time"])
                conn.execute(t.log.update().where(t.log.c.seq == row["seq"]).values(
                    record=json.dumps(record), record_sha256=entry["record_sha256"],
                    prev=prev, hash=entry["hash"]))
                prev = entry["hash"]
            conn.execute(t.log_head.update().values(head=prev))
        result = await verify_registry(a, a.ledger)
    assert not result["ok"]
    assert any("record 2 differs" in p for p in result["problems"])
    assert any("rewritten" in p for p in result["problems"])


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
