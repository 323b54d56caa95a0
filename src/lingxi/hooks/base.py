"""The base class protocol authors subclass in their local ``hooks.py``.

One class serves both roles; ``self.ctx.role`` says which side it plays.
The engine owns the flow, validation, commit-reveal and the wire: hooks only
decide what to say and interpret what they were told. See
docs/protocol-authoring.md for the method list per flow mode
(:mod:`lingxi.hooks.methods` is the machine-readable form).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from lingxi.hooks.result import DecisionPoint, HookResult
from lingxi.records import Record


@dataclass(repr=False, eq=False)
class HookContext(Record):
    """What hooks may read: their role, the spec, the agreed options, an rng.

    ``rng`` is injected by the engine (seeded in ``protocol test``), so hooks
    that draw randomness only from it are reproducible. ``spec`` is the
    loaded contract (``lingxi.contract.Spec``) or ``None`` in unit tests.
    """

    role: str  # "host" | "guest"
    spec: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    @property
    def peer(self) -> str:
        return "guest" if self.role == "host" else "host"

    @property
    def choices(self) -> list[Any]:
        return list(getattr(self.spec, "choices", None) or [])


class Hooks:
    """Subclass this in ``hooks.py``; implement the methods your flow mode needs.

    Required everywhere: :meth:`proto_next_message` and :meth:`proto_on_message`.
    simultaneous_round adds :meth:`proto_round_choose` and (host)
    :meth:`proto_round_judge`; free adds :meth:`proto_on_input`.
    """

    def __init__(self, ctx: HookContext) -> None:
        self.ctx = ctx
        self.state: dict[str, Any] = {}

    # -- every mode ---------------------------------------------------------
    def proto_start(self) -> None:
        """Options are known (``self.ctx.options``); set up state."""

    def proto_next_message(self, allowed: list[str], decision: Any = None) -> HookResult:
        raise NotImplementedError("proto_next_message")

    def proto_on_message(self, message: dict[str, Any]) -> HookResult | None:
        raise NotImplementedError("proto_on_message")

    def proto_decision_point(self, allowed: list[str]) -> DecisionPoint | None:
        return None

    def proto_finish(self, outcome: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def proto_describe(self, message: dict[str, Any]) -> str | None:
        return None

    # -- simultaneous_round -------------------------------------------------
    def proto_round_point(self, round_no: int) -> DecisionPoint:
        return DecisionPoint(legal=self.ctx.choices, view={"round": round_no})

    def proto_round_choose(self, round_no: int, point: DecisionPoint) -> Any:
        raise NotImplementedError("proto_round_choose")

    def proto_round_judge(self, round_no: int, host_value: Any, guest_value: Any) -> dict[str, Any]:
        raise NotImplementedError("proto_round_judge")

    # proto_round_judge_pure is deliberately not defined here: its presence on
    # a subclass is what opts a guest into the shadow judge.

    # -- free ---------------------------------------------------------------
    def proto_on_input(self, line: str) -> HookResult | None:
        raise NotImplementedError("proto_on_input")


def implements(hooks: Hooks, name: str) -> bool:
    """True when ``hooks`` overrides ``name`` (or defines one the base lacks)."""
    method = getattr(type(hooks), name, None)
    if method is None:
        return False
    return getattr(Hooks, name, None) is not method
