"""session_loop: phases run in order; the machine knows who speaks next.

Messages declared in the spec but used in no exchange (``error``, ``end``)
may come at any time from their declared direction; a message named ``end``
ends the session. Anything else out of phase is a violation.
"""

from __future__ import annotations

from typing import Any

from lingxi.hooks import methods
from lingxi.session import errors as codes
from lingxi.session.core.descriptor import FlowMode
from lingxi.session.core.flow import BOTH, FlowCursor, build_plan
from lingxi.session.core.machine import SessionMachine, State


class SessionLoopMachine(SessionMachine):
    mode = "session_loop"

    def begin(self) -> None:
        self.plan = build_plan(self.spec)
        self.cursor = FlowCursor(self.plan, self._repeat_count)
        self.out_of_band = {name: m.direction for name, m in self.declared.items()
                            if name not in self.plan.in_exchange}

    # -- flow queries -------------------------------------------------------
    def _repeat_count(self, repeat: str) -> int | None:
        text = repeat.strip()
        if text.isdigit():
            return int(text)
        value = (self.options or {}).get(text)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return None

    def flow_done(self) -> bool:
        return self.state == State.RUNNING and self.cursor.done

    def _mine(self) -> list[str]:
        return [s.message for s in self.cursor.expected() if s.direction in (self.my_dir, BOTH)]

    def _theirs(self) -> list[str]:
        return [s.message for s in self.cursor.expected() if s.direction in (self.peer_dir, BOTH)]

    def out_of_band_ok(self, name: str, direction: str) -> bool:
        """Whether the spec lets ``name`` travel in ``direction`` outside the flow."""
        declared = self.out_of_band.get(name)
        return declared is not None and declared in (direction, BOTH)

    def waiting_for_peer(self) -> bool:
        base = self.base_waiting()
        if base is not None:
            return base
        return not self.cursor.done and not self._mine()

    def waiting_description(self) -> Any:
        if self.state != State.RUNNING:
            return self.state
        return [f"{s.message}({s.direction})" for s in self.cursor.expected()]

    def position(self) -> dict[str, Any]:
        return self.cursor.position() if self.state == State.RUNNING else {}

    def rounds_played(self) -> int:
        return self.cursor.iterations_total if self.state == State.RUNNING else 0

    # -- receiving ----------------------------------------------------------
    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        position = self.cursor.position()
        in_flow = self.cursor.accept(name, self.peer_dir, payload)
        if not in_flow and not self.out_of_band_ok(name, self.peer_dir):
            self.violation(codes.OUT_OF_PHASE,
                           f"{name!r} from the {self.peer} is not expected now",
                           {"payload": payload, "expected": self.waiting_description()})
            return
        self.emit("message.received", message=name, payload=payload, **position)
        self._check_rounds()
        if self.finished:
            return
        self.received(name, payload, in_flow)
        if not self.finished and not in_flow and name == "end":
            self.finish("completed", reason=f"the {self.peer} sent end")

    def received(self, name: str, payload: dict[str, Any], in_flow: bool) -> None:
        """Hand a validated, in-phase peer message to the hooks."""
        self.apply(self.call("proto_on_message", payload))

    # -- sending ------------------------------------------------------------
    def allow_send(self, name: str, payload: dict[str, Any]) -> bool:
        return name in self._mine() or self.out_of_band_ok(name, self.my_dir)

    def after_send(self, name: str, payload: dict[str, Any]) -> None:
        if not self.cursor.accept(name, self.my_dir, payload) and name == "end":
            self.finish("completed", reason="this side sent end")
            return
        self._check_rounds()

    def _check_rounds(self) -> None:
        if self.cursor.iterations_total > self.config.max_rounds:
            self.violation(codes.TOO_LONG, "the flow ran past the local round limit",
                           {"max_rounds": self.config.max_rounds})

    def advance(self) -> None:
        while self.state == State.RUNNING and not self.finished and not self.paused:
            if self.cursor.done:
                self.finish("completed")
                return
            mine = self._mine()
            if not mine:
                return
            before = self.sent_count
            self.compose(mine)
            if self.paused or self.finished:
                return
            if self.sent_count == before:
                if self._theirs():
                    return
                self.violation(codes.HOOKS_NO_RESPONSE,
                               f"the hooks sent nothing, but the flow needs {mine} from the {self.role}",
                               {"expected": mine})

    def compose(self, mine: list[str]) -> None:
        """Produce this side's next message (hooks, maybe after a decision)."""
        if self.policy.manual:
            point = self.call("proto_decision_point", mine)
            if self.finished:
                return
            if point is not None:
                point.message = point.message or mine[0]
                self.decide(point, lambda value: self._compose_with(mine, value),
                            lambda: point.default)
                return
        self._compose_with(mine, None)

    def _compose_with(self, mine: list[str], decision: Any) -> None:
        self.apply(self.call("proto_next_message", list(mine), decision))


DESCRIPTOR = FlowMode(
    "session_loop", lambda spec: SessionLoopMachine,
    (methods.NEXT, methods.ON_MESSAGE, *methods.COMMON_OPTIONAL))
