"""Whatever a peer sends, a machine answers with actions, never an exception or a hang."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.hooks import HookContext
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import (
    ControlReceived,
    DecisionMade,
    Finish,
    LocalInput,
    PayloadReceived,
    SendControl,
    Start,
    TimerFired,
)
from lingxi.session.core.registry import make_machine
from lingxi.session.runner import load_protocol

PROTOCOLS = {name: load_protocol(name) for name in
             ("chat", "guess-number", "hero-duel", "rock-paper-scissors", "word-count")}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)


def payloads(protocol):
    names = sorted(protocol.spec.messages) + ["zz", "control.abort"]
    fields = sorted({f for m in protocol.spec.messages.values() for f in m.fields})
    return st.one_of(
        json_values,
        st.builds(lambda action, extra: {"action": action, **extra}, st.sampled_from(names),
                  st.dictionaries(st.sampled_from(fields + ["zz"]), json_values, max_size=6)))


def events(protocol):
    return st.lists(st.one_of(
        st.builds(PayloadReceived, payloads(protocol), st.none() | st.text(max_size=8)),
        st.builds(ControlReceived, st.sampled_from(["offer", "accept", "close", "bogus"]),
                  st.dictionaries(st.sampled_from(["protocol_id", "options", "reason"]),
                                  json_values, max_size=3)),
        st.builds(TimerFired, st.sampled_from(["peer", "decision", "idle", "other"])),
        st.builds(DecisionMade, st.sampled_from(["d1", "d2"]), json_values),
        st.builds(LocalInput, st.none() | st.text(max_size=10)),
    ), max_size=12)


def _run(name: str, role: str, sequence, opening: bool) -> None:
    protocol = PROTOCOLS[name]
    hooks = protocol.hooks_class(HookContext(role, protocol.spec, rng=random.Random(0)))
    machine = make_machine(role, protocol.spec, hooks,
                           options={} if role == "host" else None, entropy=seeded(0))
    machine.handle(Start())
    if opening:  # get past offer/accept so payloads reach the flow
        if role == "host":
            machine.handle(ControlReceived("accept", {"protocol_id": protocol.spec.protocol_id}))
        else:
            machine.handle(ControlReceived("offer", {"protocol_id": protocol.spec.protocol_id,
                                                     "options": {}}))
    for event in sequence:
        was_finished = machine.finished
        actions = machine.handle(event)
        assert isinstance(actions, list)
        if was_finished:
            assert actions == []
        aborts = [a for a in actions if isinstance(a, SendControl) and a.kind == "abort"]
        if aborts:  # an abort always comes with a code and ends the session
            assert aborts[0].body["code"] and machine.finished
            assert any(isinstance(a, Finish) for a in actions)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_events_never_crash_a_machine(data) -> None:
    name = data.draw(st.sampled_from(sorted(PROTOCOLS)))
    role = data.draw(st.sampled_from(["host", "guest"]))
    opening = data.draw(st.booleans())
    _run(name, role, data.draw(events(PROTOCOLS[name])), opening)
