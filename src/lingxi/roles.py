"""The two sides of an A2A session, as one type: a host listens, a guest connects.

A ``StrEnum``, so a role is still the string on the wire and in every record
(``Role.HOST == "host"``, JSON writes ``"host"``); what the type adds is that a side
has exactly one peer. Below every layer: the wire, the cards and the session all name
sides.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    HOST = "host"
    GUEST = "guest"

    @property
    def peer(self) -> Role:
        """The other side."""
        return Role.GUEST if self is Role.HOST else Role.HOST


ROLES: tuple[Role, Role] = (Role.HOST, Role.GUEST)

# How a two-sided game ended, as both parties sign it into their receipts and the
# registry rates it: the winning side's role, or a draw.
DRAW = "draw"
RESULTS: tuple[str, str, str] = (Role.HOST.value, Role.GUEST.value, DRAW)


def peer_of(role: str) -> Role:
    """The other side of ``role`` ("host" or "guest"); anything else is a ValueError, so a
    side that is neither never silently becomes the host."""
    return Role(role).peer


def peer_name(role: str) -> str:
    """``peer_of(role)`` as a plain ``str``: what goes into payloads and records, whose
    validators take an exact ``str`` (a subclass of it is refused there)."""
    return peer_of(role).value
