"""Where a simultaneous round's commit, reveal and value live in a spec.

Found once from the spec, for the live machine (``rounds``) and for the offline
check and the adversarial cases (``round_cases``) alike, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lingxi.contract.model import MessageSchema
from lingxi.records import FrozenRecord, frozen_record
from lingxi.session.core.flow import FlowPlan, build_plan


def _field_of_type(message: MessageSchema | None, kind: str) -> str | None:
    for name, schema in (message.fields if message else {}).items():
        if isinstance(schema, dict) and schema.get("type") == kind:
            return name
    return None


@frozen_record
class RoundLayout(FrozenRecord):
    """Which messages and fields carry a round's commit, reveal and result."""

    value_field: str
    value_schema: dict[str, Any]
    commit: str | None
    reveal: str | None
    hash_field: str
    nonce_field: str
    phase_names: frozenset[str]


def _round_steps(plan: FlowPlan, declared: dict[str, MessageSchema], reveal: str | None
                 ) -> set[str]:
    """The messages of every phase that holds the reveal or a commitment (a hash field)."""
    steps: set[str] = set()
    for phase in plan.phases:
        names = {step.message for step in phase.steps}
        if reveal in names or any(_field_of_type(declared.get(n), "hash") for n in names):
            steps |= names
    return steps


def _first(names: set[str], holds: Callable[[str], Any]) -> str | None:
    return next((name for name in sorted(names) if holds(name)), None)


def round_layout(spec: Any, plan: FlowPlan | None = None) -> RoundLayout:
    """Found once from the spec, for the machine and for the offline check alike."""
    plan = plan or build_plan(spec)
    declared = spec.messages
    rnd = spec.flow.round
    value_field = rnd.value_field if rnd else "choice"
    ref_schema = declared.get(rnd.message) if rnd else None
    reveal = rnd.message if rnd and ref_schema is not None else None
    value_schema = (ref_schema.fields.get(rnd.field or value_field) or {}
                    if rnd and ref_schema is not None else {})
    steps = _round_steps(plan, declared, reveal)
    commit = _first(steps, lambda n: _field_of_type(declared.get(n), "hash"))
    if reveal is None:
        reveal = _first(steps, lambda n: declared.get(n) is not None
                        and value_field in declared[n].fields)
    return RoundLayout(value_field, value_schema, commit, reveal,
                       _field_of_type(declared.get(commit), "hash") or "hash",
                       _field_of_type(declared.get(reveal), "nonce") or "nonce",
                       frozenset(steps))
