"""The loaded contract: :class:`Spec` and :func:`load_spec`.

``load_spec`` reads the document, runs every check in
:mod:`lingxi.contract.check`, and only then builds the model and compiles the
message and option validators (once per spec).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lingxi.contract.check import check_spec_document, message_actions
from lingxi.contract.commit_reveal import CommitReveal
from lingxi.contract.errors import MessageError, SpecError
from lingxi.contract.messages import MessageIndex, check_direction
from lingxi.contract.model import (
    DEFAULT_MODE,
    DEFAULT_SPEC_VERSION,
    Decision,
    Exchange,
    Flow,
    MessageSchema,
    Options,
    Phase,
    RoundSpec,
)
from lingxi.contract.options import OptionsChecker
from lingxi.contract.protocol_id import protocol_id
from lingxi.contract.seats import Seats
from lingxi.contract.source import read_spec_document
from lingxi.errors import Finding


class Spec:
    """A valid contract with its validators compiled."""

    def __init__(self, raw: dict[str, Any], warnings: list[Finding], origin: str = "<dict>"):
        self.raw = raw
        self.origin = origin
        self.warnings = warnings
        self.name: str = raw["name"]
        self.spec_version: str = raw.get("spec_version", DEFAULT_SPEC_VERSION)
        self.description: str = raw.get("description", "")
        self.type: str | None = raw.get("type")
        self.protocol_id: str = protocol_id(raw)
        self.shadow_judge: bool = raw.get("shadow_judge", False)
        # a group spec (seats, flow mode group) runs on a group log, not host/guest
        self.seats: Seats | None = Seats.from_block(raw["seats"]) if "seats" in raw else None
        self.messages: dict[str, MessageSchema] = {
            m["name"]: MessageSchema(m["name"], m["direction"], m["fields"])
            for m in raw["messages"]}
        self.flow = _build_flow(raw.get("flow") or {}, self.messages)
        self.choices: list[Any] | None = raw.get("choices")
        self.commit_reveal: dict[str, Any] | None = raw.get("commit_reveal")
        self.commit_rules = CommitReveal.from_block(self.commit_reveal)
        self.rules: dict[str, Any] = raw.get("rules", {})
        self.parameters: dict[str, Any] = raw.get("parameters", {})
        self.timing: dict[str, Any] | None = raw.get("timing")
        decision = raw.get("decision") or {}
        self.decision = Decision(decision.get("mode", "auto"), decision.get("timeout_seconds"),
                                 decision.get("timeout_action", "fallback"))
        self._index = MessageIndex(self.messages,
                                   {m["name"]: message_actions(m) for m in raw["messages"]})
        self._routes = self._index.routes
        self._options = OptionsChecker(self.parameters)

    def __repr__(self) -> str:
        return f"Spec({self.name!r}, protocol_id={self.protocol_id[:12]}…)"

    @property
    def supported(self) -> bool:
        """Whether the contract validates the spec's flow mode (whether it runs: the runtime)."""
        return self.flow.supported

    def message_for(self, action: str, direction: str) -> MessageSchema | None:
        """The schema a payload with this action uses in this direction, if any."""
        slot = self._index.by_action.get(action)
        if slot is None:
            return None
        compiled = slot.get(direction) if direction is not None else next(iter(slot.values()))
        return compiled.schema if compiled else None

    def validate_message(self, payload: Any, direction: str | None,
                         message: str | None = None) -> list[Finding]:
        """Every problem with ``payload`` (empty when valid).

        ``direction`` None accepts either direction; ``message`` forces the
        schema by name instead of choosing it by ``action``.
        """
        if message is None and type(payload) is dict:
            # The common case inline: one route lookup, the schema's verdict.
            try:
                route = self._routes.get(direction)
            except TypeError:  # an unhashable direction: check_direction says why
                route = None
            action = payload.get("action")
            if route is not None and type(action) is str:
                compiled = route.get(action)
                if compiled is not None:
                    good = compiled.verdict(payload)
                    out: list[Finding] = []
                    if good >= 0:
                        compiled.explain(payload, good, out)
                    return out
        check_direction(direction)
        return self._index.validate(payload, direction, message)

    def check_message(self, payload: Any, direction: str | None,
                      message: str | None = None) -> MessageSchema:
        """The schema ``payload`` matches; raise MessageError with all findings if none."""
        index = self._index
        if message is None:
            routed = index.route(payload, direction)
            if routed is not None and routed.verdict(payload) < 0:
                return routed.schema
        check_direction(direction)
        out: list[Finding] = []
        if message is None:
            compiled = index.select(payload, direction, out)
            if compiled is not None:
                compiled.validate(payload, out)
        else:
            out = index.validate(payload, direction, message)
            compiled = index.by_name[message]
        if out or compiled is None:
            raise MessageError.from_findings(out)
        return compiled.schema

    def option_findings(self, options: Any) -> list[Finding]:
        """Errors and warnings for ``options`` without raising."""
        return self._options.findings(options)[1]

    def check_options(self, options: Any) -> Options:
        """Declared values with defaults applied; raise OptionsError on any error."""
        return self._options.check(options)


def _build_flow(raw: dict[str, Any], messages: dict[str, MessageSchema]) -> Flow:
    phases = []
    for index, phase in enumerate(raw.get("phases") or []):
        steps = [Exchange(step["message"],
                          step.get("direction", messages[step["message"]].direction))
                 for step in phase["exchange"]]
        phases.append(Phase(phase.get("phase") or f"phase{index + 1}", phase.get("repeat"),
                            steps))
    mode = raw.get("mode", DEFAULT_MODE)
    round_spec = None
    rnd = raw.get("round")
    if mode == "simultaneous_round" and isinstance(rnd, dict):
        message, _, field = rnd["value_type_ref"].partition(".fields.")
        round_spec = RoundSpec(rnd["value_field"], rnd["value_type_ref"], message, field)
    return Flow(mode=mode, phases=phases, round=round_spec, end_when=raw.get("end_when"),
                raw=raw)


def inspect_spec(source: str | Path | dict[str, Any], *, allow_unknown_version: bool = False
                 ) -> tuple[dict[str, Any], str, list[Finding]]:
    """Read and check without raising on an invalid contract.

    Returns ``(document, origin, findings)``; raises SpecError (exit 2) only
    when the source cannot be read as a JSON object.
    """
    doc, origin, dupes = read_spec_document(source)
    report = check_spec_document(doc, allow_unknown_version=allow_unknown_version,
                                 duplicate_keys=dupes)
    return doc, origin, report.findings


def load_spec(source: str | Path | dict[str, Any], *, allow_unknown_version: bool = False) -> Spec:
    """Load a valid contract or raise SpecError carrying every finding.

    Exit status of the error: 2 when unreadable (missing file, bad JSON), 1
    when readable but invalid. Warnings are kept on ``spec.warnings``.
    """
    doc, origin, findings = inspect_spec(source, allow_unknown_version=allow_unknown_version)
    if any(f.is_error for f in findings):
        raise SpecError.invalid(findings, origin)
    return Spec(doc, [f for f in findings if not f.is_error], origin)
