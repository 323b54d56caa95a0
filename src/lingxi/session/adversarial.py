"""The cheating-peer library behind ``lingxi protocol test --adversarial``.

Each case puts an honest machine behind an :class:`Adversary` that rewrites
what it sends, plays it against an honest peer over the in-memory driver, and
checks that the honest side ended the session itself with one of the
expected codes. Cases are built from the spec: for every message type an
unknown field, a missing required field, a wrong type and a value out of
range (or "not applicable" when the message has no such field); an unknown
action, an out-of-phase message, a replayed envelope, a forged signature and
silence from each side; and the flow mode's own cases from its descriptor
(simultaneous_round: a reveal that does not match its commit, a value outside
the choices, a wrong round number, a lying shadow-judged result).

These are what the *engine* enforces. Game rules are the hooks' duty, so they
are probed separately (:func:`run_rule_probes`): schema-valid mutations of
each peer message (other legal values, a false ``game_over``, a claimed win, a
repeated move), reported as what the hooks did — aborted, continued or ended —
and never counted as cheats detected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lingxi.records import Record
from lingxi.session.core.adversaries import (
    RANGE_CODES,
    ROLES,
    Case,
    ForgeFirst,
    InjectBeforeStart,
    ReplaceFirst,
    ReplayFirst,
    Silent,
    out_of_range_value,
    sample_message,
    wrong_type_value,
)
from lingxi.session.core.machine import ROLE_DIRECTION, SessionConfig
from lingxi.session.core.registry import flow_mode
from lingxi.session.drivers.memory import StuckError
from lingxi.session.runner import LoadedProtocol, run_pair


@dataclass(repr=False, eq=False)
class CaseResult(Record):
    name: str
    cheater: str
    victim: str
    expected: list[str]
    detected: str | None
    ok: bool
    applicable: bool = True
    elapsed: float = 0.0
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.name, "cheater": self.cheater, "victim": self.victim,
                "expected": self.expected, "detected": self.detected, "ok": self.ok,
                "applicable": self.applicable, "session_seconds": round(self.elapsed, 3),
                "detail": self.detail}


@dataclass(repr=False, eq=False)
class AdversarialReport(Record):
    protocol: str
    results: list[CaseResult] = field(default_factory=list)
    rules: list[Any] = field(default_factory=list)  # rule probes: reported, never counted

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        applicable = [r for r in self.results if r.applicable]
        return {"protocol": self.protocol, "ok": self.ok, "cases": len(self.results),
                "applicable": len(applicable),
                "detected": sum(1 for r in applicable if r.ok),
                "results": [r.to_dict() for r in self.results],
                "rules": [probe.to_dict() for probe in self.rules]}


def _sender_of(message: dict[str, Any]) -> str:
    direction = message.get("direction")
    return "host" if direction == "host_to_guest" else "guest"


def _message_cases(message: dict[str, Any]) -> list[Case]:
    name, cheater = message["name"], _sender_of(message)
    fields = {k: v for k, v in (message.get("fields") or {}).items() if k != "action"}
    base = sample_message(message)
    cases = [Case(f"{name}: unknown field", cheater, ("message.unknown_field",),
                  lambda: ReplaceFirst(lambda: {**base, "zz_unknown": 1}))]
    required = [k for k, v in fields.items() if v.get("required")]
    if required:
        cases.append(Case(f"{name}: missing required field {required[0]!r}", cheater,
                          ("message.missing_field",),
                          lambda: ReplaceFirst(lambda: {k: v for k, v in base.items()
                                                        if k != required[0]})))
    else:
        cases.append(Case(f"{name}: missing required field", cheater, (), None,
                          "not applicable: no required field besides action"))
    if fields:
        target = next(iter(fields))
        cases.append(Case(f"{name}: wrong type for {target!r}", cheater, ("message.wrong_type",),
                          lambda: ReplaceFirst(lambda: {**base, target: wrong_type_value(
                              fields[target])})))
    else:
        cases.append(Case(f"{name}: wrong type for 'action'", cheater,
                          ("message.wrong_type", "envelope.type_mismatch"),
                          lambda: ReplaceFirst(lambda: {"action": 5})))
    ranged = next(((k, out_of_range_value(v)) for k, v in fields.items()
                   if out_of_range_value(v) is not None), None)
    if ranged is not None:
        key, bad = ranged
        cases.append(Case(f"{name}: value out of range for {key!r}", cheater, RANGE_CODES,
                          lambda: ReplaceFirst(lambda: {**base, key: bad})))
    else:
        cases.append(Case(f"{name}: value out of range", cheater, (), None,
                          "not applicable: no field with a range, length or value set"))
    return cases


def _out_of_phase(protocol: LoadedProtocol, cheater: str) -> Case:
    """The cheater opens with a message of its own direction that is not due yet."""
    spec = protocol.spec
    special = flow_mode(spec.flow.mode).out_of_phase_case
    if special is not None:
        return special(spec, cheater)
    direction = ROLE_DIRECTION[cheater]
    first = next((step.message for phase in spec.flow.phases for step in phase.exchange
                  if step.direction in (direction, "both")), None)
    mine = [m for m in spec.raw.get("messages") or []
            if m.get("direction") in (direction, "both") and m["name"] not in ("error", "end")]
    candidates = [m for m in mine if m["name"] != first]
    if not candidates:
        if not mine:
            return Case(f"out-of-phase message from the {cheater}", cheater, (), None,
                        "not applicable: the side sends no protocol message")
        early = mine[-1]
        return Case(f"{early['name']!r} from the {cheater} before the session started", cheater,
                    ("session.out_of_phase",),
                    lambda: InjectBeforeStart(lambda: sample_message(early)))
    chosen = candidates[-1]
    return Case(f"out-of-phase {chosen['name']!r} from the {cheater}", cheater,
                ("session.out_of_phase",),
                lambda: ReplaceFirst(lambda: sample_message(chosen)))


def honest_events(protocol: LoadedProtocol, *, options: dict[str, Any] | None, seed: int,
                  config: SessionConfig) -> dict[str, list[dict[str, Any]]]:
    """What an honest self-play does, for cases and probes that build on it."""
    try:
        return run_pair(protocol, options=options, seed=seed, config=config).events
    except StuckError:
        return {"host": [], "guest": []}


def build_cases(protocol: LoadedProtocol, honest: dict[str, list[dict[str, Any]]] | None = None
                ) -> list[Case]:
    raw = protocol.spec.raw
    cases: list[Case] = []
    for message in raw.get("messages") or []:
        cases.extend(_message_cases(message))
    for cheater in ROLES:
        cases.append(Case(f"unknown action from the {cheater}", cheater,
                          ("message.unknown_action",),
                          lambda: ReplaceFirst(lambda: {"action": "zz_teleport"})))
        cases.append(_out_of_phase(protocol, cheater))
        cases.append(Case(f"replayed envelope from the {cheater}", cheater, ("envelope.replay",),
                          ReplayFirst))
        cases.append(Case(f"forged envelope from the {cheater}", cheater,
                          ("envelope.bad_signature",), ForgeFirst))
        cases.append(Case(f"silent {cheater}", cheater, ("session.timeout",), Silent))
    mode = flow_mode(protocol.spec.flow.mode)
    cases.extend(mode.adversarial_cases(protocol.spec, honest or {"host": [], "guest": []}))
    return cases


def run_case(protocol: LoadedProtocol, case: Case, *, options: dict[str, Any] | None,
             seed: int, config: SessionConfig, carrier: str = "memory") -> CaseResult:
    if case.make is None:
        return CaseResult(case.name, case.cheater, case.victim, [], None, True, False,
                          detail=case.note)
    adversary = case.make()
    try:
        result = run_pair(protocol, options=options, seed=seed, config=config,
                          adversary=(case.cheater, adversary), keep_events=False,
                          carrier=carrier)
    except StuckError as error:
        return CaseResult(case.name, case.cheater, case.victim, list(case.expect), None, False,
                          detail=f"stuck: {error}")
    if adversary.cheated is False:  # the moment never came, or no other value existed
        return CaseResult(case.name, case.cheater, case.victim, [], None, True, False,
                          result.elapsed, "not applicable: the cheat could not be played in "
                          "this run (no such message, or no other valid value)")
    victim = result.host if case.victim == "host" else result.guest
    detected = victim.code if victim.status == "aborted" and victim.by == "local" else None
    if case.detect is not None:
        detected = case.detect(victim)
    ok = detected in case.expect
    detail = victim.reason
    if case.make is Silent:
        ok = ok and result.elapsed <= config.peer_timeout + 1e-3
        detail = f"ended after {result.elapsed:g}s of session time (timeout {config.peer_timeout:g}s)"
    if not ok and detected is None:
        detail = f"not detected: victim {victim.status} ({victim.code or 'no code'}) {victim.reason}"
    return CaseResult(case.name, case.cheater, case.victim, list(case.expect), detected, ok,
                      True, result.elapsed, detail)


def run_adversarial(protocol: LoadedProtocol, *, options: dict[str, Any] | None = None,
                    seed: int = 0, config: SessionConfig | None = None,
                    probes: bool = True) -> AdversarialReport:
    """Every engine cheat (counted) and, unless ``probes`` is False, the rule probes."""
    config = config or SessionConfig()
    report = AdversarialReport(protocol.spec.name)
    honest = honest_events(protocol, options=options, seed=seed, config=config)
    for case in build_cases(protocol, honest):
        report.results.append(run_case(protocol, case, options=options, seed=seed,
                                       config=config))
    if probes:
        from lingxi.session.probes import run_rule_probes

        report.rules = run_rule_probes(protocol, honest, options=options, seed=seed,
                                       config=config)
    return report
