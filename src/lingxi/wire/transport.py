"""Frame transports: 4-byte big-endian length + body, over asyncio TCP or in memory.

Both kinds share one interface so a session driver runs unchanged over either:

- pull mode (handshakes, tests): ``await send(frame)``, ``await recv(idle_timeout=None)``;
- push mode (channels): ``set_frame_handler(on_frame, on_error)`` hands every
  complete frame to ``on_frame`` as soon as it is read (no task switch per
  frame), ``send_nowait(frame)`` writes without waiting, ``pause_reading()`` /
  ``resume_reading()`` apply back-pressure;
- ``close()`` / ``abort()``, ``closed``, ``peer``, ``max_frame``.

Limits:

- ``max_frame`` (default 1 MiB) is checked on send and, on receive, from the
  length prefix before any of the body is kept; an oversized announcement
  closes the connection (``transport.frame_too_large``).
- ``read_timeout``: once a frame's first byte arrives, the whole frame must
  arrive within this many seconds (a deadline per frame, not per byte), so a
  peer trickling one byte per second is dropped (``transport.timeout``). It
  also bounds how long ``send`` waits for a peer that does not read.
- ``recv(idle_timeout=…)``: no frame within that time is ``transport.peer_silent``.
- A peer hanging up, also in the middle of a frame, is ``transport.closed``.
"""

from __future__ import annotations

import asyncio
import re
import struct
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from lingxi.wire.errors import TransportError, WireError

DEFAULT_MAX_FRAME = 1024 * 1024
DEFAULT_READ_TIMEOUT = 10.0
_HEADER = struct.Struct(">I")
_PENDING_FRAMES = 256  # unread frames queued in pull mode before TCP reading pauses

FrameHandler = Callable[[bytes], None]
ErrorHandler = Callable[[TransportError], None]


class FrameTransport(Protocol):
    peer: str
    max_frame: int

    @property
    def closed(self) -> bool: ...
    async def send(self, frame: bytes) -> None: ...
    async def recv(self, idle_timeout: float | None = None) -> bytes: ...
    async def close(self) -> None: ...


def _closed(why: str = "connection closed") -> TransportError:
    return TransportError("transport.closed", why)


def _too_large(size: int, cap: int) -> TransportError:
    return TransportError("transport.frame_too_large",
                          f"frame of {size} bytes exceeds the {cap}-byte cap",
                          details={"size": size, "max_frame": cap})


class _Inbox:
    """Frames received but not yet taken, the pull/push switch, and the terminal error.

    A transport on top says how its source of frames is throttled and what follows a
    hand-over, through three public hooks (no-ops here): ``pause_source`` (the inbox
    is full), ``resume_source`` (it drained) and ``frames_taken`` (frames went to the
    push handler).
    """

    max_frame: int

    def _init_inbox(self) -> None:
        self._frames: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._error: TransportError | None = None
        self._on_frame: FrameHandler | None = None
        self._on_error: ErrorHandler | None = None
        self._paused = False

    @property
    def closed(self) -> bool:
        return self._error is not None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _push(self, frame: bytes) -> None:
        if self._on_frame is not None and not self._paused:
            self._on_frame(frame)
        else:
            self._frames.append(frame)
            self._wake()
            if len(self._frames) >= _PENDING_FRAMES:
                self.pause_source()

    def _terminate(self, error: TransportError) -> None:
        if self._error is None:
            self._error = error
            self._wake()
            if self._on_error is not None and not self._frames:
                self._on_error(error)

    def pause_source(self) -> None:
        """Stop reading from the peer (TCP: let the kernel buffers fill)."""

    def resume_source(self) -> None:
        """Read from the peer again."""

    def frames_taken(self) -> None:
        """Frames went to the push handler (a relay acknowledges them)."""

    def set_frame_handler(self, on_frame: FrameHandler, on_error: ErrorHandler) -> None:
        """Switch to push mode; frames already queued are handed over first, in order."""
        self._on_frame, self._on_error = on_frame, on_error
        self._drain_to_handler()

    def _drain_to_handler(self) -> None:
        while self._frames and not self._paused and self._on_frame is not None:
            self._on_frame(self._frames.popleft())
        if not self._frames:
            self.resume_source()
            if self._error is not None and self._on_error is not None:
                self._on_error(self._error)
        self.frames_taken()

    def pause_reading(self) -> None:
        """Push mode back-pressure: queue frames instead of handing them over."""
        self._paused = True
        self.pause_source()

    def resume_reading(self) -> None:
        self._paused = False
        self._drain_to_handler()

    async def recv(self, idle_timeout: float | None = None) -> bytes:
        """The next frame (pull mode)."""
        while not self._frames:
            if self._error is not None:
                raise self._error
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                if idle_timeout is None:
                    await waiter
                else:
                    async with asyncio.timeout(idle_timeout):
                        await waiter
            except TimeoutError:
                raise TransportError("transport.peer_silent",
                                     f"no frame from the peer for {idle_timeout:g} s") from None
            finally:
                self._waiter = None
        frame = self._frames.popleft()
        if len(self._frames) < _PENDING_FRAMES // 2:
            self.resume_source()
        return frame

    def _check_send(self, frame: bytes) -> None:
        if self._error is not None:
            raise _closed(f"cannot send: {self._error.message}")
        if len(frame) > self.max_frame:
            raise _too_large(len(frame), self.max_frame)


