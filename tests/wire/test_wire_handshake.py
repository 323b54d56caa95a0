"""Handshake: matching keys on both sides, identity pinning, forged or replayed hellos."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wirehelpers import GUEST, HOST, FakeClock, handshake_pair, seeded_identity

from lingxi.wire import Envelope, HandshakeError, TransportError, handshake, sign_envelope
from lingxi.wire.handshake import HANDSHAKE_KEY, client_handshake, server_handshake
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.transport import connect_tcp, memory_pair, serve_tcp


class CountingTransport:
    """Wraps a transport and counts frames handed to the reader."""

    def __init__(self, inner) -> None:
        self.inner, self.frames_read = inner, 0
        self.peer, self.max_frame = inner.peer, inner.max_frame

    @property
    def closed(self):
        return self.inner.closed

    async def send(self, frame):
        await self.inner.send(frame)

    async def recv(self, idle_timeout=None):
        frame = await self.inner.recv(idle_timeout)
        self.frames_read += 1
        return frame

    async def close(self):
        await self.inner.close()


async def test_both_sides_derive_the_same_session():
    a, b = memory_pair()
    clock = FakeClock()
    guest, host = await handshake_pair(a, b, clock, expected_host_key=seeded_identity(1).public_hex)
    assert guest.session_id == host.session_id and len(guest.session_id) == 32
    assert guest.send_key == host.recv_key and guest.recv_key == host.send_key
    assert guest.send_key != guest.recv_key
    assert guest.sending == host.receiving and guest.receiving == host.sending
    keys = {k for d in (guest.sending, guest.receiving)
            for k in (d.secret, d.hmac, d.aead, d.frame)}
    assert len(keys) == 8 and all(len(k) == 32 for k in keys)  # one of each per direction
    assert guest.sealed and host.sealed
    assert guest.transcript_hash == host.transcript_hash
    assert guest.peer_identity == seeded_identity(1).public_hex
    assert host.peer_identity == seeded_identity(2).public_hex
    assert guest.peer == HOST and host.peer == GUEST


async def test_every_handshake_gives_fresh_keys():
    clock = FakeClock()
    first, _ = await handshake_pair(*memory_pair(), clock)
    second, _ = await handshake_pair(*memory_pair(), clock)
    assert first.session_id != second.session_id and first.send_key != second.send_key


async def test_handshake_over_tcp():
    clock = FakeClock()
    done: asyncio.Future = asyncio.get_running_loop().create_future()

    async def handler(transport):
        done.set_result(await server_handshake(transport, seeded_identity(1), HOST, clock=clock))

    server = await serve_tcp(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = await connect_tcp("127.0.0.1", port)
    guest = await client_handshake(transport, seeded_identity(2), GUEST, clock=clock,
                                   expected_peer_key=seeded_identity(1).public_hex)
    host = await asyncio.wait_for(done, 2)
    assert guest.session_id == host.session_id
    await transport.close()
    server.close()
    await server.wait_closed()


async def test_guest_refuses_a_host_with_another_identity_before_reading_any_payload(monkeypatch):
    # a dishonest host ignores the key the guest asked for and presents its own
    monkeypatch.setattr(handshake, "_check_guest_expectation", lambda body, identity: None)
    a, b = memory_pair()
    counting = CountingTransport(a)
    clock = FakeClock()
    impostor = seeded_identity(9)

    async def host_then_payload():
        keys = await server_handshake(b, impostor, HOST, clock=clock)
        await b.send(b'{"payload": "must never be read"}')
        return keys

    host_task = asyncio.create_task(host_then_payload())
    with pytest.raises(HandshakeError) as info:
        await client_handshake(counting, seeded_identity(2), GUEST, clock=clock,
                               expected_peer_key=seeded_identity(1).public_hex, timeout=2)
    await host_task
    assert info.value.code == "handshake.identity_mismatch"
    assert counting.frames_read == 2  # challenge and welcome; the payload after them stays unread
    assert counting.closed


async def test_host_refuses_an_unexpected_guest_with_a_reason_and_no_welcome():
    a, b = memory_pair()
    guest, host = await handshake_pair(a, b, FakeClock(),
                                       expected_guest_key=seeded_identity(7).public_hex)
    assert isinstance(host, HandshakeError) and host.code == "handshake.identity_mismatch"
    assert isinstance(guest, HandshakeError) and guest.code == "handshake.identity_mismatch"


async def test_host_refuses_a_guest_that_expects_another_host():
    a, b = memory_pair()
    guest, host = await handshake_pair(a, b, FakeClock(),
                                       expected_host_key=seeded_identity(5).public_hex)
    assert isinstance(host, HandshakeError) and host.code == "handshake.identity_mismatch"
    assert isinstance(guest, HandshakeError) and guest.code == "handshake.identity_mismatch"


async def test_a_host_claiming_the_expected_key_without_holding_it_is_refused():
    expected = seeded_identity(1)
    liar = seeded_identity(6)
    liar.public_hex = expected.public_hex  # presents the right key, signs with its own
    a, b = memory_pair()
    guest, host = await handshake_pair(a, b, FakeClock(), host_identity=liar,
                                       expected_host_key=expected.public_hex)
    assert isinstance(guest, HandshakeError) and guest.code == "handshake.bad_signature"


class Tamper:
    """A man in the middle that rewrites the first hello or welcome going one way."""

    def __init__(self, inner, rewrite) -> None:
        self.inner, self.rewrite, self.done = inner, rewrite, False
        self.peer, self.max_frame = inner.peer, inner.max_frame

    @property
    def closed(self):
        return self.inner.closed

    async def send(self, frame):
        await self.inner.send(frame)

    async def recv(self, idle_timeout=None):
        frame = await self.inner.recv(idle_timeout)
        raw = json.loads(frame)
        if not self.done and raw["payload"]["action"] != "handshake.challenge":
            self.done = True
            self.rewrite(raw)
            env = Envelope.from_dict(raw)
            if env.action == "handshake.hello":  # its HMAC key is public: re-sign it
                env = sign_envelope(env, HANDSHAKE_KEY)
            frame = env.to_bytes()
        return frame

    async def close(self):
        await self.inner.close()


def swap_ephemeral(raw):
    raw["payload"]["ephemeral_key"] = "11" * 32


def swap_identity(raw):
    raw["payload"]["identity_key"] = seeded_identity(8).public_hex


@pytest.mark.parametrize(("side", "rewrite", "code"), [
    ("host", swap_ephemeral, "handshake.bad_signature"),
    ("host", swap_identity, "handshake.bad_signature"),
    ("guest", swap_ephemeral, "handshake.bad_signature"),
    ("guest", swap_identity, "handshake.bad_signature"),
])
async def test_a_man_in_the_middle_cannot_swap_keys(side, rewrite, code):
    a, b = memory_pair()
    clock = FakeClock()
    if side == "host":  # tamper with the hello the host reads
        b = Tamper(b, rewrite)
    else:  # tamper with the welcome the guest reads
        a = Tamper(a, rewrite)
    guest, host = await handshake_pair(a, b, clock)
    refused = host if side == "host" else guest
    assert isinstance(refused, HandshakeError) and refused.code == code


async def test_a_replayed_hello_is_refused():
    clock = FakeClock()
    guard = ReplayGuard()
    a, b = memory_pair()
    recorder = CountingTransport(b)
    frames = []
    original_recv = recorder.recv

    async def recording_recv(idle_timeout=None):
        frame = await original_recv(idle_timeout)
        frames.append(frame)
        return frame

    recorder.recv = recording_recv
    guest_task = asyncio.create_task(client_handshake(a, seeded_identity(2), GUEST, clock=clock))
    await server_handshake(recorder, seeded_identity(1), HOST, clock=clock, hello_guard=guard)
    await guest_task
    c, d = memory_pair()
    await c.send(frames[0])
    with pytest.raises(HandshakeError) as info:
        await server_handshake(d, seeded_identity(1), HOST, clock=clock, hello_guard=guard)
    assert info.value.code == "handshake.replay"


class ClockJump:
    """Moves a clock forward when the wrapped transport's reader gets its first frame."""

    def __init__(self, inner, clock, seconds) -> None:
        self.inner, self.clock, self.seconds = inner, clock, seconds
        self.peer, self.max_frame = inner.peer, inner.max_frame

    @property
    def closed(self):
        return self.inner.closed

    async def send(self, frame):
        await self.inner.send(frame)

    async def recv(self, idle_timeout=None):
        frame = await self.inner.recv(idle_timeout)
        self.clock.now += self.seconds
        self.seconds = 0
        return frame

    async def close(self):
        await self.inner.close()


