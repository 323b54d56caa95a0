"""The one connection path over real loopback TCP: serve_one / connect, the accept loop.

Lock-out, replay and flood regressions (issue 9, items 2 and 3) run against a
real listening socket with raw attacker sockets beside the real guest.
"""

from __future__ import annotations

import asyncio
import json
import struct

import pytest
from wirehelpers import seeded_identity

from lingxi.errors import LingxiError
from lingxi.wire import AgentEndpoint, HandshakeError, TransportError
from lingxi.wire.connection import OneSessionHost, connect, pinned_key, serve_one
from lingxi.wire.handshake import client_handshake
from lingxi.wire.transport import connect_tcp, parse_endpoint

HOST_ID, GUEST_ID, OTHER_ID = seeded_identity(1), seeded_identity(2), seeded_identity(3)
GUEST_END = AgentEndpoint(GUEST_ID.agent_id, "lingxi", "tcp://guest")
QUIET = {"heartbeat_interval": None, "peer_timeout": None}


class Raw:
    """An attacker's raw TCP socket that reads frames by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, endpoint: str) -> Raw:
        return cls(*await asyncio.open_connection(*parse_endpoint(endpoint)))

    async def frame(self, timeout: float = 10.0) -> dict | None:
        """The next frame as JSON, or None when the host closed the connection."""
        try:
            async with asyncio.timeout(timeout):
                (size,) = struct.unpack(">I", await self.reader.readexactly(4))
                return json.loads(await self.reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionResetError):
            return None

    def send(self, frame: bytes) -> None:
        self.writer.write(struct.pack(">I", len(frame)) + frame)

    def close(self) -> None:
        self.writer.close()


class Recording:
    """A guest transport that keeps every frame it sends (what a network observer sees)."""

    def __init__(self, inner) -> None:
        self.inner, self.sent = inner, []
        self.peer, self.max_frame = inner.peer, inner.max_frame

    @property
    def closed(self):
        return self.inner.closed

    async def send(self, frame):
        self.sent.append(bytes(frame))
        await self.inner.send(frame)

    async def recv(self, idle_timeout=None):
        return await self.inner.recv(idle_timeout)

    async def close(self):
        await self.inner.close()


async def started(**options) -> tuple[OneSessionHost, asyncio.Task]:
    """A one-session host on a free port, accepting in a task."""
    options.setdefault("channel_options", QUIET)
    host = OneSessionHost("tcp://127.0.0.1:0", HOST_ID, **options)
    await host.start()
    return host, asyncio.create_task(host.accept())


async def guest(host: OneSessionHost, identity=GUEST_ID, **options):
    options.setdefault("expected_host_key", HOST_ID.public_hex)
    return await connect(host.bound_endpoint, identity, GUEST_END, **QUIET, **options)


async def test_serve_one_and_connect_open_one_session_on_the_real_port():
    heard: list[str] = []

    async def on_listening(bound: str) -> None:
        heard.append(bound)
        guest_task.set_result(asyncio.create_task(
            connect(bound, GUEST_ID, GUEST_END, expected_host_key=HOST_ID.public_hex,
                    ticket="invite-1", **QUIET)))

    guest_task: asyncio.Future = asyncio.get_running_loop().create_future()
    channel, peer = await serve_one("tcp://127.0.0.1:0", HOST_ID, on_listening=on_listening,
                                    advertised_endpoint="tcp://203.0.113.7:7400",
                                    channel_options=QUIET)
    guest_channel = await (await guest_task)
    assert heard and parse_endpoint(heard[0])[1] != 0  # port 0 became the real port
    assert peer.public_key == GUEST_ID.public_hex and peer.ticket == "invite-1"
    assert peer.endpoint == GUEST_END and peer.address.startswith("tcp://127.0.0.1:")
    assert peer.session_id == channel.session_id == guest_channel.session_id
    # what the host tells others is the advertised endpoint, not the bind address
    assert guest_channel.peer.endpoint == "tcp://203.0.113.7:7400"
    assert channel.keys.local.agent_id == HOST_ID.agent_id
    sent = await guest_channel.send({"action": "move", "n": 1})
    assert (await channel.recv(timeout=5)).id == sent.id
    await guest_channel.close()
    await channel.close()  # the finally step: also stops the listener
    for _ in range(100):
        try:
            attempt = await connect_tcp(*parse_endpoint(heard[0]), connect_timeout=1)
        except TransportError as error:
            assert error.code == "transport.connect_failed"
            break
        await attempt.close()
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the listener stayed open after the channel closed")


async def test_a_second_guest_after_the_session_started_is_told_busy():
    host, accepting = await started()
    first = await guest(host)
    channel, _ = await accepting
    with pytest.raises(TransportError) as info:
        await guest(host, OTHER_ID)
    assert info.value.code == "transport.busy"
    assert "already in a session" in info.value.message
    await first.close()
    await channel.close()
    await host.close()


async def test_a_captured_hello_replayed_to_a_new_run_with_the_same_identity_fails():
    # run 1: a real guest over TCP; the observer keeps the hello frame it sent
    host1, accepting1 = await started()
    transport = Recording(await connect_tcp(*parse_endpoint(host1.bound_endpoint)))
    await client_handshake(transport, GUEST_ID, GUEST_END, clock=host1.clock)
    await accepting1
    hello = transport.sent[0]
    assert json.loads(hello)["payload"]["action"] == "handshake.hello"
    await transport.close()
    await host1.close()

    # run 2: same host identity, within the time window; the replay gets no session
    refused: list = []
    host2, accepting2 = await started(on_refused=refused.append)
    raw = await Raw.open(host2.bound_endpoint)
    challenge = await raw.frame()
    assert challenge["payload"]["action"] == "handshake.challenge"
    raw.send(hello)
    answer = await raw.frame()
    assert answer["payload"] == {"action": "handshake.refused", "reason": "handshake.replay",
                                 "message": answer["payload"]["message"]}
    assert await raw.frame() is None  # closed; nothing more is read
    assert not accepting2.done()
    assert [e.code for e in refused] == ["handshake.replay"]
    # the same replayed in run 2 on a second connection fails the same way
    raw2 = await Raw.open(host2.bound_endpoint)
    await raw2.frame()
    raw2.send(hello)
    assert (await raw2.frame())["payload"]["reason"] == "handshake.replay"
    # and the victim itself still gets in
    real = await guest(host2)
    channel, peer = await accepting2
    assert peer.public_key == GUEST_ID.public_hex
    for conn in (raw, raw2):
        conn.close()
    await real.close()
    await channel.close()
    await host2.close()


async def test_one_idle_connection_does_not_lock_out_a_real_guest():
    host, accepting = await started(pre_auth_timeout=60)  # the idle one never times out here
    idle = await Raw.open(host.bound_endpoint)
    assert (await idle.frame())["payload"]["action"] == "handshake.challenge"
    real = await guest(host)
    channel, peer = await accepting
    assert peer.public_key == GUEST_ID.public_hex
    # once the session is taken the idle connection is told so and closed
    dropped = await idle.frame()
    assert dropped["payload"]["reason"] == "transport.busy"
    assert await idle.frame() is None
    idle.close()
    await real.close()
    await channel.close()
    await host.close()


async def test_an_attacker_reconnecting_all_the_time_does_not_keep_a_guest_out():
    host, accepting = await started(pre_auth_timeout=60)
    stop = asyncio.Event()
    opened = 0

    async def attacker() -> None:
        nonlocal opened
        previous = None
        while not stop.is_set():
            conn = await Raw.open(host.bound_endpoint)
            opened += 1
            if previous is not None:
                previous.close()
            previous = conn
            await asyncio.sleep(0.01)
        previous.close()

    attack = asyncio.create_task(attacker())
    while opened < 5:
        await asyncio.sleep(0.01)
    real = await guest(host)
    channel, peer = await accepting
    stop.set()
    await attack
    assert peer.public_key == GUEST_ID.public_hex
    await real.close()
    await channel.close()
    await host.close()


async def test_a_flood_beyond_the_pending_bound_does_not_stop_a_real_guest():
    host, accepting = await started(pre_auth_timeout=60, max_pending=4)
    flood = [await Raw.open(host.bound_endpoint) for _ in range(20)]
    for _ in range(200):  # let the host see every connection
        if host.refused >= 16:
            break
        await asyncio.sleep(0.01)
    assert host.pending <= 4 and host.refused >= 16
    real = await guest(host)
    channel, peer = await accepting
    assert peer.public_key == GUEST_ID.public_hex
    for conn in flood:  # every flood connection got a refusal, then was closed
        frames = []
        while (frame := await conn.frame()) is not None:
            frames.append(frame["payload"]["action"])
        assert frames[-1] == "handshake.refused"
        conn.close()
    await real.close()
    await channel.close()
    await host.close()


async def test_when_every_pending_handshake_is_being_checked_a_newcomer_is_refused_at_once():
    release = asyncio.Event()
    asked: list[str] = []

    async def slow_authorize(key: str, ticket: str | None) -> None:
        asked.append(key)
        await release.wait()
        raise HandshakeError("handshake.ticket_refused", "not invited")

    host, accepting = await started(max_pending=2, pre_auth_timeout=60,
                                    authorize=slow_authorize)
    waiting = [asyncio.create_task(guest(host, seeded_identity(n))) for n in (4, 5)]
    while len(asked) < 2:
        await asyncio.sleep(0.01)
    newcomer = await Raw.open(host.bound_endpoint)
    first = await newcomer.frame()
    assert first["payload"]["action"] == "handshake.refused"  # no challenge: refused at once
    assert first["payload"]["reason"] == "transport.busy"
    assert await newcomer.frame() is None
    release.set()
    for task in waiting:
        with pytest.raises(HandshakeError) as info:
            await task
        assert info.value.code == "handshake.ticket_refused"
    assert not accepting.done()
    newcomer.close()
    await host.close()


async def test_a_connection_that_never_finishes_is_closed_at_the_pre_auth_deadline():
    host, accepting = await started(pre_auth_timeout=0.2)
    idle = await Raw.open(host.bound_endpoint)
    assert (await idle.frame())["payload"]["action"] == "handshake.challenge"
    refused = await idle.frame()
    assert refused["payload"]["reason"] == "transport.timeout"
    assert await idle.frame() is None
    assert host.pending == 0 and not accepting.done()
    real = await guest(host)
    channel, _ = await accepting
    idle.close()
    await real.close()
    await channel.close()
    await host.close()


async def test_the_authoriser_sees_key_and_ticket_and_its_code_reaches_the_guest():
    seen: list[tuple[str, str | None]] = []

    def authorize(key: str, ticket: str | None) -> None:
        seen.append((key, ticket))
        if ticket != "good-ticket":
            raise LingxiError("handshake.ticket_refused", "this ticket was already used")

    host, accepting = await started(authorize=authorize)
    with pytest.raises(HandshakeError) as info:
        await guest(host, OTHER_ID, ticket="used-ticket")
    assert info.value.code == "handshake.ticket_refused"
    assert "already used" in info.value.message
    with pytest.raises(HandshakeError) as info:
        await guest(host, OTHER_ID)
    assert info.value.code == "handshake.ticket_refused"
    real = await guest(host, ticket="good-ticket")
    channel, peer = await accepting
    assert peer.ticket == "good-ticket"
    assert seen == [(OTHER_ID.public_hex, "used-ticket"), (OTHER_ID.public_hex, None),
                    (GUEST_ID.public_hex, "good-ticket")]
    await real.close()
    await channel.close()
    await host.close()


async def test_a_pinned_guest_key_is_one_authoriser():
    host, accepting = await started(authorize=pinned_key(GUEST_ID.public_hex))
    with pytest.raises(HandshakeError) as info:
        await guest(host, OTHER_ID)
    assert info.value.code == "handshake.identity_mismatch"
    real = await guest(host)
    channel, peer = await accepting
    assert peer.public_key == GUEST_ID.public_hex
    await real.close()
    await channel.close()
    await host.close()


async def test_a_guest_expecting_another_host_key_refuses_and_the_host_stays_free():
    host, accepting = await started()
    with pytest.raises(HandshakeError) as info:
        await guest(host, expected_host_key=OTHER_ID.public_hex)
    assert info.value.code == "handshake.identity_mismatch"
    real = await guest(host)
    channel, _ = await accepting
    await real.close()
    await channel.close()
    await host.close()


async def test_an_authoriser_bug_refuses_the_guest_and_reaches_the_host_caller():
    def broken(key: str, ticket: str | None) -> None:
        raise RuntimeError("bug in the authoriser")

    host, accepting = await started(authorize=broken)
    with pytest.raises(HandshakeError) as info:
        await guest(host)
    assert info.value.code == "handshake.failed"
    with pytest.raises(RuntimeError, match="bug in the authoriser"):
        await accepting
    await host.close()


async def test_no_guest_within_the_accept_timeout_is_a_typed_error_and_closes_the_listener():
    with pytest.raises(TransportError) as info:
        await serve_one("tcp://127.0.0.1:0", HOST_ID, accept_timeout=0.05)
    assert info.value.code == "transport.timeout"


async def test_bad_arguments_are_refused_before_listening():
    with pytest.raises(TransportError) as info:
        OneSessionHost("tcp://127.0.0.1:0", HOST_ID, advertised_endpoint="http://x")
    assert info.value.code == "transport.bad_endpoint" and info.value.exit_code == 2
    for bad in ({"pre_auth_timeout": 0}, {"pre_auth_timeout": float("nan")},
                {"max_pending": 0}):
        with pytest.raises(ValueError):
            OneSessionHost("tcp://127.0.0.1:0", HOST_ID, **bad)


async def test_a_winner_nobody_accepted_is_closed_with_the_host_and_close_is_idempotent():
    host = OneSessionHost("tcp://127.0.0.1:0", HOST_ID, channel_options=QUIET)
    await host.start()
    await host._server.start_serving()  # accepting without anyone waiting in accept()
    real = await guest(host)
    await host.close()
    await host.close()
    with pytest.raises(TransportError) as info:
        await real.recv(timeout=5)  # the host side was closed: the guest sees it end
    assert info.value.code == "transport.closed"
    await real.close()


async def test_a_host_that_closes_mid_handshake_leaves_no_pending_connection():
    host, accepting = await started(pre_auth_timeout=60)
    idle = [await Raw.open(host.bound_endpoint) for _ in range(3)]
    for conn in idle:
        await conn.frame()
    assert host.pending == 3
    accepting.cancel()
    await host.close()
    assert host.pending == 0
    for conn in idle:
        assert await conn.frame() is None
        conn.close()


@pytest.mark.parametrize("attack", [
    struct.pack(">I", 1 << 30),                       # announces a frame far over the cap
    struct.pack(">I", 9) + b"\x00garbage\xff",        # not JSON
    struct.pack(">I", 2) + b"[]",                     # JSON of the wrong shape
    struct.pack(">I", 100) + b'{"id": "x"',           # a frame that never completes
    b"\x00\x00",                                      # half a length prefix
    struct.pack(">I", 40) + b'{"payload": {"action": "handshake.hello"}}'[:40],
])
async def test_hostile_bytes_before_the_hello_end_that_connection_only(attack):
    refused: list = []
    host, accepting = await started(pre_auth_timeout=0.5, on_refused=refused.append)
    raw = await Raw.open(host.bound_endpoint)
    assert (await raw.frame())["payload"]["action"] == "handshake.challenge"
    raw.writer.write(attack)
    while True:  # the host answers with a refusal or just closes; it never welcomes
        frame = await raw.frame()
        if frame is None:
            break
        assert frame["payload"]["action"] == "handshake.refused"
    assert refused and not accepting.done()
    raw.close()
    real = await guest(host)
    channel, peer = await accepting
    assert peer.public_key == GUEST_ID.public_hex
    await real.close()
    await channel.close()
    await host.close()


async def test_serve_channels_and_connect_channel_use_the_authoriser_and_the_ticket():
    import time

    from lingxi.wire.channel import connect_channel, serve_channels
    tickets: list = []
    served: asyncio.Future = asyncio.get_running_loop().create_future()

    async def handler(channel):
        served.set_result(channel.keys.ticket)

    def authorize(key, ticket):
        tickets.append(ticket)
        if ticket != "ok":
            raise HandshakeError("handshake.ticket_refused", "no such ticket")

    server = await serve_channels(handler, HOST_ID, AgentEndpoint(HOST_ID.agent_id, "lingxi",
                                                                  "tcp://h"),
                                  clock=time.time, authorize=authorize, **QUIET)
    endpoint = f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    with pytest.raises(HandshakeError) as info:
        await connect_channel(endpoint, GUEST_ID, GUEST_END, clock=time.time, ticket="bad",
                              **QUIET)
    assert info.value.code == "handshake.ticket_refused"
    channel = await connect_channel(endpoint, GUEST_ID, GUEST_END, clock=time.time,
                                    ticket="ok", expected_peer_key=HOST_ID.public_hex, **QUIET)
    assert await asyncio.wait_for(served, 5) == "ok" and tickets == ["bad", "ok"]
    await channel.close()
    server.close()
    await server.wait_closed()


async def test_refusals_in_flight_are_bounded_under_a_flood_after_the_session_started():
    host, accepting = await started(max_pending=1)  # at most 4 refusals sent at a time
    real = await guest(host)
    channel, _ = await accepting
    release = asyncio.Event()
    send_refusal = host._refuse_and_close

    async def slow_refusal(transport, code, message):  # a peer that takes long to answer
        await release.wait()
        await send_refusal(transport, code, message)

    host._refuse_and_close = slow_refusal
    flood = [await Raw.open(host.bound_endpoint) for _ in range(30)]
    for _ in range(300):
        if host.refused >= 30:
            break
        await asyncio.sleep(0.01)
    assert host.refused == 30 and host._refusing == 4
    release.set()
    answers = []
    for conn in flood:  # 4 were told why; the rest were cut at once
        frame = await conn.frame()
        answers.append(frame["payload"]["reason"] if frame else None)
        conn.close()
    assert answers.count("transport.busy") == 4 and answers.count(None) == 26
    assert host._refusing == 0
    sent = await real.send({"action": "move", "n": 2})  # the session itself is unaffected
    assert (await channel.recv(timeout=5)).id == sent.id
    await real.close()
    await channel.close()
    await host.close()
