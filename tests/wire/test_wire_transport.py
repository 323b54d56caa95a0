"""Frame transports: caps, read deadline (slow loris), vanishing peers, garbage, close."""

from __future__ import annotations

import asyncio
import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lingxi.wire import TransportError
from lingxi.wire.transport import connect_tcp, memory_pair, parse_endpoint, serve_tcp


class Server:
    """A loopback server whose per-connection transport results land in a queue."""

    def __init__(self, **options) -> None:
        self.options = options
        self.results: asyncio.Queue = asyncio.Queue()

    async def __aenter__(self):
        async def handler(transport):
            try:
                while True:
                    frame = await transport.recv(idle_timeout=self.options.get("idle", 5.0))
                    await self.results.put(frame)
                    with contextlib.suppress(TransportError):  # recv reports the cause
                        await transport.send(b"echo:" + frame)
            except TransportError as error:
                await self.results.put(error)

        self.server = await serve_tcp(handler, "127.0.0.1", 0,
                                      max_frame=self.options.get("max_frame", 1024),
                                      read_timeout=self.options.get("read_timeout", 0.3))
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()

    async def raw(self):
        return await asyncio.open_connection("127.0.0.1", self.port)


async def test_memory_pair_carries_frames_both_ways():
    a, b = memory_pair()
    await a.send(b"one")
    await b.send(b"two")
    assert await b.recv() == b"one"
    assert await a.recv() == b"two"


async def test_tcp_frames_round_trip():
    async with Server() as server:
        client = await connect_tcp("127.0.0.1", server.port)
        await client.send(b"hello")
        assert await client.recv(idle_timeout=2) == b"echo:hello"
        assert await server.results.get() == b"hello"
        await client.close()


@pytest.mark.parametrize("kind", ["memory", "tcp"])
async def test_sending_an_oversized_frame_is_refused(kind):
    if kind == "memory":
        a, _ = memory_pair(max_frame=16)
        with pytest.raises(TransportError) as info:
            await a.send(b"x" * 17)
    else:
        async with Server() as server:
            client = await connect_tcp("127.0.0.1", server.port, max_frame=16)
            with pytest.raises(TransportError) as info:
                await client.send(b"x" * 17)
            await client.close()
    assert info.value.code == "transport.frame_too_large"


async def test_an_announced_oversized_frame_is_refused_before_its_body():
    async with Server(max_frame=1024) as server:
        reader, writer = await server.raw()
        writer.write(struct.pack(">I", 1024 * 1024 * 64) + b"x" * 10)
        await writer.drain()
        error = await asyncio.wait_for(server.results.get(), 2)
        assert isinstance(error, TransportError) and error.code == "transport.frame_too_large"
        assert await asyncio.wait_for(reader.read(), 2) == b""  # the server hung up
        writer.close()


async def test_default_cap_is_one_mebibyte():
    a, b = memory_pair()
    await a.send(b"x" * (1024 * 1024))
    assert len(await b.recv()) == 1024 * 1024
    with pytest.raises(TransportError):
        await a.send(b"x" * (1024 * 1024 + 1))


async def test_slow_loris_trickling_bytes_is_dropped_by_the_frame_deadline():
    # each byte arrives well inside the read timeout, but the frame as a whole does not
    async with Server(read_timeout=0.3) as server:
        reader, writer = await server.raw()
        frame = struct.pack(">I", 40) + b"y" * 40
        dropped = False
        for byte in frame:
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except ConnectionError:
                dropped = True
                break
            await asyncio.sleep(0.03)
            if not server.results.empty():
                break
        error = await asyncio.wait_for(server.results.get(), 2)
        assert isinstance(error, TransportError) and error.code == "transport.timeout"
        if not dropped:  # the server hung up: an end of stream, or a reset when bytes we
            try:         # sent were still unread in its buffer (the kernel answers RST)
                assert await asyncio.wait_for(reader.read(), 2) == b""
            except ConnectionResetError:
                pass
        writer.close()


async def test_peer_vanishing_mid_frame_is_a_clean_closed_error():
    async with Server() as server:
        _, writer = await server.raw()
        writer.write(struct.pack(">I", 100) + b"z" * 10)
        await writer.drain()
        writer.close()
        error = await asyncio.wait_for(server.results.get(), 2)
        assert isinstance(error, TransportError) and error.code == "transport.closed"
        assert "middle of a frame" in error.message


async def test_garbage_bytes_are_read_as_frames_and_never_crash_the_reader():
    async with Server(max_frame=64) as server:
        _, writer = await server.raw()
        writer.write(b"\x00\x00\x00\x03abc" + b"GET / HTTP/1.1\r\n")
        await writer.drain()
        assert await asyncio.wait_for(server.results.get(), 2) == b"abc"
        error = await asyncio.wait_for(server.results.get(), 2)  # "GET " as a length: huge
        assert isinstance(error, TransportError) and error.code == "transport.frame_too_large"
        writer.close()


async def test_silent_peer_is_reported_after_the_idle_timeout():
    a, _ = memory_pair()
    with pytest.raises(TransportError) as info:
        await a.recv(idle_timeout=0.05)
    assert info.value.code == "transport.peer_silent"


