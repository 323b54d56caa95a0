"""Two agents that meet compare the registry checkpoints they were shown (issue 18.3): each
signs its own into the session opening, and each checks the peer's against its view."""

from __future__ import annotations

import asyncio

from lingxi.registry.client.ledger import compare_peer_checkpoint, verify_registry
from lingxi.registry.models.checkpoint import parse_checkpoint, parse_note
from lingxi.session import load_protocol
from lingxi.session.net import memory_session

from .conftest import builtin_spec
from .test_witness import _client, forks  # noqa: F401 - forks is a fixture


async def _play(alice_note: str, bob_note: str):
    return await memory_session(
        load_protocol("rock-paper-scissors"), options={"best_of": 1},
        host_kwargs={"registry_checkpoint": alice_note},
        guest_kwargs={"registry_checkpoint": bob_note})


async def test_two_agents_shown_different_forks_notice_when_they_meet(forks, alice, bob):  # noqa: F811
    a, b, tmp = forks
    async with _client(a, alice, tmp / "alice") as ca, _client(b, bob, tmp / "bob") as cb:
        alice_note = (await ca.head())["checkpoint"]
        bob_note = (await cb.head())["checkpoint"]
        # alone, each view verifies: the fork is invisible from one side
        assert (await verify_registry(ca, ca.ledger))["ok"]
        assert (await verify_registry(cb, cb.ledger))["ok"]
        host, guest = await _play(alice_note, bob_note)
        assert host.outcome.ok and guest.outcome.ok
        seen_by_alice = await compare_peer_checkpoint(ca, ca.ledger, host.peer_checkpoint,
                                                      session="s-1")
        seen_by_bob = await compare_peer_checkpoint(cb, cb.ledger, guest.peer_checkpoint)
        for seen in (seen_by_alice, seen_by_bob):
            assert seen["checked"] and not seen["ok"]
            assert "forked" in seen["problems"][0]
            points = [parse_checkpoint(parse_note(n).text) for n in seen["evidence"]]
            assert len({p.size for p in points}) == 1 and len({p.root for p in points}) == 2
        # the evidence stays: alice's next verify fails and prints both checkpoints
        again = await verify_registry(ca, ca.ledger)
        assert not again["ok"] and "peer in session s-1" in again["problems"][0]
        assert bob_note in again["evidence"]  # the peer's note, byte for byte
        roots = {parse_checkpoint(parse_note(n).text).root for n in again["evidence"]}
        assert roots == {parse_checkpoint(parse_note(n).text).root
                         for n in (alice_note, bob_note)}


async def test_agents_shown_one_log_agree_at_any_two_sizes(forks, alice, bob):  # noqa: F811
    a, _, tmp = forks
    async with _client(a, alice, tmp / "alice") as ca, _client(a, bob, tmp / "bob") as cb:
        older = (await cb.head())["checkpoint"]
        await ca.register_protocol(builtin_spec("guess-number"))
        seen = await compare_peer_checkpoint(ca, ca.ledger, older)
        assert seen == {"ok": True, "checked": True, "size": seen["size"], "problems": [],
                        "evidence": []}
        assert seen["size"] < (await ca.head())["size"]
        assert (await verify_registry(ca, ca.ledger))["ok"]


async def test_a_note_of_another_log_or_key_proves_nothing_either_way(forks, alice):  # noqa: F811
    a, _, tmp = forks
    async with _client(a, alice, tmp / "alice") as ca:
        note = (await ca.head())["checkpoint"]
        other_log = note.replace(note.split("\n", 1)[0], "registry.elsewhere/log", 1)
        for lie in (other_log, "not a note", note.replace("\u2014 ", "\u2014 x", 1)):
            seen = await compare_peer_checkpoint(ca, ca.ledger, lie)
            assert seen["ok"] and not seen["checked"] and seen["reason"]
        assert not ca.ledger.forks()


def test_the_memory_pair_carries_notes_both_ways() -> None:
    host, guest = asyncio.run(_play("a\n", "b\n"))
    assert (host.peer_checkpoint, guest.peer_checkpoint) == ("b\n", "a\n")


async def test_the_cli_tells_a_fork_at_once_with_both_checkpoints(forks, alice, bob,  # noqa: F811
                                                                    capsys):
    from types import SimpleNamespace

    from lingxi.cli.meet import compare_views

    a, b, tmp = forks
    async with _client(a, alice, tmp / "alice") as ca, _client(b, bob, tmp / "bob") as cb:
        bob_note = (await cb.head())["checkpoint"]
        await compare_views(ca, SimpleNamespace(peer_checkpoint=bob_note), "ses-9")
        await compare_views(ca, SimpleNamespace(peer_checkpoint=None), "ses-10")
    err = capsys.readouterr().err
    assert err.count("warning: registry.fork: the log forked") == 1
    assert all(f"  {line}" in err for line in bob_note.splitlines() if line)