async def test_a_stale_hello_is_refused():
    a, b = memory_pair()
    guest_clock, host_clock = FakeClock(), FakeClock()
    guest_task = asyncio.create_task(client_handshake(a, seeded_identity(2), GUEST,
                                                      clock=guest_clock, timeout=1))
    with pytest.raises(HandshakeError) as info:  # the hello arrives 600 s after the challenge
        await server_handshake(ClockJump(b, host_clock, 600), seeded_identity(1), HOST,
                               clock=host_clock)
    assert info.value.details["envelope_code"] == "envelope.stale"
    with pytest.raises(HandshakeError) as guest_error:
        await guest_task
    assert guest_error.value.code == "handshake.failed"  # the refusal: stale is handshake.failed


async def test_a_guest_refuses_a_stale_challenge():
    a, b = memory_pair()
    guest_clock, host_clock = FakeClock(), FakeClock()
    host_clock.now += 600
    host_task = asyncio.create_task(server_handshake(b, seeded_identity(1), HOST,
                                                     clock=host_clock, timeout=1))
    with pytest.raises(HandshakeError) as info:
        await client_handshake(a, seeded_identity(2), GUEST, clock=guest_clock, timeout=1)
    assert info.value.details["envelope_code"] == "envelope.stale"
    with pytest.raises(TransportError):
        await host_task