@pytest.mark.parametrize("kind", ["memory", "tcp"])
async def test_close_is_seen_by_the_peer(kind):
    if kind == "memory":
        a, b = memory_pair()
        await a.close()
        with pytest.raises(TransportError) as info:
            await b.recv(idle_timeout=1)
        assert info.value.code == "transport.closed"
        with pytest.raises(TransportError):
            await b.send(b"late")
        return
    async with Server() as server:
        client = await connect_tcp("127.0.0.1", server.port)
        await client.close()
        error = await asyncio.wait_for(server.results.get(), 2)
        assert error.code == "transport.closed"
        with pytest.raises(TransportError):
            await client.send(b"after close")


async def test_connect_to_a_closed_port_is_a_typed_error():
    async with Server() as server:
        port = server.port
    with pytest.raises(TransportError) as info:
        await connect_tcp("127.0.0.1", port, connect_timeout=2)
    assert info.value.code == "transport.connect_failed"


def test_parse_endpoint():
    assert parse_endpoint("tcp://127.0.0.1:7401") == ("127.0.0.1", 7401)
    assert parse_endpoint("tcp://[::1]:80") == ("::1", 80)
    for bad in ("http://x:1", "tcp://host", "tcp://h:99999", "tcp://h:1/path"):
        with pytest.raises(TransportError):
            parse_endpoint(bad)


class FakeSocketTransport(asyncio.Transport):
    """Stands in for asyncio's socket transport so the frame parser can be driven directly."""

    def __init__(self) -> None:
        super().__init__()
        self.aborted = False
        self.written = bytearray()

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default

    def write(self, data):
        self.written += data

    def abort(self):
        self.aborted = True

    def close(self):
        self.aborted = True

    def pause_reading(self):
        pass

    def resume_reading(self):
        pass


@settings(max_examples=150, deadline=None)
@given(frames=st.lists(st.binary(max_size=300), max_size=8), data=st.data())
def test_fuzz_frames_survive_any_chunking(frames, data):
    from lingxi.wire.transport import TcpTransport

    async def run():
        protocol = TcpTransport(max_frame=300)
        protocol.connection_made(FakeSocketTransport())
        stream = b"".join(struct.pack(">I", len(f)) + f for f in frames)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
            protocol.data_received(stream[start:end])
        got = [await protocol.recv(idle_timeout=0.01) for _ in frames]
        assert got == frames
        assert protocol._deadline is None  # nothing pending, no timer left running

    asyncio.run(run())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=64), max_size=6))
def test_fuzz_random_bytes_give_frames_or_typed_errors(chunks):
    from lingxi.wire.transport import TcpTransport

    async def run():
        protocol = TcpTransport(max_frame=64, read_timeout=0.01)
        fake = FakeSocketTransport()
        protocol.connection_made(fake)
        for chunk in chunks:
            protocol.data_received(chunk)
        while True:
            try:
                frame = await protocol.recv(idle_timeout=0.05)
            except TransportError as error:
                assert error.code in ("transport.frame_too_large", "transport.timeout",
                                      "transport.peer_silent")
                break
            assert len(frame) <= 64

    asyncio.run(run())


@settings(max_examples=100, deadline=None)
@given(frames=st.lists(st.binary(max_size=80), min_size=1, max_size=6),
       oversized=st.booleans())
def test_frames_read_one_whole_frame_at_a_time_take_the_same_path_to_the_reader(frames,
                                                                                oversized):
    from lingxi.wire.transport import TcpTransport

    async def run():
        protocol = TcpTransport(max_frame=64)
        fake = FakeSocketTransport()
        protocol.connection_made(fake)
        for frame in frames:  # each read is exactly one whole frame (the shortcut)
            protocol.data_received(struct.pack(">I", len(frame)) + frame)
        got, code = [], None
        while code is None:
            try:
                got.append(await protocol.recv(idle_timeout=0.01))
            except TransportError as error:
                code = error.code
        legal = frames[:next((i for i, f in enumerate(frames) if len(f) > 64), len(frames))]
        assert got == legal
        if len(legal) < len(frames):
            assert code == "transport.frame_too_large" and fake.aborted
        else:
            assert code == "transport.peer_silent" and not fake.aborted
        assert protocol._deadline is None

    asyncio.run(run())


async def test_a_peer_that_stops_reading_is_a_timeout_not_a_hang():
    """A peer that accepts and never reads: sends fill the buffers, then one waits at most
    the read timeout for the peer to drain and fails with a coded error; later sends fail
    with the same error and close does not wait forever."""
    held = []

    async def never_read(reader, writer):
        held.append(writer)  # keep the socket open, read nothing

    server = await asyncio.start_server(never_read, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        client = await connect_tcp("127.0.0.1", port, read_timeout=0.5)
        frame = b"x" * (512 * 1024)
        with pytest.raises(TransportError) as info:
            for _ in range(400):  # far more than the kernel buffers hold on loopback
                await client.send(frame)
        assert info.value.code == "transport.timeout" and "not reading" in info.value.message
        with pytest.raises(TransportError):
            await client.send(b"again")
        await client.close()
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()
