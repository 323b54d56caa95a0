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

from collections.abc import Callable
from typing import Any

from lingxi.errors import InputError
from lingxi.records import FrozenRecord, frozen_record

CONTROL_MODES = ("autonomous", "hybrid", "human")
DEFAULT_TIMEOUT = 120.0


@frozen_record
class DecisionPolicy(FrozenRecord):
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


@frozen_record
class DeciderContext(FrozenRecord):
    """What a decider may learn once, before its first point (its ``bind(context)``):
    the contract (rules, names) and a way to write its own events — a model's prompts
    and answers — into the session's events.jsonl."""

    spec: Any
    role: str
    record: Callable[[dict[str, Any]], None]


class Decline(Exception):
    """Raised by a decider that gives up on a point (say, a model that answered illegal
    values every time): the spec's timeout action applies at once."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def with_decider(config: Any, decider: Any) -> Any:
    """The config to run with when the caller supplies a decider.

    A decider handed to a session is there to be asked: when no control mode
    was chosen, it decides every point (``human``), instead of being ignored
    because the spec's default wiring is ``auto``. An explicit control mode is
    kept (``autonomous`` means the caller wants the hooks after all), and so is the
    spec's own wiring for a decider marked ``follows_spec`` (the person at a terminal,
    asked only where the spec's ``decision.mode`` is ``manual``).
    """
    from dataclasses import replace

    if decider is None or config.control_mode is not None:
        return config
    if getattr(decider, "follows_spec", False):  # asked only where the spec says manual
        return config
    return replace(config, control_mode="human")