class TcpTransport(_Inbox, asyncio.Protocol):
    """Frames over one TCP connection, parsed as bytes arrive."""

    via = "direct"

    def __init__(self, *, max_frame: int = DEFAULT_MAX_FRAME,
                 read_timeout: float = DEFAULT_READ_TIMEOUT) -> None:
        self._init_inbox()
        self.max_frame = max_frame
        self.read_timeout = read_timeout
        self.peer = "tcp://?"
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._deadline: asyncio.TimerHandle | None = None
        self._lost = self._loop.create_future()
        self._drain: asyncio.Future[None] | None = None
        self._write_paused = False
        self._source_paused = False

    # ---- asyncio.Protocol ------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple):
            host = f"[{peer[0]}]" if ":" in str(peer[0]) else peer[0]
            self.peer = f"tcp://{host}:{peer[1]}"

    def data_received(self, data: bytes) -> None:
        if self._error is not None:
            return
        buffer = self._buffer
        if not buffer and len(data) >= 4 and self._deadline is None:
            (size,) = _HEADER.unpack_from(data)
            if len(data) == 4 + size and size <= self.max_frame:
                self._push(data[4:])  # exactly one whole frame: no buffering, no timer
                return
        buffer += data
        completed = False
        while len(buffer) >= 4:
            (size,) = _HEADER.unpack_from(buffer)
            if size > self.max_frame:
                self._fail(_too_large(size, self.max_frame))
                return
            end = 4 + size
            if len(buffer) < end:
                break
            frame = bytes(buffer[4:end])
            del buffer[:end]
            completed = True
            self._push(frame)
            if self._error is not None:
                return
        if buffer:
            if completed or self._deadline is None:  # a new frame has started: its own deadline
                if self._deadline is not None:
                    self._deadline.cancel()
                self._deadline = self._loop.call_later(self.read_timeout, self._frame_late)
        elif self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self._buffer and self._error is None:
            error = _closed("peer closed the connection in the middle of a frame")
        else:
            error = _closed(f"connection lost: {exc}" if exc else "peer closed the connection")
        self._terminate(error)
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        if not self._lost.done():
            self._lost.set_result(None)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    # ---- limits ------------------------------------------------------------------
    def _frame_late(self) -> None:
        self._deadline = None
        self._fail(TransportError("transport.timeout",
                                  f"frame not completed within {self.read_timeout:g} s"))

    def _fail(self, error: TransportError) -> None:
        """End the connection at once with ``error`` (what later calls will raise)."""
        self._terminate(error)
        self._buffer.clear()
        if self._transport is not None:
            self._transport.abort()

    def pause_source(self) -> None:
        if not self._source_paused and self._transport is not None and self._error is None:
            self._source_paused = True
            self._transport.pause_reading()

    def resume_source(self) -> None:
        if self._source_paused and self._transport is not None and self._error is None:
            self._source_paused = False
            self._transport.resume_reading()

    # ---- sending and closing -------------------------------------------------------
    def send_nowait(self, frame: bytes) -> None:
        self._check_send(frame)
        assert self._transport is not None
        self._transport.write(_HEADER.pack(len(frame)) + frame)

    async def send(self, frame: bytes) -> None:
        self.send_nowait(frame)
        if self._write_paused:
            self._drain = self._loop.create_future()
            try:
                async with asyncio.timeout(self.read_timeout):
                    await self._drain
            except TimeoutError:
                self._fail(TransportError("transport.timeout", "peer is not reading"))
                raise self._error from None  # type: ignore[misc]
            if self._error is not None:
                raise _closed(f"connection lost while sending: {self._error.message}")

    def abort(self) -> None:
        """Close now, dropping unsent data."""
        self._terminate(_closed("connection closed locally"))
        if self._transport is not None:
            self._transport.abort()

    async def close(self) -> None:
        """Flush what was sent, then close (aborting after 1 s if the peer does not read)."""
        self._terminate(_closed("connection closed locally"))
        if self._transport is None:
            return
        self._transport.close()
        try:
            async with asyncio.timeout(1.0):
                await asyncio.shield(self._lost)
        except TimeoutError:
            self._transport.abort()


