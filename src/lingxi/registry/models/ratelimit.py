"""Token buckets per key (an agent, an invitation): the registry's request limits.

A bucket holds at most ``count`` tokens and regains ``count`` per ``window``
seconds, so a key may burst ``count`` requests and then goes at the window's
rate. Time is passed in (the store's injected clock), so tests need no sleep.
The buckets live in one process's memory: several server processes on one
database each allow the full rate. The table is bounded, and a full bucket is
the same as no bucket, so full ones are dropped first.
"""

from __future__ import annotations

import threading

MAX_KEYS = 100_000


class TokenBuckets:
    """``count`` requests per ``window`` seconds for each key."""

    def __init__(self, count: int, window: float = 60.0, *, max_keys: int = MAX_KEYS) -> None:
        if count < 1 or window <= 0 or max_keys < 1:
            raise ValueError("a limit needs count >= 1, window > 0 and max_keys >= 1")
        self.count, self.window, self.max_keys = count, window, max_keys
        self._rate = count / window
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def _tokens(self, key: str, now: float) -> float:
        tokens, when = self._buckets.get(key, (float(self.count), now))
        return min(float(self.count), tokens + max(0.0, now - when) * self._rate)

    def take(self, key: str, now: float) -> float:
        """Spend one of ``key``'s tokens and answer 0.0, or, when it has none, spend nothing
        and answer the seconds until it has one again."""
        with self._lock:
            tokens = self._tokens(key, now)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return (1.0 - tokens) / self._rate
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > self.max_keys:
                self._prune(now)
            return 0.0

    def _prune(self, now: float) -> None:
        """Drop full buckets; if that is not enough, the least recently used half."""
        full = [k for k in self._buckets if self._tokens(k, now) >= self.count]
        for key in full:
            del self._buckets[key]
        if len(self._buckets) > self.max_keys:
            by_age = sorted(self._buckets, key=lambda k: self._buckets[k][1])
            for key in by_age[: len(by_age) // 2]:
                del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)
