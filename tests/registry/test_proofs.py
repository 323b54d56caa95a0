"""Served state comes from the log (issue 18.1): every fact a client acts on carries its
records and inclusion proofs; an edited row is served and refused by the client, and the
server authenticates by the logged identity, not the row."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import update

from lingxi.errors import LingxiError
from lingxi.registry.client.api import RegistryClient
from lingxi.registry.client.ledger import Ledger
from lingxi.registry.server.app import create_app
from lingxi.registry.storage import schema as t
from lingxi.wire.identity import Identity

from .conftest import rps_spec

MALLORY = Identity.from_seed(b"m" * 32)
EVE = Identity.from_seed(b"e" * 32)  # never registered


def _client(store, who, folder) -> RegistryClient:
    transport = httpx.ASGITransport(app=create_app(store, cache_ttl=0),
                                    raise_app_exceptions=False)
    return RegistryClient("http://registry.test", who, transport=transport,
                          ledger=Ledger(folder), clock=store.clock)


def edit(store, table, where, **values) -> None:
    with store.writer.begin() as conn:
        conn.execute(update(table).where(where).values(**values))
    store._keys.clear()  # the server's own cache of keys, as a restarted process would have


async def refused(call) -> str:
    with pytest.raises(LingxiError) as caught:
        await call
    assert caught.value.code == "registry.unproven", caught.value
    return caught.value.message


@pytest.fixture
async def scene(store, alice, bob, tmp_path):
    a, b = _client(store, alice, tmp_path / "a"), _client(store, bob, tmp_path / "b")
    m = _client(store, MALLORY, tmp_path / "m")
    await a.register("alice")
    await b.register("bob")
    await m.register("mallory")
    pid = (await a.register_protocol(rps_spec()))["protocol_id"]
    inv = await a.post_invitation(pid, endpoint="tcp://127.0.0.1:7001", options={"best_of": 3})
    yield store, a, b, m, pid, inv
    for c in (a, b, m):
        await c.aclose()


async def test_honest_answers_prove_themselves(scene):
    store, a, b, m, pid, inv = scene
    me = await b.identity_record(a.identity.agent_id)
    assert me["public_key"] == a.identity.public_hex and me["nickname"] == "alice"
    got = await b.invitation(inv["invitation_id"])
    assert got["endpoint"] == "tcp://127.0.0.1:7001"
    assert got["host_public_key"] == a.identity.public_hex
    spec = await b.fetch_spec(pid)
    assert spec["name"] == rps_spec()["name"]


async def test_a_swapped_agent_key_is_refused_and_cannot_sign(scene):
    store, a, b, m, pid, inv = scene
    alice_id = a.identity.agent_id
    edit(store, t.agents, t.agents.c.agent_id == alice_id, public_key=EVE.public_hex)
    assert "public key" in await refused(b.identity_record(alice_id))
    # the host key a guest would pin is the logged one, not the row's
    edit(store, t.invitations, t.invitations.c.invitation_id == inv["invitation_id"],
         host_public_key=EVE.public_hex)
    assert "host key" in await refused(b.invitation(inv["invitation_id"]))
    # eve signing as alice: the server checks the logged identity's key, not the row's
    impostor = _client(store, EVE, a.ledger.folder.parent / "imp")
    impostor.identity = _As(EVE, alice_id)
    with pytest.raises(LingxiError) as caught:
        await impostor.post_invitation(pid, endpoint="tcp://127.0.0.1:7002")
    assert caught.value.code == "registry.signature_invalid"
    await impostor.aclose()
    # pointing the row at mallory's identity record does not help either
    mallory_seq = (await b._call("GET", f"/v1/identities/{MALLORY.agent_id}"))["seq"]
    edit(store, t.agents, t.agents.c.agent_id == alice_id, seq=mallory_seq)
    impostor = _client(store, MALLORY, a.ledger.folder.parent / "imp2")
    impostor.identity = _As(MALLORY, alice_id)
    with pytest.raises(LingxiError) as caught:
        await impostor.post_invitation(pid, endpoint="tcp://127.0.0.1:7002")
    assert caught.value.code in ("registry.unknown_agent", "registry.signature_invalid")
    await impostor.aclose()


async def test_an_edited_endpoint_options_or_protocol_is_refused(scene):
    store, a, b, m, pid, inv = scene
    where = t.invitations.c.invitation_id == inv["invitation_id"]
    edit(store, t.invitations, where, endpoint="tcp://203.0.113.9:7001")
    assert "endpoint" in await refused(b.invitation(inv["invitation_id"]))
    edit(store, t.invitations, where, endpoint="tcp://127.0.0.1:7001", options='{"best_of":1}')
    assert "options" in await refused(b.invitation(inv["invitation_id"]))
    edit(store, t.invitations, where, options='{"best_of":3}')
    assert (await b.invitation(inv["invitation_id"]))["endpoint"] == "tcp://127.0.0.1:7001"
    edit(store, t.protocols, t.protocols.c.protocol_id == pid, name="official-chess")
    assert "name" in await refused(b.protocol(pid))


async def test_edited_session_receipts_are_refused(scene, store):
    _, a, b, m, pid, inv = scene
    claim = await b.claim(inv["invitation_id"])
    session = await b.session(claim.session_id)
    assert session["receipts"] == {"host": None, "guest": None}
    edit(store, t.sessions, t.sessions.c.session_id == claim.session_id,
         host_receipt='{"status":"won","forged":true}')
    assert "receipt" in await refused(b.session(claim.session_id))


async def test_an_answer_without_proof_or_from_another_key_is_refused(scene):
    store, a, b, m, pid, inv = scene
    answer = await b._call("GET", f"/v1/invitations/{inv['invitation_id']}")
    from lingxi.registry.models.keys import ServerKey
    from lingxi.registry.models.proofs import Proven, unproven

    with pytest.raises(LingxiError):
        Proven({k: v for k, v in answer.items() if k != "proof"},
               pinned_key=store.key.public_hex, now=store.clock())
    with pytest.raises(LingxiError):
        Proven(answer, pinned_key=ServerKey.generate().public_hex, now=store.clock())
    with pytest.raises(LingxiError):  # a checkpoint from long ago (a replayed old answer)
        Proven(answer, pinned_key=store.key.public_hex, now=store.clock() + 3600)
    answer["proof"]["records"][0]["path"] = []
    with pytest.raises(LingxiError):
        Proven(answer, pinned_key=store.key.public_hex, now=store.clock())
    assert unproven("x").code == "registry.unproven"


class _As:
    """Signs with ``inner``'s key but claims ``agent_id``."""

    def __init__(self, inner: Identity, agent_id: str) -> None:
        self.inner, self.agent_id, self.public_hex = inner, agent_id, inner.public_hex

    def sign(self, data: bytes) -> bytes:
        return self.inner.sign(data)
