"""Findings built once per distinct problem, then reused.

A :class:`~lingxi.errors.Finding` is an immutable value, and building one
(a frozen dataclass plus its formatted text) costs more than checking the
field it describes. A peer that sends a malformed message tends to send the
same mistake again (the same unknown key, the same field of the wrong
type), so each checker keeps the findings it has made, keyed by what varies
(the path, the kind of value), and hands out the same object next time.

The memory is bounded: past ``limit`` distinct keys new findings are still
made, just not kept, so a peer inventing a new key per message cannot grow it.
"""

from __future__ import annotations

from collections.abc import Hashable

from lingxi.errors import Finding

DEFAULT_LIMIT = 64


class FindingMemo:
    """Findings by key; ``made.get(key)`` is the lookup, :meth:`keep` the store."""

    __slots__ = ("made", "limit")

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.made: dict[Hashable, Finding] = {}
        self.limit = limit

    def keep(self, key: Hashable, finding: Finding) -> Finding:
        if len(self.made) < self.limit:
            self.made[key] = finding
        return finding
