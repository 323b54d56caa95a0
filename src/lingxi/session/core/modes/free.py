"""free: either side may send any of its messages at any time; the hooks keep order.

The engine does not enforce message order in free mode (the seed's rule): every
declared message is accepted from its declared direction at any time, from the
first message on, and the hooks decide what an early or repeated one means. The
spec's ``phases`` (e.g. join/ready) are a guide, not a gate: while the guide
says it is this side's turn the hooks are asked once for their message
(``proto_next_message``), and local input waits until the guide's opening is
over. A message named ``end`` from either side ends the session (``end_when:
either_ends``). Local input (a script file or stdin, one line per event)
reaches the hooks through ``proto_on_input``. An idle timer ends a session in
which nobody says anything.
"""

from __future__ import annotations

from typing import Any

from lingxi.hooks import methods
from lingxi.session import errors as codes
from lingxi.session.core.descriptor import FlowMode
from lingxi.session.core.events import SendControl, SetTimer
from lingxi.session.core.flow import BOTH
from lingxi.session.core.machine import State
from lingxi.session.core.modes.loop import SessionLoopMachine
from lingxi.session.core.modes.reqres import opening_cheat


class FreeMachine(SessionLoopMachine):
    mode = "free"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pending_input: list[str | None] = []

    def begin(self) -> None:
        super().begin()
        self.end_name = "end" if "end" in self.declared else None
        self.free_rounds = 0
        self._asked_at: tuple[int, int, int] | None = None  # the guide's step last asked for

    @property
    def opening(self) -> bool:
        return not self.cursor.done

    def flow_done(self) -> bool:
        return False  # a free session ends only by `end`, completion or timeout

    def _free_ok(self, name: str, direction: str) -> bool:
        declared = self.declared.get(name)
        return declared is not None and declared.direction in (direction, BOTH)

    def waiting_for_peer(self) -> bool:
        base = self.base_waiting()
        if base is not None:
            return base
        return self.opening and not self._mine()

    def rounds_played(self) -> int:
        return getattr(self, "free_rounds", 0)

    def position(self) -> dict[str, Any]:
        if self.state != State.RUNNING:
            return {}
        return self.cursor.position() if self.opening else {"phase": "free", "iteration": None}

    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        if not self._free_ok(name, self.peer_dir):
            self.violation(codes.OUT_OF_PHASE, f"{name!r} may not come from the {self.peer}",
                           {"payload": payload})
            return
        position = self.position()
        guided = self.opening and self.cursor.accept(name, self.peer_dir, payload)
        if not guided:
            self.free_rounds += 1
        self.emit("message.received", message=name, payload=payload, **position)
        self.apply(self.call("proto_on_message", payload))
        if not self.finished and name == self.end_name:
            self.finish("completed", reason=f"the {self.peer} ended the session")

    def allow_send(self, name: str, payload: dict[str, Any]) -> bool:
        return self._free_ok(name, self.my_dir)

    def after_send(self, name: str, payload: dict[str, Any]) -> None:
        guided = self.opening and self.cursor.accept(name, self.my_dir, payload)
        if not guided:
            self.free_rounds += 1
        if name == self.end_name:
            self.finish("completed", reason="this side ended the session")

    def advance(self) -> None:
        """While the guide says it is this side's turn, ask the hooks once for their message
        (sending nothing is fine: they may wait); then local input, once the opening is
        over."""
        if self.opening and not self.paused and not self.finished:
            where = (self.cursor.p, self.cursor.s, self.cursor.iteration)
            mine = self._mine()
            if mine and where != self._asked_at:
                self._asked_at = where
                self.compose(mine)
        while not self.opening and self.pending_input and not self.finished \
                and not self.paused:
            self.on_input(self.pending_input.pop(0))

    def queue_input(self, line: str | None) -> None:
        self.pending_input.append(line)

    def on_input(self, line: str | None) -> None:
        if self.opening:
            self.queue_input(line)
            return
        if line is None:
            self.hooks_completed()
            return
        self.apply(self.call("proto_on_input", line))

    def hooks_completed(self) -> None:
        if self.end_name and self._free_ok(self.end_name, self.my_dir) and not self.opening:
            self.send({"action": self.end_name})  # finishes the session
            if self.finished:
                return
        self._out.append(SendControl("close", {"reason": "ended by this side"}))
        self.finish("completed", reason="this side ended the session")

    def arm_timers(self) -> None:
        super().arm_timers()
        if self.state == State.RUNNING and not self.opening:
            self._out.append(SetTimer("idle", self.config.idle_timeout))

    def on_idle(self) -> None:
        if self.state == State.RUNNING and not self.finished:
            self.violation(codes.IDLE_TIMEOUT,
                           f"no message for {self.config.idle_timeout:g}s", {})


# Order is the hooks' in free mode: the only message out of phase for the engine is one
# before the session started (the same cheat as request_response's).
DESCRIPTOR = FlowMode(
    "free", lambda spec: FreeMachine,
    (methods.NEXT, methods.ON_MESSAGE, methods.ON_INPUT, *methods.COMMON_OPTIONAL),
    out_of_phase_case=opening_cheat, takes_input=True)
