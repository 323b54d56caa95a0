"""The network half of the session surface: sessions that run over a channel.

A host on an endpoint, a guest that finds its protocol by the host's offered id, an
in-memory pair of channels (``memory_session``: the whole network driver without a
socket), and the live session a person drives. These import asyncio; the in-memory
surface, :mod:`lingxi.session`, does not.
"""

from __future__ import annotations

from typing import Any

from lingxi.session.drivers.endpoints import guest_session as _guest_session
from lingxi.session.drivers.endpoints import host_session, memory_session
from lingxi.session.drivers.live import LiveSession
from lingxi.session.drivers.network import DriveResult, lines_from
from lingxi.session.runner import LoadedProtocol, find_protocol

__all__ = ["DriveResult", "LiveSession", "guest_session", "host_session", "lines_from",
           "memory_session"]


async def guest_session(protocol: LoadedProtocol | None, endpoint: str, *,
                        allow_skeleton: bool | None = None, **kwargs: Any) -> DriveResult:
    """Join the host at ``endpoint``; without ``protocol`` the host's offered id is
    looked up among the built-ins and the protocol cache (ids re-verified)."""
    return await _guest_session(
        protocol, endpoint,
        protocol_for=lambda pid: find_protocol(pid, allow_skeleton=allow_skeleton), **kwargs)
