"""session_loop machine, driven event by event (no driver, no I/O)."""

from __future__ import annotations

import pytest
from session_helpers import (
    LOOP_SPEC,
    PingPong,
    abort_of,
    events_named,
    machine,
    of_type,
    started,
)

from lingxi.contract import OptionsError
from lingxi.hooks import HookResult
from lingxi.session.core.events import (
    CancelTimer,
    ControlReceived,
    EnvelopeRejected,
    Finish,
    PayloadReceived,
    PeerAborted,
    Send,
    SendControl,
    SetTimer,
    Start,
    TimerFired,
)
from lingxi.session.core.machine import SessionConfig


def test_host_offers_options_then_answers_in_phase() -> None:
    host = machine("host", LOOP_SPEC, options={"rounds": 2})
    actions = host.handle(Start())
    offer = of_type(actions, SendControl)[0]
    assert offer.kind == "offer" and offer.body["options"] == {"rounds": 2}
    assert offer.body["protocol_id"] == host.spec.protocol_id
    assert of_type(actions, SetTimer)  # waiting for accept is bounded too
    host.handle(ControlReceived("accept", {"protocol_id": host.spec.protocol_id}))
    host.handle(PayloadReceived({"action": "join"}))
    actions = host.handle(PayloadReceived({"action": "ping", "n": 1}))
    assert [a.payload for a in of_type(actions, Send)] == [
        {"action": "pong", "n": 1, "game_over": False}]
    actions = host.handle(PayloadReceived({"action": "ping", "n": 2}))
    assert of_type(actions, Send)[0].payload["game_over"] is True
    finish = of_type(actions, Finish)[0].outcome
    assert finish.status == "completed" and finish.rounds == 2


def test_guest_plays_until_game_over() -> None:
    guest, actions = started("guest", LOOP_SPEC)
    assert [a.payload for a in of_type(actions, Send)] == [{"action": "join"},
                                                          {"action": "ping", "n": 1}]
    for n in (1, 2):
        actions = guest.handle(PayloadReceived({"action": "pong", "n": n, "game_over": False}))
        assert of_type(actions, Send)[0].payload == {"action": "ping", "n": n + 1}
    actions = guest.handle(PayloadReceived({"action": "pong", "n": 3, "game_over": True}))
    assert not of_type(actions, Send)
    assert of_type(actions, Finish)[0].outcome.status == "completed"


def test_invalid_host_options_are_a_usage_error() -> None:
    with pytest.raises(OptionsError):
        machine("host", LOOP_SPEC, options={"rounds": 500})


@pytest.mark.parametrize("payload,code", [
    ({"action": "ping", "n": 1, "extra": True}, "message.unknown_field"),
    ({"action": "ping"}, "message.missing_field"),
    ({"action": "ping", "n": "1"}, "message.wrong_type"),
    ({"action": "ping", "n": 100}, "message.out_of_range"),
    ({"action": "fly"}, "message.unknown_action"),
    ({"action": "pong", "n": 1, "game_over": False}, "message.wrong_direction"),
    ("not an object", "message.not_object"),
    ({"action": "join"}, "session.out_of_phase"),
])
def test_every_bad_peer_message_aborts_with_code_and_evidence(payload, code) -> None:
    host, _ = started("host", LOOP_SPEC)
    host.handle(PayloadReceived({"action": "join"}))
    actions = host.handle(PayloadReceived(payload))
    abort = abort_of(actions)
    assert abort is not None and abort["code"].startswith(code.split(".")[0])
    if code != "message.wrong_direction":  # the contract may name it unknown_action
        assert abort["code"] == code
    assert abort["evidence"]["payload"] == payload
    assert events_named(actions, "violation")[0]["code"] == abort["code"]
    outcome = of_type(actions, Finish)[0].outcome
    assert outcome.status == "aborted" and outcome.by == "local"
    assert not of_type(actions, Send)  # no hook ever saw it, nothing answered
    assert host.handle(PayloadReceived({"action": "ping", "n": 1})) == []  # finished is final


def test_out_of_band_error_reaches_hooks_and_end_finishes() -> None:
    seen = []

    class Recording(PingPong):
        def proto_on_message(self, message):
            seen.append(message)
            return super().proto_on_message(message)

    guest, _ = started("guest", LOOP_SPEC, Recording)
    guest.handle(PayloadReceived({"action": "error", "reason": "oops"}))
    assert seen == [{"action": "error", "reason": "oops"}] and not guest.finished
    actions = guest.handle(PayloadReceived({"action": "end"}))
    assert of_type(actions, Finish)[0].outcome.status == "completed"


def test_silence_times_out_with_abort() -> None:
    host, actions = started("host", LOOP_SPEC, config=SessionConfig(peer_timeout=7))
    timer = of_type(actions, SetTimer)[-1]
    assert timer.name == "peer" and timer.seconds == 7
    actions = host.handle(TimerFired("peer"))
    assert abort_of(actions)["code"] == "session.timeout"
    assert of_type(actions, Finish)[0].outcome.code == "session.timeout"
    assert CancelTimer("peer") in actions


