"""A flow mode's facts live on its descriptor: whether it takes local lines, which mode a
spec without one runs; callers ask the descriptor instead of comparing mode names."""

from __future__ import annotations

import pytest

from lingxi.contract.model import DEFAULT_MODE
from lingxi.session import flow_mode, runnable_modes
from lingxi.session.core.registry import skeleton_methods_for, takes_input
from lingxi.session.errors import SessionError
from lingxi.session.net import LiveSession


def test_only_free_mode_takes_local_lines() -> None:
    assert {name for name in runnable_modes() if flow_mode(name).takes_input} == {"free"}
    assert takes_input("free") and not takes_input("session_loop")
    assert not takes_input("no_such_mode") and not takes_input(None) and not takes_input(7)


def test_a_spec_without_a_mode_runs_the_default_mode() -> None:
    assert DEFAULT_MODE in runnable_modes()
    without = skeleton_methods_for({"messages": []})
    assert without == flow_mode(DEFAULT_MODE).skeleton_methods({"messages": []})


def test_a_live_session_of_a_mode_without_input_refuses_a_line() -> None:
    live = LiveSession()
    live.info["mode"] = "session_loop"
    with pytest.raises(SessionError) as refused:
        live.send_input("hello")
    assert refused.value.code == "session.no_input"
