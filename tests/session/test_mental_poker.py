"""The mental_poker flow mode: whole games, cheats, the offline audit, decisions, limits."""

from __future__ import annotations

import copy
import json

import pytest

from lingxi.cards import verify_receipt
from lingxi.session.adversarial import run_case
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.modes.mental_poker_judge import judge, rebuild, verify_game
from lingxi.session.core.registry import flow_mode, make_machine
from lingxi.session.drivers.memory import LocalPair
from lingxi.session.runner import load_protocol, run_pair

GAMES = ["crazy-eights", "short-whist"]
FRAME_CAP = 1024 * 1024


def _rules(protocol, role="host"):
    def make():
        hooks = protocol.hooks(role, 0)
        hooks.proto_start()
        return hooks
    return make


def _entries(folder):
    return [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One honest game of each built-in, with its state folders."""
    out = {}
    for name in GAMES:
        folder = tmp_path_factory.mktemp(name)
        out[name] = (run_pair(load_protocol(name), seed=4, state_dir=folder), folder)
    return out


@pytest.mark.parametrize("name", GAMES)
def test_an_honest_game_completes_with_both_audits_and_one_winner(played, name) -> None:
    result, _ = played[name]
    assert result.host.ok and result.guest.ok and result.receipts_verified
    winners = {result.host.summary["winner"], result.guest.summary["winner"]}
    assert len(winners) == 1 and winners <= {"host", "guest", "draw"}
    receipts = {}
    for role in ("host", "guest"):
        event = next(e for e in result.events[role] if e["event"] == "mp.receipt")
        receipts[role] = event["receipt"]
        assert event["receipt"]["audit"] == {"ok": True, "code": None, "culprit": None}
    # both sides saw the same cards transcript, and each receipt is signed by its seat key
    assert receipts["host"]["transcript_hash"] == receipts["guest"]["transcript_hash"]
    for role in ("host", "guest"):
        machine = result.machines[role]
        assert verify_receipt(receipts[role], bytes(machine.signing_key.verify_key))
    lines = flow_mode("mental_poker").summary(result.events["host"], None)
    assert lines[0].startswith("table: ") and any(" plays " in line for line in lines)
    assert f"winner: {result.host.summary['winner']}" in lines


@pytest.mark.parametrize("name", GAMES)
def test_no_face_travels_before_it_is_played_or_opened(played, name) -> None:
    """Before the openings, the only labels on the wire are the seat's universe and plays."""
    result, folder = played[name]
    universe = set(load_protocol(name).hooks("host", 0).proto_mp_deck_universe())
    for role in ("host", "guest"):
        payloads = [e["envelope"]["payload"] for e in _entries(folder / role)]
        first_open = next(i for i, p in enumerate(payloads) if p.get("action") == "mp_open")
        played_faces = {p["card"] for p in payloads[:first_open] if p.get("action") == "mp_play"}
        others = [p for p in payloads[:first_open]
                  if p.get("action") not in ("seat", "mp_play")]
        text = json.dumps(others)
        assert not [label for label in universe if f'"{label}"' in text]
        party = result.machines[role].party
        assert played_faces == set(party.table.played.values())
        assert sorted(party.faces) == sorted(universe)


@pytest.mark.parametrize("name", GAMES)
def test_every_message_fits_the_frame_cap(played, name) -> None:
    _, folder = played[name]
    largest = max(len(json.dumps(e["envelope"]).encode()) for e in _entries(folder / "host"))
    assert largest < FRAME_CAP


@pytest.mark.parametrize("name", GAMES)
def test_verify_runs_the_cards_audit_offline(played, name) -> None:
    from lingxi.session.api import verify_session

    _, folder = played[name]
    spec = load_protocol(name).spec
    for role in ("host", "guest"):
        assert verify_game(_entries(folder / role), spec) == []
        assert verify_session(folder / role).ok


def _tamper(entries, action, change):
    out = copy.deepcopy(entries)
    for entry in out:
        payload = entry["envelope"]["payload"]
        if payload.get("action") == action:
            change(payload)
            return out
    raise AssertionError(f"no {action} in the transcript")


def _flip(text: str) -> str:
    return ("1" if text[0] != "1" else "2") + text[1:]


STEPS = {
    "seat": lambda p: p.update(signing_key=_flip(p["signing_key"])),
    "mp_hello": lambda p: p.update(pok=_flip(p["pok"])),
    "mp_shuffle": lambda p: p["deck"].reverse(),
    "mp_deal": lambda p: p["shares"].reverse(),
    "mp_play": lambda p: p.update(card="2S" if p["card"] != "2S" else "3S"),
    "mp_open": lambda p: p.update(secret=_flip(p["secret"])),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_verify_fails_on_a_transcript_altered_at_any_step(played, step) -> None:
    _, folder = played["crazy-eights"]
    spec = load_protocol("crazy-eights").spec
    entries = _entries(folder / "host")
    problems = verify_game(_tamper(entries, step, STEPS[step]), spec)
    assert problems, f"altering {step} went unnoticed"


def test_verify_fails_on_an_altered_draw_share_and_pass(played) -> None:
    result, folder = played["crazy-eights"]
    spec = load_protocol("crazy-eights").spec
    entries = _entries(folder / "host")
    actions = {e["envelope"]["payload"].get("action") for e in entries}
    assert "mp_draw" in actions  # seed 4 has draws
    for step, change in {"mp_draw": lambda p: p.update(position=p["position"] + 1),
                         "mp_share": lambda p: p.update(share=_flip(p["share"]))}.items():
        assert verify_game(_tamper(entries, step, change), spec)
    if "pass" in actions:
        assert verify_game(_tamper(entries, "pass", lambda p: p.update(sig=_flip(p["sig"]))),
                           spec)


def test_verify_session_fails_on_an_altered_state_folder(played, tmp_path) -> None:
    import shutil

    from lingxi.session.api import verify_session

    _, folder = played["crazy-eights"]
    copy_dir = tmp_path / "host"
    shutil.copytree(folder / "host", copy_dir)
    lines = (copy_dir / "transcript.jsonl").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"mp_play"' in line)
    lines[index] = lines[index].replace('"mp_play"', '"mp_play"', 1).replace(
        '"card":"', '"card":"Z', 1)
    (copy_dir / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    assert not verify_session(copy_dir).ok


def test_the_cards_transcript_is_rebuilt_from_the_seats(played) -> None:
    result, folder = played["crazy-eights"]
    record = rebuild(_entries(folder / "guest"), load_protocol("crazy-eights").spec.protocol_id)
    transcript = record.transcript
    assert not record.problems and transcript is not None
    host = result.machines["host"].party
    assert transcript["messages"] == host.table.messages
    assert transcript["identities"]["host"] == host.identity.hex()


# ------------------------------------------------------------------ cheats

MODE_CODES = {"cards.rogue_key", "cards.deck_corrupt", "cards.deck_duplicate",
              "cards.deck_missing", "cards.bad_shuffle", "cards.bad_share",
              "cards.bad_share_proof", "cards.forged_response", "cards.wrong_face",
              "cards.not_in_hand", "cards.double_play", "cards.peek", "cards.bad_opening",
              "cards.no_opening", "cards.bad_signature", "cards.forfeit",
              "cards.false_forfeit", "mental_poker.resigned", "mental_poker.bad_seat",
              "mental_poker.illegal_play", "mental_poker.bad_pass"}


def _mode_cases(name, seed):
    protocol = load_protocol(name)
    honest = run_pair(protocol, seed=seed).events
    return protocol, flow_mode("mental_poker").adversarial_cases(protocol.spec, honest)


def test_every_cheat_is_caught_with_its_own_code_in_crazy_eights() -> None:
    protocol, cases = _mode_cases("crazy-eights", 1)
    detected = set()
    for case in cases:
        assert case.make is not None, case.name  # seed 1 reaches every step
        result = run_case(protocol, case, options=None, seed=1, config=SessionConfig())
        assert result.ok, (case.name, result.detected, result.detail)
        detected.add(result.detected)
    # the session's own codes catch two: a silent side, a seat sent twice
    assert detected - {"session.timeout", "session.out_of_phase"} == MODE_CODES, \
        detected ^ MODE_CODES


def test_short_whist_cheats_are_caught_and_draw_cheats_are_not_applicable() -> None:
    protocol, cases = _mode_cases("short-whist", 1)
    skipped = [c.name for c in cases if c.make is None]
    assert skipped and all("draw" in c.note or "draws" in c.note
                           for c in cases if c.make is None)
    for case in cases:
        if case.make is None:
            continue
        result = run_case(protocol, case, options=None, seed=1, config=SessionConfig())
        assert result.ok, (case.name, result.detected, result.detail)


def test_a_cheat_is_refused_at_once_and_the_evidence_is_the_signed_message(tmp_path) -> None:
    from lingxi.cards.cheats import CHEATS
    from lingxi.session.core.modes.mental_poker_cases import PartyCheat

    protocol = load_protocol("crazy-eights")
    result = run_pair(protocol, seed=1, state_dir=tmp_path,
                      adversary=("guest", PartyCheat("play", 0, CHEATS["wrong_face"].make)))
    host = result.host
    assert host.status == "aborted" and host.code == "cards.wrong_face" and host.by == "local"
    violation = next(e for e in result.events["host"] if e["event"] == "violation")
    message = violation["evidence"]["message"]
    assert message["action"] == "mp_play" and len(message["sig"]) == 128
    assert violation["evidence"]["culprit"] == "guest"
    # nothing after the bad play: the host answered no further message
    assert not any(e["event"] == "mp.move" and e["by"] == "host"
                   for e in result.events["host"][result.events["host"].index(violation):])
    problems = verify_game(_entries(tmp_path / "host"), protocol.spec)
    assert any("cards.wrong_face" in p and "guest" in p for p in problems)


def test_silence_after_a_draw_is_recorded_as_a_signed_forfeit(tmp_path) -> None:
    from lingxi.session.core.modes.mental_poker_cases import SilentAfterDraw

    protocol = load_protocol("crazy-eights")
    result = run_pair(protocol, seed=1, state_dir=tmp_path, config=SessionConfig(peer_timeout=5),
                      adversary=("guest", SilentAfterDraw()))
    assert result.host.code == "cards.forfeit"
    claim = next(e for e in result.events["host"] if e["event"] == "mp.forfeit")["claim"]
    assert claim["against"] == "guest" and len(claim["sig"]) == 128
    judged = judge(_entries(tmp_path / "host"), protocol.spec, _rules(protocol))
    verdict = judged.verdict
    assert verdict["how"] == "forfeit" and verdict["culprit"] == "guest"
    assert verdict["culprit_key"] == result.machines["guest"].identity.public_hex
    assert any("cards.forfeit" in p and "guest" in p for p in judged.all_problems)


def test_a_guest_whose_hooks_deal_another_deck_refuses_the_seat() -> None:
    protocol = load_protocol("crazy-eights")
    guest_hooks = protocol.hooks("guest", 0)
    guest_hooks.proto_mp_deck_universe = lambda: ["AS", "KS", "QS"]
    host = make_machine("host", protocol.spec, protocol.hooks("host", 0), options={})
    guest = make_machine("guest", protocol.spec, guest_hooks)
    result = LocalPair(host, guest).run()
    assert result.guest.code == "mental_poker.deck_mismatch"


# --------------------------------------------------------------- decisions


@pytest.mark.parametrize("name", GAMES)
def test_human_control_picks_from_the_legal_actions(name) -> None:
    asked = []

    def decider(request):
        assert request.legal and all(isinstance(a, dict) and "action" in a
                                     for a in request.legal)
        assert request.view["hand"] and "history" in request.view
        asked.append(request.legal)
        return request.legal[-1]  # not what the hooks would choose first

    protocol = load_protocol(name)
    result = run_pair(protocol, seed=2, guest_config=SessionConfig(control_mode="human"),
                      deciders={"guest": decider})
    assert result.host.ok and result.guest.ok and asked
    made = [e["value"] for e in result.events["guest"] if e["event"] == "decision.made"]
    moves = [{k: v for k, v in e.items() if k not in ("event", "role", "by", "t")}
             for e in result.events["guest"] if e["event"] == "mp.move" and e["by"] == "guest"]
    assert made == [legal[-1] for legal in asked]
    assert moves == made


def test_a_decider_value_outside_the_list_is_refused() -> None:
    protocol = load_protocol("crazy-eights")
    tried = []

    def decider(request):
        if not tried:
            tried.append(True)
            return {"action": "play", "card": "not-a-card"}
        return request.legal[0]

    result = run_pair(protocol, seed=2, guest_config=SessionConfig(control_mode="human"),
                      deciders={"guest": decider})
    assert any(e["event"] == "decision.rejected" for e in result.events["guest"])
    assert result.guest.status in ("completed", "aborted")


# ------------------------------------------------------------ network paths

HANG_GUARD = 60


@pytest.mark.parametrize("name", GAMES)
async def test_a_game_over_the_network_driver_in_memory(name, tmp_path) -> None:
    import asyncio

    from lingxi.session.net import memory_session

    host, guest = await asyncio.wait_for(memory_session(
        load_protocol(name), seed=5, state_dir=tmp_path, config=SessionConfig(peer_timeout=10)),
        HANG_GUARD)
    assert host.outcome.ok and guest.outcome.ok
    assert host.receipts_verified and guest.receipts_verified and host.head == guest.head
    spec = load_protocol(name).spec
    assert verify_game(_entries(tmp_path / "host"), spec) == []


@pytest.mark.parametrize("name", GAMES)
async def test_a_game_over_loopback_tcp(name, tmp_path) -> None:
    import asyncio

    from lingxi.session.api import verify_session
    from lingxi.session.net import guest_session, host_session
    from lingxi.wire.identity import Identity

    protocol = load_protocol(name)
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    host_task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", identity=Identity.generate(), state_dir=tmp_path / "h",
        config=SessionConfig(peer_timeout=10), on_listening=ready.set_result))
    endpoint = await asyncio.wait_for(ready, HANG_GUARD)
    guest = await asyncio.wait_for(guest_session(
        None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
        config=SessionConfig(peer_timeout=10)), HANG_GUARD)
    host = await asyncio.wait_for(host_task, HANG_GUARD)
    assert host.outcome.ok and guest.outcome.ok
    assert host.receipts_verified and guest.receipts_verified
    for side in ("h", "g"):
        folders = [p for p in (tmp_path / side).rglob("transcript.jsonl")]
        assert folders and verify_session(folders[0].parent).ok


async def test_a_cheat_over_loopback_tcp_is_caught_with_its_code(tmp_path) -> None:
    """The cheating guest runs behind a PartyCheat patch over real TCP."""
    import asyncio

    from lingxi.cards.cheats import CHEATS
    from lingxi.session.core.modes import mental_poker as mp
    from lingxi.session.net import guest_session, host_session
    from lingxi.wire.identity import Identity

    protocol = load_protocol("crazy-eights")
    original = mp.MentalPokerParty.__init__
    cheat = CHEATS["stacked_shuffle"]

    def patched(self, role, *args, **kwargs):
        original(self, role, *args, **kwargs)
        if role == "guest":
            honest = self._send

            def send(kind, body, verified=True):
                if kind == "shuffle":
                    return cheat.make(self, self)
                return honest(kind, body, verified)
            self._send = send

    mp.MentalPokerParty.__init__ = patched
    try:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        host_task = asyncio.ensure_future(host_session(
            protocol, "tcp://127.0.0.1:0", identity=Identity.generate(),
            state_dir=tmp_path / "h", config=SessionConfig(peer_timeout=10),
            on_listening=ready.set_result, receipt_timeout=0.5))
        endpoint = await asyncio.wait_for(ready, HANG_GUARD)
        guest = await asyncio.wait_for(guest_session(
            protocol, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
            config=SessionConfig(peer_timeout=10), receipt_timeout=0.5), HANG_GUARD)
        host = await asyncio.wait_for(host_task, HANG_GUARD)
    finally:
        mp.MentalPokerParty.__init__ = original
    assert host.outcome.code == "cards.bad_shuffle" and host.outcome.by == "local"
    assert guest.outcome.status == "aborted" and guest.outcome.by == "peer"


def test_a_forfeit_claim_by_the_side_to_move_blames_the_claimant() -> None:
    from lingxi.session.core.adversaries import Adversary

    class ClaimsForfeit(Adversary):
        """At its first game move, the guest claims the host forfeited instead."""

        def __init__(self) -> None:
            self.done = False

        def outgoing(self, side, payload, correlation_id):
            machine = side.machine
            if (not self.done and machine.table_cards is not None
                    and payload.get("action") in ("mp_play", "mp_draw")):
                self.done = True
                from lingxi.cards.payloads import to_payload
                from lingxi.cards.table import signing_bytes
                claim = {"mp": "forfeit", "from": "guest", "seq": payload["seq"],
                         "prev": payload["prev"], "against": "host", "reason": "made up"}
                claim["sig"] = machine.party._signer.sign(signing_bytes(claim)).signature.hex()
                return [(to_payload(claim), correlation_id)]
            return [(payload, correlation_id)]

    result = run_pair(load_protocol("crazy-eights"), seed=1, adversary=("guest", ClaimsForfeit()))
    # the guest owed its own move: its claim is refused and blames it (issue 17, item 1)
    assert result.host.status == "aborted" and result.host.code == "cards.false_forfeit"
    assert result.host.by == "local"
    verdict = result.host.summary["verdict"]
    assert verdict["culprit"] == "guest" and verdict["winner"] == "host"
    assert verdict["culprit_key"] == result.machines["guest"].identity.public_hex


def _cheat_cases():
    protocol, cases = _mode_cases("crazy-eights", 1)
    return [case for case in cases if case.make is not None and "silent" not in case.name
            and "abort" not in case.name]


@pytest.mark.parametrize("case", _cheat_cases(), ids=lambda c: c.name)
async def test_every_cheat_is_caught_over_loopback_tcp(case, tmp_path) -> None:
    """The same cheating peers as the in-memory run, through the network driver over TCP."""
    import asyncio

    from lingxi.session.net import guest_session, host_session
    from lingxi.wire.identity import Identity

    protocol = load_protocol("crazy-eights")
    config = SessionConfig(peer_timeout=10)
    from lingxi.session.core.entropy import seeded

    cheats = {case.cheater: {"adversary": case.make()}}
    for role in ("host", "guest"):  # the same deal as the in-memory run of the case
        cheats.setdefault(role, {})["entropy"] = seeded(f"1-{role}")
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    host_task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", identity=Identity.generate(), state_dir=tmp_path / "h",
        config=config, on_listening=ready.set_result, receipt_timeout=0.5, seed=1,
        **cheats.get("host", {})))
    endpoint = await asyncio.wait_for(ready, HANG_GUARD)
    guest = await asyncio.wait_for(guest_session(
        protocol, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
        config=config, receipt_timeout=0.5, seed=1, **cheats.get("guest", {})), HANG_GUARD)
    host = await asyncio.wait_for(host_task, HANG_GUARD)
    victim = host if case.victim == "host" else guest
    if case.detect is not None:  # an ending that is not an abort (a resignation)
        assert case.detect(victim.outcome) in case.expect, victim.outcome
        return
    assert victim.outcome.status == "aborted" and victim.outcome.by == "local", victim.outcome
    assert victim.outcome.code in case.expect, (victim.outcome.code, case.expect)
