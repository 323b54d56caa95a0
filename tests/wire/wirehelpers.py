"""Shared helpers for the wire tests: keys, endpoints, a hand-moved clock, id sources."""

from __future__ import annotations

import itertools
import uuid

from lingxi.wire import AgentEndpoint, parse_rfc3339

KEY = b"test-key-0123456789"
AEAD_KEY = bytes(range(32))
T0 = parse_rfc3339("2026-11-30T08:00:00Z")

HOST = AgentEndpoint("agent-host-01", "sys-a", "tcp://127.0.0.1:7401", agent_name="Host")
GUEST = AgentEndpoint("agent-guest-02", "sys-b", "tcp://127.0.0.1:7402")


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def counting_ids():
    counter = itertools.count(1)
    return lambda: str(uuid.UUID(int=next(counter)))


def counting_nonces():
    counter = itertools.count(1)
    return lambda size: next(counter).to_bytes(size, "big")

