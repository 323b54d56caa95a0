"""Flow mode -> machine class. New modes (mental poker) register here."""

from __future__ import annotations

from typing import Any

from lingxi.session.errors import SessionError
from lingxi.session.core.machine import SessionMachine
from lingxi.session.core.modes.free import FreeMachine
from lingxi.session.core.modes.loop import SessionLoopMachine
from lingxi.session.core.modes.reqres import RequestResponseMachine
from lingxi.session.core.modes.rounds import SimultaneousRoundMachine

MACHINES: dict[str, type[SessionMachine]] = {
    "session_loop": SessionLoopMachine,
    "simultaneous_round": SimultaneousRoundMachine,
    "request_response": RequestResponseMachine,
    "free": FreeMachine,
}


def register_mode(mode: str, machine: type[SessionMachine]) -> None:
    """Plug in a machine for another flow mode (e.g. mental_poker)."""
    MACHINES[mode] = machine


def machine_class(mode: str) -> type[SessionMachine]:
    try:
        return MACHINES[mode]
    except KeyError:
        raise SessionError("session.mode_not_supported",
                           f"flow mode {mode!r} has no session machine in this runtime "
                           f"(available: {', '.join(sorted(MACHINES))})") from None


def make_machine(role: str, spec: Any, hooks: Any, **kwargs: Any) -> SessionMachine:
    """A machine for ``spec.flow.mode`` playing ``role``."""
    return machine_class(spec.flow.mode)(role=role, spec=spec, hooks=hooks, **kwargs)
