"""Small builders for session tests: specs from dicts, machines with inline hooks."""

from __future__ import annotations

import random
from typing import Any

from lingxi.contract import load_spec
from lingxi.hooks import HookContext, HookResult, Hooks
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import ControlReceived, Emit, SendControl, Start
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.registry import make_machine


def msg(name: str, direction: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "direction": direction, "fields": {
        "action": {"type": "enum", "values": [name], "required": True}, **fields}}


LOOP_SPEC = {
    "name": "Ping Pong", "spec_version": "1.0",
    "messages": [
        msg("join", "guest_to_host"),
        msg("ping", "guest_to_host", n={"type": "integer", "min": 1, "max": 99, "required": True}),
        msg("pong", "host_to_guest", n={"type": "integer", "min": 1, "max": 99, "required": True},
            game_over={"type": "boolean", "required": True}),
        msg("error", "both", reason={"type": "enum", "values": ["oops"], "required": True}),
        msg("end", "host_to_guest"),
    ],
    "flow": {"phases": [
        {"phase": "setup", "exchange": [{"message": "join", "direction": "guest_to_host"}]},
        {"phase": "play", "repeat": "until game_over", "exchange": [
            {"message": "ping", "direction": "guest_to_host"},
            {"message": "pong", "direction": "host_to_guest"}]}]},
    "rules": {"end": "after rounds pongs"},
    "parameters": {"rounds": {"type": "integer", "min": 1, "max": 99, "default": 3}},
}


class PingPong(Hooks):
    def proto_next_message(self, allowed, decision=None):
        if "join" in allowed:
            return HookResult(response={"action": "join"})
        if "ping" in allowed:
            self.state["n"] = self.state.get("n", 0) + 1
            return HookResult(response={"action": "ping", "n": self.state["n"]})
        return HookResult()

    def proto_on_message(self, message):
        if message["action"] == "ping":
            over = message["n"] >= self.ctx.options["rounds"]
            return HookResult(response={"action": "pong", "n": message["n"], "game_over": over})
        return None


def spec_of(raw: dict[str, Any]):
    return load_spec(raw)


def machine(role: str, raw: dict[str, Any] | Any, hooks_cls: type = PingPong, *,
            options: dict[str, Any] | None = None, config: SessionConfig | None = None,
            seed: int = 0):
    spec = raw if hasattr(raw, "raw") else load_spec(raw)
    hooks = hooks_cls(HookContext(role, spec, rng=random.Random(seed)))
    return make_machine(role, spec, hooks, options=options if role == "host" else None,
                        config=config, entropy=seeded(f"{seed}-{role}"))


def started(role: str, raw: Any, hooks_cls: type = PingPong, **kwargs: Any):
    """A machine past the offer/accept opening, with the actions of that opening."""
    m = machine(role, raw, hooks_cls, **kwargs)
    actions = m.handle(Start())
    if role == "host":
        actions += m.handle(ControlReceived("accept", {"protocol_id": m.spec.protocol_id}))
    else:
        actions += m.handle(ControlReceived("offer", {"protocol_id": m.spec.protocol_id,
                                                      "options": {"rounds": 3}}))
    return m, actions


def of_type(actions: list[Any], cls: type) -> list[Any]:
    return [a for a in actions if isinstance(a, cls)]


def abort_of(actions: list[Any]) -> dict[str, Any] | None:
    aborts = [a.body for a in of_type(actions, SendControl) if a.kind == "abort"]
    return aborts[0] if aborts else None


def events_named(actions: list[Any], name: str) -> list[dict[str, Any]]:
    return [a.event for a in of_type(actions, Emit) if a.event["event"] == name]
