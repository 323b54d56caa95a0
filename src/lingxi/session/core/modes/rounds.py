"""simultaneous_round: session_loop plus engine-run commit-reveal.

In the round phase the engine builds the commit and reveal messages itself:
the hooks only choose a value (``proto_round_choose`` or an external
decider). On every peer commit/reveal the engine checks the round number, the
nonce's length and charset, the value against ``choices`` and
``round.value_type_ref``, and SHA256(value:nonce) against the commitment. The
host's hooks judge each round (``proto_round_judge``); with
``shadow_judge: true`` and a ``proto_round_judge_pure`` the guest recomputes
every result and diffs the judged fields.
"""

from __future__ import annotations

import copy
from typing import Any

from lingxi.contract.commit_reveal import commitment, matches
from lingxi.hooks import methods as hook_methods
from lingxi.hooks.base import implements
from lingxi.hooks.result import DecisionPoint
from lingxi.session import errors as codes
from lingxi.session.core.descriptor import FlowMode, describe
from lingxi.session.core.machine import TEXT_LIMIT, State
from lingxi.session.core.modes.loop import SessionLoopMachine
from lingxi.session.core.modes.round_cases import round_cases, round_lines, verify_commitments
from lingxi.session.core.modes.round_layout import round_layout
from lingxi.session.core.shadow import compared_fields, diff_judged


