"""The one interpreter of machine actions, shared by both drivers.

A driver implements :class:`ActionTarget` (how to send, time, ask, compute in
its world) and hands every batch of actions to :func:`perform`; what each
action means is decided here, once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from lingxi.session.core.events import (
    CancelTimer,
    Compute,
    Emit,
    Finish,
    Outcome,
    RequestDecision,
    Send,
    SendControl,
    SetTimer,
)
from lingxi.session.drivers.link import control_to_payload


class ActionTarget(Protocol):
    def send(self, payload: dict[str, Any], correlation_id: str | None) -> None: ...

    def emit(self, event: dict[str, Any]) -> None: ...

    def set_timer(self, name: str, seconds: float) -> None: ...

    def cancel_timer(self, name: str) -> None: ...

    def request_decision(self, request: RequestDecision) -> None: ...

    def compute(self, action: Compute) -> None: ...

    def finished(self, outcome: Outcome) -> None: ...


def perform(actions: Iterable[Any], target: ActionTarget) -> None:
    """Carry out ``actions`` in order against ``target``."""
    for action in actions:
        if isinstance(action, Send):
            target.send(action.payload, action.correlation_id)
        elif isinstance(action, SendControl):
            target.send(control_to_payload(action), None)
        elif isinstance(action, Emit):
            target.emit(action.event)
        elif isinstance(action, SetTimer):
            target.set_timer(action.name, action.seconds)
        elif isinstance(action, CancelTimer):
            target.cancel_timer(action.name)
        elif isinstance(action, RequestDecision):
            target.request_decision(action)
        elif isinstance(action, Compute):
            target.compute(action)
        elif isinstance(action, Finish):
            target.finished(action.outcome)
        else:
            raise TypeError(f"unknown action {action!r}")


def run_compute(action: Compute) -> Any:
    """The result of a Compute action's work, or the exception it raised (as a value)."""
    try:
        return action.work()
    except Exception as error:  # the machine turns it into a violation with its code
        return error
