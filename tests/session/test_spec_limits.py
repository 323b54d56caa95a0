"""A spec's ``timing.limits`` may only lower the local flood limits; only a local option
(SessionConfig, the CLI's --max-*) raises them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingxi.session import SessionConfig, load_protocol, make_machine
from lingxi.session.core.machine import LIMIT_DEFAULTS


def _with_limits(tmp_path: Path, limits: dict) -> object:
    builtin = load_protocol("chat").folder
    spec = json.loads((builtin / "spec.json").read_text(encoding="utf-8"))
    spec["timing"] = {"limits": limits}
    folder = tmp_path / "chat"
    folder.mkdir()
    (folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    (folder / "hooks.py").write_text((builtin / "hooks.py").read_text(encoding="utf-8"),
                                     encoding="utf-8")
    return load_protocol(folder)


def test_a_spec_cannot_raise_the_flood_limits(tmp_path: Path) -> None:
    huge = {name: 10**15 for name in LIMIT_DEFAULTS}
    protocol = _with_limits(tmp_path, huge)
    assert SessionConfig().limits(protocol.spec) == LIMIT_DEFAULTS
    machine = make_machine("guest", protocol.spec, protocol.hooks("guest", 1))
    assert machine.limits == LIMIT_DEFAULTS  # what the running session enforces


def test_a_spec_may_lower_a_limit_and_a_local_option_beats_both(tmp_path: Path) -> None:
    protocol = _with_limits(tmp_path, {"max_messages": 20, "max_bytes": 10**15})
    limits = SessionConfig().limits(protocol.spec)
    assert limits["max_messages"] == 20
    assert limits["max_bytes"] == LIMIT_DEFAULTS["max_bytes"]
    raised = SessionConfig(max_messages=500_000, max_bytes=10**10).limits(protocol.spec)
    assert raised["max_messages"] == 500_000 and raised["max_bytes"] == 10**10


@pytest.mark.parametrize("value", [0, -5, True, 1.5, "20", None, [20]])
def test_a_limit_that_is_not_a_positive_integer_is_ignored(tmp_path: Path, value) -> None:
    protocol = _with_limits(tmp_path, {"max_messages": value})
    assert SessionConfig().limits(protocol.spec)["max_messages"] == LIMIT_DEFAULTS["max_messages"]
