"""Shared helpers for the wire tests: keys, endpoints, a hand-moved clock, id sources."""

from __future__ import annotations

import itertools
import uuid

from hypothesis import strategies as st

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



def seeded_identity(n: int):
    from lingxi.wire.identity import Identity
    return Identity.from_seed(bytes([n]) * 32)


async def handshake_pair(transport_a, transport_b, clock, *, host_identity=None,
                         guest_identity=None, expected_host_key=None, expected_guest_key=None,
                         guest_seal=True, host_seal=True):
    """Run both handshake sides concurrently; returns (guest keys, host keys)."""
    import asyncio

    from lingxi.wire.handshake import client_handshake, server_handshake
    host_identity = host_identity or seeded_identity(1)
    guest_identity = guest_identity or seeded_identity(2)
    guest_task = asyncio.create_task(client_handshake(
        transport_a, guest_identity, GUEST, expected_peer_key=expected_host_key, clock=clock,
        timeout=2.0, seal=guest_seal))
    host_task = asyncio.create_task(server_handshake(
        transport_b, host_identity, HOST, expected_peer_key=expected_guest_key, clock=clock,
        timeout=2.0, seal=host_seal))
    results = await asyncio.gather(guest_task, host_task, return_exceptions=True)
    return results[0], results[1]


# envelope parts as hypothesis draws them, for the differential tests of the fast paths
TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
IDS = TEXTS.filter(lambda text: "|" not in text)
ENDPOINTS = st.builds(AgentEndpoint, IDS, TEXTS | st.just("%s%%\"\\"), TEXTS,
                      st.none() | TEXTS, st.none() | TEXTS)
_SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=6)
PAYLOADS = st.dictionaries(st.text(max_size=5), _SCALARS | st.lists(_SCALARS, max_size=3),
                           max_size=4)