async def test_garbage_instead_of_a_hello_is_refused():
    a, b = memory_pair()
    await a.send(b"\x00garbage\xff")
    with pytest.raises(HandshakeError) as info:
        await server_handshake(b, seeded_identity(1), HOST, clock=FakeClock())
    assert info.value.code == "handshake.failed"
    assert b.closed


async def test_a_silent_host_times_out_the_guest():
    a, _ = memory_pair()
    with pytest.raises(TransportError) as info:
        await client_handshake(a, seeded_identity(2), GUEST, clock=FakeClock(), timeout=0.05)
    assert info.value.code == "transport.peer_silent"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400) | st.builds(lambda d: json.dumps(d).encode(), st.dictionaries(
    st.sampled_from(["id", "version", "type", "sender", "receiver", "payload", "timestamp",
                     "signature"]),
    st.none() | st.text(max_size=10) | st.just({"action": "handshake.hello"}), max_size=8)))
def test_fuzz_hello_frames_give_typed_errors_only(frame):
    async def run():
        a, b = memory_pair()
        await a.send(frame)
        try:
            await server_handshake(b, seeded_identity(1), HOST, clock=FakeClock(), timeout=1)
        except HandshakeError:
            return
        raise AssertionError("a random frame passed the handshake")

    asyncio.run(run())


# ---- version 2: challenge, ticket, refusals -----------------------------------------
def add_ticket(raw):
    raw["payload"]["ticket"] = "forged-ticket"


def change_ticket(raw):
    raw["payload"]["ticket"] = "another-ticket"


def drop_ticket(raw):
    del raw["payload"]["ticket"]


def change_challenge(raw):
    raw["payload"]["challenge"] = "ab" * 32


