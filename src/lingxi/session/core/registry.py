"""The one answer to "which flow modes does this runtime run": name -> FlowMode.

The contract knows which modes it can hash and validate; whether a mode runs
is asked here. A new mode registers its descriptor with :func:`register`.
"""

from __future__ import annotations

from typing import Any

from lingxi.contract.model import DEFAULT_MODE
from lingxi.session.core.descriptor import FlowMode
from lingxi.session.core.machine import SessionMachine
from lingxi.session.core.modes import free, loop, mental_poker, reqres, rounds
from lingxi.session.errors import SessionError

_MODES: dict[str, FlowMode] = {}


def register(mode: FlowMode) -> FlowMode:
    """Make ``mode`` runnable (a later registration of the same name replaces it)."""
    _MODES[mode.name] = mode
    return mode


for _module in (loop, rounds, reqres, free, mental_poker):
    register(_module.DESCRIPTOR)


def runnable_modes() -> list[str]:
    return sorted(_MODES)


def flow_mode(name: str) -> FlowMode:
    """The descriptor of ``name``, or ``session.mode_not_supported``."""
    try:
        return _MODES[name]
    except KeyError:
        raise SessionError("session.mode_not_supported",
                           f"flow mode {name!r} is not run by this runtime "
                           f"(it runs: {', '.join(runnable_modes())})") from None


def takes_input(name: object) -> bool:
    """Whether a session of mode ``name`` takes local lines (False for a mode not run here)."""
    mode = _MODES.get(name) if isinstance(name, str) else None
    return mode is not None and mode.takes_input


def skeleton_methods_for(raw: dict[str, Any]) -> list[Any] | None:
    """The hook methods a skeleton for spec document ``raw`` holds (None: mode not run here)."""
    flow = raw.get("flow")
    name = (flow.get("mode") if isinstance(flow, dict) else None) or DEFAULT_MODE
    mode = _MODES.get(name)
    return mode.skeleton_methods(raw) if mode is not None else None


def make_machine(role: str, spec: Any, hooks: Any, **kwargs: Any) -> SessionMachine:
    """A machine for ``spec.flow.mode`` playing ``role``."""
    return flow_mode(spec.flow.mode).machine_for(spec)(role=role, spec=spec, hooks=hooks,
                                                       **kwargs)
