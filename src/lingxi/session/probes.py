"""Rule probes: what a protocol's hooks do with schema-valid but dishonest moves.

The engine enforces the contract, the flow, commit-reveal, the shadow judge,
envelopes and silence (``lingxi.session.adversarial``). Whether a move is legal
in the game is the hooks' duty, and a passing adversarial run says nothing
about it. Each probe replaces one message a side sent in an honest self-play
with a variant that still passes the contract — another legal value, a false
``game_over``, a claimed win, the same move again — and records what the
other side's hooks did: ``aborted`` (refused it), ``ended`` (the session ended
sooner than honestly), ``continued``, or ``engine`` (the engine refused it
first). Probes are reported, never counted as cheats detected.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lingxi.records import Record
from lingxi.session.core.adversaries import MutateNth
from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.memory import StuckError
from lingxi.session.runner import LoadedProtocol, run_pair

ENGINE_TYPES = frozenset({"hash", "nonce", "signature", "key", "ciphertext", "ot_blob", "ticket"})
MAX_PROBES = 24


@dataclass(repr=False, eq=False)
class ProbeResult(Record):
    name: str
    sender: str
    reaction: str  # aborted | ended | continued | engine | stuck
    code: str | None = None
    detail: str = ""

    @property
    def victim(self) -> str:
        return "guest" if self.sender == "host" else "host"

    def to_dict(self) -> dict[str, Any]:
        return {"probe": self.name, "sender": self.sender, "victim": self.victim,
                "reaction": self.reaction, "code": self.code, "detail": self.detail}


Mutation = Callable[[dict[str, Any]], dict[str, Any]]


def _boolean_lie(name: str, key: str, value: Any, schema: dict[str, Any],
                 sender: str) -> tuple[str, Mutation] | None:
    if key == "game_over" and value is False:
        return f"{name}: false game_over", _setting(key, True)
    if isinstance(value, bool):
        return f"{name}: {key} flipped", _setting(key, not value)
    return None


def _enum_lie(name: str, key: str, value: Any, schema: dict[str, Any],
              sender: str) -> tuple[str, Mutation] | None:
    values = [v for v in schema.get("values") or [] if v != value]
    if "winner" in key and sender in values:
        return f"{name}: {key} claims the {sender} won", _setting(key, sender)
    return (f"{name}: another legal {key}", _setting(key, values[0])) if values else None


def _integer_lie(name: str, key: str, value: Any, schema: dict[str, Any],
                 sender: str) -> tuple[str, Mutation] | None:
    if not isinstance(value, int):
        return None
    high, low = schema.get("max"), schema.get("min")
    other = value + 1 if high is None or value + 1 <= high else value - 1
    if low is not None and other < low:
        return None
    return f"{name}: another legal {key}", _setting(key, other)


_LIES = {"boolean": _boolean_lie, "enum": _enum_lie, "integer": _integer_lie}


def _variants(name: str, payload: dict[str, Any], fields: dict[str, Any],
              sender: str) -> list[tuple[str, Mutation]]:
    """One schema-valid dishonest variant per field of an honest payload, where one exists."""
    out: list[tuple[str, Mutation]] = []
    for key, schema in fields.items():
        if key in ("action", "round") or not isinstance(schema, dict) or key not in payload:
            continue
        lie = _LIES.get(str(schema.get("type")))
        found = lie(name, key, payload[key], schema, sender) if lie else None
        if found is not None:
            out.append(found)
    return out


def _setting(key: str, value: Any) -> Mutation:
    def mutate(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, key: value}
    return mutate


def _plan(protocol: LoadedProtocol, honest: dict[str, list[dict[str, Any]]]
          ) -> list[tuple[str, str, str, int, Mutation]]:
    """(probe name, sender, message, nth, mutation) for every probe to run."""
    spec = protocol.spec
    plan = []
    for sender in ("host", "guest"):
        sent = [e for e in honest.get(sender, []) if e.get("event") == "message.sent"]
        seen: dict[str, list[dict[str, Any]]] = {}
        for event in sent:
            seen.setdefault(event["message"], []).append(event["payload"])
        for name, payloads in seen.items():
            schema = spec.messages.get(name)
            if schema is None or any(isinstance(d, dict) and d.get("type") in ENGINE_TYPES
                                     for d in schema.fields.values()):
                continue  # engine-built messages (commit-reveal) are the engine's to check
            for label, mutate in _variants(name, payloads[0], schema.fields, sender):
                plan.append((label, sender, name, 1, mutate))
            if len(payloads) >= 2 and payloads[1] != payloads[0]:
                first = payloads[0]

                def repeat(p: dict[str, Any], first: dict[str, Any] = first) -> dict[str, Any]:
                    again = copy.deepcopy(first)
                    if "round" in p:
                        again["round"] = p["round"]
                    return again

                plan.append((f"{name}: the same move again", sender, name, 2, repeat))
    return plan[:MAX_PROBES]


def run_rule_probes(protocol: LoadedProtocol, honest: dict[str, list[dict[str, Any]]], *,
                    options: dict[str, Any] | None, seed: int,
                    config: SessionConfig) -> list[ProbeResult]:
    baseline = sum(1 for e in honest.get("host", [])
                   if e.get("event") in ("message.sent", "message.received"))
    results = []
    for label, sender, message, nth, mutate in _plan(protocol, honest):
        try:
            run = run_pair(protocol, options=options, seed=seed, config=config,
                           adversary=(sender, MutateNth(message, mutate, nth)),
                           keep_events=False)
        except StuckError as error:
            results.append(ProbeResult(label, sender, "stuck", None, str(error)))
            continue
        victim = run.host if sender == "guest" else run.guest
        if victim.status == "aborted" and victim.by == "local":
            hooks = (victim.code or "").startswith("hooks.")
            results.append(ProbeResult(label, sender, "aborted" if hooks else "engine",
                                       victim.code, victim.reason))
        elif victim.status == "completed" and victim.messages < baseline:
            results.append(ProbeResult(label, sender, "ended", None,
                                       f"after {victim.messages} of {baseline} messages"))
        else:
            results.append(ProbeResult(label, sender, "continued", victim.code,
                                       f"{victim.status} after {victim.messages} messages"))
    return results
