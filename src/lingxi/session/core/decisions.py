"""Who makes a decision: the hooks (auto) or an external decider (manual).

The spec's ``decision`` block is the author's default wiring. A participant's
local ``--control-mode`` overrides where decisions come from without touching
the spec or its hash:

- ``autonomous``: the hooks always decide;
- ``human``: every decision goes to the decider; on timeout the spec's
  ``timeout_action`` applies (``fallback`` = the hooks' default, ``abort``);
- ``hybrid``: the decider is asked with the hooks' suggestion in the view; on
  timeout the hooks' suggestion is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lingxi.errors import InputError

CONTROL_MODES = ("autonomous", "hybrid", "human")
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class DecisionPolicy:
    manual: bool
    timeout_seconds: float
    on_timeout: str  # "fallback" | "abort"
    suggest: bool  # put the hooks' suggestion into the decider's view

    @classmethod
    def resolve(cls, decision: Any, control_mode: str | None) -> DecisionPolicy:
        mode = getattr(decision, "mode", None) or "auto"
        timeout = getattr(decision, "timeout_seconds", None) or DEFAULT_TIMEOUT
        action = getattr(decision, "timeout_action", None) or "fallback"
        if action not in ("fallback", "abort"):
            action = "fallback"
        if control_mode is not None and control_mode not in CONTROL_MODES:
            raise InputError("session.bad_control_mode",
                             f"control mode must be one of {', '.join(CONTROL_MODES)}")
        if control_mode == "autonomous" or (control_mode is None and mode != "manual"):
            return cls(False, float(timeout), action, False)
        if control_mode == "hybrid":
            return cls(True, float(timeout), "fallback", True)
        return cls(True, float(timeout), action, False)


def legal_value(value: Any, legal: list[Any], bounds: tuple[Any, Any] | None) -> bool:
    """Whether a decider's value is allowed by the decision point."""
    if legal and value not in legal:
        return False
    if bounds is not None:
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        low, high = bounds
        if (low is not None and value < low) or (high is not None and value > high):
            return False
    return True