class SimultaneousRoundMachine(SessionLoopMachine):
    mode = "simultaneous_round"

    def begin(self) -> None:
        super().begin()
        spec = self.spec
        layout = round_layout(spec, self.plan)
        self.value_field = layout.value_field
        self.value_schema = layout.value_schema
        self.commit_name, self.reveal_name = layout.commit, layout.reveal
        self.round_phase_names = layout.phase_names
        self.hash_field, self.nonce_field = layout.hash_field, layout.nonce_field
        self.rules = spec.commit_rules
        self.choices = list(spec.choices or self.value_schema.get("values") or [])
        self.shadow = bool(spec.shadow_judge) and implements(self.hooks, "proto_round_judge_pure")
        if self.role == "guest" and spec.shadow_judge:
            self.emit("shadow_judge.enabled" if self.shadow else "shadow_judge.unavailable",
                      reason="" if self.shadow else
                      "the hooks have no proto_round_judge_pure; host results are not re-judged")
        self.my_secret: dict[int, tuple[Any, str]] = {}
        self.peer_commit: dict[int, str] = {}
        self.revealed: dict[int, dict[str, Any]] = {}
        self.prior_result: dict[str, Any] | None = None
        self.rounds_done = 0
        self.chosen: dict[int, Any] = {}  # a value decided before this side's turn to commit

    # -- helpers ------------------------------------------------------------
    def _round_no(self) -> int:
        return self.cursor.iteration

    def _round_field(self, name: str | None) -> str | None:
        schema = self.declared.get(name) if name else None
        return "round" if schema is not None and "round" in schema.fields else None

    def _is_result(self, name: str) -> bool:
        schema = self.declared.get(name)
        return (name in self.round_phase_names and name not in (self.commit_name, self.reveal_name)
                and schema is not None and schema.direction == "host_to_guest")

    def rounds_played(self) -> int:
        return self.rounds_done if self.state == State.RUNNING else 0

    def _value_ok(self, value: Any) -> bool:
        if self.choices and value not in self.choices:
            return False
        kind = self.value_schema.get("type")
        if kind == "enum":
            return value in (self.value_schema.get("values") or [])
        if kind == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                return False
            low, high = self.value_schema.get("min"), self.value_schema.get("max")
            return (low is None or value >= low) and (high is None or value <= high)
        return True

    # -- composing this side's messages -------------------------------------
    def compose(self, mine: list[str]) -> None:
        name = mine[0]
        if name == self.commit_name and name in mine:
            self._compose_commit()
        elif name == self.reveal_name:
            self._compose_reveal()
        elif self.role == "host" and self._is_result(name):
            self._compose_result(name)
        else:
            super().compose(mine)

    def _round_point(self, round_no: int) -> DecisionPoint:
        """This round's decision exactly as the hooks wrote it (message, default, bounds,
        view, peer text); only a missing legal list is filled from the spec's choices."""
        point = self.call("proto_round_point", round_no)
        if not isinstance(point, DecisionPoint):
            point = DecisionPoint(legal=self.choices, view={"round": round_no})
        point.legal = list(point.legal or ([] if point.bounds is not None else self.choices))
        point.view = {"round": round_no, **(point.view or {})}
        return point

    def _ask_round(self, round_no: int, then: Any) -> None:
        """Get this round's value from the hooks (auto) or the decider (manual): the
        timeout fallback and the hybrid suggestion are the hooks' ``default`` when they
        gave one, else their ``proto_round_choose``."""
        point = self._round_point(round_no)
        if self.finished:  # proto_round_point failed
            return

        def choose() -> Any:
            return self.call("proto_round_choose", round_no, point)

        if not self.policy.manual:
            value = choose()
            if not self.finished:
                then(value)
            return
        default = point.default
        self.decide(point, then, (lambda: default) if default is not None else choose)

    def _early_round(self) -> int | None:
        """The round whose value this side can choose now, before the peer's commitment
        arrives: at the start of a round, when this side commits after the peer. Both
        sides are then asked at once (a commitment hides the value, so nothing is gained
        by waiting for the peer's)."""
        if self.commit_name is None or self.state != State.RUNNING or self.finished \
                or self.paused or self.cursor.done or self.cursor.boundary:
            return None
        phase = self.cursor.phase
        assert phase is not None
        mine = next((i for i, step in enumerate(phase.steps)
                     if step.message == self.commit_name and step.direction == self.my_dir),
                    None)
        if mine is None or self.cursor.s >= mine:
            return None
        round_no = self._round_no()
        if round_no in self.my_secret or round_no in self.chosen:
            return None
        return round_no

    def advance(self) -> None:
        super().advance()
        round_no = self._early_round()
        if round_no is not None:
            def hold(value: Any) -> None:
                self.chosen[round_no] = value

            self._ask_round(round_no, hold)

    def _compose_commit(self) -> None:
        round_no = self._round_no()
        if round_no in self.chosen:
            self._commit(round_no, self.chosen.pop(round_no))
        else:
            self._ask_round(round_no, lambda value: self._commit(round_no, value))

    def _commit(self, round_no: int, value: Any) -> None:
        if not self._value_ok(value):
            self.violation(codes.HOOKS_INVALID_MESSAGE,
                           f"the round value {value!r} is not allowed by the spec",
                           {"value": value, "choices": self.choices})
            return
        nonce = self.rules.make_nonce(self.entropy)
        self.my_secret[round_no] = (value, nonce)
        payload: dict[str, Any] = {"action": self.commit_name,
                                   self.hash_field: commitment(value, nonce)}
        if self._round_field(self.commit_name):
            payload["round"] = round_no
        self.send(payload)

    def _compose_reveal(self) -> None:
        round_no = self._round_no()
        value, nonce = self.my_secret[round_no]
        payload = {"action": self.reveal_name, self.value_field: value, self.nonce_field: nonce}
        if self._round_field(self.reveal_name):
            payload["round"] = round_no
        self.send(payload)

    def _compose_result(self, name: str) -> None:
        round_no = self._round_no()
        values = self.revealed.get(round_no, {})
        result = self.call("proto_round_judge", round_no, values.get("host"), values.get("guest"))
        if self.finished:
            return
        if not isinstance(result, dict):
            self.violation(codes.HOOKS_BAD_RESULT, "proto_round_judge must return a message dict",
                           {"returned": type(result).__name__})
            return
        result = dict(result)
        result.setdefault("action", name)
        if self._round_field(name):
            result.setdefault("round", round_no)
        self.prior_result = result
        self.send(result)

    # -- bookkeeping on both directions -------------------------------------
    def after_send(self, name: str, payload: dict[str, Any]) -> None:
        round_no = self._round_no()
        if name == self.reveal_name:
            self.revealed.setdefault(round_no, {})[self.role] = payload[self.value_field]
        elif self._is_result(name):
            self.rounds_done += 1
            self._emit_round(round_no, payload)
        super().after_send(name, payload)

    def received(self, name: str, payload: dict[str, Any], in_flow: bool) -> None:
        if not in_flow:
            super().received(name, payload, in_flow)
            return
        # The cursor already moved past this message; the round it belongs to:
        round_no = self._message_round
        if name == self.commit_name:
            if self._check_round(name, payload, round_no):
                self.peer_commit[round_no] = payload[self.hash_field]
        elif name == self.reveal_name:
            self._check_reveal(payload, round_no)
        elif self._is_result(name):
            if not self._check_result(payload, round_no):
                return
            self.rounds_done += 1
            self._emit_round(round_no, payload)
            super().received(name, payload, in_flow)
        else:
            super().received(name, payload, in_flow)

    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        self._message_round = self._round_no()
        super().on_message(name, payload, correlation_id)

    def _check_round(self, name: str | None, payload: dict[str, Any], round_no: int) -> bool:
        """Whether the message is of this round (a wrong round ends the session)."""
        if self._round_field(name) and payload.get("round") != round_no:
            self.violation(codes.WRONG_ROUND,
                           f"{name} carries round {payload.get('round')!r}, expected {round_no}",
                           {"payload": payload, "expected_round": round_no})
            return False
        return True

    def _check_reveal(self, payload: dict[str, Any], round_no: int) -> None:
        if not self._check_round(self.reveal_name, payload, round_no):
            return
        value, nonce = payload.get(self.value_field), payload.get(self.nonce_field)
        if not self._value_ok(value):
            self.violation(codes.NOT_IN_CHOICES, f"revealed value {value!r} is not a legal choice",
                           {"payload": payload, "choices": self.choices})
            return
        if not self.rules.nonce_ok(nonce):
            self.violation(codes.BAD_NONCE, "the nonce is not "
                           f"{self.rules.nonce_length} lowercase hex characters", {"payload": payload})
            return
        committed = self.peer_commit.get(round_no)
        if committed is None or not matches(value, nonce, committed):
            evidence = {"round": round_no, "committed": committed, "value": value,
                        "nonce": nonce, "recomputed": commitment(value, str(nonce))}
            self.emit("commit_mismatch_detected", **evidence)
            self.violation(codes.COMMIT_MISMATCH,
                           "SHA256(value:nonce) does not match the peer's commitment", evidence)
            return
        self.revealed.setdefault(round_no, {})[self.peer] = value

    def _check_result(self, payload: dict[str, Any], round_no: int) -> bool:
        """Whether the host's result holds: the revealed values echoed, the shadow judge's
        verdict (a lie ends the session)."""
        if not self._check_round(self._result_name(payload), payload, round_no):
            return False
        values = self.revealed.get(round_no, {})
        for side in ("host", "guest"):
            echoed = f"{side}_{self.value_field}"
            if echoed in payload and payload[echoed] != values.get(side):
                self.violation(codes.RESULT_MISMATCH,
                               f"the result says {side} played {payload[echoed]!r}, "
                               f"but {side} revealed {values.get(side)!r}",
                               {"payload": payload, "revealed": values})
                return False
        if self.shadow:
            prior = copy.deepcopy(self.prior_result)
            expected = self.call("proto_round_judge_pure", prior, round_no,
                                 values.get("host"), values.get("guest"))
            if self.finished:
                return False
            if not isinstance(expected, dict):
                self.violation(codes.HOOKS_BAD_RESULT,
                               "proto_round_judge_pure must return a dict", {})
                return False
            diff = diff_judged(payload, expected)
            self.emit("shadow_judge.checked", round=round_no,
                      fields=compared_fields(payload, expected))
            if diff:
                evidence = {"round": round_no, "diff": diff}
                self.emit("balance_mismatch_detected", **evidence)
                self.violation(codes.BALANCE_MISMATCH,
                               f"the host's round {round_no} result differs from the shadow "
                               f"judge in {', '.join(diff)}", evidence)
                return False
        self.prior_result = payload
        return True

    def _result_name(self, payload: dict[str, Any]) -> str:
        return str(payload.get("action"))

    def emit(self, name: str, **data: Any) -> None:
        """A round's result message is told once, by the ``round`` event that follows it:
        its message event says so (``shown_as``) so a watcher prints one line per round."""
        if name in ("message.sent", "message.received") and self._is_result(
                str(data.get("message"))):
            data["shown_as"] = "round"
        super().emit(name, **data)

    def _emit_round(self, round_no: int, result: dict[str, Any]) -> None:
        values = self.revealed.get(round_no, {})
        text = describe(self.hooks, result)  # the hooks' words for the round, from this side
        self.emit("round", round=round_no, host=values.get("host"), guest=values.get("guest"),
                  result=result, **({"text": text[:TEXT_LIMIT]} if text else {}))
        for kept in (self.my_secret, self.peer_commit, self.revealed, self.chosen):
            kept.pop(round_no, None)  # a finished round needs nothing more: memory stays flat


DESCRIPTOR = FlowMode(
    "simultaneous_round", lambda spec: SimultaneousRoundMachine,
    (hook_methods.NEXT, hook_methods.ON_MESSAGE, hook_methods.ROUND_CHOOSE,
     hook_methods.ROUND_JUDGE, hook_methods.ROUND_POINT, hook_methods.ROUND_JUDGE_PURE,
     *hook_methods.COMMON_OPTIONAL),
    summary=round_lines, adversarial_cases=round_cases,
    skeleton_extra=lambda raw: (hook_methods.ROUND_JUDGE_PURE,) if raw.get("shadow_judge") else (),
    verify=verify_commitments)
