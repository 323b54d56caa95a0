"""Shadow judge: the guest recomputes a round result and diffs the judged fields.

The judged fields are those the guest's pure judge returns. When it returns a
whole message (with ``action``), the seed's list applies (``*_hp``,
``*_mana``, ``*_damage_dealt``, ``*_cd_*``, ``round_winner``, ``game_over``,
``game_winner``): moves are protected by commit-reveal, machine fields are not
the judge's business. When it returns only some fields, every one of them is
judged, so a host that lies about a bid, a budget or a score is caught.
"""

from __future__ import annotations

import re
from typing import Any

JUDGED = re.compile(r"^(.+_hp|.+_mana|.+_damage_dealt|.+_cd_.+|round_winner|game_over|game_winner)$")


def compared_fields(host: dict[str, Any], recomputed: dict[str, Any]) -> list[str]:
    """The fields the shadow judge compares for this pair of results."""
    if "action" in recomputed:
        return sorted(k for k in set(host) | set(recomputed) if JUDGED.match(k))
    return sorted(k for k in recomputed if k != "action")


def diff_judged(host: dict[str, Any], recomputed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{field: {"host": …, "recomputed": …}}`` for every judged field that differs."""
    out: dict[str, dict[str, Any]] = {}
    for key in compared_fields(host, recomputed):
        a, b = host.get(key), recomputed.get(key)
        if a != b or type(a) is not type(b):
            out[key] = {"host": a, "recomputed": b}
    return out
