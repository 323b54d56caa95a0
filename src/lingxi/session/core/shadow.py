"""Shadow judge: the guest recomputes a round result and diffs the judged fields.

Only fields the judge produces are compared (``*_hp``, ``*_mana``,
``*_damage_dealt``, ``*_cd_*``, ``round_winner``, ``game_over``,
``game_winner``); moves are protected by commit-reveal, machine fields are not
the judge's business.
"""

from __future__ import annotations

import re
from typing import Any

JUDGED = re.compile(r"^(.+_hp|.+_mana|.+_damage_dealt|.+_cd_.+|round_winner|game_over|game_winner)$")


def judged_fields(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if JUDGED.match(k)}


def diff_judged(host: dict[str, Any], recomputed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{field: {"host": …, "recomputed": …}}`` for every judged field that differs."""
    out: dict[str, dict[str, Any]] = {}
    keys = set(judged_fields(host)) | set(judged_fields(recomputed))
    for key in sorted(keys):
        a, b = host.get(key), recomputed.get(key)
        if a != b or type(a) is not type(b):
            out[key] = {"host": a, "recomputed": b}
    return out
