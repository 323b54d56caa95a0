"""simultaneous_round's own cheats, offline check and summary lines.

Cheats: a reveal that does not match its commit, a value outside the choices,
a wrong round number, and (with a shadow judge) a host that lies about a
judged field or misreports a revealed value. Which fields the shadow judge
compares is read from an honest self-play's ``shadow_judge.checked`` events,
so a judged field with any name is probed.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from lingxi.contract.commit_reveal import matches
from lingxi.session import errors as codes
from lingxi.session.core.adversaries import ROLES, Case, MutateNth, can_differ, different_value
from lingxi.session.core.descriptor import describe
from lingxi.session.core.modes.round_layout import round_layout


def _first_result(honest: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    return next((e["result"] for e in honest.get("host", []) if e.get("event") == "round"), None)


def _judged(honest: dict[str, list[dict[str, Any]]]) -> list[str]:
    for event in honest.get("guest", []):
        if event.get("event") == "shadow_judge.checked":
            return list(event.get("fields") or [])
    return []


def round_cases(spec: Any, honest: dict[str, list[dict[str, Any]]]) -> list[Case]:
    layout = round_layout(spec)
    value_field, reveal = layout.value_field, layout.reveal or "reveal"
    commit = layout.commit or "commit"
    choices = list(spec.choices or [])
    value_schema = layout.value_schema
    cases = []
    for cheater in ROLES:
        def other_value(p: dict[str, Any], vf: str = value_field) -> dict[str, Any]:
            lie = different_value(p.get(vf), value_schema, choices)
            if lie is not None:
                p[vf] = lie
            return p  # unchanged when there is no other value: the case is not applicable

        def bump_round(p: dict[str, Any]) -> dict[str, Any]:
            p["round"] = p.get("round", 0) + 1
            return p

        name = f"commit does not match reveal ({cheater})"
        if can_differ(value_schema, choices):
            cases.append(Case(name, cheater, (codes.COMMIT_MISMATCH,),
                              partial(MutateNth, reveal, other_value)))
        else:
            cases.append(Case(name, cheater, (), None, "not applicable: the round value has "
                              "only one possible value"))
        cases.append(_outside_case(cheater, reveal, value_field, choices, value_schema))
        cases.append(Case(f"wrong round number in commit ({cheater})", cheater,
                          (codes.WRONG_ROUND,), partial(MutateNth, commit, bump_round)))
    result = _first_result(honest)
    result_name = str(result.get("action")) if result else ""
    schema = spec.messages.get(result_name) if isinstance(result_name, str) else None
    if spec.shadow_judge:
        cases.append(_shadow_lie(result, schema, _judged(honest)))
    echoed = f"guest_{value_field}"
    if result is not None and schema is not None and echoed in schema.fields:
        cases.append(_misreport(result_name, echoed, schema.fields[echoed], choices,
                                value_field))
    return cases


def _misreport(result_name: str, echoed: str, echo_schema: dict[str, Any], choices: list[Any],
               value_field: str) -> Case:
    """The host's result names another value than the guest revealed.

    The false value comes from the choices, else from the echoed field's type
    and bounds (an integer bid 1..1000 is reported one higher or lower): the
    lie is always a different value the field accepts.
    """
    name = f"round result misreports the guest's {value_field}"
    if not can_differ(echo_schema, choices):
        return Case(name, "host", (), None,
                    f"not applicable: {result_name}.{echoed} has only one possible value")

    def misreport(p: dict[str, Any]) -> dict[str, Any]:
        lie = different_value(p.get(echoed), echo_schema, choices)
        if lie is not None:
            p[echoed] = lie
        return p

    return Case(name, "host", (codes.RESULT_MISMATCH, codes.BALANCE_MISMATCH),
                partial(MutateNth, result_name, misreport))


def _outside_case(cheater: str, reveal: str, value_field: str, choices: list[Any],
                  value_schema: dict[str, Any]) -> Case:
    """A revealed value the round does not allow: outside the choices, else out of range."""
    name = f"revealed value outside the choices ({cheater})"
    if choices:
        bad: Any = ("zz-not-a-choice" if all(isinstance(c, str) for c in choices)
                    else max((c for c in choices if isinstance(c, int)), default=0) + 1)
        expect: tuple[str, ...] = (codes.NOT_IN_CHOICES, "message.bad_value",
                                   "message.out_of_range")
    elif value_schema.get("type") == "integer" and value_schema.get("max") is not None:
        bad, expect = value_schema["max"] + 1, ("message.out_of_range",)
    elif value_schema.get("type") == "enum":
        bad, expect = "zz-not-a-choice", ("message.bad_value",)
    else:
        return Case(name, cheater, (), None, "not applicable: the round value has no choices "
                    "and no range")

    def outside(p: dict[str, Any]) -> dict[str, Any]:
        p[value_field] = bad
        return p

    return Case(name, cheater, expect, partial(MutateNth, reveal, outside))


def _shadow_lie(result: dict[str, Any] | None, schema: Any, judged: list[str]) -> Case:
    """The host changes one judged field of its first round result."""
    name = "shadow-judge lie in the round result"
    if result is None or schema is None:
        return Case(name, "host", (), None, "not applicable: no round result in a self-play")
    if not judged:
        return Case(name, "host", (), None,
                    "not applicable: the shadow judge compared no field in a self-play "
                    "(no proto_round_judge_pure, or it returns nothing)")
    for key in judged:
        field_schema = schema.fields.get(key) or {}
        bad = different_value(result.get(key), field_schema)
        if bad is not None:
            def lie(p: dict[str, Any], key: str = key,
                    field_schema: dict[str, Any] = field_schema) -> dict[str, Any]:
                value = different_value(p.get(key), field_schema)
                if value is not None:
                    p[key] = value
                return p

            return Case(f"shadow-judge lie in {result['action']}.{key}", "host",
                        (codes.BALANCE_MISMATCH,),
                        partial(MutateNth, str(result["action"]), lie))
    return Case(name, "host", (), None,
                f"not applicable: no judged field ({', '.join(judged)}) has another valid value")


def verify_commitments(entries: list[dict[str, Any]], spec: Any) -> list[str]:
    """Offline: every reveal in the transcript matches its side's commitment."""
    layout = round_layout(spec)
    if layout.commit is None or layout.reveal is None:
        return []
    pending: dict[str, list[Any]] = {}
    problems = []
    for entry in entries:
        payload = (entry.get("envelope") or {}).get("payload") or {}
        action, direction = payload.get("action"), str(entry.get("direction"))
        if action == layout.commit:
            pending.setdefault(direction, []).append(payload.get(layout.hash_field))
        elif action == layout.reveal:
            queue = pending.get(direction) or []
            committed = queue.pop(0) if queue else None
            if not matches(payload.get(layout.value_field), payload.get(layout.nonce_field),
                           committed):
                problems.append(f"entry {entry.get('n')}: a {direction} reveal does not match "
                                "its commitment")
    return problems


def round_lines(events: Iterable[dict[str, Any]], hooks: Any) -> list[str]:
    """One line per round: the hooks' description of the result, else both values."""
    lines = []
    for event in events:
        if event["event"] == "round":
            text = describe(hooks, event["result"])
            lines.append(text or f"round {event['round']}: host {event['host']} vs guest "
                         f"{event['guest']}")
    return lines
