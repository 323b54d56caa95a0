"""A hostile peer cannot make a session cost without bound, and hooks cannot fake a pass."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.session import SessionConfig, load_protocol, memory_session, run_pair
from lingxi.session.core.machine import LIMIT_DEFAULTS

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
