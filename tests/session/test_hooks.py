"""Hooks API: loading only from local folders, skeleton generation and refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingxi.canonical import sha256_hex
from lingxi.hooks import (
    PLACEHOLDER,
    SIDECAR,
    HookContext,
    HookResult,
    Hooks,
    HooksError,
    load_hooks_class,
    render_skeleton,
    skeleton_status,
    write_skeleton,
)
from lingxi.session.core.registry import flow_mode

RPS = {
    "name": "RPS", "messages": [
        {"name": "reveal", "direction": "both", "fields": {
            "action": {"type": "enum", "values": ["reveal"], "required": True},
            "choice": {"type": "enum", "values": ["rock", "paper"], "required": True}}}],
    "flow": {"mode": "simultaneous_round", "round": {"value_field": "choice",
                                                      "value_type_ref": "reveal.fields.choice"},
             "phases": [{"phase": "round", "repeat": "best_of",
                         "exchange": [{"message": "reveal", "direction": "both"}]}]},
    "choices": ["rock", "paper"], "rules": {"game_over": "first to 2"},
    "shadow_judge": True,
    "decision": {"mode": "manual", "timeout_seconds": 30, "timeout_action": "abort"},
}

GOOD = '''
from lingxi.hooks import Hooks, HookResult

class Mine(Hooks):
    def proto_next_message(self, allowed, decision=None):
        return HookResult(response={"action": allowed[0]})
    def proto_on_message(self, message):
        return None
'''

ROUNDS = flow_mode("simultaneous_round")
LOOP = flow_mode("session_loop")


def test_skeleton_lists_constraints_and_sidecar(tmp_path: Path) -> None:
    path = write_skeleton(RPS, tmp_path, ROUNDS.skeleton_methods(RPS), protocol_id="ab" * 32)
    text = path.read_text()
    assert "LINGXI_SKELETON = True" in text
    for name in ROUNDS.required_hooks:
        assert f'raise NotImplementedError("{PLACEHOLDER}: {name}")' in text
    assert "proto_round_judge_pure" in text  # shadow_judge: true in the spec
    assert 'decision.allowed_values (choices): ["rock", "paper"]' in text
    assert "rules.game_over" in text and "timeout_action=abort" in text
    sidecar = json.loads((tmp_path / SIDECAR).read_text())
    assert sidecar["skeleton_hash"] == sha256_hex(text.encode())
    assert sidecar["flow_mode"] == "simultaneous_round"
    assert sidecar["protocol_id"] == "ab" * 32
    assert len(sidecar["spec_hash"]) == 64
    compile(text, "hooks.py", "exec")  # a skeleton is valid Python


def test_skeleton_survives_odd_rules_text(tmp_path: Path) -> None:
    spec = {**RPS, "rules": {"odd": 'back\\slash \\d """triple""" and\nnewline'}}
    text = write_skeleton(spec, tmp_path, ROUNDS.skeleton_methods(spec)).read_text()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(text, "hooks.py", "exec")


def test_skeleton_refused_with_pending_methods(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("LINGXI_ALLOW_SKELETON_HOOKS", raising=False)
    write_skeleton(RPS, tmp_path, ROUNDS.skeleton_methods(RPS))
    with pytest.raises(HooksError) as info:
        load_hooks_class(tmp_path, methods=ROUNDS.hook_methods, mode="simultaneous_round")
    assert info.value.code == "hooks.skeleton"
    pending = info.value.details["pending"]
    assert set(ROUNDS.required_hooks) <= set(pending)
    assert "proto_round_choose" in str(info.value)


def test_skeleton_bypass_flag_and_env(tmp_path: Path, monkeypatch) -> None:
    write_skeleton(RPS, tmp_path, ROUNDS.skeleton_methods(RPS))
    cls = load_hooks_class(tmp_path, methods=ROUNDS.hook_methods, mode="simultaneous_round", allow_skeleton=True)
    assert issubclass(cls, Hooks)
    monkeypatch.setenv("LINGXI_ALLOW_SKELETON_HOOKS", "1")
    assert load_hooks_class(tmp_path, methods=ROUNDS.hook_methods, mode="simultaneous_round")


def test_partly_written_skeleton_lists_only_remaining(tmp_path: Path) -> None:
    text = render_skeleton({"name": "x", "messages": []}, LOOP.skeleton_methods({})).replace("LINGXI_SKELETON = True", "")
    text = text.replace(f'raise NotImplementedError("{PLACEHOLDER}: proto_on_message")',
                        "return None")
    (tmp_path / "hooks.py").write_text(text)
    status = skeleton_status(tmp_path / "hooks.py")
    assert not status.sentinel and status.pending == ["proto_next_message"]
    with pytest.raises(HooksError, match="proto_next_message"):
        load_hooks_class(tmp_path, methods=LOOP.hook_methods)


def test_skeleton_is_not_executed_when_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "hooks.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nLINGXI_SKELETON = True\n")
    with pytest.raises(HooksError):
        load_hooks_class(tmp_path, methods=LOOP.hook_methods)
    assert not marker.exists()


def test_load_good_hooks_and_use_them(tmp_path: Path) -> None:
    (tmp_path / "hooks.py").write_text(GOOD)
    cls = load_hooks_class(tmp_path, methods=LOOP.hook_methods)
    hooks = cls(HookContext(role="guest"))
    assert hooks.proto_next_message(["join"]).response == {"action": "join"}
    assert hooks.ctx.peer == "host"


@pytest.mark.parametrize("body,code", [
    ("raise RuntimeError('boom')\n", "hooks.import_failed"),
    ("x = 1\n", "hooks.no_class"),
    ("def broken(:\n", "hooks.syntax_error"),
    ("from lingxi.hooks import Hooks\nclass A(Hooks):\n    pass\n", "hooks.missing_methods"),
])
def test_broken_hooks_are_typed_errors(tmp_path: Path, body: str, code: str) -> None:
    (tmp_path / "hooks.py").write_text(body)
    with pytest.raises(HooksError) as info:
        load_hooks_class(tmp_path, methods=LOOP.hook_methods)
    assert info.value.code == code


def test_hooks_only_from_local_folders(tmp_path: Path) -> None:
    with pytest.raises(HooksError) as info:
        load_hooks_class("https://example.org/protocol")
    assert info.value.code == "hooks.not_local"
    with pytest.raises(HooksError) as info:
        load_hooks_class(tmp_path, methods=LOOP.hook_methods)
    assert info.value.code == "hooks.missing"
    outside = tmp_path / "elsewhere.py"
    outside.write_text(GOOD)
    (tmp_path / "proto").mkdir()
    (tmp_path / "proto" / "hooks.py").symlink_to(outside)
    with pytest.raises(HooksError) as info:
        load_hooks_class(tmp_path / "proto", methods=LOOP.hook_methods)
    assert info.value.code == "hooks.not_local"


def test_hook_result_responses() -> None:
    assert HookResult().responses() == []
    assert HookResult(response={"a": 1}).responses() == [{"a": 1}]
    assert HookResult(response=[{"a": 1}, {"b": 2}]).responses() == [{"a": 1}, {"b": 2}]
