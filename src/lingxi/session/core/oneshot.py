"""One request answered outside any session: the host machine driven for one exchange.

A P2A caller (``lingxi serve``, docs/callers.md) has no session: no
handshake, no offer and accept, no receipts, no acknowledgement round. It
sends one request and wants the answer. :func:`answer_once` runs a fresh host
machine of the spec's flow mode through the opening as if a guest had
accepted the host's options, hands it the caller's payload as the guest's
message, and collects what the host sends until it would wait for the guest
again (or finishes). So the caller gets exactly the guarantees a session
guest gets: the payload is checked against the contract before any hook sees
it, the hooks are called by the same code, and every reply is checked
against the contract (and the flow) before it leaves.

Pure like the rest of the core: no clock, no I/O. ``Compute`` work runs
inline; a decision point (the machine should be made with control mode
``autonomous``, so none arises) is declined at once, which applies the spec's
timeout action. Timers are ignored: nothing waits.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from lingxi.records import FrozenRecord
from lingxi.session.core.events import (
    Action,
    Compute,
    ComputeDone,
    ControlReceived,
    DecisionDeclined,
    Event,
    Finish,
    Outcome,
    PayloadReceived,
    RequestDecision,
    Send,
    SendControl,
    Start,
)
from lingxi.session.core.machine import SessionMachine

_NO_DECIDER = "a one-shot request has no decider"


@dataclass(frozen=True, repr=False, eq=False)
class OneShot(FrozenRecord):
    """What the host did with the one request.

    ``replies``: the payloads it sent, in order (already checked against the
    contract in the host's direction). ``abort``: ``(code, message)`` when the
    machine refused the request or its own hooks failed (then nothing in
    ``replies`` should be sent). ``outcome``: set when the machine finished.
    """

    replies: tuple[Send, ...]
    abort: tuple[str, str] | None
    outcome: Outcome | None

    @property
    def reply(self) -> Send | None:
        """The last message the host sent: the answer to a one-shot request."""
        return self.replies[-1] if self.replies else None


def _run(machine: SessionMachine, first: Event, sent: list[Send]) -> tuple[str, str] | None:
    """Feed ``first`` and everything it leads to; the abort the machine chose, if any."""
    pending: deque[Event] = deque([first])
    abort: tuple[str, str] | None = None
    while pending:
        actions: list[Action] = machine.handle(pending.popleft())
        for action in actions:
            if isinstance(action, Send):
                sent.append(action)
            elif isinstance(action, SendControl) and action.kind == "abort":
                body: dict[str, Any] = action.body or {}
                abort = (str(body.get("code") or "session.aborted"),
                         str(body.get("message") or ""))
            elif isinstance(action, Compute):
                try:
                    result: Any = action.work()
                except Exception as error:  # the machine turns it into a violation
                    result = error
                pending.append(ComputeDone(action.name, result))
            elif isinstance(action, RequestDecision):
                pending.append(DecisionDeclined(action.point_id, _NO_DECIDER))
            elif isinstance(action, Finish):
                pass
    return abort


def answer_once(machine: SessionMachine, payload: Any, *, correlation_id: str | None = None,
                size: int = 0, session_id: str | None = None) -> OneShot:
    """Run ``machine`` (a new host machine) for one guest ``payload``; see the module doc."""
    if machine.role != "host":
        raise ValueError("answer_once drives a host machine")
    sent: list[Send] = []
    abort = _run(machine, Start(session_id=session_id), sent)
    if abort is None and not machine.finished:
        abort = _run(machine, ControlReceived("accept", {"protocol_id":
                                                         machine.spec.protocol_id}), sent)
    if abort is None and not machine.finished:
        abort = _run(machine, PayloadReceived(payload, correlation_id, size), sent)
    return OneShot(tuple(sent), abort, machine.outcome)
