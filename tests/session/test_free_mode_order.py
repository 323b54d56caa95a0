"""Free mode does not enforce message order (the seed: the hooks do): any declared message
is taken from its declared direction at any time, the phases only guide what the hooks are
asked for; a message from the wrong direction, or before the session started, is still
refused by the engine."""

from __future__ import annotations

import random

from session_helpers import abort_of, events_named

from lingxi.hooks import HookContext
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import ControlReceived, PayloadReceived, Start
from lingxi.session.core.registry import make_machine
from lingxi.session.runner import load_protocol


def _chat(role: str):
    protocol = load_protocol("chat")
    hooks = protocol.hooks_class(HookContext(role, protocol.spec, rng=random.Random(0)))
    machine = make_machine(role, protocol.spec, hooks, options={} if role == "host" else None,
                           entropy=seeded(f"0-{role}"))
    machine.handle(Start())
    if role == "host":
        machine.handle(ControlReceived("accept", {"protocol_id": protocol.spec.protocol_id}))
    else:
        machine.handle(ControlReceived("offer", {"protocol_id": protocol.spec.protocol_id,
                                                 "options": {}}))
    return machine


def test_a_chat_line_before_the_hello_reaches_the_hooks() -> None:
    host = _chat("host")
    actions = host.handle(PayloadReceived({"action": "chat", "seq": 1, "text": "hi first"}))
    assert abort_of(actions) is None and not host.finished
    assert [e["payload"]["text"] for e in events_named(actions, "message.received")] == [
        "hi first"]
    assert host.hooks.state["transcript"] == [("guest", "hi first")]
    # the guide goes on: the join still gets its ready
    actions = host.handle(PayloadReceived({"action": "join", "nickname": "g"}))
    assert [e["payload"]["action"] for e in events_named(actions, "message.sent")] == ["ready"]


def test_the_host_may_speak_before_its_ready() -> None:
    guest = _chat("guest")
    actions = guest.handle(PayloadReceived({"action": "chat", "seq": 1, "text": "welcome"}))
    actions += guest.handle(PayloadReceived({"action": "ready", "nickname": "h"}))
    assert abort_of(actions) is None and not guest.finished
    assert guest.hooks.state["transcript"] == [("host", "welcome")]


def test_an_end_at_any_time_ends_the_session() -> None:
    host = _chat("host")
    host.handle(PayloadReceived({"action": "end"}))
    assert host.finished and host.outcome.status == "completed"


def test_the_wrong_direction_is_still_refused() -> None:
    guest = _chat("guest")
    actions = guest.handle(PayloadReceived({"action": "join", "nickname": "x"}))
    assert abort_of(actions)["code"] == "message.wrong_direction"
    assert guest.finished
