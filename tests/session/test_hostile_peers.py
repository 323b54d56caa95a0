"""A hostile peer cannot make a session cost without bound, and hooks cannot fake a pass."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.session import SessionConfig, load_protocol, run_pair
from lingxi.session.core.machine import LIMIT_DEFAULTS
from lingxi.session.net import memory_session

runner = CliRunner()
LINE = "x" * 1900  # a long chat line, within the spec's text limit


def flood(lines: int) -> dict[str, list[str | None]]:
    return {"host": [f"{LINE}{i}" for i in range(lines)] + ["/quit"], "guest": []}


def test_a_flooding_chat_peer_is_stopped_at_the_byte_limit() -> None:
    protocol = load_protocol("chat")
    config = SessionConfig(max_bytes=200_000)
    result = run_pair(protocol, inputs=flood(400), config=config)
    assert result.guest.status == "aborted" and result.guest.by == "local"
    assert result.guest.code == "session.too_large"
    assert result.guest.messages < 150  # stopped near 200 kB, not after 400 lines


def test_the_message_limit_comes_from_the_spec_unless_the_run_sets_one(tmp_path: Path) -> None:
    folder = tmp_path / "chat"
    builtin = load_protocol("chat").folder
    spec = json.loads((builtin / "spec.json").read_text())
    spec["timing"] = {**(spec.get("timing") or {}), "limits": {"max_messages": 20}}
    folder.mkdir()
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "hooks.py").write_text((builtin / "hooks.py").read_text())
    protocol = load_protocol(folder)
    limited = run_pair(protocol, inputs=flood(60))
    assert limited.guest.code == "session.too_long" and limited.guest.by == "local"
    assert SessionConfig().limits(protocol.spec)["max_messages"] == 20
    assert SessionConfig(max_messages=500).limits(protocol.spec)["max_messages"] == 500
    assert SessionConfig().limits(load_protocol("chat").spec) == LIMIT_DEFAULTS


def test_the_state_folder_limit_ends_the_session(tmp_path: Path) -> None:
    protocol = load_protocol("chat")
    result = run_pair(protocol, inputs=flood(200), state_dir=tmp_path,
                      config=SessionConfig(max_state_bytes=150_000))
    assert "session.too_large" in (result.guest.code, result.host.code)
    written = sum(f.stat().st_size for f in (tmp_path / "guest").iterdir() if f.is_file())
    assert written < 400_000


def test_the_byte_limit_holds_over_the_network_driver() -> None:
    protocol = load_protocol("chat")
    host, guest = asyncio.run(memory_session(
        protocol, config=SessionConfig(peer_timeout=5, max_bytes=100_000),
        host_kwargs={"inputs": _lines(flood(300)["host"])}))
    assert guest.outcome.code == "session.too_large" and guest.outcome.by == "local"


async def _lines(lines):
    for line in lines:
        yield line
    yield None


def test_limits_are_settable_per_run_from_the_cli(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps(flood(100)))
    result = runner.invoke(cli, ["protocol", "test", "chat", "--inputs", str(inputs),
                                 "--max-bytes", "50000", "--json",
                                 "--state-dir", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert json.loads(result.output)["guest"]["code"] == "session.too_large"
    bad = runner.invoke(cli, ["protocol", "test", "chat", "--max-bytes", "0"])
    assert bad.exit_code == 2


# ------------------------------------------------ hooks that try to end the process

EXITING = '''
import sys
from lingxi.hooks import HookResult, Hooks

class Quitter(Hooks):
    def proto_next_message(self, allowed, decision=None):
        {body}
        return HookResult(response={{"action": allowed[0]}})

    def proto_on_message(self, message):
        return None

    def proto_round_choose(self, round_no, point):
        {body}
        return point.legal[0]

    def proto_round_judge(self, round_no, host_value, guest_value):
        return {{"action": "round_result"}}
'''


@pytest.mark.parametrize("body", ["sys.exit(0)", "raise SystemExit(0)", "raise GeneratorExit()"])
def test_a_hook_that_exits_is_a_hook_failure(tmp_path: Path, body: str) -> None:
    """Regression: sys.exit in a hook made `protocol test` exit 0 with no output."""
    folder = tmp_path / "quitter"
    folder.mkdir()
    (folder / "spec.json").write_text((load_protocol("rock-paper-scissors").folder
                                       / "spec.json").read_text())
    (folder / "hooks.py").write_text(EXITING.format(body=body))
    result = runner.invoke(cli, ["protocol", "test", str(folder), "--json",
                                 "--state-dir", str(tmp_path / "s")])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert "hooks.error" in (data["host"]["code"], data["guest"]["code"])


def test_a_hooks_file_that_exits_at_import_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "exit-at-import"
    folder.mkdir()
    (folder / "spec.json").write_text((load_protocol("chat").folder / "spec.json").read_text())
    (folder / "hooks.py").write_text("import sys\nsys.exit(0)\n")
    result = runner.invoke(cli, ["protocol", "test", str(folder)])
    assert result.exit_code == 2 and "hooks.import_failed" in result.output


# ------------------------------------------------------- session verify, honestly

def _played(tmp_path: Path) -> Path:
    run_pair(load_protocol("rock-paper-scissors"), seed=3, state_dir=tmp_path)
    return tmp_path / "guest"


def _verify(folder: Path, *extra: str):
    result = runner.invoke(cli, ["session", "verify", str(folder), "--json", *extra])
    return result.exit_code, json.loads(result.output)


def test_entries_appended_after_the_receipts_fail_verification(tmp_path: Path) -> None:
    """Regression: correctly chained entries after the receipted prefix passed."""
    from lingxi.session.record.transcript import link

    folder = _played(tmp_path)
    assert _verify(folder)[0] == 0
    lines = (folder / "transcript.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    forged_envelope = {**last["envelope"], "id": "forged"}
    forged = {**last, "n": last["n"] + 1, "index": last["index"] + 1, "prev": last["hash"],
              "hash": link(last["hash"], forged_envelope), "envelope": forged_envelope}
    (folder / "transcript.jsonl").write_text("\n".join(lines + [json.dumps(forged)]) + "\n")
    code, data = _verify(folder)
    assert code == 1 and any("signed by nobody" in p for p in data["problems"])


def test_a_re_signed_peer_receipt_is_caught_when_the_peer_key_is_pinned(tmp_path: Path) -> None:
    """Regression: a peer receipt re-signed with another key, snapshot edited to match, passed."""
    from lingxi.session.record.receipts import sign_receipt
    from lingxi.wire.identity import Identity

    folder = _played(tmp_path)
    real_peer = json.loads((folder / "snapshot.json").read_text())["peer_public_key"]
    mallory = Identity.generate()
    receipts = json.loads((folder / "receipts.json").read_text())
    body = {k: v for k, v in receipts["peer"].items() if k != "signature"}
    receipts["peer"] = sign_receipt({**body, "public_key": mallory.public_hex}, mallory)
    (folder / "receipts.json").write_text(json.dumps(receipts))
    snapshot = json.loads((folder / "snapshot.json").read_text())
    snapshot["peer_public_key"] = mallory.public_hex
    (folder / "snapshot.json").write_text(json.dumps(snapshot))
    code, data = _verify(folder)
    assert code == 0 and "not pinned" in data["keys"]["peer"]["source"]  # what it cannot know
    code, data = _verify(folder, "--peer-key", real_peer)
    assert code == 1 and data["keys"]["peer"]["key"] == real_peer
    assert any("another key" in p for p in data["problems"])


def test_verify_runs_the_flow_modes_own_check(tmp_path: Path) -> None:
    folder = _played(tmp_path)
    code, data = _verify(folder)
    assert code == 0 and any(n.startswith("flow check (simultaneous_round): ok")
                             for n in data["notes"])


@pytest.mark.parametrize("content", ["[]", "null", '"x"', "{", "\xff\xfe"])
@pytest.mark.parametrize("name", ["snapshot.json", "receipts.json"])
def test_state_files_of_the_wrong_shape_give_one_line(tmp_path: Path, name: str,
                                                      content: str) -> None:
    folder = _played(tmp_path)
    (folder / name).write_bytes(content.encode("latin-1"))
    for command in (["session", "verify", str(folder)], ["session", "show", str(folder)],
                    ["session", "decide", "--state-dir", str(folder), "--decision", '"rock"']):
        result = runner.invoke(cli, command)
        if name == "receipts.json" and command[1] != "verify":
            continue  # show and decide do not read receipts
        assert result.exit_code == 2, (command, result.output)
        assert "Traceback" not in result.output and "session.bad_state" in result.output


# ------------------------------------------------------- hostile local input

def test_a_non_utf8_input_script_is_refused_before_the_session(tmp_path: Path) -> None:
    script = tmp_path / "lines.txt"
    script.write_bytes(b"hello\n\xff\xfe bad\n")
    result = runner.invoke(cli, ["host", "--protocol-dir", "chat", "--endpoint",
                                 "tcp://127.0.0.1:0", "--input", str(script)])
    assert result.exit_code == 2 and "input.not_utf8" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("content", [b"\x00\x01\x02binary", b"\xff\xfe\x00p\x00y",
                                     b"x = (" * 300 + b"1" + b")" * 300])
def test_a_binary_or_absurd_hooks_file_is_a_typed_error(tmp_path: Path, content: bytes) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "spec.json").write_text((load_protocol("chat").folder / "spec.json").read_text())
    (folder / "hooks.py").write_bytes(content)
    result = runner.invoke(cli, ["protocol", "test", str(folder)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "hooks." in result.output


@pytest.mark.parametrize("line", ['{"direction": "host_to_guest", "envelope": {"x": NaN}}',
                                  "[" * 5000 + "]" * 5000, '{"direction": 1}'])
def test_a_transcript_line_with_nan_or_deep_nesting_fails_verification(tmp_path: Path,
                                                                       line: str) -> None:
    folder = _played(tmp_path)
    with (folder / "transcript.jsonl").open("a") as handle:
        handle.write(line + "\n")
    result = runner.invoke(cli, ["session", "verify", str(folder)])
    assert result.exit_code == 1 and "transcript.malformed" in result.output
    assert "Traceback" not in result.output


def test_session_folders_are_private_and_protocol_tests_never_share_one(tmp_path: Path,
                                                                       monkeypatch) -> None:
    import stat

    monkeypatch.setenv("LINGXI_HOME", str(tmp_path / "home"))
    folders = []
    for _ in range(2):
        result = runner.invoke(cli, ["protocol", "test", "word-count", "--json"])
        assert result.exit_code == 0, result.output
        folders.append(Path(json.loads(result.output)["state_dir"]))
    assert folders[0] != folders[1]
    for side in ("host", "guest"):
        folder = folders[0] / side
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        for name in ("events.jsonl", "transcript.jsonl", "snapshot.json", "receipts.json"):
            assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
