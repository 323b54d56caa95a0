"""What a conductor asks its driver to do: move bytes, keep time, ask, compute, tell.

The machine's own actions (timers, decisions, computations, the end) pass
through unchanged (:class:`~lingxi.session.core.events.SetTimer`,
``CancelTimer``, ``RequestDecision``, ``Compute``, ``Finish``); the conductor
adds the three below. A driver handles exactly this set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lingxi.errors import LingxiError
from lingxi.records import FrozenRecord
from lingxi.session.core.events import (
    CancelTimer,
    Compute,
    Finish,
    RequestDecision,
    SetTimer,
)


@dataclass(init=False, repr=False, eq=False)  # frozen by FrozenRecord
class SendFrame(FrozenRecord):
    """Put these bytes on the transport, in order (already signed, sealed and recorded)."""

    data: bytes

    def __init__(self, data: bytes) -> None:  # written out: nothing to compile at start-up
        object.__setattr__(self, "data", data)


@dataclass(init=False, repr=False, eq=False)  # frozen by FrozenRecord
class Emitted(FrozenRecord):
    """A record was written to events.jsonl; watchers (console, page) may show it."""

    record: dict[str, Any]

    def __init__(self, record: dict[str, Any]) -> None:  # written out: nothing to compile at start-up
        object.__setattr__(self, "record", record)


@dataclass(init=False, repr=False, eq=False)  # frozen by FrozenRecord
class Refuse(FrozenRecord):
    """The session cannot start (no offer, an offer refused): end with ``error``.

    Frames before it (the abort telling the host why) are sent first.
    """

    error: LingxiError

    def __init__(self, error: LingxiError) -> None:  # written out: nothing to compile at start-up
        object.__setattr__(self, "error", error)


DriverAction = SendFrame | Emitted | Refuse | SetTimer | CancelTimer | RequestDecision | Compute \
    | Finish


def run_compute(action: Compute) -> Any:
    """The result of a Compute action's work, or the exception it raised (as a value)."""
    try:
        return action.work()
    except Exception as error:  # the machine turns it into a violation with its code
        return error


__all__ = ["CancelTimer", "Compute", "DriverAction", "Emitted", "Finish", "Refuse",
           "RequestDecision", "SendFrame", "SetTimer", "run_compute"]
