"""SecureChannel: signed traffic, encryption, rejected frames, heartbeats, close, abort."""

from __future__ import annotations

import asyncio

import pytest
from wirehelpers import GUEST, HOST, FakeClock, handshake_pair, seeded_identity

from lingxi.wire import EnvelopeError, HandshakeError, TransportError, is_control
from lingxi.wire.channel import SecureChannel, connect_channel, serve_channels
from lingxi.wire.transport import memory_pair

MOVE = {"action": "move", "row": 1, "col": 2}


async def channel_pair(clock=None, **options):
    clock = clock or FakeClock()
    a, b = memory_pair()
    guest_keys, host_keys = await handshake_pair(a, b, clock)
    options.setdefault("heartbeat_interval", None)
    options.setdefault("peer_timeout", None)
    guest = await SecureChannel(a, guest_keys, clock=clock, **options).start()
    host = await SecureChannel(b, host_keys, clock=clock, **options).start()
    return guest, host, a, b


async def test_messages_flow_both_ways_with_session_bindings():
    guest, host, *_ = await channel_pair()
    sent = await guest.send(MOVE, correlation_id="c-1")
    received = await host.recv(timeout=1)
    assert received.payload == MOVE and received.type == "p2p:move"
    assert received.conversation_id == host.session_id == guest.session_id
    reply = await host.send({"action": "ack"}, reply_to=sent.id, correlation_id="c-1")
    got = await guest.recv(timeout=1, expect_reply_to=sent.id, expect_correlation_id="c-1")
    assert got.id == reply.id
    await guest.close()
    await host.close()


async def test_encrypted_payloads_travel_sealed_and_arrive_open():
    guest, host, a, b = await channel_pair()
    frames = []
    original = a.send

    async def spy(frame):
        frames.append(frame)
        await original(frame)

    a.send = spy
    await guest.send({"action": "secret", "card": "ace of spades"}, encrypt=True)
    got = await host.recv(timeout=1)
    assert got.payload == {"action": "secret", "card": "ace of spades"} and got.encrypt
    assert b"ace of spades" not in frames[0] and b"\"action\"" not in frames[0]


async def test_unexpected_reply_is_rejected_by_recv():
    guest, host, *_ = await channel_pair()
    await host.send({"action": "ack"}, reply_to="someone-else")
    with pytest.raises(EnvelopeError) as info:
        await guest.recv(timeout=1, expect_reply_to="mine")
    assert info.value.code == "envelope.bad_reply_to"


async def test_a_reflected_envelope_fails_the_direction_key_and_channel_stays_open():
    guest, host, a, b = await channel_pair()
    sent = await guest.send(MOVE)
    await host.recv(timeout=1)
    await b.send(host.frame_for(sent.wire))  # the host bounces the guest's own envelope back
    with pytest.raises(EnvelopeError) as info:
        await guest.recv(timeout=1)
    assert info.value.code == "envelope.bad_signature"
    await host.send({"action": "still_here"})
    assert (await guest.recv(timeout=1)).action == "still_here"


async def test_a_frame_bounced_by_the_network_does_not_open_and_ends_the_channel():
    guest, host, a, b = await channel_pair()
    frames = []
    original = a.send

    async def tap(frame):
        frames.append(frame)
        await original(frame)

    a.send = tap
    await guest.send(MOVE)
    await host.recv(timeout=1)
    await b.send(frames[0])  # an attacker on the path reflects the guest's frame
    with pytest.raises(TransportError) as info:
        await guest.recv(timeout=1)
    assert info.value.code == "transport.frame_forged"


