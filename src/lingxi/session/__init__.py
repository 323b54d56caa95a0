"""The session runtime's one surface for the CLI and library callers.

- sans-IO machines in :mod:`lingxi.session.core` (one descriptor per flow mode);
- drivers in :mod:`lingxi.session.drivers` (in-memory pair, network channel);
- state folders in :mod:`lingxi.session.record` (events, transcript, receipts).

Names are imported on first use: an in-memory ``protocol test`` never imports
the network driver (nor asyncio, socket or ssl).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "SessionConfig": "core.machine", "SessionMachine": "core.machine",
    "runnable_modes": "core.registry", "flow_mode": "core.registry",
    "make_machine": "core.registry", "register_mode": "core.registry",
    "skeleton_methods_for": "core.registry", "answer_once": "core.oneshot",
    "SessionError": "errors", "SessionFailed": "errors",
    "LoadedProtocol": "runner", "load_protocol": "runner", "find_protocol": "runner",
    "run_pair": "runner", "run_local": "runner",
    "PairResult": "drivers.memory",
    "run_adversarial": "adversarial",
    "host_session": "drivers.endpoints", "memory_session": "drivers.endpoints",
    "DriveResult": "drivers.network", "lines_from": "drivers.network",
    "guest_session": "api", "verify_session": "api",
    "Verification": "record.verify",
    "LiveSession": "drivers.live", "RequestDecision": "core.events",
    "Decline": "core.decisions", "DeciderContext": "core.decisions",
    "is_running": "record.recorder",
}
_ALIASES = {"register_mode": "register"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'lingxi.session' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"lingxi.session.{module}"), _ALIASES.get(name, name))
    globals()[name] = value
    return value
