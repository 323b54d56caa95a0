"""free: after the opening phases, either side may send any of its messages.

The opening (e.g. join/ready) runs strictly like session_loop. Then every
declared message is accepted from its declared direction at any time; a
message named ``end`` from either side ends the session (``end_when:
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


class FreeMachine(SessionLoopMachine):
    mode = "free"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pending_input: list[str | None] = []

    def begin(self) -> None:
        super().begin()
        self.end_name = "end" if "end" in self.declared else None
        self.free_rounds = 0

    @property
    def opening(self) -> bool:
        return not self.cursor.done

    def flow_done(self) -> bool:
        return False  # a free session ends only by `end`, completion or timeout

    def _free_ok(self, name: str, direction: str) -> bool:
        declared = self.declared.get(name)
        return declared is not None and declared.direction in (direction, BOTH)

    def _oob_ok(self, name: str, direction: str) -> bool:
        if self.opening and name not in ("error", "end"):
            return False  # the opening is strict; free talk starts after it
        return super()._oob_ok(name, direction)

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
        if self.opening:
            super().on_message(name, payload, correlation_id)
            return
        if not self._free_ok(name, self.peer_dir):
            self.violation(codes.OUT_OF_PHASE, f"{name!r} may not come from the {self.peer}",
                           {"payload": payload})
        self.free_rounds += 1
        self.emit("message.received", message=name, payload=payload, **self.position())
        self.apply(self.call("proto_on_message", payload))
        if name == self.end_name:
            self.finish("completed", reason=f"the {self.peer} ended the session")

    def allow_send(self, name: str, payload: dict[str, Any]) -> bool:
        if self.opening:
            return super().allow_send(name, payload)
        return self._free_ok(name, self.my_dir)

    def after_send(self, name: str, payload: dict[str, Any]) -> None:
        if self.opening:
            super().after_send(name, payload)
            return
        self.free_rounds += 1
        if name == self.end_name:
            self.finish("completed", reason="this side ended the session")

    def advance(self) -> None:
        if self.opening:
            super().advance()
        while not self.opening and self.pending_input and not self.finished:
            self.on_input(self.pending_input.pop(0))

    def queue_input(self, line: str | None) -> None:
        self.pending_input.append(line)

    def on_input(self, line: str | None) -> None:
        if self.opening:
            self.queue_input(line)
            return
        if line is None:
            self.hooks_completed()
        self.apply(self.call("proto_on_input", line))

    def hooks_completed(self) -> None:
        if self.end_name and self._free_ok(self.end_name, self.my_dir) and not self.opening:
            self.send({"action": self.end_name})  # finishes the session
        self._out.append(SendControl("close", {"reason": "ended by this side"}))
        self.finish("completed", reason="this side ended the session")

    def _arm_timers(self) -> None:
        super()._arm_timers()
        if self.state == State.RUNNING and not self.opening:
            self._out.append(SetTimer("idle", self.config.idle_timeout))

    def on_idle(self) -> None:
        if self.state == State.RUNNING and not self.finished:
            self.violation(codes.IDLE_TIMEOUT,
                           f"no message for {self.config.idle_timeout:g}s", {})


DESCRIPTOR = FlowMode(
    "free", lambda spec: FreeMachine,
    (methods.NEXT, methods.ON_MESSAGE, methods.ON_INPUT, *methods.COMMON_OPTIONAL))
