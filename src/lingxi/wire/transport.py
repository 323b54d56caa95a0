"""Frame transports: 4-byte big-endian length + body, over asyncio TCP or in memory.

Both kinds share one interface (``send``, ``recv``, ``close``, ``closed``,
``peer``) so a session driver runs unchanged over either. Limits:

- ``max_frame`` (default 1 MiB) is checked on send and, on receive, from the
  length prefix before any of the body is read; an oversized frame closes the
  connection (``transport.frame_too_large``).
- ``read_timeout``: once a frame's first byte arrives, the whole frame must
  arrive within this many seconds, so a peer trickling one byte per second is
  dropped (``transport.timeout``). It also bounds how long a send may wait for
  a peer that does not read.
- ``recv(idle_timeout=…)``: no frame started within that time is
  ``transport.peer_silent``.
"""

from __future__ import annotations

import asyncio
import re
import struct
from collections.abc import Awaitable, Callable
from typing import Protocol

from lingxi.wire.errors import TransportError, WireError

DEFAULT_MAX_FRAME = 1024 * 1024
DEFAULT_READ_TIMEOUT = 10.0
_HEADER = struct.Struct(">I")
_DRAIN_ABOVE = 64 * 1024  # wait for the peer to read only once this much is queued


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


def _buffered(reader: asyncio.StreamReader) -> int:
    """Bytes already received and not yet read (0 when the stream hides it)."""
    buffer = getattr(reader, "_buffer", None)
    return len(buffer) if buffer is not None else 0


