"""`lingxi protocol test|list|path` over every built-in, and `lingxi session verify`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.hooks import write_skeleton
from lingxi.protocols import builtin_dir, builtin_names
from lingxi.session import flow_mode

BUILTINS = ["chat", "crazy-eights", "guess-number", "hero-duel", "rock-paper-scissors",
            "short-whist", "word-count"]
GROUP_BUILTINS = ["group-vote", "holdem"]  # A2N: run by `lingxi group`, tested in tests/group


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_builtins_are_listed_with_their_own_ids(protocol_vectors) -> None:
    assert builtin_names() == sorted(BUILTINS + GROUP_BUILTINS)
    rows = [r for r in json.loads(run("protocol", "list", "--json").output)
            if r["name"] not in GROUP_BUILTINS]
    assert [r["name"] for r in rows] == BUILTINS
    published = {pid for _, pid in protocol_vectors.values()}
    assert not published & {r["protocol_id"] for r in rows}  # own rules text, own ids
    modes = {r["name"]: r["mode"] for r in rows}
    assert modes == {"chat": "free", "guess-number": "session_loop",
                     "hero-duel": "simultaneous_round", "rock-paper-scissors": "simultaneous_round",
                     "word-count": "request_response", "crazy-eights": "mental_poker",
                     "short-whist": "mental_poker"}
    for name in BUILTINS:
        folder = builtin_dir(name)
        assert (folder / "hooks.py").is_file() and (folder / "ui" / "index.html").is_file()


def test_path_prints_the_folder_and_refuses_unknown_names() -> None:
    assert run("protocol", "path", "chat").output.strip() == str(builtin_dir("chat"))
    result = run("protocol", "path", "nope")
    assert result.exit_code == 2 and "protocol.not_found" in result.output


@pytest.mark.parametrize("name", BUILTINS)
def test_protocol_test_passes_and_is_reproducible(name: str, tmp_path: Path) -> None:
    first = run("protocol", "test", name, "--seed", "7", "--json",
                "--state-dir", str(tmp_path / "a"))
    assert first.exit_code == 0, first.output
    data = json.loads(first.output)
    assert data["host"]["status"] == data["guest"]["status"] == "completed"
    assert data["receipts_verified"] and data["rounds"]
    again = json.loads(run("protocol", "test", name, "--seed", "7", "--json",
                           "--state-dir", str(tmp_path / "b")).output)
    for key in ("host", "guest", "rounds", "transcript_head", "receipt_hash"):
        assert again[key] == data[key]
    for side in ("host", "guest"):
        verified = run("session", "verify", str(tmp_path / "a" / side), "--json")
        assert verified.exit_code == 0 and json.loads(verified.output)["ok"]


def test_seed_changes_the_game() -> None:
    heads = {json.loads(run("protocol", "test", "rock-paper-scissors", "--seed", str(s),
                            "--json").output)["transcript_head"] for s in range(3)}
    assert len(heads) == 3


def test_text_report_prints_rounds_once_then_outcome_and_receipt() -> None:
    out = run("protocol", "test", "rock-paper-scissors", "--options", '{"best_of": 5}').output
    lines = out.splitlines()
    rounds = [line for line in lines if line.strip().startswith("round ")]
    assert rounds and len(rounds) == len(set(rounds))
    assert lines.index(rounds[-1]) < next(i for i, line in enumerate(lines)
                                          if line.startswith("outcome:"))
    assert any(line.startswith("receipt ") and "both receipts verified" in line for line in lines)
    assert lines[-1] == "PASS"


@pytest.mark.parametrize("name", BUILTINS)
def test_adversarial_detects_every_case(name: str) -> None:
    result = run("protocol", "test", name, "--adversarial", "--json", "--timeout", "12")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["adversarial"]
    assert report["ok"] and report["detected"] == report["applicable"] >= 25
    names = " | ".join(r["case"] for r in report["results"])
    for needle in ("unknown field", "missing required field", "wrong type", "out of range",
                   "unknown action", "replayed envelope", "forged envelope", "silent host",
                   "silent guest"):
        assert needle in names
    for case in report["results"]:
        if case["case"].startswith("silent"):
            assert case["detected"] == "session.timeout"
            assert case["session_seconds"] <= 12.001
    if name in ("rock-paper-scissors", "hero-duel"):
        for needle in ("commit does not match reveal", "outside the choices",
                       "wrong round number"):
            assert needle in names
    if name == "hero-duel":
        lie = next(r for r in report["results"] if r["case"].startswith("shadow-judge lie"))
        assert lie["detected"] == "session.balance_mismatch" and lie["victim"] == "guest"


def test_bad_options_and_bad_json_are_usage_errors() -> None:
    result = run("protocol", "test", "rock-paper-scissors", "--options", '{"best_of": 0}')
    assert result.exit_code == 1 and "options" in result.output
    result = run("protocol", "test", "rock-paper-scissors", "--options", "{nope")
    assert result.exit_code == 2 and "input.bad_json" in result.output


def test_skeleton_hooks_are_refused_with_the_methods_to_write(tmp_path: Path,
                                                               monkeypatch) -> None:
    monkeypatch.delenv("LINGXI_ALLOW_SKELETON_HOOKS", raising=False)
    folder = tmp_path / "rps"
    folder.mkdir()
    spec = json.loads((builtin_dir("rock-paper-scissors") / "spec.json").read_text())
    (folder / "spec.json").write_text(json.dumps(spec))
    write_skeleton(spec, folder, flow_mode("simultaneous_round").skeleton_methods(spec))
    result = run("protocol", "test", str(folder))
    assert result.exit_code == 2
    assert "hooks.skeleton" in result.output and "proto_round_choose" in result.output
    bypass = run("protocol", "test", str(folder), "--allow-skeleton-hooks", "--json")
    report = json.loads(bypass.output)
    assert bypass.exit_code == 1  # runs, and the unwritten hooks end it with a code
    assert "hooks.not_implemented" in (report["host"]["code"], report["guest"]["code"])


def test_verify_detects_tampering(tmp_path: Path) -> None:
    run("protocol", "test", "guess-number", "--state-dir", str(tmp_path))
    host = tmp_path / "host"
    transcript = host / "transcript.jsonl"
    lines = transcript.read_text().splitlines()
    entry = json.loads(lines[3])
    entry["envelope"]["payload"]["number"] = 1
    lines[3] = json.dumps(entry)
    transcript.write_text("\n".join(lines) + "\n")
    result = run("session", "verify", str(host), "--json")
    assert result.exit_code == 1
    assert "transcript.broken_chain" in json.loads(result.output)["problems"][0]
    text = run("session", "verify", str(host))
    assert text.exit_code == 1 and "problem: transcript.broken_chain" in text.output
    guest = tmp_path / "guest"
    receipts = json.loads((guest / "receipts.json").read_text())
    receipts["peer"]["status"] = "aborted"  # a field the signature covers
    (guest / "receipts.json").write_text(json.dumps(receipts))
    data = json.loads(run("session", "verify", str(guest), "--json").output)
    assert not data["ok"] and any("signature" in p for p in data["problems"])
    assert run("session", "verify", str(tmp_path / "nowhere")).exit_code == 2


def test_session_skeleton_then_refusal_lists_methods(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("LINGXI_ALLOW_SKELETON_HOOKS", raising=False)
    folder = tmp_path / "wc"
    folder.mkdir()
    (folder / "spec.json").write_text((builtin_dir("word-count") / "spec.json").read_text())
    missing = run("protocol", "test", str(folder))
    assert missing.exit_code == 2 and "lingxi protocol skeleton" in missing.output
    made = run("protocol", "skeleton", str(folder), "--json")
    assert json.loads(made.output)["methods"] == ["proto_next_message", "proto_on_message"]
    assert (folder / ".lingxi-hooks.json").is_file()
    assert run("protocol", "skeleton", str(folder)).exit_code == 2  # no silent overwrite
    refused = run("protocol", "test", str(folder))
    assert refused.exit_code == 2 and "proto_on_message" in refused.output


def test_session_skeleton_still_works_and_says_where_it_moved(tmp_path: Path) -> None:
    folder = tmp_path / "wc"
    folder.mkdir()
    (folder / "spec.json").write_text((builtin_dir("word-count") / "spec.json").read_text())
    made = CliRunner().invoke(cli, ["session", "skeleton", str(folder), "--json"])
    assert made.exit_code == 0, made.output
    assert "lingxi protocol skeleton" in made.stderr
    assert json.loads(made.stdout)["methods"] == ["proto_next_message", "proto_on_message"]
    assert "skeleton" not in CliRunner().invoke(cli, ["session", "--help"]).output


def test_the_published_mental_poker_spec_now_runs_up_to_its_missing_hooks(
        protocol_vectors, tmp_path: Path) -> None:
    path, _ = protocol_vectors["crazy-eights.spec.json"]
    (tmp_path / "spec.json").write_text(path.read_text())
    result = run("protocol", "test", str(tmp_path), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "hooks.missing"


@pytest.mark.parametrize("vector", ["tank-battle.spec.json"])
def test_modes_without_a_machine_are_refused_before_hooks_load(vector, protocol_vectors,
                                                               tmp_path: Path) -> None:
    path, _ = protocol_vectors[vector]
    (tmp_path / "spec.json").write_text(path.read_text())
    result = run("protocol", "test", str(tmp_path), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "session.mode_not_supported"
