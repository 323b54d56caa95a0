"""The loaded contract as plain, read-only values.

These are what the session runtime and the CLI read; they are built only from
a document that passed :mod:`lingxi.contract.check`.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from lingxi.errors import Finding
from lingxi.records import FrozenRecord, frozen_record

HOST_TO_GUEST = "host_to_guest"
GUEST_TO_HOST = "guest_to_host"
BOTH = "both"
DIRECTIONS = (HOST_TO_GUEST, GUEST_TO_HOST)
SCHEMA_DIRECTIONS = (HOST_TO_GUEST, GUEST_TO_HOST, BOTH)
# Group specs (``seats``, flow mode group) send to the group log or to one member.
TO_GROUP = "to_group"
TO_MEMBER = "to_member"
GROUP_DIRECTIONS = (TO_GROUP, TO_MEMBER)
ROUTE_DIRECTIONS = DIRECTIONS + GROUP_DIRECTIONS

SUPPORTED_MODES = ("session_loop", "simultaneous_round", "request_response", "free",
                   "mental_poker", "group")
DEFAULT_MODE = "session_loop"
DEFAULT_SPEC_VERSION = "1.0"
KNOWN_SPEC_VERSIONS = ("1.0",)
REPEAT_UNTIL_GAME_OVER = "until game_over"


@frozen_record
class Exchange(FrozenRecord):
    """One step of a phase: a message sent in a direction.

    ``direction`` is the exchange's own direction, or the message's direction
    (possibly ``"both"``) when the spec leaves it out.
    """

    message: str
    direction: str


@frozen_record
class Phase(FrozenRecord):
    """A named run of exchanges; ``repeat`` is "until game_over", a parameter name, or None."""

    name: str
    repeat: str | None
    exchange: list[Exchange]


@frozen_record
class RoundSpec(FrozenRecord):
    """simultaneous_round's contract: which revealed field carries each side's value."""

    value_field: str
    value_type_ref: str
    message: str = ""
    field: str = ""


@frozen_record
class Flow(FrozenRecord):
    mode: str = DEFAULT_MODE
    phases: list[Phase] = field(default_factory=list)
    round: RoundSpec | None = None
    end_when: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def supported(self) -> bool:
        """False for modes the contract does not validate (still loaded and hashed)."""
        return self.mode in SUPPORTED_MODES


@frozen_record
class MessageSchema(FrozenRecord):
    """One declared message: its name, direction and raw field definitions."""

    name: str
    direction: str
    fields: dict[str, Any]

    @property
    def required_fields(self) -> list[str]:
        return [k for k, d in self.fields.items() if isinstance(d, dict) and d.get("required")]

    def matches(self, direction: str) -> bool:
        return self.direction == BOTH or direction == self.direction


@frozen_record
class Decision(FrozenRecord):
    mode: str = "auto"
    timeout_seconds: float | None = None
    timeout_action: str = "fallback"


@frozen_record
class Options(FrozenRecord):
    """Checked options: declared keys only (defaults applied) plus warnings."""

    values: dict[str, Any]
    warnings: list[Finding] = field(default_factory=list)
