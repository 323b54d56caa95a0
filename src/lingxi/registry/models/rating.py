"""Elo ratings per (agent, protocol), computed only from sessions with two verified receipts.

Pure: no I/O, no clock, no randomness. Ratings are integers. A new agent starts
at :data:`INITIAL` (1500); one counted game moves the host by
``delta = round(K * (score - expected))`` with ``K`` = :data:`K` (32),
``expected = 1 / (1 + 10 ** ((guest - host) / 400))`` and ``score`` 1 for a host
win, 0.5 for a draw and 0 for a guest win, and moves the guest by ``-delta``, so
the sum of the two ratings is exactly conserved. Python's ``round`` (half to
even) over IEEE doubles gives the same integer on every platform.

The result of a session is the ``result`` field both parties signed into their
receipts (``"host"``, ``"guest"`` or ``"draw"``: who won, named by role). It
counts only when both receipts say ``completed`` and name the same result;
:func:`agreed_result` says why not otherwise.

:func:`replay_ratings` recomputes every rating from the ``rating`` log records
alone, so an audit catches a rating the operator edited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lingxi.roles import RESULTS

INITIAL = 1500
K = 32
SCORE = {"host": 1.0, "draw": 0.5, "guest": 0.0}
RECORD_KIND = "rating"


@dataclass(frozen=True)
class Standing:
    """One agent's rating in one protocol and how many counted games made it."""

    rating: int = INITIAL
    games: int = 0


def expected(rating: int, opponent: int) -> float:
    """The expected score of ``rating`` against ``opponent`` (0..1)."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


def update(host: Standing, guest: Standing, result: str) -> tuple[Standing, Standing]:
    """The two standings after one game the ``result`` side won (or a ``draw``)."""
    if result not in SCORE:
        raise ValueError(f"result must be one of {', '.join(RESULTS)}")
    delta = round(K * (SCORE[result] - expected(host.rating, guest.rating)))
    return (
        Standing(host.rating + delta, host.games + 1),
        Standing(guest.rating - delta, guest.games + 1),
    )


def agreed_result(
    host_receipt: dict[str, Any], guest_receipt: dict[str, Any]
) -> tuple[str | None, str | None]:
    """``(result, None)`` when the two receipts agree on a completed game, else
    ``(None, why)``. The receipts must already be individually verified."""
    for role, receipt in (("host", host_receipt), ("guest", guest_receipt)):
        if receipt.get("status") != "completed":
            return None, f"the {role} receipt's status is not completed"
        if receipt.get("result") not in RESULTS:
            return None, f"the {role} receipt names no result (host, guest or draw)"
    if host_receipt["result"] != guest_receipt["result"]:
        return None, "the two receipts name different results"
    return str(host_receipt["result"]), None


def rating_record(
    *,
    session_id: str,
    protocol_id: str,
    result: str,
    host_agent_id: str,
    guest_agent_id: str,
    before: tuple[Standing, Standing],
    receipts: dict[str, Any],
) -> dict[str, Any]:
    """The ``server`` facts of the log record of one counted game."""
    after = update(before[0], before[1], result)

    def side(agent: str, b: Standing, a: Standing) -> dict[str, Any]:
        return {"agent_id": agent, "before": b.rating, "after": a.rating, "games": a.games}

    return {
        "session_id": session_id,
        "protocol_id": protocol_id,
        "result": result,
        "system": {"name": "elo", "k": K, "initial": INITIAL},
        "host": side(host_agent_id, before[0], after[0]),
        "guest": side(guest_agent_id, before[1], after[1]),
        "receipts": receipts,
    }


def replay_ratings(
    facts: list[dict[str, Any]],
) -> tuple[dict[tuple[str, str], Standing], list[str]]:
    """Every standing recomputed from rating records' facts in log order, and the
    problems found: a record whose ``before`` is not the replayed standing, whose
    ``after`` is not what the formula gives, or a session counted twice."""
    table: dict[tuple[str, str], Standing] = {}
    seen: set[str] = set()
    problems: list[str] = []
    for number, fact in enumerate(facts, 1):
        try:
            sid, pid, result = fact["session_id"], fact["protocol_id"], fact["result"]
            host, guest = fact["host"], fact["guest"]
            keys = (host["agent_id"], pid), (guest["agent_id"], pid)
            if result not in SCORE or keys[0] == keys[1]:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            problems.append(f"rating record {number} is malformed")
            continue
        if sid in seen:
            problems.append(f"rating record {number}: session {sid} was already counted")
            continue
        seen.add(sid)
        before = table.get(keys[0], Standing()), table.get(keys[1], Standing())
        if (host.get("before"), guest.get("before")) != (before[0].rating, before[1].rating):
            problems.append(
                f"rating record {number}: the ratings before session {sid} are "
                "not the ones the earlier records give"
            )
        after = update(before[0], before[1], result)
        if (host.get("after"), guest.get("after"), host.get("games"), guest.get("games")) != (
            after[0].rating,
            after[1].rating,
            after[0].games,
            after[1].games,
        ):
            problems.append(
                f"rating record {number}: the ratings after session {sid} are "
                "not what the Elo formula gives"
            )
        table[keys[0]], table[keys[1]] = after
    return table, problems


# ---------------------------------------------------------------------------------- tables
# A posted table (N members, docs/groups.md) is not a two-sided game, and the registry does
# not replay its game: what it verifies is the final head every seated member signed, whose
# close entry names each identity that held a seat and how it ended. So a table moves no
# Elo; each member's standing in the protocol counts its tables by that outcome: completed
# (seated at the close, receipt signed), left, or timed out. Integers only, counted once
# per logged group receipt; :func:`replay_tables` recomputes them from the log alone.

TABLE_OUTCOMES = ("completed", "left", "timed_out")
TABLE_RECORD_KIND = "group_receipt"


@dataclass(frozen=True)
class TableStanding:
    """One agent's table outcomes in one protocol."""

    completed: int = 0
    left: int = 0
    timed_out: int = 0

    def after(self, outcome: str) -> TableStanding:
        if outcome not in TABLE_OUTCOMES:
            raise ValueError(f"a table outcome is one of {', '.join(TABLE_OUTCOMES)}")
        counts = self.to_dict()
        counts[outcome] += 1
        return TableStanding(**counts)

    def to_dict(self) -> dict[str, int]:
        return {"completed": self.completed, "left": self.left, "timed_out": self.timed_out}


def replay_tables(
    facts: list[dict[str, Any]],
) -> tuple[dict[tuple[str, str], TableStanding], list[str]]:
    """Every table standing recomputed from group receipt records' facts in log order,
    and the problems found: a seat whose stated ``after`` is not the replayed count plus
    its outcome, or one table counted twice."""
    table: dict[tuple[str, str], TableStanding] = {}
    seen: set[str] = set()
    problems: list[str] = []
    for number, fact in enumerate(facts, 1):
        try:
            name, pid, seats = fact["record_id"], fact["protocol_id"], fact["seats"]
            rows = [(s["agent_id"], s["outcome"], s["after"]) for s in seats]
            if any(o not in TABLE_OUTCOMES for _, o, _ in rows):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            problems.append(f"group receipt record {number} is malformed")
            continue
        if name in seen:
            problems.append(f"group receipt record {number}: table {name} was already counted")
            continue
        seen.add(name)
        for agent, outcome, stated in rows:
            now = table.get((agent, pid), TableStanding()).after(outcome)
            if stated != now.to_dict():
                problems.append(f"group receipt record {number}: {agent}'s table counts are "
                                "not what the earlier records give")
            table[(agent, pid)] = now
    return table, problems