@pytest.mark.parametrize(("ticket", "rewrite", "code"), [
    (None, add_ticket, "handshake.bad_signature"),
    ("real-ticket", change_ticket, "handshake.bad_signature"),
    ("real-ticket", drop_ticket, "handshake.bad_signature"),
    (None, change_challenge, "handshake.replay"),
])
async def test_the_ticket_and_the_challenge_are_covered_by_the_hello_proof(ticket, rewrite, code):
    a, b = memory_pair()
    clock = FakeClock()
    guest_task = asyncio.create_task(client_handshake(a, seeded_identity(2), GUEST, clock=clock,
                                                      ticket=ticket, timeout=2))
    with pytest.raises(HandshakeError) as info:
        await server_handshake(Tamper(b, rewrite), seeded_identity(1), HOST, clock=clock,
                               timeout=2)
    assert info.value.code == code
    with pytest.raises(HandshakeError) as guest_info:
        await guest_task
    assert guest_info.value.code == code  # the refusal carries the host's code


async def test_the_host_sees_the_ticket_the_proof_covers():
    a, b = memory_pair()
    clock = FakeClock()
    seen = []
    guest_task = asyncio.create_task(client_handshake(a, seeded_identity(2), GUEST, clock=clock,
                                                      ticket="invite-42"))
    host = await server_handshake(b, seeded_identity(1), HOST, clock=clock,
                                  authorize=lambda key, ticket: seen.append((key, ticket)))
    guest = await guest_task
    assert seen == [(seeded_identity(2).public_hex, "invite-42")]
    assert host.ticket == guest.ticket == "invite-42"


@pytest.mark.parametrize("bad", ["x" * 2049, "", "line\nbreak", "\x1b[31mred", 7])
async def test_a_malformed_ticket_is_refused_on_both_sides(bad):
    a, _ = memory_pair()
    with pytest.raises(HandshakeError) as info:  # the guest checks before sending anything
        await client_handshake(a, seeded_identity(2), GUEST, clock=FakeClock(), ticket=bad)
    assert info.value.exit_code == 2

    def set_ticket(raw):
        raw["payload"]["ticket"] = bad

    c, d = memory_pair()
    clock = FakeClock()
    guest_task = asyncio.create_task(client_handshake(c, seeded_identity(2), GUEST, clock=clock,
                                                      timeout=2))
    with pytest.raises(HandshakeError) as info:
        await server_handshake(Tamper(d, set_ticket), seeded_identity(1), HOST, clock=clock)
    assert info.value.code == "handshake.failed" and "ticket" in info.value.message
    with pytest.raises(HandshakeError):
        await guest_task


async def test_a_ticket_of_2048_characters_is_accepted():
    a, b = memory_pair()
    ticket = "t" * 2048
    guest, host = await asyncio.gather(
        client_handshake(a, seeded_identity(2), GUEST, clock=FakeClock(), ticket=ticket),
        server_handshake(b, seeded_identity(1), HOST, clock=FakeClock()))
    assert host.ticket == ticket


def v1_hello(raw):
    """What a version-1 guest sends: no challenge, no version (re-proved with its own key)."""
    from lingxi.canonical import canonical_bytes
    body = raw["payload"]
    for name in ("challenge", "handshake"):
        del body[name]
    core = {k: body[k] for k in ("identity_key", "ephemeral_key", "nonce", "expected_key")}
    core["sender"], core["timestamp"] = raw["sender"], raw["timestamp"]
    body["proof"] = seeded_identity(2).sign(b"lingxi/wire/hello/v1|"
                                            + canonical_bytes(core)).hex()


def v3_hello(raw):
    raw["payload"]["handshake"] = 3


@pytest.mark.parametrize("rewrite", [v1_hello, v3_hello])
async def test_a_hello_of_another_version_is_refused(rewrite):
    a, b = memory_pair()
    clock = FakeClock()
    guest_task = asyncio.create_task(client_handshake(a, seeded_identity(2), GUEST, clock=clock,
                                                      timeout=2))
    with pytest.raises(HandshakeError) as info:
        await server_handshake(Tamper(b, rewrite), seeded_identity(1), HOST, clock=clock)
    assert info.value.code == "handshake.unsupported_version"
    with pytest.raises(HandshakeError) as guest_info:
        await guest_task
    assert guest_info.value.code == "handshake.unsupported_version"


