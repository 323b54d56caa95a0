"""Where a session_loop-style flow stands, and which message may come next.

Built from the spec's ``flow.phases``. A phase without ``repeat`` runs its
exchange once. ``repeat`` is either ``"until game_over"`` or a parameter name
(``best_of``) / literal count; a boolean ``game_over: true`` in any message of
an iteration ends the repeat early. When an ``until game_over`` exchange has
no message with a ``game_over`` field, the iteration boundary is open: the
next message may restart the exchange or start the next phase, and the hooks
decide by what they send (or by waiting).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

from lingxi.records import FrozenRecord, Record, frozen_record, record

BOTH = "both"


@frozen_record
class Step(FrozenRecord):
    message: str
    direction: str  # host_to_guest | guest_to_host | both

    def matches(self, message: str, direction: str) -> bool:
        return self.message == message and self.direction in (direction, BOTH)


@record
class PhasePlan(Record):
    name: str
    repeat: str | None
    steps: list[Step]
    has_game_over: bool = False


@record
class FlowPlan(Record):
    phases: list[PhasePlan] = field(default_factory=list)
    in_exchange: set[str] = field(default_factory=set)


def build_plan(spec: Any) -> FlowPlan:
    """The phases of a loaded spec, each step with its resolved direction."""
    plan = FlowPlan()
    for phase in spec.flow.phases:
        steps = [Step(step.message, step.direction or BOTH) for step in phase.exchange]
        plan.in_exchange.update(step.message for step in steps)
        has_game_over = any("game_over" in spec.messages[step.message].fields for step in steps
                            if step.message in spec.messages)
        repeat = phase.repeat
        plan.phases.append(PhasePlan(phase.name, str(repeat) if repeat else None, steps,
                                     has_game_over))
    return plan


class FlowCursor:
    """Tracks phase, step and iteration; says what is expected and advances."""

    def __init__(self, plan: FlowPlan, repeat_count: Callable[[str], int | None]) -> None:
        self.plan = plan
        self.repeat_count = repeat_count
        self.p = 0
        self.s = 0
        self.iteration = 1
        self.iterations_total = 0
        self.game_over = False
        self.boundary = False
        self._skip_empty()

    # -- queries -----------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.p >= len(self.plan.phases)

    @property
    def phase(self) -> PhasePlan | None:
        return None if self.done else self.plan.phases[self.p]

    def expected(self) -> list[Step]:
        if self.done:
            return []
        phase = self.plan.phases[self.p]
        if self.boundary:
            options = [phase.steps[0]]
            following = self._next_nonempty(self.p + 1)
            if following is not None:
                options.append(self.plan.phases[following].steps[0])
            return options
        return [phase.steps[self.s]]

    def position(self) -> dict[str, Any]:
        phase = self.phase
        return {"phase": phase.name if phase else None,
                "iteration": self.iteration if phase and phase.repeat else None}

    # -- moves -------------------------------------------------------------
    def accept(self, message: str, direction: str, payload: dict[str, Any]) -> bool:
        """Advance past ``message``; False (and no change) when it is not expected."""
        options = self.expected()
        match = next((step for step in options if step.matches(message, direction)), None)
        if match is None:
            return False
        if self.boundary:
            phase = self.plan.phases[self.p]
            self.boundary = False
            if match is phase.steps[0]:
                self._next_iteration()
            else:
                self._next_phase()
        if payload.get("game_over") is True:
            self.game_over = True
        self.s += 1
        if self.s >= len(self.plan.phases[self.p].steps):
            self._end_iteration()
        return True

    def _end_iteration(self) -> None:
        phase = self.plan.phases[self.p]
        if phase.repeat is None:
            self._next_phase()
            return
        self.iterations_total += 1
        count = self.repeat_count(phase.repeat)
        if self.game_over or (count is not None and self.iteration >= count):
            self._next_phase()
        elif phase.has_game_over or count is not None:
            self._next_iteration()
        else:
            self.boundary = True

    def _next_iteration(self) -> None:
        self.iteration += 1
        self.s = 0
        self.game_over = False

    def _next_phase(self) -> None:
        self.p += 1
        self.s = 0
        self.iteration = 1
        self.game_over = False
        self.boundary = False
        self._skip_empty()

    def _next_nonempty(self, start: int) -> int | None:
        for index in range(start, len(self.plan.phases)):
            if self.plan.phases[index].steps:
                return index
        return None

    def _skip_empty(self) -> None:
        following = self._next_nonempty(self.p)
        self.p = len(self.plan.phases) if following is None else following