class MemoryTransport(_Inbox):
    """One end of an in-memory pair; same interface and limits as TCP."""

    via = "memory"

    def __init__(self, name: str, max_frame: int) -> None:
        self._init_inbox()
        self.peer = name
        self.max_frame = max_frame
        self._other: MemoryTransport | None = None

    def send_nowait(self, frame: bytes) -> None:
        self._check_send(frame)
        other = self._other
        if other is None or other._error is not None:
            raise _closed("peer closed the connection")
        # delivered on the next loop turn, like bytes arriving from a socket
        asyncio.get_running_loop().call_soon(other._deliver, bytes(frame))

    async def send(self, frame: bytes) -> None:
        self.send_nowait(frame)

    def _deliver(self, frame: bytes) -> None:
        if self._error is None:
            self._push(frame)

    def _hang_up(self) -> None:
        self._terminate(_closed("peer closed the connection"))

    def abort(self) -> None:
        if self._error is None:
            self._terminate(_closed("connection closed locally"))
            if self._other is not None:
                asyncio.get_running_loop().call_soon(self._other._hang_up)

    async def close(self) -> None:
        self.abort()


def memory_pair(*, max_frame: int = DEFAULT_MAX_FRAME) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected in-memory transports (``a`` talks to ``b``)."""
    a, b = MemoryTransport("memory://b", max_frame), MemoryTransport("memory://a", max_frame)
    a._other, b._other = b, a
    return a, b


_ENDPOINT = re.compile(r"tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})/?")


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` → ``(host, port)``."""
    match = _ENDPOINT.fullmatch(endpoint.strip())
    if match is None or not 0 <= int(match.group(2)) <= 65535:
        raise TransportError("transport.bad_endpoint",
                             f"endpoint must look like tcp://HOST:PORT, got {endpoint[:80]!r}",
                             exit_code=2)
    return match.group(1).strip("[]"), int(match.group(2))


async def connect_tcp(host: str, port: int, *, max_frame: int = DEFAULT_MAX_FRAME,
                      read_timeout: float = DEFAULT_READ_TIMEOUT,
                      connect_timeout: float = 10.0) -> TcpTransport:
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(connect_timeout):
            _, protocol = await loop.create_connection(
                lambda: TcpTransport(max_frame=max_frame, read_timeout=read_timeout), host, port)
    except (TimeoutError, OSError) as error:
        raise TransportError("transport.connect_failed",
                             f"cannot connect to tcp://{host}:{port}: {error or 'timed out'}"
                             ) from None
    return protocol


async def serve_tcp(handler: Callable[[TcpTransport], Awaitable[None]], host: str = "127.0.0.1",
                    port: int = 0, *, max_frame: int = DEFAULT_MAX_FRAME,
                    read_timeout: float = DEFAULT_READ_TIMEOUT) -> asyncio.Server:
    """Start a server calling ``handler(transport)`` per connection; closes it afterwards.

    Wire errors escaping the handler end that connection only. Use
    ``server.sockets[0].getsockname()[1]`` for the port when ``port=0``.
    """
    loop = asyncio.get_running_loop()
    running: set[asyncio.Task[None]] = set()

    async def run(transport: TcpTransport) -> None:
        try:
            await handler(transport)
        except WireError:
            pass  # the connection's own failure (closed, timed out, refused handshake)
        finally:
            await transport.close()

    class _Served(TcpTransport):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            task = loop.create_task(run(self))
            running.add(task)
            task.add_done_callback(running.discard)

    return await loop.create_server(
        lambda: _Served(max_frame=max_frame, read_timeout=read_timeout), host, port)


# Kept for callers that named the stream-based class.
StreamTransport = TcpTransport
