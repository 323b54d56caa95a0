"""Verdicts: who won a session, how it ended, and who broke what, by role and identity key.

A verdict is a plain dict, so it travels in an outcome's summary, in
``lingxi session verify --json`` and ``lingxi session compare --json``
alike::

    {"winner": "host" | "guest" | "draw" | None, "how": GAME | RESIGNATION | ...,
     "code": str | None, "culprit": role | None, "culprit_key": hex | None,
     "reason": str, "identities": {"host": hex | None, "guest": hex | None}}

``culprit`` is the side whose own act ended the game against it (a breach,
a withheld step, a false claim, a resignation); ``culprit_key`` is its
Ed25519 identity key as a signed record proves it (None when the record
proves no identity for it). A flow mode fills one in; this module only says
what the fields mean.
"""

from __future__ import annotations

from typing import Any

ROLES = ("host", "guest")

GAME = "game"  # the rules decided it and the record is complete
RESIGNATION = "resignation"  # a side quit (in mental poker: opened before the game was decided)
FORFEIT = "forfeit"  # the side that owed a step withheld it (a signed claim names it)
FALSE_CLAIM = "false_claim"  # a side claimed a forfeit it had no right to (it owed the step)
BREACH = "breach"  # a signed message broke a rule
INCOMPLETE = "incomplete"  # the record stops with no claim: nobody can be named
UNDECIDED = "undecided"  # the record cannot tell (altered, a fork, no rules to judge by)

OK_ENDINGS = (GAME, RESIGNATION)  # endings that are not a fault of the record


def other(role: str) -> str:
    return "guest" if role == "host" else "host"


def verdict(how: str, *, winner: str | None = None, code: str | None = None,
            culprit: str | None = None, reason: str = "",
            identities: dict[str, str | None] | None = None) -> dict[str, Any]:
    """A verdict; a culprit loses, so its peer is the winner unless one is given."""
    ids = {r: (identities or {}).get(r) for r in ROLES}
    if culprit in ROLES and winner is None:
        winner = other(culprit)
    return {"winner": winner, "how": how, "code": code, "culprit": culprit,
            "culprit_key": ids.get(culprit) if culprit in ROLES else None,
            "reason": reason, "identities": ids}


def is_fault(v: dict[str, Any] | None) -> bool:
    """Whether the verdict blames a side for breaking the session (not a game result)."""
    if not v:
        return False
    return v.get("how") not in (*OK_ENDINGS, INCOMPLETE) and bool(v.get("culprit"))


def verdict_line(v: dict[str, Any]) -> str:
    """One plain line (peer text inside must still be escaped by the printer)."""
    who = ""
    if v.get("culprit"):
        key = v.get("culprit_key") or "no signed seat: unnamed"
        who = f" by the {v['culprit']} (identity {key})"
    win = v.get("winner")
    result = {"draw": "a draw", None: "no winner"}.get(win, f"{win} wins")
    code = f" [{v['code']}]" if v.get("code") else ""
    reason = f": {v['reason']}" if v.get("reason") else ""
    return f"{v.get('how')}{who}{code}, {result}{reason}"


def contradicted(v: dict[str, Any], owner: str | None, acknowledged: dict[str, int] | None,
                 recorded: dict[str, int], reason: str, code: str | None = None
                 ) -> dict[str, Any]:
    """A forfeit claimed by the record's owner, when the peer's signed receipt acknowledges
    more of the owner's envelopes than the record holds: the record was cut after the fact,
    so the claim falls and the owner is the culprit."""
    if (v.get("how") != FORFEIT or owner not in ROLES or v.get("culprit") != other(owner)
            or acknowledged is None):
        return v
    direction = "host_to_guest" if owner == "host" else "guest_to_host"
    if acknowledged.get(direction, 0) <= recorded.get(direction, 0):
        return v
    return verdict(FALSE_CLAIM, code=code, culprit=owner,
                   identities=v.get("identities"),
                   reason=f"{reason}: the peer's receipt acknowledges "
                   f"{acknowledged[direction]} {direction} envelopes, the record holds "
                   f"{recorded.get(direction, 0)}")
