"""The one answer to "which flow modes does this runtime run": name -> FlowMode.

The contract knows which modes it can hash and validate; whether a mode runs
is asked here. A new mode registers its descriptor with :func:`register`.
The built-in modes are imported when first asked for: a game of rounds does
not load mental poker's cards layer.
"""

from __future__ import annotations

import importlib
from typing import Any

from lingxi.contract.model import DEFAULT_MODE
from lingxi.session.core.descriptor import FlowMode
from lingxi.session.core.machine import SessionMachine
from lingxi.session.errors import SessionError

_MODES: dict[str, FlowMode] = {}
_BUILT_IN = {"session_loop": "loop", "simultaneous_round": "rounds",
             "request_response": "reqres", "free": "free", "mental_poker": "mental_poker"}


def register(mode: FlowMode) -> FlowMode:
    """Make ``mode`` runnable (a later registration of the same name replaces it)."""
    _MODES[mode.name] = mode
    return mode


def _lookup(name: str) -> FlowMode | None:
    mode = _MODES.get(name)
    if mode is None and name in _BUILT_IN:
        module = importlib.import_module(f"lingxi.session.core.modes.{_BUILT_IN[name]}")
        mode = _MODES.setdefault(name, module.DESCRIPTOR)
    return mode


def runnable_modes() -> list[str]:
    return sorted(set(_MODES) | set(_BUILT_IN))


def flow_mode(name: str) -> FlowMode:
    """The descriptor of ``name``, or ``session.mode_not_supported``."""
    mode = _lookup(name)
    if mode is None:
        raise SessionError("session.mode_not_supported",
                           f"flow mode {name!r} is not run by this runtime "
                           f"(it runs: {', '.join(runnable_modes())})")
    return mode


def takes_input(name: object) -> bool:
    """Whether a session of mode ``name`` takes local lines (False for a mode not run here)."""
    mode = _lookup(name) if isinstance(name, str) else None
    return mode is not None and mode.takes_input


def skeleton_methods_for(raw: dict[str, Any]) -> list[Any] | None:
    """The hook methods a skeleton for spec document ``raw`` holds (None: mode not run here)."""
    flow = raw.get("flow")
    name = (flow.get("mode") if isinstance(flow, dict) else None) or DEFAULT_MODE
    mode = _lookup(name) if isinstance(name, str) else None
    return mode.skeleton_methods(raw) if mode is not None else None


def make_machine(role: str, spec: Any, hooks: Any, **kwargs: Any) -> SessionMachine:
    """A machine for ``spec.flow.mode`` playing ``role``."""
    return flow_mode(spec.flow.mode).machine_for(spec)(role=role, spec=spec, hooks=hooks,
                                                       **kwargs)
