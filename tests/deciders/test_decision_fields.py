"""A decision reaches the decider as the protocol wrote it: in simultaneous rounds the
hooks' DecisionPoint message, default and bounds are honoured (not replaced by the commit
message's name, the hooks' random choice and "any value"), both sides are asked at once,
and the decider sees the history a player would need."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from lingxi.contract import load_spec
from lingxi.hooks import DecisionPoint, HookResult, Hooks
from lingxi.protocols.catalogue import LoadedProtocol
from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.runner import load_protocol, run_pair

HANG_GUARD = 30  # seconds; only stops a broken run from hanging the suite


def _msg(name: str, direction: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "direction": direction, "fields": {
        "action": {"type": "enum", "values": [name], "required": True}, **fields}}


# A sealed-bid auction: integer bids 1..1000, no `choices`, decisions by hand.
AUCTION = {
    "name": "Sealed Bids", "spec_version": "1.0",
    "messages": [
        _msg("commit", "both", round={"type": "integer", "min": 1, "required": True},
             hash={"type": "hash", "required": True}),
        _msg("reveal", "both", round={"type": "integer", "min": 1, "required": True},
             bid={"type": "integer", "min": 1, "max": 1000, "required": True},
             nonce={"type": "nonce", "required": True}),
        _msg("result", "host_to_guest", round={"type": "integer", "min": 1, "required": True},
             winner={"type": "enum", "values": ["host", "guest", "tie"], "required": True},
             game_over={"type": "boolean", "required": True}),
    ],
    "flow": {"mode": "simultaneous_round",
             "round": {"value_field": "bid", "value_type_ref": "reveal.fields.bid"},
             "phases": [{"phase": "lots", "repeat": "lots", "exchange": [
                 {"message": "commit", "direction": "host_to_guest"},
                 {"message": "commit", "direction": "guest_to_host"},
                 {"message": "reveal", "direction": "host_to_guest"},
                 {"message": "reveal", "direction": "guest_to_host"},
                 {"message": "result", "direction": "host_to_guest"}]}]},
    "commit_reveal": {"algorithm": "SHA256", "nonce_length": 16, "nonce_charset": "hex"},
    "rules": {"auction": "the higher bid wins the lot"},
    "parameters": {"lots": {"type": "integer", "min": 1, "max": 9, "default": 2}},
    "decision": {"mode": "manual", "timeout_seconds": 3, "timeout_action": "fallback"},
}
PROMPT = "your sealed bid for lot {}"


class Bidder(Hooks):
    def proto_next_message(self, allowed, decision=None):
        return HookResult()

    def proto_on_message(self, message):
        return None

    def proto_round_point(self, round_no):
        return DecisionPoint(message=PROMPT.format(round_no), default=100, bounds=(1, 1000),
                             view={"lot": round_no})

    def proto_round_choose(self, round_no, point):
        return self.ctx.rng.randint(500, 999)  # never the default: a fallback must say 100

    def proto_round_judge(self, round_no, host_value, guest_value):
        winner = "tie" if host_value == guest_value else (
            "host" if host_value > guest_value else "guest")
        return {"action": "result", "winner": winner,
                "game_over": round_no >= self.ctx.options["lots"]}


def _auction(tmp_path: Path) -> LoadedProtocol:
    return LoadedProtocol(tmp_path, load_spec(AUCTION), Bidder)


def _events(result: Any, role: str, name: str) -> list[dict[str, Any]]:
    return [e for e in result.events[role] if e["event"] == name]


def test_the_hooks_message_and_bounds_reach_the_decider_and_the_event(tmp_path) -> None:
    seen: dict[str, list[Any]] = {"host": [], "guest": []}

    def decider_for(role: str):
        def decide(request):
            seen[role].append(request)
            return 300 if role == "host" else 700
        return decide

    result = run_pair(_auction(tmp_path), seed=1, deciders={
        role: decider_for(role) for role in ("host", "guest")})
    assert result.host.status == "completed", result.host
    for role in ("host", "guest"):
        assert [r.message for r in seen[role]] == [PROMPT.format(1), PROMPT.format(2)]
        assert all(r.bounds == (1, 1000) and r.legal == [] for r in seen[role])
        requested = _events(result, role, "decision.requested")
        assert [(e["message"], e["bounds"]) for e in requested] == [
            (PROMPT.format(n), [1, 1000]) for n in (1, 2)]
    bids = [(e["host"], e["guest"]) for e in _events(result, "host", "round")]
    assert bids == [(300, 700), (300, 700)]


def test_a_bid_outside_the_bounds_is_refused_and_the_point_stays_open(tmp_path) -> None:
    answers = iter([1001, 0])
    result = run_pair(_auction(tmp_path), seed=1, deciders={"host": lambda r: next(answers)})
    assert result.host.status == "completed"
    rejected = _events(result, "host", "decision.rejected")
    assert [e["value"] for e in rejected] == [1001, 0]
    # nothing legal came before the timer: the hooks' default was played
    assert [e["host"] for e in _events(result, "host", "round")] == [100, 100]


def test_the_timeout_fallback_is_the_hooks_default(tmp_path) -> None:
    result = run_pair(_auction(tmp_path), seed=1, deciders={
        "host": lambda request: None, "guest": lambda request: None})
    assert result.host.status == "completed"
    for role in ("host", "guest"):
        fallbacks = _events(result, role, "decision.timeout_fallback")
        assert [e["value"] for e in fallbacks] == [100, 100]
    assert [(e["host"], e["guest"]) for e in _events(result, "host", "round")] == [
        (100, 100), (100, 100)]


def test_the_hybrid_suggestion_is_the_hooks_default(tmp_path) -> None:
    seen = []
    result = run_pair(_auction(tmp_path), seed=1,
                      config=SessionConfig(control_mode="hybrid"),
                      deciders={"guest": lambda r: seen.append(r.view["suggested"])})
    assert result.host.status == "completed" and seen == [100, 100]


def test_without_a_default_the_fallback_is_the_hooks_own_choice(tmp_path) -> None:
    class NoDefault(Bidder):
        def proto_round_point(self, round_no):
            return DecisionPoint(bounds=(1, 1000), view={"lot": round_no})

    protocol = LoadedProtocol(tmp_path, load_spec(AUCTION), NoDefault)
    result = run_pair(protocol, seed=1, deciders={"host": lambda request: None})
    fallbacks = [e["value"] for e in _events(result, "host", "decision.timeout_fallback")]
    expected = random.Random("lingxi-hooks-1-host")
    assert fallbacks == [expected.randint(500, 999) for _ in range(2)]


async def test_both_sides_of_a_round_are_asked_at_once(tmp_path) -> None:
    """Neither side waits out the other's thinking: each round, both decisions are open
    before either is answered (each decider waits until the other side has been asked)."""
    asked: dict[str, dict[int, asyncio.Event]] = {"host": {}, "guest": {}}
    order: list[tuple[str, int, str]] = []

    def event(role: str, lot: int) -> asyncio.Event:
        return asyncio.Event() if lot not in asked[role] else asked[role][lot]

    def decider_for(role: str):
        other = "guest" if role == "host" else "host"

        async def decide(request):
            lot = request.view["lot"]
            asked[role].setdefault(lot, event(role, lot)).set()
            order.append((role, lot, "asked"))
            await asyncio.wait_for(asked[other].setdefault(lot, event(other, lot)).wait(), 5)
            order.append((role, lot, "answered"))
            return 400 if role == "host" else 600
        return decide

    protocol = LoadedProtocol(Path("."), load_spec(AUCTION), Bidder)
    host, guest = await asyncio.wait_for(memory_session(
        protocol, seed=2, config=SessionConfig(peer_timeout=HANG_GUARD), state_dir=tmp_path,
        host_kwargs={"decider": decider_for("host")},
        guest_kwargs={"decider": decider_for("guest")}), HANG_GUARD)
    assert host.outcome.status == guest.outcome.status == "completed", host.outcome
    events = [json.loads(line) for line in (tmp_path / "host" / "events.jsonl").open()]
    played = [(e["host"], e["guest"]) for e in events if e["event"] == "round"]
    assert played == [(400, 600), (400, 600)]  # nobody gave up waiting for the other
    for lot in (1, 2):
        steps = [(role, what) for role, n, what in order if n == lot]
        first_answer = steps.index(next(s for s in steps if s[1] == "answered"))
        assert {role for role, what in steps[:first_answer]} == {"host", "guest"}


def test_rock_paper_scissors_tells_the_decider_the_earlier_throws() -> None:
    seen = []
    result = run_pair(load_protocol("rock-paper-scissors"), seed=4,
                      options={"best_of": 3, "termination": "fixed_rounds"},
                      deciders={"guest": lambda r: seen.append(r.view) or "rock"})
    assert result.guest.status == "completed"
    rounds = _events(result, "guest", "round")
    assert [view["history"] for view in seen] == [
        [], [_throw(rounds[0])], [_throw(rounds[0]), _throw(rounds[1])]]


def _throw(event: dict[str, Any]) -> dict[str, Any]:
    winner = event["result"]["round_winner"]
    return {"round": event["round"], "you": event["guest"], "peer": event["host"],
            "winner": {"guest": "you", "host": "the peer"}.get(winner, "draw")}


def test_crazy_eights_tells_the_decider_the_top_card_and_the_suit_to_follow() -> None:
    seen = []

    def first(request):
        seen.append(request)
        return request.legal[0]

    result = run_pair(load_protocol("crazy-eights"), seed=3, deciders={"host": first})
    assert result.host.status == "completed"
    assert seen
    for request in seen:
        view = request.view
        assert view["top_card"] and view["suit_to_follow"] in ("spades", "hearts", "diamonds",
                                                              "clubs")
        assert request.message and "mp_play" not in request.message