async def test_a_guest_refuses_a_host_without_version_2():
    from lingxi.wire import EnvelopeBuilder
    a, b = memory_pair()
    offer = EnvelopeBuilder(HOST, GUEST, HANDSHAKE_KEY, clock=FakeClock()).build(
        {"action": "handshake.challenge", "challenge": "ab" * 32, "versions": [3]})
    await b.send(offer.to_bytes())
    with pytest.raises(HandshakeError) as info:
        await client_handshake(a, seeded_identity(2), GUEST, clock=FakeClock(), timeout=2)
    assert info.value.code == "handshake.unsupported_version"


@pytest.mark.parametrize(("reason", "cls", "code"), [
    ("transport.busy", TransportError, "transport.busy"),
    ("handshake.ticket_refused", HandshakeError, "handshake.ticket_refused"),
    ("registry.unavailable", HandshakeError, "registry.unavailable"),
    ("session.completed", HandshakeError, "handshake.failed"),  # not a refusal code: not relayed
    ("Not A Code", HandshakeError, "handshake.failed"),
    (["x"], HandshakeError, "handshake.failed"),
])
async def test_a_refusal_reaches_the_guest_with_its_code_and_safe_text(reason, cls, code):
    from lingxi.wire import EnvelopeBuilder
    a, b = memory_pair()
    refusal = EnvelopeBuilder(HOST, GUEST, HANDSHAKE_KEY, clock=FakeClock()).build(
        {"action": "handshake.refused", "reason": reason,
         "message": "\x1b[2Jsession completed\n(peer receipt verified)\r"})
    await b.send(refusal.to_bytes())
    with pytest.raises(cls) as info:
        await client_handshake(a, seeded_identity(2), GUEST, clock=FakeClock(), timeout=2)
    assert info.value.code == code
    assert info.value.message.isprintable()  # no escape, no line break from the peer
    assert "host says" in info.value.message


async def test_an_authoriser_refusal_keeps_its_code_and_the_pinned_key_comes_first():
    from lingxi.errors import LingxiError
    calls = []

    def authorize(key, ticket):
        calls.append(key)
        raise LingxiError("handshake.ticket_refused", "unknown ticket")

    a, b = memory_pair()
    guest, host = await asyncio.gather(
        client_handshake(a, seeded_identity(2), GUEST, clock=FakeClock(), timeout=2),
        server_handshake(b, seeded_identity(1), HOST, clock=FakeClock(), authorize=authorize),
        return_exceptions=True)
    assert isinstance(host, HandshakeError) and host.code == "handshake.ticket_refused"
    assert isinstance(guest, HandshakeError) and guest.code == "handshake.ticket_refused"
    c, d = memory_pair()
    guest, host = await asyncio.gather(
        client_handshake(c, seeded_identity(2), GUEST, clock=FakeClock(), timeout=2),
        server_handshake(d, seeded_identity(1), HOST, clock=FakeClock(), authorize=authorize,
                         expected_peer_key=seeded_identity(7).public_hex),
        return_exceptions=True)
    assert host.code == guest.code == "handshake.identity_mismatch"
    assert len(calls) == 1  # the pinned key refused before the ticket was looked at


async def test_a_forged_hello_never_reaches_the_authoriser():
    calls = []
    a, b = memory_pair()
    clock = FakeClock()
    guest_task = asyncio.create_task(client_handshake(a, seeded_identity(2), GUEST, clock=clock,
                                                      ticket="single-use", timeout=2))
    with pytest.raises(HandshakeError) as info:
        await server_handshake(Tamper(b, swap_identity), seeded_identity(1), HOST, clock=clock,
                               authorize=lambda key, ticket: calls.append(ticket))
    assert info.value.code == "handshake.bad_signature" and calls == []  # ticket not burnt
    with pytest.raises(HandshakeError):
        await guest_task
