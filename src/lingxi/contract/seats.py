"""Group specs: ``seats`` and the group directions (issue 23.1).

A spec that declares ``seats`` is a group spec: N members on one signed,
ordered log (:mod:`lingxi.group`). Its messages go ``to_group`` (an entry of
the log every member sees) or ``to_member`` (a direct message between two
members, outside the log). Two-party specs never declare ``seats``, so their
protocol_id is unchanged; a group spec's ``seats`` is part of its id.

``seats`` is either a count range ``{"min": 3, "max": 6}`` or named roles
``{"roles": ["chair", "secretary", "member"]}`` (exactly those seats, in
that order). The rules and their codes are in docs/groups.md.
"""

from __future__ import annotations

import re
from typing import Any

from lingxi.contract.model import GROUP_DIRECTIONS, SCHEMA_DIRECTIONS
from lingxi.errors import Report
from lingxi.records import FrozenRecord, frozen_record

GROUP_MODE = "group"
MIN_SEATS = 2
MAX_SEATS = 16
_ROLE = re.compile(r"[a-z][a-z0-9_]{0,31}")


@frozen_record
class Seats(FrozenRecord):
    """How many members a group spec seats, and their role names if it names them."""

    min: int
    max: int
    roles: tuple[str, ...] = ()

    def admits(self, count: int) -> bool:
        return self.min <= count <= self.max

    @classmethod
    def from_block(cls, block: dict[str, Any]) -> Seats:
        """From a block :func:`check_seats` accepted."""
        if "roles" in block:
            roles = tuple(block["roles"])
            return cls(len(roles), len(roles), roles)
        return cls(block["min"], block["max"])


def _count(value: Any) -> bool:
    return type(value) is int and MIN_SEATS <= value <= MAX_SEATS


def check_seats(doc: dict[str, Any], report: Report) -> bool:
    """Check ``doc["seats"]`` and its agreement with flow mode; True for a group spec."""
    flow = doc.get("flow")
    mode = flow.get("mode") if isinstance(flow, dict) else None
    if "seats" not in doc:
        if mode == GROUP_MODE:
            report.add("spec.bad_seats", "flow mode group needs a seats block", "seats")
        return False
    block = doc["seats"]
    path = "seats"
    if not isinstance(block, dict):
        report.add("spec.bad_seats", "seats must be an object: {\"min\": 3, \"max\": 6} or "
                   "{\"roles\": [...]}", path)
        return True
    if "roles" in block:
        roles = block["roles"]
        extra = sorted(set(block) - {"roles"})
        if extra:
            report.add("spec.bad_seats", f"named seats take only roles, not {extra[0]!r}",
                       f"{path}.{extra[0]}")
        if (not isinstance(roles, list) or not MIN_SEATS <= len(roles) <= MAX_SEATS
                or not all(isinstance(r, str) and _ROLE.fullmatch(r) for r in roles)
                or len(set(roles)) != len(roles)):
            report.add("spec.bad_seats", f"roles must be {MIN_SEATS}..{MAX_SEATS} distinct "
                       "names of a-z 0-9 _ (starting with a letter)", f"{path}.roles")
    else:
        extra = sorted(set(block) - {"min", "max"})
        if extra:
            report.add("spec.bad_seats", f"unknown key {extra[0]!r} in seats",
                       f"{path}.{extra[0]}")
        low: Any = block.get("min")
        high: Any = block.get("max")
        if not _count(low) or not _count(high):
            report.add("spec.bad_seats", f"seats.min and seats.max must be integers from "
                       f"{MIN_SEATS} to {MAX_SEATS}", path)
        elif low > high:
            report.add("spec.bad_seats", f"seats.min {low} is above seats.max {high}", path)
    if mode != GROUP_MODE:
        report.add("spec.bad_seats", f"a spec with seats runs in flow mode {GROUP_MODE!r}, "
                   f"not {mode or 'session_loop'!r}", "flow.mode")
    return True


def check_group_directions(doc: dict[str, Any], group: bool, report: Report) -> None:
    """Group specs use only group directions; two-party specs never do."""
    messages = doc.get("messages")
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            continue
        direction = message.get("direction")
        path = f"messages[{index}].direction"
        if group and direction in SCHEMA_DIRECTIONS:
            report.add("spec.bad_direction", f"a group spec (seats) sends messages to_group or "
                       f"to_member, not {direction!r}", path)
        elif not group and direction in GROUP_DIRECTIONS:
            report.add("spec.group_direction", f"direction {direction!r} needs a group spec "
                       "(declare seats and flow mode group)", path)
