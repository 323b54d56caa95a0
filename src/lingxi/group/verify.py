"""Checking group records offline: one member's record, or several members' together.

A record is what a member keeps: every entry of the log as delivered and the
receipts (each member's signature over the final head). Anyone with the
record can check it; no key but the public identity keys in it is needed.
Several records of one group are also compared position by position, so a
sequencer that showed two members different histories is caught even when
each history is consistent on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lingxi.group.errors import GroupError
from lingxi.group.log import SEATED, GroupLog, Observer, Validator
from lingxi.group.sequencer import raise_if_fork

RECORD_FORMAT = "lingxi.group-record/1"


@dataclass
class Problem:
    code: str
    message: str
    culprit: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, error: GroupError) -> Problem:
        return cls(error.code, error.message, error.culprit, error.evidence)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "culprit": self.culprit,
                "evidence": self.evidence}


@dataclass
class Verdict:
    """What a third party concludes from the records of one group."""

    group: str
    seq: int = 0
    head: str = ""
    members: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    logs: list[GroupLog] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "group": self.group, "seq": self.seq, "head": self.head,
                "members": self.members, "problems": [p.to_dict() for p in self.problems]}


def _record_parts(record: Any) -> tuple[str, list[Any], list[Any]]:
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or not (
            isinstance(record.get("group"), str) and isinstance(record.get("entries"), list)
            and isinstance(record.get("receipts", []), list)):
        raise GroupError("group.malformed", f"a group record is {{format: {RECORD_FORMAT!r}, "
                         "group, entries, receipts}")
    return record["group"], record["entries"], record.get("receipts", [])


def make_record(log: GroupLog, receipts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": RECORD_FORMAT, "group": log.group_id, "entries": list(log.entries),
            "receipts": list(receipts)}


def verify_records(records: list[Any], validate: Validator | None = None,
                   require_receipts: bool = True,
                   observers: Callable[[], list[Observer]] | None = None) -> Verdict:
    """Replay every record, check receipts, compare the records with each other.

    ``observers`` makes each replay's game or vote state (a cheat it finds
    is a problem of the verdict, naming the cheat's signer).
    """
    if not records:
        raise GroupError("group.malformed", "no record to verify")
    parts = [_record_parts(r) for r in records]
    group = parts[0][0]
    if any(p[0] != group for p in parts):
        raise GroupError("group.wrong_group", "the records are of different groups")
    verdict = Verdict(group)
    for _, entries, _receipts in parts:
        log = GroupLog(group, validate, observers=observers() if observers else [])
        for entry in entries:
            try:
                log.append(entry)
            except GroupError as error:
                verdict.problems.append(Problem.of(error))
                break
        verdict.logs.append(log)
    _compare(verdict, [p[1] for p in parts])
    longest = max(verdict.logs, key=lambda lg: lg.seq)
    verdict.seq, verdict.head = longest.seq, longest.head
    signed: dict[str, dict[str, Any]] = {}
    for _, _entries, receipts in parts:
        for receipt in receipts:
            try:
                signer_key = longest.check_receipt(receipt)
            except GroupError as error:
                verdict.problems.append(Problem.of(error))
                continue
            signed[signer_key] = receipt
    for member in sorted(longest.members.values(), key=lambda m: m.seat):
        verdict.members.append({"key": member.key, "seat": member.seat, "status": member.status,
                                "role": member.role, "receipt": member.key in signed})
        if require_receipts and member.status == SEATED and member.key not in signed:
            verdict.problems.append(Problem(
                "group.missing_receipt", f"seat {member.seat} ({member.key[:16]}…) has not "
                "signed the final head", None, {"member": member.key}))
    return verdict


def _compare(verdict: Verdict, histories: list[list[Any]]) -> None:
    """A fork between any two records: the first position where they differ."""
    sequencer = next((lg.sequencer for lg in verdict.logs if lg.sequencer), None)
    for i, one in enumerate(histories):
        for other in histories[i + 1:]:
            for a, b in zip(one, other, strict=False):
                if not (isinstance(a, dict) and isinstance(b, dict)):
                    break
                try:
                    raise_if_fork(verdict.group, sequencer, a, b)
                except GroupError as error:
                    verdict.problems.append(Problem.of(error))
                    return
                except (KeyError, TypeError):
                    break
