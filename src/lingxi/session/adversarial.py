"""The cheating-peer library behind ``lingxi protocol test --adversarial``.

Each case puts an honest machine behind an :class:`Adversary` that rewrites
what it sends, plays it against an honest peer over the in-memory driver, and
checks that the honest side ended the session itself with one of the
expected codes. Cases are built from the spec: for every message type an
unknown field, a missing required field, a wrong type and a value out of
range (or "not applicable" when the message has no such field); an unknown
action, an out-of-phase message, a replayed envelope, a forged signature and
silence from each side; and for simultaneous_round a commit that does not
match its reveal, a value outside the choices, a wrong round number and (with
shadow_judge) a lying round result.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lingxi.session.drivers.memory import Adversary, Side, StuckError
from lingxi.session.core.machine import ROLE_DIRECTION, SessionConfig
from lingxi.session.runner import LoadedProtocol, run_pair
from lingxi.session.core.shadow import JUDGED

ROLES = ("host", "guest")
RANGE_CODES = ("message.out_of_range", "message.bad_value", "message.too_long",
               "message.too_large")


def _is_control(payload: dict[str, Any]) -> bool:
    action = payload.get("action")
    return isinstance(action, str) and (action.startswith("control.")
                                        or action.startswith("session."))


# ------------------------------------------------------------------ samples


def sample_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("min"), schema.get("max")
        value = low if low is not None else 1
        return min(value, high) if high is not None else value
    if kind == "boolean":
        return False
    if kind == "enum":
        return (schema.get("values") or ["x"])[0]
    if kind in ("hash", "key"):
        return "0" * 64
    if kind == "signature":
        return "0" * 128
    if kind == "nonce":
        return "0" * 16
    if kind == "ciphertext":
        return "00"
    if kind == "array":
        return [sample_value(schema.get("items") or {})] * int(schema.get("min_items") or 0)
    if kind == "json":
        return [] if schema.get("container") == "array" else {}
    if kind == "id":
        return "x1"
    return "x"


def sample_message(message: dict[str, Any]) -> dict[str, Any]:
    """A valid payload for ``message`` with its required fields only."""
    fields = message.get("fields") or {}
    action = fields.get("action", {})
    values = action.get("values") or [message.get("name")]
    payload = {"action": values[0] if message.get("name") not in values else message["name"]}
    for name, schema in fields.items():
        if name != "action" and schema.get("required"):
            payload[name] = sample_value(schema)
    return payload


def wrong_type_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        return "1"
    if kind == "boolean":
        return "true"
    if kind == "array":
        return "not-an-array"
    if kind == "json":
        return None
    return 12345


def out_of_range_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        if schema.get("max") is not None:
            return schema["max"] + 1
        if schema.get("min") is not None:
            return schema["min"] - 1
        return None
    if kind == "enum":
        return "zz-not-a-declared-value"
    if kind == "text":
        return "x" * (int(schema.get("max_length") or 2000) + 1)
    if kind in ("hash", "key", "signature", "nonce", "ciphertext", "id"):
        return "Z!" * 40
    return None


# -------------------------------------------------------------- adversaries


class ReplaceFirst(Adversary):
    """Replace the cheater's first protocol message with ``make()``."""

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self.make = make
        self.done = False

    def outgoing(self, side, payload, correlation_id):
        if self.done or _is_control(payload):
            return [(payload, correlation_id)]
        self.done = True
        return [(self.make(), correlation_id)]


class InjectBeforeStart(Adversary):
    """Send a protocol message before the session's offer/accept."""

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self.make = make
        self.done = False

    def outgoing(self, side, payload, correlation_id):
        if not self.done and payload.get("action") in ("session.offer", "session.accept"):
            self.done = True
            return [(self.make(), None), (payload, correlation_id)]
        return [(payload, correlation_id)]


class MutateNth(Adversary):
    """Rewrite the n-th real ``message`` the cheater sends."""

    def __init__(self, message: str, mutate: Callable[[dict[str, Any]], dict[str, Any]],
                 nth: int = 1) -> None:
        self.message, self.mutate, self.nth, self.seen = message, mutate, nth, 0

    def outgoing(self, side, payload, correlation_id):
        if payload.get("action") == self.message:
            self.seen += 1
            if self.seen == self.nth:
                return [(self.mutate(copy.deepcopy(payload)), correlation_id)]
        return [(payload, correlation_id)]


class ReplayFirst(Adversary):
    """Send the first protocol envelope twice, byte for byte."""

    def __init__(self) -> None:
        self.done = False

    def wire(self, side: Side, envelope):
        if self.done or _is_control(envelope.get("payload") or {}):
            return [envelope]
        self.done = True
        return [envelope, copy.deepcopy(envelope)]


class ForgeFirst(Adversary):
    """Change the first protocol envelope's payload after it was signed."""

    def __init__(self) -> None:
        self.done = False

    def wire(self, side: Side, envelope):
        if self.done or _is_control(envelope.get("payload") or {}):
            return [envelope]
        self.done = True
        forged = copy.deepcopy(envelope)
        forged["payload"]["zz_forged"] = True
        return [forged]


