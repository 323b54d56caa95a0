"""Replay guard keyed on the signature (the id is not signed, so it cannot be the key).

An entry lives until its timestamp leaves the acceptance window (after that the
window check rejects the envelope on its own), so memory is bounded by the
traffic of one window. When full of live entries the guard fails closed with
``envelope.replay_capacity`` rather than forgetting an entry early.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable

from lingxi.wire.errors import EnvelopeError

_push = heapq.heappush


class ReplayGuard:
    def __init__(self, capacity: int = 100_000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._expiry: dict[Hashable, float] = {}
        self._heap: list[tuple[float, Hashable]] = []

    def __len__(self) -> int:
        return len(self._expiry)

    def __contains__(self, key: object) -> bool:
        return key in self._expiry

    def purge(self, now: float) -> None:
        """Forget entries whose envelopes can no longer pass the window."""
        heap, expiry = self._heap, self._expiry
        while heap and heap[0][0] < now:
            _, key = heapq.heappop(heap)
            expiry.pop(key, None)

    def check_and_remember(self, key: str, expires_at: float, now: float) -> None:
        """Reject ``key`` if seen; otherwise remember it until ``expires_at``."""
        self._remember(key, expires_at, now)

    def _remember(self, key: Hashable, expires_at: float, now: float) -> None:
        """:meth:`check_and_remember` of what is kept for a key (a subclass may keep less)."""
        expiry, heap = self._expiry, self._heap
        if key in expiry:
            raise EnvelopeError("envelope.replay", "this envelope was already accepted",
                                path="$.signature")
        if heap and heap[0][0] < now:
            self.purge(now)
        if len(expiry) >= self.capacity:
            raise EnvelopeError("envelope.replay_capacity",
                                f"replay guard holds {self.capacity} live envelopes; refusing more "
                                "until some leave the window")
        expiry[key] = expires_at
        _push(heap, (expires_at, key))