class StreamTransport:
    """Frames over an asyncio stream pair (TCP)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 max_frame: int = DEFAULT_MAX_FRAME,
                 read_timeout: float = DEFAULT_READ_TIMEOUT) -> None:
        self.reader, self.writer = reader, writer
        self.max_frame = max_frame
        self.read_timeout = read_timeout
        peer = writer.get_extra_info("peername")
        self.peer = f"tcp://{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def send(self, frame: bytes) -> None:
        if self._closed:
            raise _closed()
        if len(frame) > self.max_frame:
            raise _too_large(len(frame), self.max_frame)
        if self.writer.is_closing():
            self._closed = True
            raise _closed("connection lost")
        try:
            self.writer.write(_HEADER.pack(len(frame)) + frame)
            if self.writer.transport.get_write_buffer_size() > _DRAIN_ABOVE:
                async with asyncio.timeout(self.read_timeout):
                    await self.writer.drain()
        except TimeoutError:
            await self.close()
            raise TransportError("transport.timeout", "peer is not reading") from None
        except (ConnectionError, RuntimeError) as error:
            await self.close()
            raise _closed(f"connection lost while sending: {error}") from None

    async def recv(self, idle_timeout: float | None = None) -> bytes:
        if self._closed:
            raise _closed()
        if _buffered(self.reader) >= 4:  # fast path: header already here
            (size,) = _HEADER.unpack(await self.reader.readexactly(4))
            if size > self.max_frame:
                await self.close()
                raise _too_large(size, self.max_frame)
            if _buffered(self.reader) >= size:
                return await self.reader.readexactly(size)
            return await self._rest(size)
        try:
            if idle_timeout is None:
                first = await self.reader.readexactly(1)
            else:
                async with asyncio.timeout(idle_timeout):
                    first = await self.reader.readexactly(1)
        except TimeoutError:
            raise TransportError("transport.peer_silent",
                                 f"no frame from the peer for {idle_timeout:g} s") from None
        except asyncio.IncompleteReadError:
            await self.close()
            raise _closed("peer closed the connection") from None
        except ConnectionError as error:
            await self.close()
            raise _closed(f"connection lost: {error}") from None
        try:
            if _buffered(self.reader) >= 3:
                (size,) = _HEADER.unpack(first + await self.reader.readexactly(3))
                if size > self.max_frame:
                    await self.close()
                    raise _too_large(size, self.max_frame)
                if _buffered(self.reader) >= size:  # the whole frame is here: no deadline needed
                    return await self.reader.readexactly(size)
                async with asyncio.timeout(self.read_timeout):
                    return await self.reader.readexactly(size)
            async with asyncio.timeout(self.read_timeout):
                (size,) = _HEADER.unpack(first + await self.reader.readexactly(3))
                if size > self.max_frame:
                    await self.close()
                    raise _too_large(size, self.max_frame)
                return await self.reader.readexactly(size)
        except TimeoutError:
            await self.close()
            raise TransportError("transport.timeout",
                                 f"frame not completed within {self.read_timeout:g} s") from None
        except asyncio.IncompleteReadError:
            await self.close()
            raise _closed("peer closed the connection in the middle of a frame") from None
        except ConnectionError as error:
            await self.close()
            raise _closed(f"connection lost: {error}") from None

    async def _rest(self, size: int) -> bytes:
        """The body of a frame whose header was read, within the frame deadline."""
        try:
            async with asyncio.timeout(self.read_timeout):
                return await self.reader.readexactly(size)
        except TimeoutError:
            await self.close()
            raise TransportError("transport.timeout",
                                 f"frame not completed within {self.read_timeout:g} s") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            await self.close()
            raise _closed("peer closed the connection in the middle of a frame") from None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.writer.close()
        try:
            async with asyncio.timeout(1.0):
                await self.writer.wait_closed()
        except (TimeoutError, ConnectionError, OSError):
            pass


class MemoryTransport:
    """One end of an in-memory pair; same interface and limits as TCP."""

    def __init__(self, name: str, max_frame: int) -> None:
        self.peer = name
        self.max_frame = max_frame
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._other: MemoryTransport | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def send(self, frame: bytes) -> None:
        if self._closed or self._other is None or self._other._closed:
            raise _closed()
        if len(frame) > self.max_frame:
            raise _too_large(len(frame), self.max_frame)
        self._other._inbox.put_nowait(bytes(frame))

    async def recv(self, idle_timeout: float | None = None) -> bytes:
        if self._closed:
            raise _closed()
        try:
            if idle_timeout is None:
                frame = await self._inbox.get()
            else:
                async with asyncio.timeout(idle_timeout):
                    frame = await self._inbox.get()
        except TimeoutError:
            raise TransportError("transport.peer_silent",
                                 f"no frame from the peer for {idle_timeout:g} s") from None
        if frame is None:
            self._closed = True
            raise _closed("peer closed the connection")
        if len(frame) > self.max_frame:
            await self.close()
            raise _too_large(len(frame), self.max_frame)
        return frame

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._inbox.put_nowait(None)  # wake our own pending recv
        if self._other is not None:
            self._other._inbox.put_nowait(None)


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
                      connect_timeout: float = 10.0) -> StreamTransport:
    try:
        async with asyncio.timeout(connect_timeout):
            reader, writer = await asyncio.open_connection(host, port, limit=2**16)
    except (TimeoutError, OSError) as error:
        raise TransportError("transport.connect_failed",
                             f"cannot connect to tcp://{host}:{port}: {error or 'timed out'}"
                             ) from None
    return StreamTransport(reader, writer, max_frame=max_frame, read_timeout=read_timeout)


async def serve_tcp(handler: Callable[[StreamTransport], Awaitable[None]], host: str = "127.0.0.1",
                    port: int = 0, *, max_frame: int = DEFAULT_MAX_FRAME,
                    read_timeout: float = DEFAULT_READ_TIMEOUT) -> asyncio.Server:
    """Start a server calling ``handler(transport)`` per connection; closes it afterwards.

    Wire errors escaping the handler end that connection only. Use
    ``server.sockets[0].getsockname()[1]`` for the port when ``port=0``.
    """

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        transport = StreamTransport(reader, writer, max_frame=max_frame,
                                    read_timeout=read_timeout)
        try:
            await handler(transport)
        except WireError:
            pass  # the connection's own failure (closed, timed out, refused handshake)
        finally:
            await transport.close()

    return await asyncio.start_server(on_connect, host, port, limit=2**16)
