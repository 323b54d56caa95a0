"""The group commands: `lingxi group test | verify`, and `protocol test` of a group spec."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lingxi.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_holdem_runs_and_its_record_verifies_for_a_third_party(tmp_path) -> None:
    record = tmp_path / "table.json"
    done = run("group", "test", "holdem", "--seats", "4", "--seed", "2", "--record",
               str(record), "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["ok"] and data["record_verified"] and data["seats"] == 4
    assert sum(data["result"]["delta"]) == 0
    checked = run("group", "verify", str(record), "--json")
    verdict = json.loads(checked.output)
    assert checked.exit_code == 0 and verdict["ok"]
    assert verdict["result"] == data["result"] and len(verdict["members"]) == 4
    again = json.loads(run("group", "test", "holdem", "--seats", "4", "--seed", "2",
                           "--json").output)
    assert again["head"] == data["head"]  # same seed, same hand


def test_a_tampered_record_fails_with_its_code(tmp_path) -> None:
    record = tmp_path / "vote.json"
    assert run("group", "test", "group-vote", "--seats", "3", "--record",
               str(record)).exit_code == 0
    doc = json.loads(record.read_text())
    reveal = next(e for e in doc["entries"] if e["kind"] == "message"
                  and e["body"]["payload"]["action"] == "vote_reveal")
    reveal["body"]["payload"]["choice"] = "yes" if reveal["body"]["payload"][
        "choice"] != "yes" else "no"
    record.write_text(json.dumps(doc))
    checked = run("group", "verify", str(record))
    assert checked.exit_code == 1
    assert "group.bad_signature" in checked.output and "FAILED" in checked.output


def test_protocol_test_runs_the_group_adversarial_suite() -> None:
    done = run("protocol", "test", "group-vote", "--adversarial", "--json")
    data = json.loads(done.output)
    assert done.exit_code == 0 and data["ok"]
    assert {c["case"] for c in data["adversarial"]} >= {
        "reveal that does not open its commitment", "forking sequencer",
        "reordering sequencer"}
    assert all(c["caught"] and c["culprit_named"] for c in data["adversarial"])


def test_bad_input_is_one_coded_line(tmp_path) -> None:
    seats = run("group", "test", "holdem", "--seats", "9")
    assert seats.exit_code == 2 and "group.bad_seats" in seats.output
    two_party = run("group", "test", "chat")
    assert two_party.exit_code == 2 and "group.not_group_spec" in two_party.output
    junk = tmp_path / "junk.json"
    junk.write_text('{"format": "nope"}')
    bad = run("group", "verify", str(junk))
    assert bad.exit_code in (1, 2) and "Traceback" not in bad.output


def test_session_verify_takes_a_group_record_and_catches_a_tampered_one(tmp_path) -> None:
    record = tmp_path / "holdem.json"
    assert run("group", "test", "holdem", "--seats", "4", "--seed", "5", "--record",
               str(record)).exit_code == 0
    direct = json.loads(run("group", "verify", str(record), "--json").output)
    through = run("session", "verify", str(record), "--json")
    assert through.exit_code == 0, through.output
    verdict = json.loads(through.output)
    assert verdict == direct and verdict["ok"] and len(verdict["members"]) == 4
    assert verdict["protocol"] == "holdem" and verdict["result"]["delta"]
    doc = json.loads(record.read_text())
    bet = next(e for e in doc["entries"] if e["kind"] == "message"
               and e["body"]["payload"]["action"] == "hp_bet")
    bet["body"]["payload"]["move"] = "fold" if bet["body"]["payload"]["move"] != "fold" \
        else "call"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc))
    failed = run("session", "verify", str(tampered))
    assert failed.exit_code == 1
    assert "group.bad_signature" in failed.output and "FAILED" in failed.output
    del doc["receipts"][1]
    doc["entries"] = json.loads(record.read_text())["entries"]
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps(doc))
    missing = run("session", "verify", str(unsigned))
    assert missing.exit_code == 1 and "group.missing_receipt" in missing.output


def test_session_verify_of_an_unreadable_or_foreign_file_is_exit_2(tmp_path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    bad = run("session", "verify", str(junk))
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    foreign = run("session", "verify", str(other))
    assert foreign.exit_code == 2 and "session.not_found" in foreign.output
    record = tmp_path / "vote.json"
    assert run("group", "test", "group-vote", "--seats", "3", "--record",
               str(record)).exit_code == 0
    with_key = run("session", "verify", str(record), "--peer-key", "ab" * 32)
    assert with_key.exit_code == 2 and "usage.bad_option" in with_key.output
    assert run("session", "verify", str(tmp_path / "missing")).exit_code == 2