class Silent(Adversary):
    """Start the session, then never send anything again (not even an abort)."""

    def outgoing(self, side, payload, correlation_id):
        action = payload.get("action")
        if action in ("session.offer", "session.accept"):
            return [(payload, correlation_id)]
        return []


# ------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    cheater: str
    expect: tuple[str, ...]
    make: Callable[[], Adversary] | None
    note: str = ""

    @property
    def victim(self) -> str:
        return "guest" if self.cheater == "host" else "host"


@dataclass
class CaseResult:
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


@dataclass
class AdversarialReport:
    protocol: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        applicable = [r for r in self.results if r.applicable]
        return {"protocol": self.protocol, "ok": self.ok, "cases": len(self.results),
                "applicable": len(applicable),
                "detected": sum(1 for r in applicable if r.ok),
                "results": [r.to_dict() for r in self.results]}


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
    raw = protocol.spec.raw
    direction = ROLE_DIRECTION[cheater]
    flow = raw.get("flow") or {}
    first = None
    for phase in flow.get("phases") or []:
        for step in phase.get("exchange") or []:
            msg = protocol.spec.messages.get(step.get("message"))
            step_dir = step.get("direction") or (msg.direction if msg else None)
            if step_dir in (direction, "both") and first is None:
                first = step.get("message")
    mine = [m for m in raw.get("messages") or []
            if m.get("direction") in (direction, "both") and m["name"] not in ("error", "end")]
    candidates = [m for m in mine if m["name"] != first]
    if flow.get("mode") == "request_response" or not candidates:
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


def _round_cases(protocol: LoadedProtocol) -> list[Case]:
    spec = protocol.spec
    raw = spec.raw
    rnd = (raw.get("flow") or {}).get("round") or {}
    value_field = rnd.get("value_field", "choice")
    ref_message = str(rnd.get("value_type_ref", "reveal.fields.x")).split(".fields.")[0]
    choices = list(raw.get("choices") or [])
    commit = next((m["name"] for m in raw["messages"]
                   if any(f.get("type") == "hash" for f in m["fields"].values())), "commit")
    cases = []
    for cheater in ROLES:
        def other_choice(p, vf=value_field):
            legal = [c for c in choices if c != p[vf]] or ["zz"]
            p[vf] = legal[0]
            return p

        def outside(p, vf=value_field):
            p[vf] = "zz-not-a-choice"
            return p

        def bump_round(p):
            p["round"] = p.get("round", 0) + 1
            return p

        cases.append(Case(f"commit does not match reveal ({cheater})", cheater,
                          ("session.commit_mismatch",),
                          lambda f=other_choice: MutateNth(ref_message, f)))
        cases.append(Case(f"revealed value outside the choices ({cheater})", cheater,
                          ("session.value_not_in_choices", "message.bad_value"),
                          lambda f=outside: MutateNth(ref_message, f)))
        cases.append(Case(f"wrong round number in commit ({cheater})", cheater,
                          ("session.wrong_round",), lambda f=bump_round: MutateNth(commit, f)))
    result = next((m for m in raw["messages"] if m["direction"] == "host_to_guest"
                   and any(JUDGED.match(k) for k in m["fields"])), None)
    if spec.shadow_judge and result is not None:
        judged = next((k for k, v in result["fields"].items()
                       if JUDGED.match(k) and v.get("type") == "integer"), None)

        def lie(p, key=judged):
            p[key] = p[key] + 1 if p[key] < 90 else p[key] - 1
            return p

        cases.append(Case(f"shadow-judge lie in {result['name']}.{judged}", "host",
                          ("session.balance_mismatch",),
                          lambda f=lie: MutateNth(result["name"], f)))
    echoed = f"guest_{value_field}"
    if result is not None and echoed in result["fields"]:
        def misreport(p, key=echoed):
            legal = [c for c in choices if c != p[key]] or [p[key]]
            p[key] = legal[0]
            return p

        cases.append(Case(f"round result misreports the guest's {value_field}", "host",
                          ("session.result_mismatch", "session.balance_mismatch"),
                          lambda f=misreport: MutateNth(result["name"], f)))
    return cases


def build_cases(protocol: LoadedProtocol) -> list[Case]:
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
    if protocol.spec.flow.mode == "simultaneous_round":
        cases.extend(_round_cases(protocol))
    return cases


def run_case(protocol: LoadedProtocol, case: Case, *, options: dict[str, Any] | None,
             seed: int, config: SessionConfig) -> CaseResult:
    if case.make is None:
        return CaseResult(case.name, case.cheater, case.victim, [], None, True, False,
                          detail=case.note)
    try:
        result = run_pair(protocol, options=options, seed=seed, config=config,
                          adversary=(case.cheater, case.make()), keep_events=False)
    except StuckError as error:
        return CaseResult(case.name, case.cheater, case.victim, list(case.expect), None, False,
                          detail=f"stuck: {error}")
    victim = result.host if case.victim == "host" else result.guest
    detected = victim.code if victim.status == "aborted" and victim.by == "local" else None
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
                    seed: int = 0, config: SessionConfig | None = None) -> AdversarialReport:
    config = config or SessionConfig()
    report = AdversarialReport(protocol.spec.name)
    for case in build_cases(protocol):
        report.results.append(run_case(protocol, case, options=options, seed=seed,
                                       config=config))
    return report
