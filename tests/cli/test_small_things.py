"""Small things that add up (issue 21, item 5): a misspelt option is never silent, validate
takes a built-in's name like host does, a per-side config to memory_session is taken."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.errors import SessionError
from lingxi.session.runner import load_protocol

MISSPELT = '{"bestof": 5}'


def _run(args: list[str], tmp_path) -> object:
    return CliRunner().invoke(cli, args, env={"LINGXI_HOME": str(tmp_path)})


def test_protocol_test_warns_about_a_misspelt_option_and_strict_refuses_it(tmp_path) -> None:
    warned = _run(["protocol", "test", "rock-paper-scissors", "--options", MISSPELT], tmp_path)
    assert warned.exit_code == 0, warned.output
    assert "warning: options.undeclared: option 'bestof' is not a declared parameter" \
        in warned.stderr
    refused = _run(["protocol", "test", "rock-paper-scissors", "--options", MISSPELT,
                    "--strict"], tmp_path)
    assert refused.exit_code == 2
    assert "error: options.undeclared: option 'bestof'" in refused.stderr
    assert "(declared: best_of, termination)" in refused.stderr


def test_host_refuses_a_misspelt_option_with_strict_before_listening(tmp_path) -> None:
    refused = _run(["host", "--protocol-dir", "rock-paper-scissors", "--endpoint",
                    "tcp://127.0.0.1:0", "--options", MISSPELT, "--strict"], tmp_path)
    assert refused.exit_code == 2 and "error: options.undeclared" in refused.stderr
    assert "hosting" not in refused.stderr
    warned = _run(["host", "--protocol-dir", "rock-paper-scissors", "--endpoint",
                   "tcp://127.0.0.1:0", "--options", MISSPELT, "--accept-timeout", "0.2"],
                  tmp_path)
    assert "warning: options.undeclared: option 'bestof'" in warned.stderr
    assert "hosting" in warned.stderr


def test_validate_takes_a_built_in_name(tmp_path) -> None:
    good = _run(["validate", "rock-paper-scissors", '{"action":"join"}', "--direction",
                 "guest_to_host"], tmp_path)
    assert good.exit_code == 0 and "valid: join" in good.output
    bad = _run(["validate", "rock-paper-scissors", '{"action":"join","x":1}'], tmp_path)
    assert bad.exit_code == 1 and "message.unknown_field" in bad.output
    missing = _run(["validate", "no-such-protocol", '{"action":"join"}'], tmp_path)
    assert missing.exit_code == 2 and "spec.unreadable" in missing.stderr


async def test_memory_session_takes_a_per_side_config_and_refuses_shared_keys() -> None:
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol("rock-paper-scissors"), seed=1,
        guest_kwargs={"config": SessionConfig(control_mode="autonomous", peer_timeout=20)}),
        30)
    assert host.outcome.ok and guest.outcome.ok
    with pytest.raises(SessionError) as refused:
        await memory_session(load_protocol("rock-paper-scissors"),
                             guest_kwargs={"seed": 3})
    assert refused.value.code == "session.bad_argument"
