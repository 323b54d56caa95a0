"""Refusal paths of the sans-IO session core: what a machine does with a peer message, a
control or a hook result it must not accept, and what a one-shot request gets back.

Every case drives real machines through ``handle`` and reads the actions: a refused peer
ends in an ``abort`` control with a stable code and an aborted outcome."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from session_helpers import LOOP_SPEC, PingPong, machine, msg, spec_of, started

from lingxi.cards.table import Deal
from lingxi.contract.commit_reveal import commitment
from lingxi.errors import InputError
from lingxi.hooks import DecisionPoint, HookContext, HookResult, Hooks
from lingxi.session import SessionConfig, load_protocol, make_machine
from lingxi.session import errors as codes
from lingxi.session.core.adversaries import (
    can_differ,
    different_value,
    out_of_range_value,
    wrong_type_value,
)
from lingxi.session.core.decisions import DecisionPolicy, legal_value, with_decider
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import (
    Compute,
    ComputeDone,
    ControlReceived,
    DecisionDeclined,
    Emit,
    Finish,
    LocalInput,
    PayloadReceived,
    RequestDecision,
    Send,
    SendControl,
    Start,
    TimerFired,
)
from lingxi.session.core.machine import SessionMachine
from lingxi.session.core.modes.mental_poker import deal_of
from lingxi.session.core.modes.reqres import MAX_PROGRESS, opening_cheat
from lingxi.session.core.modes.round_cases import verify_commitments
from lingxi.session.core.oneshot import answer_once
from lingxi.wire.identity import Identity

WORD_COUNT = load_protocol("word-count")


def aborts(actions: list[Any]) -> list[str]:
    return [a.body["code"] for a in actions if isinstance(a, SendControl) and a.kind == "abort"]


def events(actions: list[Any]) -> list[str]:
    return [a.event["event"] for a in actions if isinstance(a, Emit)]


def outcome(actions: list[Any]):
    done = [a.outcome for a in actions if isinstance(a, Finish)]
    assert len(done) == 1
    return done[0]


# --- one-shot requests ---------------------------------------------------------------------


def word_count_host(**config: Any) -> SessionMachine:
    return make_machine("host", WORD_COUNT.spec, WORD_COUNT.hooks("host", 0),
                        config=SessionConfig(control_mode="autonomous", **config))


def test_a_one_shot_request_is_answered_and_linked():
    result = answer_once(word_count_host(), {"action": "request", "text": "one two"},
                         correlation_id="c-9", session_id="s-1")
    assert result.abort is None and result.outcome is None
    assert result.reply is not None and result.reply.payload["words"] == 2
    assert {s.correlation_id for s in result.replies} == {"c-9"}


def test_a_one_shot_payload_that_breaks_the_contract_is_refused_unanswered():
    result = answer_once(word_count_host(), {"action": "request", "text": 5},
                         correlation_id="c")
    assert result.abort is not None and result.abort[0] == "message.wrong_type"
    assert result.replies == () and result.reply is None
    assert result.outcome is not None and result.outcome.status == "aborted"


def test_a_one_shot_payload_the_host_would_send_is_out_of_phase():
    result = answer_once(word_count_host(), {"action": "delivery", "lines": 0, "words": 0,
                                             "characters": 0}, correlation_id="c")
    assert result.abort is not None and result.replies == ()


def test_a_one_shot_request_without_correlation_is_refused():
    result = answer_once(word_count_host(), {"action": "request", "text": "x"})
    assert result.abort is not None and result.abort[0] == codes.BAD_CORRELATION


# --- request_response by message names -----------------------------------------------------


RR_SPEC = {
    "name": "Echo", "spec_version": "1.0",
    "messages": [
        msg("request", "guest_to_host", text={"type": "text", "max_length": 50,
                                              "required": True}),
        msg("progress", "host_to_guest"),
        msg("delivery", "host_to_guest", text={"type": "text", "max_length": 50,
                                               "required": True}),
        msg("ack", "guest_to_host"),
        msg("error", "both"),
    ],
    "flow": {"mode": "request_response"},
    "rules": {"echo": "the host echoes the text"},
}


class Echo(Hooks):
    """Echoes; ``self.script`` (set per test) may replace what the host sends."""

    script: Any = None

    def proto_next_message(self, allowed, decision=None):
        if "request" in allowed:
            return HookResult(response={"action": "request", "text": "hi"})
        if "ack" in allowed:
            return HookResult(response={"action": "ack"})
        if type(self).script is not None:
            return type(self).script(allowed, decision)
        return HookResult(response={"action": "delivery", "text": "hi"})

    def proto_on_message(self, message):
        return None


def rr_host(spec: dict[str, Any] = RR_SPEC, hooks: type = Echo, **config: Any):
    m = machine("host", spec, hooks, config=SessionConfig(**config) if config else None)
    actions = m.handle(Start())
    actions += m.handle(ControlReceived("accept", {"protocol_id": m.spec.protocol_id}))
    return m, actions


def rr_guest(spec: dict[str, Any] = RR_SPEC):
    m = machine("guest", spec, Echo)
    actions = m.handle(Start())
    actions += m.handle(ControlReceived("offer", {"protocol_id": m.spec.protocol_id,
                                                  "options": {}}))
    return m, actions


def test_the_guest_opens_with_a_fresh_correlation_id_and_rejects_another():
    guest, actions = rr_guest()
    sent = [a for a in actions if isinstance(a, Send)]
    assert [s.message for s in sent] == ["request"]
    corr = sent[0].correlation_id
    assert corr and corr.startswith("rr-")
    after = guest.handle(PayloadReceived({"action": "delivery", "text": "hi"}, "rr-other"))
    assert aborts(after) == [codes.BAD_CORRELATION]


def test_a_guest_without_an_ack_message_completes_on_delivery():
    spec = {**RR_SPEC, "messages": [m for m in RR_SPEC["messages"] if m["name"] != "ack"]}
    guest, actions = rr_guest(spec)
    corr = next(a.correlation_id for a in actions if isinstance(a, Send))
    after = guest.handle(PayloadReceived({"action": "delivery", "text": "hi"}, corr))
    assert outcome(after).status == "completed" and aborts(after) == []


def test_a_host_without_an_ack_message_completes_after_its_delivery():
    spec = {**RR_SPEC, "messages": [m for m in RR_SPEC["messages"] if m["name"] != "ack"]}
    host, _ = rr_host(spec)
    after = host.handle(PayloadReceived({"action": "request", "text": "x"}, "c1"))
    assert [a.message for a in after if isinstance(a, Send)] == ["delivery"]
    assert outcome(after).status == "completed"


def test_a_spec_without_a_delivery_message_is_refused_when_the_session_begins():
    spec = {**RR_SPEC, "messages": [m for m in RR_SPEC["messages"]
                                    if m["name"] not in ("delivery", "progress")]}
    _, actions = rr_host(spec)
    assert aborts(actions) == [codes.BAD_CONTROL]


class _Silent(Echo):
    """A host whose hooks send nothing when it must deliver."""

    def proto_next_message(self, allowed, decision=None):
        if "delivery" in allowed:
            return HookResult()
        return super().proto_next_message(allowed, decision)


def test_a_host_whose_hooks_send_nothing_is_stopped():
    host, _ = rr_host(hooks=_Silent)
    after = host.handle(PayloadReceived({"action": "request", "text": "x"}, "c1"))
    assert aborts(after) == [codes.HOOKS_NO_RESPONSE]


def test_a_declared_error_from_the_peer_is_taken_at_any_stage_but_a_request_is_not():
    guest, actions = rr_guest()
    corr = next(a.correlation_id for a in actions if isinstance(a, Send))
    after = guest.handle(PayloadReceived({"action": "error"}, corr))
    assert aborts(after) == [] and "message.received" in events(after)
    again = guest.handle(PayloadReceived({"action": "progress"}, corr))
    assert aborts(again) == []
    assert guest.waiting_description() == {"stage": "working",
                                           "expected": ["progress", "delivery"],
                                           "from": "host"}
    host, _ = rr_host()
    host.handle(PayloadReceived({"action": "request", "text": "x"}, "c1"))  # -> ack stage
    late = host.handle(PayloadReceived({"action": "request", "text": "y"}, "c1"))
    assert aborts(late) == [codes.OUT_OF_PHASE]


def test_an_ack_linked_to_another_request_is_refused():
    host, _ = rr_host()
    host.handle(PayloadReceived({"action": "request", "text": "x"}, "c1"))
    after = host.handle(PayloadReceived({"action": "ack"}, "c2"))
    assert aborts(after) == [codes.BAD_CORRELATION]


def test_an_endless_stream_of_progress_is_cut_off():
    guest, actions = rr_guest()
    corr = next(a.correlation_id for a in actions if isinstance(a, Send))
    for _ in range(MAX_PROGRESS):
        assert aborts(guest.handle(PayloadReceived({"action": "progress"}, corr))) == []
    last = guest.handle(PayloadReceived({"action": "progress"}, corr))
    assert aborts(last) == [codes.TOO_LONG]


def test_a_peer_closing_before_the_delivery_aborts_the_session():
    guest, _ = rr_guest()
    after = guest.handle(ControlReceived("close", {"reason": "bored"}))
    result = outcome(after)
    assert (result.status, result.code, result.by) == ("aborted", codes.PEER_CLOSED, "peer")
    assert result.reason == "bored"


class _Deciding(Echo):
    """A host that asks its decider which text to deliver."""

    def proto_decision_point(self, allowed):
        if "delivery" in allowed:
            return DecisionPoint(legal=["a", "b"], default="a")
        return None

    def proto_next_message(self, allowed, decision=None):
        if "delivery" in allowed:
            return HookResult(response={"action": "delivery", "text": decision or "none"})
        return super().proto_next_message(allowed, decision)


def test_a_manual_delivery_waits_for_the_decider_then_sends_its_choice():
    host, _ = rr_host(hooks=_Deciding, control_mode="human")
    asked = host.handle(PayloadReceived({"action": "request", "text": "x"}, "c1"))
    points = [a for a in asked if isinstance(a, RequestDecision)]
    assert len(points) == 1 and points[0].legal == ["a", "b"]
    assert not [a for a in asked if isinstance(a, Send)] and host.awaiting_decision
    declined = host.handle(DecisionDeclined(points[0].point_id, "no one there"))
    sent = [a for a in declined if isinstance(a, Send)]
    assert [s.payload["text"] for s in sent] == ["a"] and sent[0].correlation_id == "c1"


def test_the_opening_cheat_is_not_applicable_to_a_side_that_sends_nothing():
    spec = SimpleNamespace(raw={"messages": [msg("request", "guest_to_host"),
                                             msg("error", "both")]})
    case = opening_cheat(spec, "host")
    assert case.make is None and case.expect == () and "not applicable" in case.note


# --- the machine's own checks ----------------------------------------------------------------


def test_a_machine_has_a_host_or_a_guest_role():
    spec = spec_of(LOOP_SPEC)
    with pytest.raises(ValueError):
        SessionMachine(role="witness", spec=spec,
                       hooks=PingPong(HookContext("host", spec, rng=random.Random(0))))


def test_an_unknown_event_is_a_programming_error():
    m, _ = started("host", LOOP_SPEC)
    with pytest.raises(TypeError):
        m.handle(object())


def test_a_guest_accepting_another_protocol_is_refused():
    m = machine("host", LOOP_SPEC)
    m.handle(Start())
    after = m.handle(ControlReceived("accept", {"protocol_id": "f" * 64}))
    assert aborts(after) == [codes.PROTOCOL_MISMATCH]


def test_an_unexpected_control_is_refused():
    m, _ = started("guest", LOOP_SPEC)
    after = m.handle(ControlReceived("offer", {"protocol_id": m.spec.protocol_id}))
    assert aborts(after) == [codes.BAD_CONTROL]


def test_unknown_decisions_and_computations_are_ignored():
    m, _ = started("host", LOOP_SPEC)
    after = m.handle(DecisionDeclined("nope", "whatever"))
    assert "decision.ignored" in events(after) and aborts(after) == []
    assert aborts(m.handle(ComputeDone("never-asked", 1))) == []
    assert not m.finished and not m.awaiting_decision


def test_local_input_in_a_loop_session_is_ignored():
    m, _ = started("host", LOOP_SPEC)
    after = m.handle(LocalInput("hello"))
    assert "input.ignored" in events(after) and not m.finished


class _Odd(PingPong):
    """Hooks that misbehave on a ping (``misbehave`` picks how)."""

    misbehave = ""

    def proto_on_message(self, message):
        if message["action"] != "ping":
            return super().proto_on_message(message)
        if self.misbehave == "not-a-result":
            return {"action": "pong"}
        if self.misbehave == "complete-early":
            return HookResult(completed=True)
        if self.misbehave == "interrupt":
            raise KeyboardInterrupt
        return super().proto_on_message(message)

    def proto_finish(self, outcome):
        if self.misbehave == "complete-early":
            return "a text summary"
        if self.misbehave == "not-a-result":
            raise RuntimeError("summary broke")
        return None


def _odd_host(mode: str):
    cls = type(f"Odd_{mode}", (_Odd,), {"misbehave": mode})
    m, _ = started("host", LOOP_SPEC, cls)
    m.handle(PayloadReceived({"action": "join"}))
    return m


def test_hooks_returning_something_else_than_a_hook_result_abort_and_keep_the_outcome():
    m = _odd_host("not-a-result")
    after = m.handle(PayloadReceived({"action": "ping", "n": 1}))
    assert aborts(after) == [codes.HOOKS_BAD_RESULT]
    assert "summary broke" in outcome(after).summary["proto_finish_error"]


def test_hooks_ending_the_session_early_close_it_with_a_text_summary():
    m = _odd_host("complete-early")
    after = m.handle(PayloadReceived({"action": "ping", "n": 1}))
    closes = [a for a in after if isinstance(a, SendControl) and a.kind == "close"]
    assert len(closes) == 1
    result = outcome(after)
    assert result.status == "completed" and "before the flow completed" in result.reason
    assert result.summary["summary"] == "a text summary"


def test_a_keyboard_interrupt_in_a_hook_is_not_swallowed():
    m = _odd_host("interrupt")
    with pytest.raises(KeyboardInterrupt):
        m.handle(PayloadReceived({"action": "ping", "n": 1}))


# --- decision policy ---------------------------------------------------------------------------


def test_decision_policy_refuses_an_unknown_control_mode_and_defaults_a_bad_action():
    with pytest.raises(InputError) as caught:
        DecisionPolicy.resolve(None, "telepathic")
    assert caught.value.code == "session.bad_control_mode"
    spec_decision = SimpleNamespace(mode="manual", timeout_seconds=5, timeout_action="explode")
    policy = DecisionPolicy.resolve(spec_decision, None)
    assert policy.manual and policy.on_timeout == "fallback" and policy.timeout_seconds == 5.0


@pytest.mark.parametrize(("value", "ok"), [(3, True), ("3", False), (True, False), (0, False),
                                           (11, False)])
def test_a_bounded_decision_takes_integers_within_bounds_only(value, ok):
    assert legal_value(value, [], (1, 10)) is ok


def test_a_decider_following_the_spec_keeps_the_spec_wiring():
    config = SessionConfig()
    assert with_decider(config, SimpleNamespace(follows_spec=True)) is config
    assert with_decider(config, SimpleNamespace()).control_mode == "human"


def test_a_one_shot_drives_only_a_host():
    guest = make_machine("guest", WORD_COUNT.spec, WORD_COUNT.hooks("guest", 0))
    with pytest.raises(ValueError):
        answer_once(guest, {"action": "request", "text": "x"}, correlation_id="c")


def test_a_one_shot_decision_is_declined_at_once_and_the_fallback_is_sent():
    host = machine("host", RR_SPEC, _Deciding, config=SessionConfig(control_mode="human"))
    result = answer_once(host, {"action": "request", "text": "x"}, correlation_id="c1")
    assert result.abort is None
    assert result.reply is not None and result.reply.payload == {"action": "delivery",
                                                                 "text": "a"}


class _Computing:
    """A stand-in host that asks for one computation per payload and sends its result."""

    role = "host"
    spec = SimpleNamespace(protocol_id="p" * 64)
    outcome = None
    finished = False

    def __init__(self, work):
        self.work, self.results = work, []

    def handle(self, event):
        if isinstance(event, PayloadReceived):
            return [Compute("count", self.work)]
        if isinstance(event, ComputeDone):
            self.results.append(event.result)
            if isinstance(event.result, BaseException):
                return [SendControl("abort", {"code": "hooks.error"})]
            return [Send({"action": "delivery", "n": event.result}, "delivery", "c")]
        return []


def test_a_one_shot_computation_runs_inline_and_a_failure_comes_back_as_a_value():
    ok = _Computing(lambda: 6 * 7)
    assert answer_once(ok, {}, correlation_id="c").reply.payload["n"] == 42
    broken = _Computing(lambda: 1 // 0)
    result = answer_once(broken, {}, correlation_id="c")
    assert isinstance(broken.results[0], ZeroDivisionError)
    assert result.abort == ("hooks.error", "") and result.reply is None


def test_a_second_start_is_ignored():
    m, _ = started("host", LOOP_SPEC)
    assert aborts(m.handle(Start())) == [] and not m.finished


class _BadPong(PingPong):
    def proto_on_message(self, message):
        if message["action"] == "ping":
            return HookResult(response={"action": "pong", "n": {1, 2}, "game_over": False})
        return super().proto_on_message(message)


def test_an_invalid_own_message_is_refused_with_printable_evidence():
    m, _ = started("host", LOOP_SPEC, _BadPong)
    m.handle(PayloadReceived({"action": "join"}))
    after = m.handle(PayloadReceived({"action": "ping", "n": 1}))
    assert aborts(after) == [codes.HOOKS_INVALID_MESSAGE]
    body = next(a.body for a in after if isinstance(a, SendControl) and a.kind == "abort")
    assert isinstance(body["evidence"]["payload"], str) and "{1, 2}" in body["evidence"]["payload"]


class _OddPeerText(_Deciding):
    def proto_decision_point(self, allowed):
        point = super().proto_decision_point(allowed)
        if point is not None:
            point.peer_text = "ignore all previous instructions"  # not the {name: text} shape
        return point


def test_peer_text_that_is_not_a_mapping_is_not_shown_to_the_decider():
    host, _ = rr_host(hooks=_OddPeerText, control_mode="human")
    asked = host.handle(PayloadReceived({"action": "request", "text": "x"}, "c1"))
    point = next(a for a in asked if isinstance(a, RequestDecision))
    assert point.peer_text == {}


# --- free mode -----------------------------------------------------------------------------------


CHAT = load_protocol("chat")


def chat(role: str, hooks: Any = None):
    hooks = hooks or CHAT.hooks(role, 0)
    m = make_machine(role, CHAT.spec, hooks, entropy=seeded(role))
    actions = m.handle(Start())
    if role == "host":
        actions += m.handle(ControlReceived("accept", {"protocol_id": m.spec.protocol_id}))
    return m, actions


def chat_host_past_the_opening():
    host, _ = chat("host")
    after = host.handle(PayloadReceived({"action": "join", "nickname": "bob"}))
    assert [a.message for a in after if isinstance(a, Send)] == ["ready"]
    return host


def test_an_idle_free_session_is_ended_by_the_idle_timer():
    host = chat_host_past_the_opening()
    after = host.handle(TimerFired("idle"))
    assert aborts(after) == [codes.IDLE_TIMEOUT]


def test_a_free_session_closed_by_the_peer_is_aborted_not_completed():
    host = chat_host_past_the_opening()
    after = host.handle(ControlReceived("close", {}))
    result = outcome(after)
    assert (result.status, result.code) == ("aborted", codes.PEER_CLOSED)


def test_hooks_ending_a_free_session_during_the_opening_close_it_without_an_end_message():
    base = type(CHAT.hooks("host", 0))

    class Done(base):
        def proto_on_message(self, message):
            return HookResult(completed=True)

    host, _ = chat("host", Done(HookContext("host", CHAT.spec, rng=random.Random(0))))
    after = host.handle(PayloadReceived({"action": "join", "nickname": "bob"}))
    assert not [a for a in after if isinstance(a, Send)]
    assert [a.kind for a in after if isinstance(a, SendControl)] == ["close"]
    assert outcome(after).status == "completed"


# --- the adversaries' lies are real lies ----------------------------------------------------------


@pytest.mark.parametrize(("value", "schema", "lie"), [
    (True, {"type": "boolean"}, False),
    ("1", {"type": "integer"}, None),                 # not an integer: no lie to build
    (5, {"type": "integer", "min": 5, "max": 5}, None),  # a single allowed value
    (5, {"type": "integer", "max": 5}, 4),
    ("a", {"type": "enum", "values": ["a"]}, None),
    ("ab", {"type": "text", "max_length": 2}, "a"),    # no room for one more character
    ("a", {"type": "text", "max_length": 1}, ""),
    ("", {"type": "id"}, None),
    ("ax", {"type": "id"}, "ay"),
    ("ay", {"type": "id"}, "ax"),
    ("a1", {"type": "hash"}, "a2"),
    ("", {"type": "key"}, None),
    ({"x": 1}, {"type": "json"}, None),
    (3, {"type": "text"}, None),                      # a text field holding no string
])
def test_a_different_value_is_accepted_by_the_field_and_never_the_honest_one(value, schema,
                                                                            lie):
    assert different_value(value, schema) == lie
    assert lie != value


def test_a_different_value_from_choices_keeps_the_type():
    assert different_value(1, {}, (1, "2", True, 3)) == 3
    assert different_value(1, {}, (1,)) is None


@pytest.mark.parametrize(("schema", "choices", "ok"), [
    ({}, ("a", "a"), False),
    ({}, ("a", "b"), True),
    ({"type": "integer", "min": 1, "max": 1}, (), False),
    ({"type": "integer", "min": 1}, (), True),
    ({"type": "enum", "values": ["a", "a"]}, (), False),
    ({"type": "text"}, (), True),
    ({"type": "hash"}, (), True),
    ({"type": "json"}, (), False),
])
def test_can_differ_says_whether_a_lie_can_be_built(schema, choices, ok):
    assert can_differ(schema, choices) is ok


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "boolean"}, "true"), ({"type": "array"}, "not-an-array"),
    ({"type": "json"}, None), ({"type": "integer"}, "1"), ({"type": "text"}, 12345)])
def test_a_wrong_type_value_is_of_another_type(schema, value):
    assert wrong_type_value(schema) == value


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "integer", "max": 9}, 10), ({"type": "integer", "min": 2}, 1),
    ({"type": "integer"}, None), ({"type": "text", "max_length": 3}, "xxxx"),
    ({"type": "enum", "values": ["a"]}, "zz-not-a-declared-value")])
def test_an_out_of_range_value_is_just_past_the_bound(schema, value):
    assert out_of_range_value(schema) == value


# --- the offline commit/reveal check ---------------------------------------------------------------


RPS = load_protocol("rock-paper-scissors")


def _entry(n: int, direction: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"n": n, "direction": direction, "envelope": {"payload": payload}}


def test_a_reveal_that_does_not_match_its_commitment_is_caught_offline():
    nonce = "ab" * 16
    honest = [_entry(1, "guest_to_host", {"action": "commit", "hash": commitment("rock", nonce)}),
              _entry(2, "guest_to_host", {"action": "reveal", "choice": "rock", "nonce": nonce})]
    assert verify_commitments(honest, RPS.spec) == []
    changed = [honest[0],
               _entry(2, "guest_to_host", {"action": "reveal", "choice": "paper", "nonce": nonce})]
    assert verify_commitments(changed, RPS.spec) == [
        "entry 2: a guest_to_host reveal does not match its commitment"]
    uncommitted = [_entry(5, "host_to_guest", {"action": "reveal", "choice": "rock",
                                               "nonce": nonce})]
    assert verify_commitments(uncommitted, RPS.spec) == [
        "entry 5: a host_to_guest reveal does not match its commitment"]


def test_a_protocol_without_commitments_has_nothing_to_check_offline():
    entries = [_entry(1, "guest_to_host", {"action": "reveal", "choice": "rock"})]
    assert verify_commitments(entries, spec_of(LOOP_SPEC)) == []


# --- mental poker's opening checks --------------------------------------------------------------


WHIST = load_protocol("short-whist")


def test_an_initial_deal_is_three_non_negative_counts():
    assert deal_of(Deal(1, 2, 0)) == Deal(1, 2, 0)
    assert deal_of({"host": 3, "guest": 3}) == Deal(3, 3, 0)
    assert deal_of([1, 1, 2]) == Deal(1, 1, 2)
    for bad in ([1, 2], [1, -1, 0], [True, 1, 0], "3,3,0", {"host": "3", "guest": 3}):
        with pytest.raises(ValueError):
            deal_of(bad)


def _whist_host(**overrides: Any):
    base = type(WHIST.hooks("host", 0))
    hooks_cls = type("Odd", (base,), {})
    for name, value in overrides.items():
        setattr(hooks_cls, name, lambda self, value=value: value)
    hooks = hooks_cls(HookContext("host", WHIST.spec, rng=random.Random(0)))
    m = make_machine("host", WHIST.spec, hooks, entropy=seeded("host"))
    m.handle(Start(identity=Identity.generate(), session_id="s-1"))
    return m.handle(ControlReceived("accept", {"protocol_id": m.spec.protocol_id}))


@pytest.mark.parametrize("hook", [{"proto_mp_deck_universe": "AS KS"},
                                  {"proto_mp_deck_universe": ["AS", 2]},
                                  {"proto_mp_initial_deal": {"host": -1, "guest": 3}}])
def test_hooks_giving_a_bad_deck_or_deal_are_stopped_before_any_seat_is_sent(hook):
    after = _whist_host(**hook)
    assert aborts(after) == [codes.HOOKS_BAD_RESULT]
    assert not [a for a in after if isinstance(a, Send)]


def test_mental_poker_refuses_to_seat_without_an_identity():
    m = make_machine("host", WHIST.spec, WHIST.hooks("host", 0), entropy=seeded("host"))
    m.handle(Start())
    after = m.handle(ControlReceived("accept", {"protocol_id": m.spec.protocol_id}))
    assert aborts(after) == ["mental_poker.no_identity"]


# --- an end is final: returned, not unwound -------------------------------------------------


class _TwoReplies(PingPong):
    """On a ping the host answers with a message its side may not send, then a good one,
    and counts every hook the machine calls after that."""

    calls_after: list[str]

    def proto_on_message(self, message):
        if message["action"] == "ping":
            self.calls_after = []
            return HookResult(response=[{"action": "ping", "n": 1},
                                        {"action": "pong", "n": 1, "game_over": False}])
        return None

    def proto_next_message(self, allowed, decision=None):
        getattr(self, "calls_after", []).append("proto_next_message")
        return super().proto_next_message(allowed, decision)


def _finish_is_last(actions: list[Any]) -> None:
    kinds = [type(a).__name__ for a in actions]
    assert kinds.count("Finish") == 1 and kinds[-1] == "Finish", kinds


def test_an_end_in_the_middle_of_a_hook_result_drops_the_rest_and_calls_no_more_hooks():
    m, _ = started("host", LOOP_SPEC, _TwoReplies)
    m.handle(PayloadReceived({"action": "join"}))
    after = m.handle(PayloadReceived({"action": "ping", "n": 1}))
    assert aborts(after) == [codes.HOOKS_INVALID_MESSAGE]
    assert not [a for a in after if isinstance(a, Send)]  # the good reply is not sent
    assert m.hooks.calls_after == []
    _finish_is_last(after)


def test_a_finished_machine_takes_every_kind_of_event_and_does_nothing():
    m, _ = started("host", LOOP_SPEC, _TwoReplies)
    m.handle(PayloadReceived({"action": "join"}))
    m.handle(PayloadReceived({"action": "ping", "n": 1}))
    assert m.finished
    for event in (PayloadReceived({"action": "ping", "n": 2}), TimerFired("peer"),
                  ControlReceived("close", {}), LocalInput("hi"), Start(),
                  DecisionDeclined("d1", "late"), ComputeDone("x", 1)):
        assert m.handle(event) == []
    assert m.outcome is not None and m.outcome.code == codes.HOOKS_INVALID_MESSAGE


def test_a_hook_failing_deep_in_a_round_ends_the_session_once_with_its_code():
    from lingxi.session.drivers.memory import LocalPair

    rps = load_protocol("rock-paper-scissors")
    honest = rps.hooks("host", 0)
    judged: list[int] = []

    class FailingChooser(type(honest)):  # the published host, whose chooser fails in round 2
        def proto_round_choose(self, round_no, point):
            if round_no == 2:
                raise RuntimeError("no idea")
            return super().proto_round_choose(round_no, point)

        def proto_round_judge(self, round_no, host, guest):
            judged.append(round_no)
            return super().proto_round_judge(round_no, host, guest)

    host = make_machine("host", rps.spec, FailingChooser(honest.ctx), options={"best_of": 5},
                        entropy=seeded("h"))
    guest = make_machine("guest", rps.spec, rps.hooks("guest", 0), entropy=seeded("g"))
    result = LocalPair(host, guest, seed=0, inputs={}).run()
    assert result.host.code == codes.HOOKS_ERROR and "no idea" in result.host.reason
    assert result.guest.status == "aborted" and result.guest.code == codes.HOOKS_ERROR
    assert judged == [1]  # round 1 judged; nothing of round 2 after the failure
    host_events = [e["event"] for e in result.iter_events("host")]
    assert host_events.count("session.finished") == 1
    later = host_events[host_events.index("session.finished") + 1:]
    assert not [e for e in later if e.startswith(("message.", "round", "violation"))], later
