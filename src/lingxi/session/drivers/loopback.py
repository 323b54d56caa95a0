"""The loopback TCP driver: both sides' conductors over a real TCP connection, reproducibly.

The same schedule as :class:`~lingxi.session.drivers.memory.LocalPair` (one
virtual clock, one FIFO order of frames, decisions and results), but every
frame crosses a real loopback socket through the wire's
:class:`~lingxi.wire.transport.TcpTransport` (length prefix, frame cap,
read timeout) and the handshake runs over that socket. For one seed it
produces the same bytes as the memory driver, which is what lets
``protocol test`` results stand for sessions played over TCP.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lingxi.session.core.machine import SessionMachine
from lingxi.session.drivers.memory import EPOCH, PEER, Pairing, PairResult, Setup
from lingxi.wire.transport import TcpTransport, connect_tcp, serve_tcp

FRAME_WAIT = 30.0  # seconds a frame may take to cross the loopback (wall time, a hang guard)


class _Named:
    """A TCP transport that names its peer as the memory pipe does (the handshake's
    unknown-peer endpoint carries that name, so both drivers sign the same bytes)."""

    via = "direct"

    def __init__(self, transport: TcpTransport, peer: str) -> None:
        self.transport = transport
        self.peer = peer

    @property
    def closed(self) -> bool:
        return self.transport.closed

    async def send(self, frame: bytes) -> None:
        await self.transport.send(frame)

    async def recv(self, idle_timeout: float | None = None) -> bytes:
        return await self.transport.recv(idle_timeout=idle_timeout)

    async def close(self) -> None:
        await self.transport.close()


async def run_tcp_pair(host: SessionMachine, guest: SessionMachine, *, seed: int = 0,
                       **options: Any) -> PairResult:
    """Play both sides over a fresh loopback TCP connection; see the module doc."""
    now = [0.0]
    setup = Setup.for_seed(seed, lambda: EPOCH + now[0])
    accepted: asyncio.Future[TcpTransport] = asyncio.get_running_loop().create_future()
    finished = asyncio.Event()

    async def on_connection(transport: TcpTransport) -> None:
        if not accepted.done():
            accepted.set_result(transport)
            await finished.wait()

    server = await serve_tcp(on_connection, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        guest_tcp = await connect_tcp("127.0.0.1", port)
        host_tcp = await asyncio.wait_for(accepted, FRAME_WAIT)
        ends = {"host": _Named(host_tcp, "local://guest"),
                "guest": _Named(guest_tcp, "local://host")}
        host_keys, guest_keys = await asyncio.gather(*setup.handshakes(ends["host"],
                                                                       ends["guest"]))
        pairing = Pairing(host, guest, setup=setup, clock_ref=now,
                          keys={"host": host_keys, "guest": guest_keys}, **options)
        steps = pairing.steps()
        try:
            target, frame = next(steps)
            while True:
                await ends[PEER[target]].send(frame)
                arrived = await ends[target].recv(idle_timeout=FRAME_WAIT)
                target, frame = steps.send(arrived)
        except StopIteration as done:
            result: PairResult = done.value
        await guest_tcp.close()
        return result
    finally:
        finished.set()
        server.close()
        await server.wait_closed()