async def test_a_replayed_envelope_in_a_fresh_frame_is_rejected():
    guest, host, a, _ = await channel_pair()
    sent = await guest.send(MOVE)
    await host.recv(timeout=1)
    await a.send(guest.frame_for(sent.wire))  # the peer itself sends its envelope again
    with pytest.raises(EnvelopeError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "envelope.replay"


async def test_a_replayed_frame_is_a_duplicate_and_ends_the_channel():
    guest, host, a, _ = await channel_pair()
    frames = []
    original = a.send

    async def tap(frame):
        frames.append(frame)
        await original(frame)

    a.send = tap
    await guest.send(MOVE)
    await host.recv(timeout=1)
    await original(frames[0])
    with pytest.raises(TransportError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "transport.frame_duplicated"


async def test_garbage_from_the_peer_surfaces_as_malformed():
    guest, host, a, _ = await channel_pair()
    await a.send(guest.frame_for(b"\x93\x00not json"))
    with pytest.raises(EnvelopeError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "envelope.malformed"


async def test_garbage_on_the_path_is_a_forged_frame():
    guest, host, a, _ = await channel_pair()
    await a.send(b"\x93\x00not json at all, not a sealed frame")
    with pytest.raises(TransportError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "transport.frame_forged"


async def test_an_envelope_from_another_session_is_rejected():
    clock = FakeClock()
    guest, host, *_ = await channel_pair(clock)
    other_guest, _, _, _ = await channel_pair(clock)
    stray, _ = other_guest._build(MOVE)
    await guest.transport.send(guest.frame_for(stray.wire))
    with pytest.raises(EnvelopeError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "envelope.bad_signature"


async def test_abort_reaches_the_peer_with_reason_and_evidence():
    guest, host, *_ = await channel_pair()
    await host.abort("session.commit_mismatch", "reveal does not match",
                     evidence={"envelope_id": "x", "signature": "ab"})
    got = await guest.recv(timeout=1)
    assert is_control(got) and got.type == "p2p:control.abort"
    assert got.payload["reason"] == "session.commit_mismatch"
    assert got.payload["evidence"] == {"envelope_id": "x", "signature": "ab"}


async def test_close_ends_the_peer_with_its_reason():
    guest, host, *_ = await channel_pair()
    await guest.close("finished")
    with pytest.raises(TransportError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "transport.closed" and info.value.details["reason"] == "finished"
    with pytest.raises(TransportError):
        await host.recv(timeout=1)
    with pytest.raises(TransportError):
        await guest.send(MOVE)


async def test_recv_timeout_is_typed():
    guest, host, *_ = await channel_pair()
    with pytest.raises(TransportError) as info:
        await host.recv(timeout=0.05)
    assert info.value.code == "transport.timeout"
    assert not host.closed


async def test_heartbeats_keep_a_quiet_session_alive():
    # a loaded machine can stall this process for a while: the timeout leaves room for it
    guest, host, *_ = await channel_pair(heartbeat_interval=0.02, peer_timeout=0.4)
    await asyncio.sleep(1.2)  # several peer timeouts with no application traffic
    assert not guest.closed and not host.closed
    assert guest.pongs > 0 and host.pongs > 0
    await guest.send(MOVE)
    assert (await host.recv(timeout=1)).payload == MOVE


async def test_a_silent_peer_ends_the_session():
    clock = FakeClock()
    a, b = memory_pair()
    guest_keys, _ = await handshake_pair(a, b, clock)
    # the host side finished the handshake and then went silent (never reads, never pings)
    guest = await SecureChannel(a, guest_keys, clock=clock, heartbeat_interval=0.02,
                                peer_timeout=0.1).start()
    with pytest.raises(TransportError) as info:
        await guest.recv(timeout=2)
    assert info.value.code == "transport.peer_silent"
    assert guest.closed


async def test_channels_over_loopback_tcp():
    clock = FakeClock()
    host_identity = seeded_identity(1)
    seen = []

    async def handler(channel):
        while True:
            try:
                env = await channel.recv(timeout=2)
            except TransportError:
                return
            seen.append(env.payload)
            await channel.send({"action": "echo", "n": env.payload["n"]}, reply_to=env.id)

    server = await serve_channels(handler, host_identity, HOST, clock=clock)
    port = server.sockets[0].getsockname()[1]
    channel = await connect_channel(f"tcp://127.0.0.1:{port}", seeded_identity(2), GUEST,
                                    clock=clock, expected_peer_key=host_identity.public_hex)
    for n in range(5):
        sent = await channel.send({"action": "ping_app", "n": n})
        reply = await channel.recv(timeout=2, expect_reply_to=sent.id)
        assert reply.payload == {"action": "echo", "n": n}
    assert channel.keys.peer_identity == host_identity.public_hex
    await channel.close()
    server.close()
    await server.wait_closed()
    assert [p["n"] for p in seen] == list(range(5))


async def test_connect_channel_refuses_the_wrong_host_key():
    clock = FakeClock()
    server = await serve_channels(lambda ch: asyncio.sleep(0), seeded_identity(1), HOST,
                                  clock=clock)
    port = server.sockets[0].getsockname()[1]
    with pytest.raises(HandshakeError) as info:
        await connect_channel(f"tcp://127.0.0.1:{port}", seeded_identity(2), GUEST, clock=clock,
                              expected_peer_key=seeded_identity(3).public_hex,
                              handshake_timeout=2)
    assert info.value.code == "handshake.identity_mismatch"
    server.close()
    await server.wait_closed()


class PullOnly:
    """A transport wrapper without push mode: the channel must read it with a task."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.peer, self.max_frame = inner.peer, inner.max_frame

    @property
    def closed(self):
        return self.inner.closed

    async def send(self, frame):
        await self.inner.send(frame)

    async def recv(self, idle_timeout=None):
        return await self.inner.recv(idle_timeout)

    async def close(self):
        await self.inner.close()


async def test_a_pull_only_transport_works_the_same():
    clock = FakeClock()
    a, b = memory_pair()
    guest_keys, host_keys = await handshake_pair(a, b, clock)
    # peer_timeout well above the test's length: under load a short one ends the channel
    # with "silent peer" before the close arrives, which is not what this test is about
    guest = await SecureChannel(PullOnly(a), guest_keys, clock=clock, heartbeat_interval=0.02,
                                peer_timeout=30.0).start()
    host = await SecureChannel(PullOnly(b), host_keys, clock=clock, heartbeat_interval=0.02,
                               peer_timeout=30.0).start()
    await guest.send(MOVE)
    assert (await host.recv(timeout=1)).payload == MOVE
    for _ in range(500):  # pings answered through the pull path too (no fixed sleep)
        if guest.pongs > 0:
            break
        await asyncio.sleep(0.01)
    assert guest.pongs > 0
    await host.close("done")
    with pytest.raises(TransportError) as info:
        await guest.recv(timeout=20)  # generous: under load a short wait times out first
    assert info.value.code == "transport.closed", info.value
    assert info.value.details["reason"] == "done"


async def test_a_close_right_after_a_ping_keeps_its_reason_on_a_pull_only_transport():
    """The race CI hit: the host answers a ping (its pong waits for a task, the transport
    has no send_nowait), then closes at once. A pong numbered before the close but written
    after it would make the guest hold the close for the gap until the hang-up."""
    from lingxi.wire.control import control_payload

    clock = FakeClock()
    a, b = memory_pair()
    guest_keys, host_keys = await handshake_pair(a, b, clock)
    guest = await SecureChannel(PullOnly(a), guest_keys, clock=clock, heartbeat_interval=None,
                                peer_timeout=None).start()
    host = await SecureChannel(PullOnly(b), host_keys, clock=clock, heartbeat_interval=None,
                               peer_timeout=None).start()
    _, ping = guest.codec.build(control_payload("ping", nonce="0" * 32))
    host._on_frame(ping)  # as the host's reader would, no loop turn before the close
    await host.close("done")
    with pytest.raises(TransportError) as info:
        await guest.recv(timeout=20)
    assert info.value.code == "transport.closed", info.value
    assert info.value.details["reason"] == "done"


async def test_a_flood_pauses_reading_until_recv_catches_up(monkeypatch):
    from lingxi.wire import channel as channel_module
    monkeypatch.setattr(channel_module, "INBOX_LIMIT", 8)
    guest, host, a, b = await channel_pair()
    for n in range(40):
        await guest.send({"action": "n", "n": n})
    await asyncio.sleep(0.05)
    assert len(host._inbox) == 8 and host._reading_paused  # the rest waits in the transport
    got = [(await host.recv(timeout=1)).payload["n"] for _ in range(40)]
    assert got == list(range(40))  # nothing lost, order kept
    assert not host._reading_paused


async def test_end_callbacks_run_once_when_the_peer_ends_the_channel_and_at_once_after():
    guest, host, *_ = await channel_pair()
    calls = []
    host.add_end_callback(lambda: calls.append("first"))
    host.add_end_callback(lambda: 1 / 0)  # a failing callback does not stop the others
    host.add_end_callback(lambda: calls.append("second"))
    assert calls == []
    await guest.close("finished")
    with pytest.raises(TransportError):
        await host.recv(timeout=1)
    assert calls == ["first", "second"]
    await host.close()
    assert calls == ["first", "second"]  # not again
    host.add_end_callback(lambda: calls.append("late"))
    assert calls == ["first", "second", "late"]


async def test_a_ping_the_closing_peer_sent_last_does_not_hide_its_close_reason():
    """The peer pings, closes with a reason and hangs up at once: the pong this side cannot
    send any more does not end the channel before the close (and its reason) is read."""
    from lingxi.wire.control import control_payload

    guest, host, _, _ = await channel_pair()
    _, ping = host.codec.build(control_payload("ping", nonce="0" * 32))
    _, close = host.codec.build(control_payload("close", reason="done"))
    await host.send_frames([ping, close])
    await host.transport.close()
    with pytest.raises(TransportError) as info:
        await guest.recv(timeout=5)
    assert info.value.code == "transport.closed"
    assert info.value.details.get("reason") == "done", info.value
