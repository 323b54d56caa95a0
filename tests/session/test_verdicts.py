"""Verdicts a third party can trust (issue 17, items 1-5), in memory and over loopback TCP.

Each test plays a real session with one side cheating, then checks three
things: how the honest side's session ended, the verdict in its outcome,
and what `lingxi session verify` (and, for two records, `lingxi session
compare`) decides from the state folders alone, naming the culprit's
identity key.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner
from verdict_helpers import (
    Capture,
    claim_point,
    cut_and_claim,
    entries,
    folder_of,
    rules,
    tcp_pair,
)

from lingxi.cards.cheats import CHEATS
from lingxi.cli import cli
from lingxi.session.api import compare_records, verify_session
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.modes.mental_poker_cases import (
    ForbiddenPlay,
    PartyCheat,
    Resigns,
    SeatCheat,
    WithholdsOpening,
)
from lingxi.session.core.modes.mental_poker_judge import judge
from lingxi.session.runner import load_protocol, run_pair
from lingxi.wire.identity import Identity

FALSE_SHARE_CLAIM = partial(PartyCheat, "share", 1, CHEATS["false_forfeit"].make)


def _key(result, role):
    return result.machines[role].identity.public_hex


def _verdict(folder: Path, **kwargs):
    result = verify_session(folder, **kwargs)
    assert result.verdict is not None, result.to_dict()
    return result, result.verdict


# ------------------------------------------------------------ item 1: blame


def test_a_forfeit_claimed_instead_of_the_owed_share_blames_the_claimant(tmp_path) -> None:
    """Regression: the guest draws, the host owes the share and claims a forfeit instead:
    the honest guest ended `cards.forfeit` and verify blamed the guest."""
    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
                      adversary=("host", FALSE_SHARE_CLAIM()))
    guest = result.guest
    assert guest.status == "aborted" and guest.by == "local"
    assert guest.code == "cards.false_forfeit"
    assert guest.summary["verdict"]["culprit"] == "host"
    assert guest.summary["verdict"]["culprit_key"] == _key(result, "host")
    assert guest.summary["winner"] == "guest"
    for role in ("host", "guest"):
        checked, verdict = _verdict(tmp_path / role)
        assert not checked.ok and verdict["how"] == "false_claim"
        assert verdict["culprit"] == "host" and verdict["culprit_key"] == _key(result, "host")
        assert any("cards.false_forfeit" in p and _key(result, "host") in p
                   for p in checked.problems)


def test_verify_names_the_host_in_text_and_exits_1(tmp_path) -> None:
    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
                      adversary=("host", FALSE_SHARE_CLAIM()))
    out = CliRunner().invoke(cli, ["session", "verify", str(tmp_path / "host")])
    assert out.exit_code == 1
    line = next(ln for ln in out.output.splitlines() if ln.startswith("verdict: "))
    assert "false_claim by the host" in line and _key(result, "host") in line


def test_a_claim_at_ones_own_turn_is_judged_offline_with_the_games_rules(tmp_path) -> None:
    """The guest claims at its own move (the cards layer has no due step then): the host's
    session refuses it, and the offline judge, asking the game whose move it was, agrees."""
    cheat = partial(PartyCheat, "play", 0, lambda c, h: c.sign(
        "forfeit", {"against": c.peer, "reason": "made up"}))
    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
                      adversary=("guest", cheat()))
    assert result.host.code == "cards.false_forfeit"
    judged = judge(entries(tmp_path / "host"), load_protocol("crazy-eights").spec,
                   rules("crazy-eights"))
    assert judged.verdict["how"] == "false_claim" and judged.verdict["culprit"] == "guest"
    # without the game's rules a third party cannot say whose move it was: nobody is named
    blind = judge(entries(tmp_path / "host"), load_protocol("crazy-eights").spec)
    assert blind.verdict["culprit"] is None


def test_a_true_forfeit_still_blames_the_silent_side(tmp_path) -> None:
    from lingxi.session.core.modes.mental_poker_cases import SilentAfterDraw

    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
                      config=SessionConfig(peer_timeout=5), adversary=("guest", SilentAfterDraw()))
    assert result.host.code == "cards.forfeit"
    _, verdict = _verdict(tmp_path / "host")
    assert verdict["how"] == "forfeit" and verdict["culprit"] == "guest"
    assert verdict["culprit_key"] == _key(result, "guest")


async def test_the_false_share_claim_over_tcp(tmp_path) -> None:
    ids = {"host": Identity.generate(), "guest": Identity.generate()}
    host, guest = await tcp_pair(
        "crazy-eights", tmp_path, host={"identity": ids["host"], "adversary": FALSE_SHARE_CLAIM()},
        guest={"identity": ids["guest"]})
    assert guest.outcome.code == "cards.false_forfeit" and guest.outcome.by == "local"
    assert guest.outcome.summary["verdict"]["culprit_key"] == ids["host"].public_hex
    for result in (host, guest):
        _, verdict = _verdict(folder_of(result))
        assert verdict["how"] == "false_claim"
        assert verdict["culprit_key"] == ids["host"].public_hex


# ------------------------------------------------------ item 2: resignation


@pytest.mark.parametrize("name", ["crazy-eights", "short-whist"])
def test_an_opening_instead_of_a_move_is_a_resignation(name, tmp_path) -> None:
    """Regression: the session ended `completed` with no winner and verify said ok."""
    result = run_pair(load_protocol(name), seed=1, state_dir=tmp_path,
                      adversary=("guest", Resigns()))
    assert result.host.status == "completed" and result.receipts_verified
    verdict = result.host.summary["verdict"]
    assert verdict["how"] == "resignation" and verdict["code"] == "mental_poker.resigned"
    assert result.host.summary["winner"] == "host" and verdict["culprit"] == "guest"
    assert verdict["culprit_key"] == _key(result, "guest")
    for role in ("host", "guest"):
        checked, offline = _verdict(tmp_path / role)
        assert checked.ok, checked.problems  # a resignation is an ending, not a fault
        assert offline["how"] == "resignation" and offline["winner"] == "host"
        assert offline["culprit_key"] == _key(result, "guest")


async def test_a_resignation_over_tcp(tmp_path) -> None:
    ids = {"host": Identity.generate(), "guest": Identity.generate()}
    host, guest = await tcp_pair("crazy-eights", tmp_path, host={"identity": ids["host"]},
                                 guest={"identity": ids["guest"], "adversary": Resigns()})
    assert host.outcome.status == "completed" and host.receipts_verified
    assert host.outcome.summary["winner"] == "host"
    checked, verdict = _verdict(folder_of(host))
    assert checked.ok and verdict["how"] == "resignation"
    assert verdict["culprit_key"] == ids["guest"].public_hex


# ------------------------------- item 3: public breaches, withheld openings


def test_a_revoke_is_established_from_the_public_plays_at_once(tmp_path) -> None:
    """Regression: the guest revoked, saw the host open and went silent: a draw. The revoke
    is now proven the moment the guest plays the suit it did not follow."""
    result = run_pair(load_protocol("short-whist"), seed=1, state_dir=tmp_path,
                      adversary=("guest", ForbiddenPlay()))
    host = result.host
    assert host.status == "aborted" and host.code == "mental_poker.illegal_play"
    assert "shows a revoke" in host.reason
    assert host.summary["verdict"]["culprit"] == "guest" and host.summary["winner"] == "host"
    # no opening was ever sent: the breach did not wait for the end
    sent = [e["envelope"]["payload"].get("action") for e in entries(tmp_path / "host")]
    assert "mp_open" not in sent
    _, verdict = _verdict(tmp_path / "host")
    assert verdict["how"] == "breach" and verdict["culprit_key"] == _key(result, "guest")
    assert "revoke" in verdict["reason"]


@pytest.mark.parametrize("cheater", ["guest", "host"])
def test_a_withheld_opening_loses_the_game(cheater, tmp_path) -> None:
    victim = "host" if cheater == "guest" else "guest"
    result = run_pair(load_protocol("short-whist"), seed=1, state_dir=tmp_path,
                      config=SessionConfig(peer_timeout=5), adversary=(cheater, WithholdsOpening()))
    outcome = getattr(result, victim)
    assert outcome.code == "cards.forfeit" and outcome.by == "local"
    assert outcome.summary["winner"] == victim
    assert outcome.summary["verdict"]["culprit"] == cheater
    _, verdict = _verdict(tmp_path / victim)
    assert verdict["how"] == "forfeit" and verdict["winner"] == victim
    assert "opening" in verdict["reason"] and verdict["culprit_key"] == _key(result, cheater)


async def test_a_revoke_and_a_withheld_opening_over_tcp(tmp_path) -> None:
    ids = {"host": Identity.generate(), "guest": Identity.generate()}
    host, _ = await tcp_pair("short-whist", tmp_path / "revoke", host={"identity": ids["host"]},
                             guest={"identity": ids["guest"], "adversary": ForbiddenPlay()})
    assert host.outcome.code == "mental_poker.illegal_play"
    assert host.outcome.summary["verdict"]["culprit_key"] == ids["guest"].public_hex
    host, _ = await tcp_pair("short-whist", tmp_path / "withheld", peer_timeout=3,
                             host={"identity": ids["host"]},
                             guest={"identity": ids["guest"], "adversary": WithholdsOpening()})
    assert host.outcome.code == "cards.forfeit" and host.outcome.summary["winner"] == "host"
    _, verdict = _verdict(folder_of(host))
    assert verdict["how"] == "forfeit" and verdict["culprit_key"] == ids["guest"].public_hex


# --------------------------------------------- item 4: a verdict names an agent


def test_a_cheater_that_aborts_is_named_by_its_identity_key(tmp_path) -> None:
    """The guest cheats and never signs a receipt: its signed seat still names it."""
    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
                      adversary=("guest", PartyCheat("play", 0, CHEATS["wrong_face"].make)))
    assert result.host.code == "cards.wrong_face"
    seat_key = result.machines["guest"].signing_key.verify_key
    _, verdict = _verdict(tmp_path / "host")
    assert verdict["culprit"] == "guest" and verdict["culprit_key"] == _key(result, "guest")
    assert verdict["culprit_key"] != bytes(seat_key).hex()


def test_an_unsigned_seat_names_nobody_offline(tmp_path) -> None:
    """A record whose seat signature does not verify proves no identity: the verdict says
    so instead of naming whoever snapshot.json lists."""
    run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
             adversary=("guest", PartyCheat("play", 0, CHEATS["wrong_face"].make)))
    rows = entries(tmp_path / "host")
    for entry in rows:
        payload = entry["envelope"]["payload"]
        if payload.get("action") == "seat" and entry["direction"] == "guest_to_host":
            payload["seat_sig"] = "0" * 128
    judged = judge(rows, load_protocol("crazy-eights").spec, rules("crazy-eights"))
    assert judged.verdict["culprit"] == "guest" and judged.verdict["culprit_key"] is None
    assert any("seat is not signed" in p for p in judged.problems)


@pytest.mark.parametrize("how", ["key", "identity", "session"])
def test_a_badly_signed_seat_is_refused(how) -> None:
    result = run_pair(load_protocol("crazy-eights"), seed=1, adversary=("guest", SeatCheat(how)))
    assert result.host.code == "mental_poker.bad_seat" and result.host.by == "local"


async def test_a_cheat_over_tcp_names_the_guests_identity(tmp_path) -> None:
    ids = {"host": Identity.generate(), "guest": Identity.generate()}
    host, _ = await tcp_pair(
        "crazy-eights", tmp_path, host={"identity": ids["host"]},
        guest={"identity": ids["guest"],
               "adversary": PartyCheat("play", 0, CHEATS["wrong_face"].make)})
    assert host.outcome.code == "cards.wrong_face"
    _, verdict = _verdict(folder_of(host))
    assert verdict["culprit_key"] == ids["guest"].public_hex
    host, _ = await tcp_pair("crazy-eights", tmp_path / "seat", host={"identity": ids["host"]},
                             guest={"identity": ids["guest"], "adversary": SeatCheat("identity")})
    assert host.outcome.code == "mental_poker.bad_seat"


# ------------------------------------------- item 5: two records, one truth


def _cut(tmp_path: Path, *, keep_peer_receipt: bool):
    capture = Capture()
    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path / "run",
                      adversary=("host", capture))
    assert result.host.ok and result.guest.ok
    host_folder = tmp_path / "run" / "host"
    at = claim_point(entries(host_folder), "host")
    cut_and_claim(host_folder, tmp_path / "cut", at=at, machine=capture.machine,
                  identity=capture.machine.identity, keep_peer_receipt=keep_peer_receipt)
    return result, tmp_path / "cut", tmp_path / "run" / "guest"


def test_a_cut_record_fools_one_record_check_but_not_the_comparison(tmp_path) -> None:
    """Regression: the host cuts its finished record where the guest owed a move and appends
    its own signed forfeit; alone (no peer receipt kept) the record blames the guest."""
    result, cut, guest_folder = _cut(tmp_path, keep_peer_receipt=False)
    alone = judge(entries(cut), load_protocol("crazy-eights").spec, rules("crazy-eights"))
    assert alone.verdict["how"] == "forfeit" and alone.verdict["culprit"] == "guest"
    compared = compare_records(cut, guest_folder)
    assert not compared["agree"] and compared["mode"]["disproved"]
    disproved = compared["mode"]["disproved"][0]
    assert disproved["claimant"] == "host" and disproved["record"] == "a"
    assert "later message" in disproved["because"]
    verdict = compared["verdict"]
    assert verdict["how"] == "false_claim" and verdict["culprit"] == "host"
    assert verdict["culprit_key"] == _key(result, "host")
    checked, verdict = _verdict(cut, peer_record=guest_folder)
    assert verdict["culprit"] == "host" and not checked.ok


def test_the_peers_receipt_in_the_cut_folder_contradicts_the_claim(tmp_path) -> None:
    result, cut, _ = _cut(tmp_path, keep_peer_receipt=True)
    checked, verdict = _verdict(cut)
    assert verdict["how"] == "false_claim" and verdict["code"] == "session.record_cut"
    assert verdict["culprit"] == "host" and verdict["culprit_key"] == _key(result, "host")


def test_compare_cli_reports_agreement_and_disproof(tmp_path) -> None:
    result, cut, guest_folder = _cut(tmp_path, keep_peer_receipt=False)
    runner = CliRunner()
    same = runner.invoke(cli, ["session", "compare", str(tmp_path / "run" / "host"),
                               str(guest_folder)])
    assert same.exit_code == 0, same.output
    assert "agree: the records are identical" in same.output
    out = runner.invoke(cli, ["session", "compare", str(cut), str(guest_folder)])
    assert out.exit_code == 1
    assert "disproved: record a's forfeit against the guest" in out.output
    assert f"false_claim by the host (identity {_key(result, 'host')})" in out.output
    data = json.loads(runner.invoke(cli, ["session", "compare", "--json", str(cut),
                                          str(guest_folder / "transcript.jsonl")]).output)
    assert data["verdict"]["culprit"] == "host" and data["agree"] is False
    bad = runner.invoke(cli, ["session", "compare", str(cut), str(tmp_path)])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_a_fork_without_disproof_is_undecided(tmp_path) -> None:
    """The guest's record holds its move, the host's a claim at the same point, and nothing
    later from the host: delivery cannot be proven either way, nobody is blamed."""
    _, cut, guest_folder = _cut(tmp_path, keep_peer_receipt=False)
    rows = entries(guest_folder)
    at = claim_point(rows, "host")
    # the guest's record up to its answer to the host's play, then nothing more
    keep = next(i for i in range(at, len(rows)) if rows[i]["direction"] == "guest_to_host"
                and str(rows[i]["envelope"]["payload"].get("action")).startswith("mp_")) + 1
    short = tmp_path / "short.jsonl"
    from lingxi.session.record.transcript import Transcript

    chain = Transcript()
    short.write_text("".join(json.dumps(chain.add(e["direction"], e["envelope"], e["local"]))
                             + "\n" for e in rows[:keep]))
    compared = compare_records(cut, short)
    assert not compared["agree"] and not compared["mode"]["disproved"]
    assert compared["verdict"]["how"] == "undecided" and compared["verdict"]["culprit"] is None
    assert compared["mode"]["fork"]["a"].startswith("forfeit")


async def test_two_records_over_tcp(tmp_path) -> None:
    ids = {"host": Identity.generate(), "guest": Identity.generate()}
    capture = Capture()
    host, guest = await tcp_pair("crazy-eights", tmp_path / "run",
                                 host={"identity": ids["host"], "adversary": capture},
                                 guest={"identity": ids["guest"]})
    assert host.outcome.ok and guest.outcome.ok
    assert compare_records(folder_of(host), folder_of(guest))["agree"]
    at = claim_point(entries(folder_of(host)), "host")
    cut_and_claim(folder_of(host), tmp_path / "cut", at=at, machine=capture.machine,
                  identity=ids["host"], keep_peer_receipt=True)
    compared = compare_records(tmp_path / "cut", folder_of(guest))
    assert compared["verdict"]["culprit_key"] == ids["host"].public_hex
    _, verdict = _verdict(tmp_path / "cut")
    assert verdict["culprit_key"] == ids["host"].public_hex


@pytest.mark.parametrize("name", ["crazy-eights", "short-whist"])
def test_protocol_test_adversarial_has_the_ending_cases(name) -> None:
    """`lingxi protocol test NAME --adversarial` runs these (tests/session/test_protocol_cli.py
    checks every case is detected)."""
    from lingxi.session.adversarial import build_cases, honest_events

    protocol = load_protocol(name)
    honest = honest_events(protocol, options=None, seed=0, config=SessionConfig())
    names = [c.name for c in build_cases(protocol, honest) if c.make is not None]
    for needle in ("false forfeit claim: at its own move", "resignation:",
                   "withheld opening: the guest", "withheld opening: the host",
                   "forbidden play", "seat signed by a stranger's key",
                   "seat naming another identity", "seat signed for another session",
                   "seat sent twice", "host's seat naming no deck",
                   "guest's seat naming a deck"):
        assert any(needle in n for n in names), needle
    if name == "crazy-eights":  # the share is owed only where somebody draws
        assert any("false forfeit: the side that owes the share" in n for n in names)


@pytest.fixture(scope="module")
def honest_record(tmp_path_factory):
    folder = tmp_path_factory.mktemp("honest")
    run_pair(load_protocol("crazy-eights"), seed=4, state_dir=folder)
    return entries(folder / "host"), entries(folder / "guest")


_junk = [None, True, -1, 2**70, "", "zz", "0" * 64, "f" * 128, [], {}, ["AS"], [7, 7]]


# a spread of (payload, junk value) pairs: every kind of message and every kind of junk
_SOME = [(i, (i * 5) % len(_junk)) for i in range(0, 120, 11)]


@pytest.mark.parametrize("index,junk", _SOME)
def test_a_mangled_record_gives_a_verdict_never_a_traceback(honest_record, index, junk) -> None:
    """Hostile records (any field of any mental-poker payload replaced) are judged, alone
    and against the honest peer record, and always give a verdict dict."""
    import copy

    from lingxi.session.core.modes.mental_poker_judge import compare_dict

    host, guest = honest_record
    spec = load_protocol("crazy-eights").spec
    rows = copy.deepcopy(host)
    payloads = [e["envelope"]["payload"] for e in rows
                if str(e["envelope"]["payload"].get("action", "")).startswith(("mp_", "seat",
                                                                                "pass"))]
    payload = payloads[index % len(payloads)]
    keys = sorted(k for k in payload if k != "action")
    payload[keys[(index + junk) % len(keys)]] = copy.deepcopy(_junk[junk])
    judged = judge(rows, spec, rules("crazy-eights"))
    assert judged.verdict["how"] in ("game", "resignation", "forfeit", "false_claim", "breach",
                                     "incomplete", "undecided")
    out = compare_dict(rows, guest, spec, rules("crazy-eights"))
    assert isinstance(out["verdict"], dict) and isinstance(out["agree"], bool)


def test_a_record_that_stops_early_agrees_and_the_longer_decides(tmp_path) -> None:
    """The guest's record stops before the end (it stopped receiving): no fork, the host's
    complete record decides; two records of different sessions never agree."""
    from lingxi.session.record.transcript import Transcript

    run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path / "one")
    rows = entries(tmp_path / "one" / "guest")
    chain = Transcript()
    short = tmp_path / "short.jsonl"
    short.write_text("".join(json.dumps(chain.add(e["direction"], e["envelope"], e["local"]))
                             + "\n" for e in rows[:len(rows) // 2]))
    out = compare_records(tmp_path / "one" / "host", short)
    assert out["agree"] and not out["identical"] and out["verdict"]["how"] == "game"
    assert "agree" in out["summary"]
    run_pair(load_protocol("crazy-eights"), seed=2, state_dir=tmp_path / "two")
    other = compare_records(tmp_path / "one" / "host", tmp_path / "two" / "guest")
    assert not other["agree"] and other["summary"] == "the records are of different sessions"


def test_an_illegal_pass_is_judged_offline_too(tmp_path) -> None:
    """Passes are session messages beside the cards ones: the judge re-checks them against
    the rules like every draw and play."""
    from lingxi.session.core.modes.mental_poker_cases import IllegalPass

    result = run_pair(load_protocol("crazy-eights"), seed=1, state_dir=tmp_path,
                      adversary=("guest", IllegalPass()))
    assert result.host.code == "mental_poker.illegal_play"
    _, verdict = _verdict(tmp_path / "host")
    assert verdict["how"] == "breach" and verdict["culprit"] == "guest"
    assert verdict["code"] == "mental_poker.illegal_play" and "pass" in verdict["reason"]
