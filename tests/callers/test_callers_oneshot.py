"""``answer_once``: the session core's host machine driven for one exchange, no session.

Real machines for what word-count does; a scripted stand-in for the actions
word-count never produces (a computation, a decision point), so the loop's
answers to them are pinned too.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lingxi.session import SessionConfig, load_protocol, make_machine
from lingxi.session.core.events import (
    Compute,
    ComputeDone,
    ControlReceived,
    DecisionDeclined,
    PayloadReceived,
    RequestDecision,
    Send,
    SendControl,
    Start,
)
from lingxi.session.core.oneshot import answer_once

WORD_COUNT = load_protocol("word-count")


def host(protocol=WORD_COUNT, role="host"):
    return make_machine(role, protocol.spec, protocol.hooks(role, 0),
                        config=SessionConfig(control_mode="autonomous"))


def test_a_request_is_answered_with_progress_then_delivery():
    result = answer_once(host(), {"action": "request", "text": "a b\nc"}, correlation_id="c-1")
    assert result.abort is None
    assert [s.message for s in result.replies] == ["progress", "delivery"]
    assert result.reply.payload == {"action": "delivery", "lines": 2, "words": 3,
                                    "characters": 5}
    assert all(s.correlation_id == "c-1" for s in result.replies)


def test_a_request_without_correlation_is_refused_by_the_machine():
    result = answer_once(host(), {"action": "request", "text": "x"})
    assert result.abort[0] == "session.bad_correlation" and result.replies == ()


def test_only_host_machines_are_driven():
    with pytest.raises(ValueError):
        answer_once(host(role="guest"), {"action": "request", "text": "x"}, correlation_id="c")


def test_an_opening_failure_stops_before_the_payload(tmp_path):
    folder = tmp_path / "broken-start"
    folder.mkdir()
    (folder / "spec.json").write_text((WORD_COUNT.folder / "spec.json").read_text())
    (folder / "hooks.py").write_text(
        "from lingxi.hooks import HookResult, Hooks\n\n\nclass H(Hooks):\n"
        "    def proto_start(self):\n        raise RuntimeError('boom')\n\n"
        "    def proto_next_message(self, allowed, decision=None):\n        return HookResult()\n\n"
        "    def proto_on_message(self, message):\n"
        "        raise AssertionError('must not be reached')\n")
    result = answer_once(host(load_protocol(folder)), {"action": "request", "text": "x"},
                         correlation_id="c")
    assert result.abort[0] == "hooks.error" and "proto_start" in result.abort[1]
    assert result.outcome is not None and result.outcome.status == "aborted"


class Scripted:
    """A stand-in machine: answers each event with the actions the script gives it."""

    role = "host"
    spec = SimpleNamespace(protocol_id="p" * 64)
    outcome = None

    def __init__(self, script):
        self.script, self.seen, self.finished = script, [], False

    def handle(self, event):
        self.seen.append(event)
        return self.script(event)


def test_computations_run_inline_and_their_results_or_errors_come_back():
    def script(event):
        if isinstance(event, PayloadReceived):
            return [Compute("ok", lambda: 41 + 1), Compute("bad", lambda: 1 / 0)]
        if isinstance(event, ComputeDone) and event.name == "ok":
            return [Send({"action": "delivery"}, "delivery", "c")]
        return []

    machine = Scripted(script)
    result = answer_once(machine, {"action": "request"}, correlation_id="c")
    done = {e.name: e.result for e in machine.seen if isinstance(e, ComputeDone)}
    assert done["ok"] == 42 and isinstance(done["bad"], ZeroDivisionError)
    assert result.reply.payload == {"action": "delivery"}
    assert [type(e) for e in machine.seen[:3]] == [Start, ControlReceived, PayloadReceived]


def test_a_decision_point_is_declined_at_once():
    def script(event):
        if isinstance(event, PayloadReceived):
            return [RequestDecision("d1", ["a"], {}, 60.0)]
        if isinstance(event, DecisionDeclined):
            return [SendControl("abort", {"code": "decision.timeout", "message": "no one"})]
        return []

    machine = Scripted(script)
    result = answer_once(machine, {"action": "request"}, correlation_id="c")
    assert result.abort == ("decision.timeout", "no one") and result.reply is None
    assert any(isinstance(e, DecisionDeclined) and e.point_id == "d1" for e in machine.seen)
