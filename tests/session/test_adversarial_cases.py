"""The adversarial suite judges the protocol, not itself (issue 17, item 10).

Every cheat case must really send a cheating message: a lie is drawn from the
round's choices, else from the field's type and bounds; a case that cannot be
built for a spec, or whose moment never comes in a run, is reported as not
applicable and never as missed.
"""

from __future__ import annotations

import json
from pathlib import Path

from auction_protocol import echo_spec
from auction_protocol import write as write_auction
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.session import errors as codes
from lingxi.session.adversarial import run_adversarial, run_case
from lingxi.session.core.adversaries import Case, MutateNth, can_differ, different_value
from lingxi.session.core.machine import SessionConfig
from lingxi.session.runner import load_protocol

MISREPORT = "round result misreports the guest's bid"


def _case(report, name):
    return next(r for r in report.results if r.name == name)


def test_a_correct_auction_without_choices_passes_the_misreport_case(tmp_path: Path) -> None:
    """Regression: with bids 1..1000 and no ``choices`` the host 'lied' with the true bid,
    so the cheat was never played and the case was reported [MISSED]."""
    protocol = load_protocol(write_auction(tmp_path / "auction", spec=echo_spec()))
    report = run_adversarial(protocol, options={"lots": 2}, seed=1, probes=False)
    misreport = _case(report, MISREPORT)
    assert misreport.applicable and misreport.ok, misreport
    assert misreport.detected == codes.RESULT_MISMATCH
    commit = _case(report, "commit does not match reveal (guest)")
    assert commit.applicable and commit.detected == codes.COMMIT_MISMATCH
    missed = [r.name for r in report.results if r.applicable and not r.ok]
    assert not missed, missed


def test_the_cli_reports_no_missed_case_for_that_auction(tmp_path: Path) -> None:
    folder = write_auction(tmp_path / "auction", spec=echo_spec())
    result = CliRunner().invoke(cli, ["protocol", "test", str(folder), "--adversarial",
                                       "--options", "{\"lots\": 2}", "--state-dir",
                                       str(tmp_path / "state")])
    assert result.exit_code == 0, result.output
    assert "[MISSED]" not in result.output
    assert f"[ok] {MISREPORT}" in result.output


def test_a_value_with_only_one_possibility_makes_the_lies_not_applicable(tmp_path: Path
                                                                          ) -> None:
    """Bids fixed to 7..7: no lie about a bid can be built; the cases say so."""
    protocol = load_protocol(write_auction(tmp_path / "auction", spec=echo_spec(7, 7)))
    report = run_adversarial(protocol, options={"lots": 1}, seed=1, probes=False)
    for name in (MISREPORT, "commit does not match reveal (host)",
                 "commit does not match reveal (guest)"):
        case = _case(report, name)
        assert not case.applicable and case.ok and "only one possible value" in case.detail
    data = json.dumps(report.to_dict())
    assert '"ok": false' not in data


def test_a_cheat_whose_moment_never_comes_is_not_applicable_never_missed(tmp_path: Path
                                                                         ) -> None:
    protocol = load_protocol(write_auction(tmp_path / "auction", spec=echo_spec()))
    never = Case("a mutation of a message never sent", "host", (codes.RESULT_MISMATCH,),
                 lambda: MutateNth("settle", lambda p: p, nth=99))
    result = run_case(protocol, never, options={"lots": 1}, seed=1, config=SessionConfig())
    assert not result.applicable and result.ok and "could not be played" in result.detail


def test_different_values_respect_type_bounds_and_enums() -> None:
    assert different_value(1000, {"type": "integer", "min": 1, "max": 1000}) == 999
    assert different_value(1, {"type": "integer", "min": 1, "max": 1000}) == 2
    assert different_value(5, {"type": "integer", "min": 5, "max": 5}) is None
    assert different_value("a", {"type": "enum", "values": ["a", "b"]}) == "b"
    assert different_value(True, {"type": "boolean"}) is False
    assert different_value("ab", {"type": "text", "max_length": 2}) == "a"
    assert different_value("rock", {"type": "enum", "values": ["rock"]}, ["rock", "paper"]) \
        == "paper"
    hexed = different_value("0" * 64, {"type": "hash"})
    assert hexed != "0" * 64 and len(hexed) == 64
    assert not can_differ({"type": "enum", "values": ["only"]})
    assert can_differ({"type": "integer", "min": 1})
