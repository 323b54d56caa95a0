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

from lingxi.hooks import DecisionPoint, implements
from lingxi.session import errors as codes
from lingxi.session.core.commit import CommitRules, commitment, matches
from lingxi.session.core.modes.loop import SessionLoopMachine
from lingxi.session.core.shadow import diff_judged


def _field_of_type(message: dict[str, Any] | None, kind: str) -> str | None:
    for name, schema in ((message or {}).get("fields") or {}).items():
        if isinstance(schema, dict) and schema.get("type") == kind:
            return name
    return None


class SimultaneousRoundMachine(SessionLoopMachine):
    mode = "simultaneous_round"

    def begin(self) -> None:
        super().begin()
        rnd = (self.raw.get("flow") or {}).get("round") or {}
        self.value_field: str = rnd.get("value_field") or "choice"
        ref = str(rnd.get("value_type_ref") or "")
        ref_message, _, ref_field = ref.partition(".fields.")
        self.reveal_name = ref_message if ref_message in self.declared else None
        self.value_schema = (((self.declared.get(ref_message) or {}).get("fields") or {})
                             .get(ref_field or self.value_field) or {})
        self.commit_name = None
        round_steps = set()
        for phase in self.plan.phases:
            names = {s.message for s in phase.steps}
            if self.reveal_name in names or any(
                    _field_of_type(self.declared.get(n), "hash") for n in names):
                round_steps |= names
        for name in sorted(round_steps):
            if self.commit_name is None and _field_of_type(self.declared.get(name), "hash"):
                self.commit_name = name
            if self.reveal_name is None and self.value_field in (
                    (self.declared.get(name) or {}).get("fields") or {}):
                self.reveal_name = name
        self.round_phase_names = round_steps
        self.hash_field = _field_of_type(self.declared.get(self.commit_name), "hash") or "hash"
        self.nonce_field = _field_of_type(self.declared.get(self.reveal_name), "nonce") or "nonce"
        self.rules = CommitRules.from_spec(self.raw.get("commit_reveal"))
        self.choices = list(self.raw.get("choices") or self.value_schema.get("values") or [])
        self.shadow = bool(self.raw.get("shadow_judge")) and implements(
            self.hooks, "proto_round_judge_pure")
        if self.role == "guest" and self.raw.get("shadow_judge"):
            self.emit("shadow_judge.enabled" if self.shadow else "shadow_judge.unavailable",
                      reason="" if self.shadow else
                      "the hooks have no proto_round_judge_pure; host results are not re-judged")
        self.my_secret: dict[int, tuple[Any, str]] = {}
        self.peer_commit: dict[int, str] = {}
        self.revealed: dict[int, dict[str, Any]] = {}
        self.prior_result: dict[str, Any] | None = None
        self.rounds_done = 0

    # -- helpers ------------------------------------------------------------
    def _round_no(self) -> int:
        return self.cursor.iteration

    def _round_field(self, name: str) -> str | None:
        fields = (self.declared.get(name) or {}).get("fields") or {}
        return "round" if "round" in fields else None

    def _is_result(self, name: str) -> bool:
        return (name in self.round_phase_names and name not in (self.commit_name, self.reveal_name)
                and self.declared.get(name, {}).get("direction") == "host_to_guest")

    def rounds_played(self) -> int:
        return self.rounds_done if self.state == "running" else 0

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

    def _compose_commit(self) -> None:
        round_no = self._round_no()
        point = self.call("proto_round_point", round_no)
        if not isinstance(point, DecisionPoint):
            point = DecisionPoint(legal=self.choices, view={"round": round_no})
        point.legal = list(point.legal or self.choices)
        point.message = self.commit_name
        point.view = {"round": round_no, **(point.view or {})}

        def choose() -> Any:
            return self.call("proto_round_choose", round_no, point)

        def commit(value: Any) -> None:
            if not self._value_ok(value):
                self.violation(codes.HOOKS_INVALID_MESSAGE,
                               f"the round value {value!r} is not allowed by the spec",
                               {"value": value, "choices": self.choices})
            nonce = self.rules.make_nonce(self.rng)
            self.my_secret[round_no] = (value, nonce)
            payload = {"action": self.commit_name, self.hash_field: commitment(value, nonce)}
            if self._round_field(self.commit_name):
                payload["round"] = round_no
            self.send(payload)

        self.decide(point, commit, choose)

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
        if not isinstance(result, dict):
            self.violation(codes.HOOKS_BAD_RESULT, "proto_round_judge must return a message dict",
                           {"returned": type(result).__name__})
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
            self._check_round(name, payload, round_no)
            self.peer_commit[round_no] = payload[self.hash_field]
        elif name == self.reveal_name:
            self._check_reveal(payload, round_no)
        elif self._is_result(name):
            self._check_result(payload, round_no)
            self.rounds_done += 1
            self._emit_round(round_no, payload)
            super().received(name, payload, in_flow)
        else:
            super().received(name, payload, in_flow)

    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        self._message_round = self._round_no()
        super().on_message(name, payload, correlation_id)

    def _check_round(self, name: str, payload: dict[str, Any], round_no: int) -> None:
        if self._round_field(name) and payload.get("round") != round_no:
            self.violation(codes.WRONG_ROUND,
                           f"{name} carries round {payload.get('round')!r}, expected {round_no}",
                           {"payload": payload, "expected_round": round_no})

    def _check_reveal(self, payload: dict[str, Any], round_no: int) -> None:
        self._check_round(self.reveal_name, payload, round_no)
        value, nonce = payload.get(self.value_field), payload.get(self.nonce_field)
        if not self._value_ok(value):
            self.violation(codes.NOT_IN_CHOICES, f"revealed value {value!r} is not a legal choice",
                           {"payload": payload, "choices": self.choices})
        if not self.rules.nonce_ok(nonce):
            self.violation(codes.BAD_NONCE, "the nonce does not have the declared length and "
                           f"charset ({self.rules.nonce_length} chars)", {"payload": payload})
        committed = self.peer_commit.get(round_no)
        if committed is None or not matches(value, nonce, committed):
            evidence = {"round": round_no, "committed": committed, "value": value,
                        "nonce": nonce, "recomputed": commitment(value, nonce)}
            self.emit("commit_mismatch_detected", **evidence)
            self.violation(codes.COMMIT_MISMATCH,
                           "SHA256(value:nonce) does not match the peer's commitment", evidence)
        self.revealed.setdefault(round_no, {})[self.peer] = value

    def _check_result(self, payload: dict[str, Any], round_no: int) -> None:
        self._check_round(self._result_name(payload), payload, round_no)
        values = self.revealed.get(round_no, {})
        for side in ("host", "guest"):
            echoed = f"{side}_{self.value_field}"
            if echoed in payload and payload[echoed] != values.get(side):
                self.violation(codes.RESULT_MISMATCH,
                               f"the result says {side} played {payload[echoed]!r}, "
                               f"but {side} revealed {values.get(side)!r}",
                               {"payload": payload, "revealed": values})
        if self.shadow:
            prior = copy.deepcopy(self.prior_result)
            expected = self.call("proto_round_judge_pure", prior, round_no,
                                 values.get("host"), values.get("guest"))
            if not isinstance(expected, dict):
                self.violation(codes.HOOKS_BAD_RESULT,
                               "proto_round_judge_pure must return a dict", {})
            diff = diff_judged(payload, expected)
            if diff:
                evidence = {"round": round_no, "diff": diff}
                self.emit("balance_mismatch_detected", **evidence)
                self.violation(codes.BALANCE_MISMATCH,
                               f"the host's round {round_no} result differs from the shadow "
                               f"judge in {', '.join(diff)}", evidence)
        self.prior_result = payload

    def _result_name(self, payload: dict[str, Any]) -> str:
        return str(payload.get("action"))

    def _emit_round(self, round_no: int, result: dict[str, Any]) -> None:
        values = self.revealed.get(round_no, {})
        self.emit("round", round=round_no, host=values.get("host"), guest=values.get("guest"),
                  result=result)