def test_timer_is_cancelled_when_it_is_our_turn() -> None:
    host, _ = started("host", LOOP_SPEC)

    class Slow(PingPong):
        def proto_on_message(self, message):
            return None  # answers later via proto_next_message

        def proto_next_message(self, allowed, decision=None):
            return HookResult(response={"action": "pong", "n": 1, "game_over": True})

    host2, _ = started("host", LOOP_SPEC, Slow)
    actions = host2.handle(PayloadReceived({"action": "join"}))
    assert of_type(actions, SetTimer)  # still waiting for the ping
    actions = host2.handle(PayloadReceived({"action": "ping", "n": 1}))
    assert of_type(actions, Send)[0].payload["game_over"] is True


def test_wire_rejection_and_peer_abort() -> None:
    host, _ = started("host", LOOP_SPEC)
    actions = host.handle(EnvelopeRejected("envelope.replay", "seen before", {"id": "x"}))
    assert abort_of(actions)["code"] == "envelope.replay"
    guest, _ = started("guest", LOOP_SPEC)
    actions = guest.handle(PeerAborted("session.commit_mismatch", "cheat", {}))
    outcome = of_type(actions, Finish)[0].outcome
    assert (outcome.status, outcome.by, outcome.code) == ("aborted", "peer",
                                                         "session.commit_mismatch")
    assert abort_of(actions) is None  # never answer an abort with an abort


class Broken(PingPong):
    def proto_on_message(self, message):
        raise KeyError("boom")


class Invalid(PingPong):
    def proto_on_message(self, message):
        return HookResult(response={"action": "pong", "n": 0, "game_over": False})


class WrongTurn(PingPong):
    def proto_on_message(self, message):  # answers the join with a pong: not its turn
        return HookResult(response={"action": "pong", "n": 1, "game_over": False})


class Mute(PingPong):
    def proto_on_message(self, message):
        return None

    def proto_next_message(self, allowed, decision=None):
        return HookResult()


class Quitter(PingPong):
    def proto_on_message(self, message):
        return HookResult(abort="I give up")


@pytest.mark.parametrize("cls,code", [
    (Broken, "hooks.error"), (Invalid, "hooks.invalid_message"),
    (WrongTurn, "hooks.out_of_phase"), (Mute, "hooks.no_response"), (Quitter, "hooks.abort"),
])
def test_local_hook_faults_abort_and_tell_the_peer(cls, code) -> None:
    host, _ = started("host", LOOP_SPEC, cls)
    actions = host.handle(PayloadReceived({"action": "join"}))
    actions += host.handle(PayloadReceived({"action": "ping", "n": 1}))
    abort = abort_of(actions)
    assert abort is not None and abort["code"] == code
    assert all(a.payload.get("n") != 0 for a in of_type(actions, Send))  # invalid never sent


def test_guest_refuses_other_protocol_and_bad_options() -> None:
    guest = machine("guest", LOOP_SPEC)
    guest.handle(Start())
    actions = guest.handle(ControlReceived("offer", {"protocol_id": "f" * 64, "options": {}}))
    assert abort_of(actions)["code"] == "session.protocol_mismatch"
    guest = machine("guest", LOOP_SPEC)
    guest.handle(Start())
    actions = guest.handle(ControlReceived("offer", {"protocol_id": guest.spec.protocol_id,
                                                     "options": {"rounds": "many"}}))
    abort = abort_of(actions)
    assert abort["code"] == "session.bad_options"
    assert abort["evidence"]["findings"]


def test_message_before_start_and_stray_control() -> None:
    guest = machine("guest", LOOP_SPEC)
    guest.handle(Start())
    assert abort_of(guest.handle(PayloadReceived({"action": "pong", "n": 1,
                                                  "game_over": False})))["code"] == \
        "session.out_of_phase"
    host, _ = started("host", LOOP_SPEC)
    assert abort_of(host.handle(ControlReceived("offer", {})))["code"] == "session.bad_control"


def test_open_boundary_lets_hooks_choose_next_phase() -> None:
    """`until game_over` without a game_over field: the hooks end the loop by what they send."""
    raw = {**LOOP_SPEC, "messages": [m for m in LOOP_SPEC["messages"] if m["name"] != "pong"] + [
        {"name": "pong", "direction": "host_to_guest", "fields": {
            "action": {"type": "enum", "values": ["pong"], "required": True},
            "n": {"type": "integer", "required": True}}},
        {"name": "bye", "direction": "host_to_guest", "fields": {
            "action": {"type": "enum", "values": ["bye"], "required": True}}}]}
    raw["flow"] = {"phases": [*LOOP_SPEC["flow"]["phases"],
                              {"phase": "end", "exchange": [{"message": "bye",
                                                             "direction": "host_to_guest"}]}]}

    class Host(PingPong):
        def proto_on_message(self, message):
            if message["action"] == "ping":
                self.state["last"] = message["n"]
                return HookResult(response={"action": "pong", "n": message["n"]})
            return None

        def proto_next_message(self, allowed, decision=None):
            if "bye" in allowed and self.state.get("last") == 2:
                return HookResult(response={"action": "bye"})
            return HookResult()

    class Guest(PingPong):
        def proto_on_message(self, message):
            return None

        def proto_next_message(self, allowed, decision=None):
            if "ping" in allowed and self.state.get("n", 0) >= 2:
                return HookResult()  # wait for the host's bye
            return super().proto_next_message(allowed, decision)

    from lingxi.session.drivers.memory import LocalPair
    result = LocalPair(machine("host", raw, Host), machine("guest", raw, Guest)).run()
    assert result.host.status == result.guest.status == "completed"
    assert result.host.rounds == 2 and result.receipts_verified
