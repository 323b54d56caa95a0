"""simultaneous_round commit-reveal checks, shadow judge, and decision modes."""

from __future__ import annotations

import hashlib
import random

import pytest
from session_helpers import abort_of, events_named, machine, msg, of_type

from lingxi.contract.commit_reveal import CommitReveal, commitment, matches
from lingxi.hooks import DecisionPoint, HookResult, Hooks
from lingxi.session.core.decisions import DecisionPolicy
from lingxi.session.core.events import (
    ControlReceived,
    DecisionMade,
    Finish,
    PayloadReceived,
    RequestDecision,
    Send,
    SetTimer,
    Start,
    TimerFired,
)
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.shadow import diff_judged
from lingxi.session.drivers.memory import LocalPair
from lingxi.session.runner import load_protocol, run_pair

# A bidding game whose reveal field is free text, so only the engine's choices
# check (not message validation) stands between a cheater and an illegal bid.
BID = {
    "name": "Bid", "spec_version": "1.0",
    "messages": [
        msg("commit", "both", round={"type": "integer", "min": 1, "required": True},
            hash={"type": "hash", "required": True}),
        msg("reveal", "both", round={"type": "integer", "min": 1, "required": True},
            bid={"type": "text", "max_length": 8, "required": True},
            nonce={"type": "nonce", "required": True}),
        msg("result", "host_to_guest", round={"type": "integer", "min": 1, "required": True},
            host_bid={"type": "text", "required": True},
            guest_bid={"type": "text", "required": True},
            game_over={"type": "boolean", "required": True}),
    ],
    "flow": {"mode": "simultaneous_round",
             "round": {"value_field": "bid", "value_type_ref": "reveal.fields.bid"},
             "phases": [{"phase": "round", "repeat": "rounds", "exchange": [
                 {"message": "commit", "direction": "host_to_guest"},
                 {"message": "commit", "direction": "guest_to_host"},
                 {"message": "reveal", "direction": "host_to_guest"},
                 {"message": "reveal", "direction": "guest_to_host"},
                 {"message": "result", "direction": "host_to_guest"}]}]},
    "choices": ["low", "high"],
    "commit_reveal": {"algorithm": "SHA256", "nonce_length": 24, "nonce_charset": "hex"},
    "rules": {"x": "y"},
    "parameters": {"rounds": {"type": "integer", "min": 1, "max": 9, "default": 2}},
    "decision": {"mode": "manual", "timeout_seconds": 5, "timeout_action": "fallback"},
}


class Bidder(Hooks):
    def proto_next_message(self, allowed, decision=None):
        return HookResult()

    def proto_on_message(self, message):
        return None

    def proto_round_choose(self, round_no, point):
        return "high" if self.ctx.role == "host" else "low"

    def proto_round_judge(self, round_no, host_value, guest_value):
        return {"action": "result", "host_bid": host_value, "guest_bid": guest_value,
                "game_over": False}


def test_commitment_is_sha256_of_value_colon_nonce() -> None:
    nonce = "0123456789abcdef"
    assert commitment("rock", nonce) == hashlib.sha256(b"rock:0123456789abcdef").hexdigest()
    assert matches("rock", nonce, commitment("rock", nonce))
    assert not matches("paper", nonce, commitment("rock", nonce))
    rules = CommitReveal.from_block({"nonce_length": 24, "nonce_charset": "hex (0-9a-f)"})
    made = rules.make_nonce(random.Random(1).randbytes)
    assert len(made) == 24 and rules.nonce_ok(made) and set(made) <= set("0123456789abcdef")
    assert not rules.nonce_ok(made[:-1]) and not rules.nonce_ok(made[:-1] + "G")


def _autonomous(role, **kw):
    return machine(role, BID, Bidder, config=SessionConfig(control_mode="autonomous"), **kw)


def test_bid_rounds_complete_with_engine_commit_reveal() -> None:
    result = LocalPair(_autonomous("host"), _autonomous("guest")).run()
    assert result.host.status == result.guest.status == "completed"
    assert result.host.rounds == 2 and result.receipts_verified
    rounds = [e for e in result.events["guest"] if e["event"] == "round"]
    assert [(r["host"], r["guest"]) for r in rounds] == [("high", "low"), ("high", "low")]


