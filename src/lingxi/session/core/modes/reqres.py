"""request_response: request -> optional progress -> delivery -> acknowledgement.

With ``flow.phases`` the phases are enforced like session_loop (the first
message is the request). Without phases, roles are found by message name
(documented in docs/session.md): request ``request``; progress ``progress``;
delivery ``delivery`` / ``deliver`` / ``response`` / ``result``;
acknowledgement ``ack`` / ``acknowledgement`` / ``confirm``.
The guest's request carries a correlation id drawn from the injected rng;
every progress, delivery and acknowledgement must carry the same id. Other
declared messages (``error``) may come at any time from their direction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lingxi.hooks import methods as hook_methods
from lingxi.session import errors as codes
from lingxi.session.core.adversaries import Case, InjectBeforeStart, sample_message
from lingxi.session.core.descriptor import FlowMode
from lingxi.session.core.flow import BOTH
from lingxi.session.core.machine import ROLE_DIRECTION, SessionMachine, State
from lingxi.session.core.modes.loop import SessionLoopMachine

ROLES = {
    "request": ("request",),
    "progress": ("progress",),
    "delivery": ("delivery", "deliver", "response", "result"),
    "ack": ("ack", "acknowledgement", "acknowledge", "confirm", "confirmation"),
}
MAX_PROGRESS = 10_000


def _new_correlation(entropy: Callable[[int], bytes]) -> str:
    return "rr-" + entropy(8).hex()


def link_correlation(machine: Any, name: str, payload: dict[str, Any],
                     correlation_id: str | None, *, starts_request: bool) -> bool:
    """The request fixes the exchange's correlation id; every later message must carry it.

    False when it does not (the session is then over).
    """
    if starts_request:
        if not correlation_id:
            machine.violation(codes.BAD_CORRELATION, "the request carries no correlation id",
                              {"payload": payload})
            return False
        machine.correlation = correlation_id
    elif correlation_id != machine.correlation:
        machine.violation(codes.BAD_CORRELATION,
                          f"{name} is linked to {correlation_id!r}, not to the request "
                          f"{machine.correlation!r}", {"payload": payload,
                                                       "correlation_id": correlation_id})
        return False
    return True


class PhasedRequestResponseMachine(SessionLoopMachine):
    """request_response with declared phases: session_loop order plus correlation ids."""

    mode = "request_response"

    def begin(self) -> None:
        super().begin()
        self.correlation: str | None = None

    def send(self, payload: Any, correlation_id: str | None = None) -> None:
        if self.correlation is None and self.role == "guest" and self.state == State.RUNNING:
            self.correlation = _new_correlation(self.entropy)
        super().send(payload, self.correlation)

    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        if link_correlation(self, name, payload, correlation_id,
                            starts_request=self.correlation is None):
            super().on_message(name, payload, correlation_id)


class RequestResponseMachine(SessionMachine):
    mode = "request_response"

    def begin(self) -> None:
        self.names: dict[str, str | None] = {}
        for role, aliases in ROLES.items():
            self.names[role] = next((a for a in aliases if a in self.declared), None)
        for role in ("request", "delivery"):
            if self.names[role] is None:
                self.violation(codes.BAD_CONTROL, f"the spec declares no {role} message "
                               f"(one of {', '.join(ROLES[role])})", {})
                return
        self.stage = "request"  # request -> working -> ack -> done
        self.correlation: str | None = None
        self.progress_count = 0

    # stage -> (message roles allowed next, who sends them)
    def _expected(self) -> tuple[list[Any], str | None]:
        if self.stage == "request":
            return [self.names["request"]], "guest"
        if self.stage == "working":
            allowed = [self.names["delivery"]]
            if self.names["progress"]:
                allowed.insert(0, self.names["progress"])
            return allowed, "host"
        if self.stage == "ack" and self.names["ack"]:
            return [self.names["ack"]], "guest"
        return [], None

    def flow_done(self) -> bool:
        return self.state == State.RUNNING and self.stage == "done"

    def _role_of(self, name: str) -> str | None:
        return next((role for role, n in self.names.items() if n == name), None)

    def out_of_band_ok(self, name: str, direction: str) -> bool:
        if self._role_of(name) is not None:
            return False
        declared = self.declared.get(name)
        return declared is not None and declared.direction in (direction, BOTH)

    def waiting_for_peer(self) -> bool:
        base = self.base_waiting()
        if base is not None:
            return base
        allowed, who = self._expected()
        return bool(allowed) and who == self.peer

    def waiting_description(self) -> Any:
        if self.state != State.RUNNING:
            return self.state
        allowed, who = self._expected()
        return {"stage": self.stage, "expected": allowed, "from": who}

    def position(self) -> dict[str, Any]:
        return {"phase": getattr(self, "stage", None), "iteration": None}

    def rounds_played(self) -> int:
        return 1 if getattr(self, "stage", None) == "done" else 0

    def _advance_stage(self, name: str) -> None:
        role = self._role_of(name)
        if role == "request":
            self.stage = "working"
        elif role == "progress":
            self.progress_count += 1
            if self.progress_count > MAX_PROGRESS:
                self.violation(codes.TOO_LONG, "too many progress messages",
                               {"max": MAX_PROGRESS})
        elif role == "delivery":
            self.stage = "ack" if self.names["ack"] else "done"
        elif role == "ack":
            self.stage = "done"

    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        allowed, who = self._expected()
        if name in allowed and who == self.peer:
            if not link_correlation(self, name, payload, correlation_id,
                                    starts_request=self._role_of(name) == "request"):
                return
            self.emit("message.received", message=name, payload=payload, **self.position())
            self._advance_stage(name)
            if self.finished:
                return
        elif self.out_of_band_ok(name, self.peer_dir):
            self.emit("message.received", message=name, payload=payload, **self.position())
        else:
            self.violation(codes.OUT_OF_PHASE, f"{name!r} from the {self.peer} is not expected now",
                           {"payload": payload, "expected": self.waiting_description()})
            return
        self.apply(self.call("proto_on_message", payload), self.correlation)
        if not self.finished and self.stage == "done":
            self.finish("completed")

    def allow_send(self, name: str, payload: dict[str, Any]) -> bool:
        allowed, who = self._expected()
        return (name in allowed and who == self.role) or self.out_of_band_ok(name, self.my_dir)

    def send(self, payload: Any, correlation_id: str | None = None) -> None:
        if self.stage == "request" and self.role == "guest" and self.correlation is None:
            self.correlation = _new_correlation(self.entropy)
        super().send(payload, self.correlation)

    def after_send(self, name: str, payload: dict[str, Any]) -> None:
        self._advance_stage(name)

    def advance(self) -> None:
        while self.state == State.RUNNING and not self.finished and not self.paused:
            if self.stage == "done":
                self.finish("completed")
                return
            allowed, who = self._expected()
            if who != self.role:
                return
            before = self.sent_count
            self._compose(allowed)
            if self.paused or self.finished:
                return
            if self.sent_count == before:
                self.violation(codes.HOOKS_NO_RESPONSE,
                               f"the hooks sent nothing, but the {self.role} must send one of "
                               f"{allowed}", {"expected": allowed})

    def _compose(self, allowed: list[str]) -> None:
        if self.policy.manual:
            point = self.call("proto_decision_point", allowed)
            if self.finished:
                return
            if point is not None:
                point.message = point.message or allowed[0]
                self.decide(point, lambda value: self._compose_with(allowed, value),
                            lambda: point.default)
                return
        self._compose_with(allowed, None)

    def _compose_with(self, allowed: list[str], decision: Any) -> None:
        self.apply(self.call("proto_next_message", list(allowed), decision), self.correlation)


def machine_for(spec: Any) -> type[SessionMachine]:
    """Declared phases run like session_loop; otherwise roles are found by name."""
    return PhasedRequestResponseMachine if spec.flow.phases else RequestResponseMachine


def opening_cheat(spec: Any, cheater: str) -> Case:
    """The guest's request opens every exchange, so the cheat is a message before the start."""
    direction = ROLE_DIRECTION[cheater]
    mine = [m for m in spec.raw.get("messages") or []
            if m.get("direction") in (direction, "both") and m["name"] not in ("error", "end")]
    if not mine:
        return Case(f"out-of-phase message from the {cheater}", cheater, (), None,
                    "not applicable: the side sends no protocol message")
    early = mine[-1]
    return Case(f"{early['name']!r} from the {cheater} before the session started", cheater,
                (codes.OUT_OF_PHASE,), lambda: InjectBeforeStart(lambda: sample_message(early)))


DESCRIPTOR = FlowMode(
    "request_response", machine_for,
    (hook_methods.NEXT, hook_methods.ON_MESSAGE, *hook_methods.COMMON_OPTIONAL),
    out_of_phase_case=opening_cheat)
