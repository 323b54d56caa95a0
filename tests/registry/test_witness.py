"""Equivocation is caught (issue 18.3): two witnesses, two clients shown different forks of
one log (same key, same size, different roots)."""

from __future__ import annotations

import shutil

import httpx
import pytest

from lingxi.errors import LingxiError
from lingxi.registry.client.api import RegistryClient
from lingxi.registry.client.ledger import Ledger, WitnessRef, verify_registry
from lingxi.registry.models.checkpoint import cosignatures, parse_checkpoint, parse_note
from lingxi.registry.models.witness import Fork
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store
from lingxi.registry.witness import WitnessProcess

from .conftest import builtin_spec, rps_spec


def _transport(store):
    return httpx.ASGITransport(app=create_app(store, cache_ttl=0), raise_app_exceptions=False)


def _client(store, who, folder) -> RegistryClient:
    return RegistryClient("http://registry.test", who, transport=_transport(store),
                          ledger=Ledger(folder))


@pytest.fixture
async def forks(tmp_path, alice, bob):
    """Stores A and B: one log up to 3 entries, then A and B append different records."""
    key = tmp_path / "server.key"
    a_path, b_path = tmp_path / "a.db", tmp_path / "b.db"
    a = Store(f"sqlite:///{a_path}", key_file=key)
    async with _client(a, alice, tmp_path / "alice") as c:
        await c.register("alice")
    async with _client(a, bob, tmp_path / "bob") as c:
        await c.register("bob")
    a.close()
    shutil.copy(a_path, b_path)  # the operator copies the database...
    a = Store(f"sqlite:///{a_path}", key_file=key)
    b = Store(f"sqlite:///{b_path}", key_file=key)
    async with _client(a, alice, tmp_path / "alice") as c:  # ...and lets the copies diverge
        await c.register_protocol(rps_spec())
    async with _client(b, alice, tmp_path / "alice-b") as c:
        await c.register_protocol(builtin_spec("chat"))
    assert a.head()["size"] == b.head()["size"] and a.head()["root"] != b.head()["root"]
    yield a, b, tmp_path
    a.close()
    b.close()


def _witness(tmp_path, store, name) -> WitnessProcess:
    return WitnessProcess("http://registry.test", tmp_path / f"{name}.key", name,
                          transport=_transport(store))


async def _fetcher(processes: dict[str, WitnessProcess]):
    async def fetch(ref: WitnessRef) -> str:
        app = processes[ref.name].app()
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://witness.test") as http:
            answer = await http.get("/v1/witness/checkpoint")
        if answer.status_code != 200:
            raise LingxiError("registry.not_witnessed", "nothing cosigned")
        return answer.text

    return fetch


async def test_two_witnesses_two_clients_shown_different_forks(forks, alice, bob):
    a, b, tmp = forks
    w1, w2 = _witness(tmp, a, "w1"), _witness(tmp, a, "w2")
    await w1.step()
    await w2.step()
    refs = tuple(WitnessRef(w.witness.name, w.key.public_hex, "http://witness.test")
                 for w in (w1, w2))
    fetch = await _fetcher({"w1": w1, "w2": w2})
    async with _client(a, alice, tmp / "alice") as c:
        seen_a = await verify_registry(c, c.ledger, witnesses=refs, required=2, fetch=fetch)
    assert seen_a["ok"], seen_a["problems"]
    assert sorted(seen_a["witnessed_by"]) == ["w1", "w2"]
    async with _client(b, bob, tmp / "bob") as c:  # bob is shown fork B
        seen_b = await verify_registry(c, c.ledger, witnesses=refs, required=1, fetch=fetch)
    assert not seen_b["ok"]
    assert any("forked" in p for p in seen_b["problems"])
    sizes = {parse_checkpoint(parse_note(n).text).size for n in seen_b["evidence"]}
    roots = {parse_checkpoint(parse_note(n).text).root for n in seen_b["evidence"]}
    assert len(sizes) == 1 and len(roots) == 2  # same size, two roots, both signed
    # without witnesses bob's view verifies: the fork is only visible through them
    async with _client(b, bob, tmp / "bob2") as c:
        assert (await verify_registry(c, c.ledger))["ok"]
    for w in (w1, w2):
        await w.aclose()


async def test_a_witness_shown_both_forks_refuses_and_keeps_the_evidence(forks):
    a, b, tmp = forks
    w = _witness(tmp, a, "w1")
    first = await w.step()
    assert cosignatures(first, {"w1": w.key.public_hex})
    await w.aclose()
    w = WitnessProcess("http://registry.test", tmp / "w1.key", "w1",
                       transport=_transport(b))  # restarted, now pointed at fork B
    with pytest.raises(Fork) as caught:
        await w.step()
    assert len(caught.value.evidence) == 2 and caught.value.code == "registry.fork"
    assert w.cosigned() is None  # it never cosigns B
    lines: list[str] = []
    await w.follow(0, lines.append)
    assert lines[0].startswith("error: registry.fork") and "signed checkpoint" in lines[1]
    await w.aclose()


async def test_a_required_witness_that_is_missing_fails_the_check(forks, alice):
    a, _, tmp = forks
    w1 = _witness(tmp, a, "w1")
    await w1.step()
    refs = (WitnessRef("w1", w1.key.public_hex, "http://witness.test"),
            WitnessRef("w2", "ab" * 32, "http://witness.test"))
    fetch = await _fetcher({"w1": w1, "w2": _witness(tmp, a, "w2")})  # w2 never stepped
    async with _client(a, alice, tmp / "alice") as c:
        one = await verify_registry(c, c.ledger, witnesses=refs, required=1, fetch=fetch)
        two = await verify_registry(c, c.ledger, witnesses=refs, required=2, fetch=fetch)
    assert one["ok"] and one["witnessed_by"] == ["w1"]
    assert not two["ok"] and "2 required" in two["problems"][0]
    await w1.aclose()


def test_witness_refs_parse():
    ref = WitnessRef.parse("w1=" + "ab" * 32 + "@http://127.0.0.1:9000/")
    assert ref.url == "http://127.0.0.1:9000" and ref.name == "w1"
    with pytest.raises(LingxiError):
        WitnessRef.parse("w1=nothex@http://x")