def _guest_at_reveal(nonce_len=24):
    """A guest that received the host's commit for round 1 and committed itself."""
    guest = _autonomous("guest")
    guest.handle(Start())
    guest.handle(ControlReceived("offer", {"protocol_id": guest.spec.protocol_id,
                                           "options": {}}))
    nonce = "ab" * (nonce_len // 2)
    guest.handle(PayloadReceived({"action": "commit", "round": 1,
                                  "hash": commitment("evil", nonce)}))
    return guest, nonce


def test_value_outside_choices_is_caught_by_the_engine() -> None:
    guest, nonce = _guest_at_reveal()
    actions = guest.handle(PayloadReceived({"action": "reveal", "round": 1, "bid": "evil",
                                            "nonce": nonce}))
    assert abort_of(actions)["code"] == "session.value_not_in_choices"


def test_commit_mismatch_has_evidence_and_event() -> None:
    guest, nonce = _guest_at_reveal()
    actions = guest.handle(PayloadReceived({"action": "reveal", "round": 1, "bid": "low",
                                            "nonce": nonce}))
    abort = abort_of(actions)
    assert abort["code"] == "session.commit_mismatch"
    assert abort["evidence"]["recomputed"] == commitment("low", nonce)
    assert events_named(actions, "commit_mismatch_detected")


def test_nonce_and_round_checks() -> None:
    guest, _ = _guest_at_reveal()
    actions = guest.handle(PayloadReceived({"action": "reveal", "round": 1, "bid": "low",
                                            "nonce": "ab" * 8}))
    assert abort_of(actions)["code"] == "session.bad_nonce"
    guest = _autonomous("guest")
    guest.handle(Start())
    guest.handle(ControlReceived("offer", {"protocol_id": guest.spec.protocol_id,
                                           "options": {}}))
    actions = guest.handle(PayloadReceived({"action": "commit", "round": 2, "hash": "0" * 64}))
    assert abort_of(actions)["code"] == "session.wrong_round"


def test_shadow_judge_on_a_full_message_compares_the_seed_fields_only() -> None:
    host = {"action": "round_result", "host_hp": 5, "guest_hp": 3, "host_move": "ult",
            "round_winner": "host", "guest_cd_ult": 2}
    same = dict(host, host_move="strike")  # moves are not the judge's output
    assert diff_judged(host, same) == {}
    assert diff_judged(host, {**host, "guest_cd_ult": 1}) == {
        "guest_cd_ult": {"host": 2, "recomputed": 1}}


def test_shadow_judge_on_a_partial_result_compares_every_field_it_returns() -> None:
    host = {"action": "settle", "round": 2, "winning_bid": 40, "host_budget": 60, "note": "x"}
    judged = {"winning_bid": 40, "host_budget": 60}
    assert diff_judged(host, judged) == {}
    assert diff_judged({**host, "host_budget": 61}, judged) == {
        "host_budget": {"host": 61, "recomputed": 60}}


def test_shadow_judge_catches_a_lying_host_but_not_an_honest_one() -> None:
    protocol = load_protocol("hero-duel")
    assert run_pair(protocol, seed=5).guest.status == "completed"
    from lingxi.session.core.adversaries import MutateNth

    def lie(payload):
        payload["guest_mana"] = max(0, payload["guest_mana"] - 1)
        return payload

    result = run_pair(protocol, seed=5, adversary=("host", MutateNth("round_result", lie, 2)))
    assert result.guest.code == "session.balance_mismatch" and result.guest.by == "local"
    assert result.host.by == "peer"  # the liar is told why
    assert any(e["event"] == "balance_mismatch_detected" for e in result.events["guest"])


# ---------------------------------------------------------------- decisions


def test_policy_resolution_never_reads_the_hash() -> None:
    class D:
        mode, timeout_seconds, timeout_action = "manual", 9, "abort"

    assert DecisionPolicy.resolve(D, None) == DecisionPolicy(True, 9.0, "abort", False)
    assert DecisionPolicy.resolve(D, "autonomous").manual is False
    assert DecisionPolicy.resolve(D, "hybrid") == DecisionPolicy(True, 9.0, "fallback", True)

    class A:
        mode, timeout_seconds, timeout_action = "auto", None, "fallback"

    assert DecisionPolicy.resolve(A, "human").manual is True


def _manual_guest(spec=BID, config=None):
    """A guest whose round value is asked at the start of the round, on the offer: before
    the host's commitment arrives (both sides choose at once)."""
    guest = machine("guest", spec, Bidder, config=config)
    guest.handle(Start())
    actions = guest.handle(ControlReceived("offer", {"protocol_id": guest.spec.protocol_id,
                                                     "options": {}}))
    return guest, actions


HOST_COMMIT = PayloadReceived({"action": "commit", "round": 1, "hash": "0" * 64})


def test_manual_decision_asks_with_projection_and_uses_the_answer() -> None:
    guest, actions = _manual_guest()
    request = of_type(actions, RequestDecision)[0]
    assert request.legal == ["low", "high"] and request.view == {"round": 1}
    assert SetTimer("decision", 5.0) in actions
    assert not of_type(actions, Send)  # nothing committed before the decider answers
    rejected = guest.handle(DecisionMade(request.point_id, "medium"))
    assert events_named(rejected, "decision.rejected") and not of_type(rejected, Send)
    decided = guest.handle(DecisionMade(request.point_id, "high"))
    assert not of_type(decided, Send)  # the guest commits after the host, as the flow says
    actions = guest.handle(HOST_COMMIT)
    commit = of_type(actions, Send)[0].payload
    assert commit["action"] == "commit" and guest.my_secret[1][0] == "high"


def test_decision_timeout_fallback_and_abort() -> None:
    guest, _ = _manual_guest()
    guest.handle(HOST_COMMIT)
    actions = guest.handle(TimerFired("decision"))
    assert events_named(actions, "decision.timeout_fallback")[0]["value"] == "low"
    assert of_type(actions, Send)[0].payload["action"] == "commit"
    aborting = {**BID, "decision": {"mode": "manual", "timeout_seconds": 5,
                                    "timeout_action": "abort"}}
    guest, _ = _manual_guest(aborting)
    guest.handle(HOST_COMMIT)
    actions = guest.handle(TimerFired("decision"))
    assert abort_of(actions)["code"] == "decision.timeout"


def test_hybrid_shows_the_suggestion_and_falls_back_to_it() -> None:
    _, actions = _manual_guest(config=SessionConfig(control_mode="hybrid"))
    assert of_type(actions, RequestDecision)[0].view["suggested"] == "low"


def test_decider_callback_plays_a_whole_game_and_sees_no_peer_payload() -> None:
    seen = []

    def decider(request):
        seen.append(request)
        return (request.bounds[0] + request.bounds[1]) // 2

    protocol = load_protocol("guess-number")
    result = run_pair(protocol, seed=2, config=SessionConfig(control_mode="human"),
                      deciders={"guest": decider})
    assert result.guest.status == "completed" and seen
    for request in seen:
        assert set(request.view) == {"low", "high", "attempts_left"}
        assert "action" not in request.view


class Chooser(Hooks):
    def proto_next_message(self, allowed, decision=None):
        return HookResult(response={"action": "pick", "value": decision})

    def proto_on_message(self, message):
        return None

    def proto_decision_point(self, allowed):
        return DecisionPoint(bounds=(1, 3), default=2, view={"hint": "pick 1..3"})


def test_no_answer_from_a_human_ends_by_the_spec_timeout_action() -> None:
    raw = {"name": "Pick", "spec_version": "1.0",
           "messages": [msg("pick", "guest_to_host",
                            value={"type": "integer", "min": 1, "max": 3, "required": True})],
           "flow": {"phases": [{"phase": "p", "exchange": [{"message": "pick"}]}]},
           "rules": {"a": "b"},
           "decision": {"mode": "manual", "timeout_seconds": 4, "timeout_action": "abort"}}
    result = LocalPair(machine("host", raw, Chooser), machine("guest", raw, Chooser)).run()
    assert result.guest.code == "decision.timeout" and result.host.by == "peer"
    assert result.elapsed == pytest.approx(4.0, abs=0.01)
    result = LocalPair(machine("host", raw, Chooser), machine("guest", raw, Chooser),
                       deciders={"guest": lambda r: 3}).run()
    assert result.host.status == "completed"
    assert [e["payload"] for e in result.events["host"] if e["event"] == "message.received"] \
        == [{"action": "pick", "value": 3}]


def test_finish_action_is_last() -> None:
    result = LocalPair(_autonomous("host"), _autonomous("guest")).run()
    assert result.host.ok
    host = _autonomous("host")
    actions = host.handle(Start())
    assert not of_type(actions, Finish)


def test_without_a_pure_judge_the_guest_degrades_visibly() -> None:
    protocol = load_protocol("hero-duel")

    class NoPure(protocol.hooks_class):
        proto_round_judge_pure = None  # hide the pure judge

    from lingxi.protocols.catalogue import LoadedProtocol
    from lingxi.session.core.adversaries import MutateNth

    def lie(payload):
        payload["guest_mana"] = max(0, payload["guest_mana"] - 1)
        return payload

    weak = LoadedProtocol(protocol.folder, protocol.spec, NoPure)
    result = run_pair(weak, seed=5, adversary=("host", MutateNth("round_result", lie, 2)))
    events = [e["event"] for e in result.events["guest"]]
    assert "shadow_judge.unavailable" in events
    assert result.guest.status == "completed"  # degraded, not blocked (the seed's rule)
