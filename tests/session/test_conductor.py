"""One conductor for every driver: memory and loopback TCP give the same bytes and verdicts.

Every adversarial case is played through the conductor over a real TCP
connection and in memory; both must reach the same verdict with the same
transcript (its chain heads, which hash every envelope of both directions).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingxi.contract import GROUP_MODE, load_spec
from lingxi.protocols import builtin_names
from lingxi.protocols.catalogue import resolve_folder
from lingxi.session.adversarial import build_cases, honest_events, run_case
from lingxi.session.core.adversaries import ForgeFirst, ReplayFirst
from lingxi.session.core.machine import SessionConfig
from lingxi.session.runner import load_protocol, run_pair

CONFIG = SessionConfig()
# a representative subset for the default run: each wire cheat, a schema cheat, a mode cheat
SUBSET = {
    "rock-paper-scissors": ("replayed envelope from the host", "forged envelope from the guest",
                            "silent host", "unknown action from the guest",
                            "commit does not match reveal (guest)"),
    "word-count": ("forged envelope from the host", "silent guest"),
}


def _two_party_builtins() -> list[str]:
    """The built-ins a two-party session runs (group specs run on the group log instead)."""
    return [name for name in builtin_names()
            if load_spec(resolve_folder(name)).flow.mode != GROUP_MODE]


def _files(folder: Path) -> dict[str, bytes]:
    return {role: (folder / role / "transcript.jsonl").read_bytes() for role in ("host", "guest")}


@pytest.mark.parametrize("name", ["rock-paper-scissors", "word-count", "guess-number"])
def test_memory_and_tcp_write_byte_identical_transcripts(name: str, tmp_path: Path) -> None:
    protocol = load_protocol(name)
    memory = run_pair(protocol, seed=7, state_dir=tmp_path / "memory")
    tcp = run_pair(protocol, seed=7, state_dir=tmp_path / "tcp", carrier="tcp")
    assert memory.host.ok and memory.guest.ok and memory.receipts_verified
    assert _files(tmp_path / "memory") == _files(tmp_path / "tcp")
    assert memory.receipts == tcp.receipts and memory.host == tcp.host
    assert _files(tmp_path / "memory")["host"]  # not two empty files


def test_another_seed_gives_other_bytes(tmp_path: Path) -> None:
    protocol = load_protocol("rock-paper-scissors")
    run_pair(protocol, seed=1, state_dir=tmp_path / "a")
    run_pair(protocol, seed=2, state_dir=tmp_path / "b")
    assert _files(tmp_path / "a")["host"] != _files(tmp_path / "b")["host"]


def test_a_memory_session_is_sealed_and_its_receipts_bind_the_handshake(tmp_path: Path) -> None:
    """Regression: LocalPair built receipts without the handshake and sent nothing sealed."""
    result = run_pair(load_protocol("rock-paper-scissors"), seed=3, state_dir=tmp_path)
    entries = [json.loads(line) for line in
               (tmp_path / "host" / "transcript.jsonl").read_text().splitlines()]
    assert entries and all(e["envelope"]["encrypt"] is True for e in entries)
    for role in ("host", "guest"):
        receipt = result.receipts[role]
        assert len(receipt["handshake"]) == 64
        record = json.loads((tmp_path / role / "receipts.json").read_text())
        assert record["peer"]["handshake"] == receipt["handshake"]
        assert record["peer_problems"] == []


@pytest.mark.parametrize("cheat,code", [(ReplayFirst, "envelope.replay"),
                                        (ForgeFirst, "envelope.bad_signature")])
def test_a_wire_cheat_is_caught_by_the_same_code_over_tcp(cheat, code) -> None:
    protocol = load_protocol("rock-paper-scissors")
    runs = [run_pair(protocol, seed=5, adversary=("host", cheat()), carrier=carrier)
            for carrier in ("memory", "tcp")]
    assert [r.guest.code for r in runs] == [code, code]
    assert runs[0].heads == runs[1].heads


def _compare(name: str, only: tuple[str, ...] | None) -> None:
    protocol = load_protocol(name)
    cases = build_cases(protocol, honest_events(protocol, options=None, seed=0, config=CONFIG))
    chosen = [c for c in cases if c.make is not None and (only is None or c.name in only)]
    assert chosen and (only is None or len(chosen) == len(only)), [c.name for c in cases]
    for case in chosen:
        verdicts = [run_case(protocol, case, options=None, seed=0, config=CONFIG,
                             carrier=carrier).to_dict() for carrier in ("memory", "tcp")]
        assert verdicts[0] == verdicts[1], case.name
        heads = [run_pair(protocol, seed=0, config=CONFIG, keep_events=False,
                          adversary=(case.cheater, case.make()), carrier=carrier).heads
                 for carrier in ("memory", "tcp")]
        assert heads[0] == heads[1], case.name


@pytest.mark.parametrize("name", sorted(SUBSET))
def test_adversarial_cases_reach_the_same_verdict_over_tcp(name: str) -> None:
    _compare(name, SUBSET[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", _two_party_builtins())
def test_every_adversarial_case_of_every_builtin_is_the_same_over_tcp(name: str) -> None:
    _compare(name, None)


# ------------------------------------------- registry checkpoints at the opening (18.3)


def _meet(tmp_path: Path, host_note, guest_note, adversary=None):
    import asyncio

    from lingxi.session.net import memory_session

    host_kwargs = {"registry_checkpoint": host_note}
    if adversary is not None:
        host_kwargs["adversary"] = adversary
    return asyncio.run(memory_session(
        load_protocol("rock-paper-scissors"), options={"best_of": 1}, state_dir=tmp_path,
        host_kwargs=host_kwargs, guest_kwargs={"registry_checkpoint": guest_note}))


def _opening(folder: Path, action: str) -> dict:
    for line in (folder / "transcript.jsonl").read_text().splitlines():
        payload = json.loads(line)["envelope"]["payload"]
        if payload.get("action") == action:
            return payload
    raise AssertionError(f"no {action} in {folder}")


def test_each_side_signs_its_registry_checkpoint_into_its_opening(tmp_path: Path) -> None:
    host, guest = _meet(tmp_path, "host's checkpoint\n", "guest's checkpoint\n")
    assert host.outcome.ok and guest.outcome.ok
    assert host.peer_checkpoint == "guest's checkpoint\n"
    assert guest.peer_checkpoint == "host's checkpoint\n"
    # in the signed transcript, so a third party sees which view each side claimed
    assert _opening(guest.state_dir, "session.offer")["registry_checkpoint"] == \
        "host's checkpoint\n"
    assert _opening(host.state_dir, "session.accept")["registry_checkpoint"] == \
        "guest's checkpoint\n"
    snapshot = json.loads((guest.state_dir / "snapshot.json").read_text())
    assert snapshot["peer_registry_checkpoint"] == "host's checkpoint\n"


def test_a_side_without_a_registry_sends_no_checkpoint(tmp_path: Path) -> None:
    host, guest = _meet(tmp_path, None, None)
    assert host.outcome.ok and host.peer_checkpoint is None and guest.peer_checkpoint is None
    assert "registry_checkpoint" not in _opening(guest.state_dir, "session.offer")


class _OfferWith:
    """A host whose offer carries ``value`` as its checkpoint (signed: a lie, not a forgery)."""

    cheated = None

    def __init__(self, value) -> None:
        self.value = value

    def outgoing(self, side, payload, correlation_id):
        if payload.get("action") == "session.offer":
            payload = {**payload, "registry_checkpoint": self.value}
        return [(payload, correlation_id)]

    def wire(self, side, envelope):
        return [envelope]


@pytest.mark.parametrize("value", [12345, ["a"], "", "x" * 8193])
def test_a_checkpoint_that_is_no_note_is_ignored_and_the_session_plays(tmp_path: Path,
                                                                       value) -> None:
    host, guest = _meet(tmp_path, None, "guest's\n", adversary=_OfferWith(value))
    assert guest.outcome.ok and guest.peer_checkpoint is None
