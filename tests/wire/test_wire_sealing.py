"""Sealed by default: payloads and frames sealed after the handshake, keys per direction,
sealing off only when both sides chose it, and every way a carrier can misbehave detected."""

from __future__ import annotations

import asyncio
import json

import pytest
from wirehelpers import GUEST, HOST, FakeClock, handshake_pair, seeded_identity

from lingxi.wire import Envelope, EnvelopeError, HandshakeError, TransportError
from lingxi.wire.aead import open_envelope
from lingxi.wire.channel import SecureChannel, connect_channel, serve_channels
from lingxi.wire.frames import FrameOpener
from lingxi.wire.handshake import DirectionKeys
from lingxi.wire.signature import verify_signature
from lingxi.wire.transport import memory_pair

SECRET = {"action": "move", "card": "queen of hearts", "note": "bluff"}


class Tap:
    """Wraps a transport; keeps every frame sent and lets a test misbehave with them."""

    def __init__(self, inner) -> None:
        self.inner, self.sent = inner, []
        self.peer, self.max_frame = inner.peer, inner.max_frame
        self.mode: str | None = None
        self.held: bytes | None = None

    @property
    def closed(self):
        return self.inner.closed

    def set_frame_handler(self, on_frame, on_error):
        self.inner.set_frame_handler(on_frame, on_error)

    def pause_reading(self):
        self.inner.pause_reading()

    def resume_reading(self):
        self.inner.resume_reading()

    def send_nowait(self, frame):
        self.sent.append(frame)
        mode = self.mode
        if mode == "drop":
            self.mode = None
            return
        if mode == "duplicate":
            self.mode = None
            self.inner.send_nowait(frame)
        elif mode == "hold":  # keep this one, send it after the next (a reorder)
            self.mode, self.held = "release", frame
            return
        elif mode == "release":
            self.mode = None
            self.inner.send_nowait(frame)
            frame = self.held
        elif mode == "flip":
            self.mode = None
            frame = frame[:-1] + bytes([frame[-1] ^ 1])
        self.inner.send_nowait(frame)

    async def send(self, frame):
        self.send_nowait(frame)

    async def recv(self, idle_timeout=None):
        return await self.inner.recv(idle_timeout)

    def abort(self):
        self.inner.abort()

    async def close(self):
        await self.inner.close()


async def pair(clock=None, **options):
    clock = clock or FakeClock()
    a, b = memory_pair()
    guest_keys, host_keys = await handshake_pair(a, b, clock)
    options.setdefault("heartbeat_interval", None)
    options.setdefault("peer_timeout", None)
    tap = Tap(a)
    guest = await SecureChannel(tap, guest_keys, clock=clock, **options).start()
    host = await SecureChannel(b, host_keys, clock=clock, **options).start()
    return guest, host, tap


async def test_every_payload_and_header_is_sealed_on_the_wire_by_default():
    guest, host, tap = await pair()
    await guest.send(SECRET, correlation_id="corr-7")
    got = await host.recv(timeout=1)
    assert got.payload == SECRET and got.encrypt is True
    frame = tap.sent[0]
    for clear in (b"queen", b"bluff", b"move", b"p2p:", GUEST.agent_id.encode(),
                  HOST.agent_id.encode(), b"corr-7", guest.session_id.encode()):
        assert clear not in frame  # what a carrier sees: a counter, a length, noise
    assert frame[:8] == bytes(8)  # the frame counter, in clear, starting at 0
    await guest.close()
    assert all(b"control" not in f for f in tap.sent)  # control envelopes are sealed too


async def test_both_sides_record_the_same_opened_envelope():
    guest, host, _ = await pair()
    sent = await guest.send(SECRET)
    got = await host.recv(timeout=1)
    assert sent.to_dict() == got.to_dict()
    assert sent.to_dict()["encrypt"] is True and sent.payload == SECRET
    assert sent.wire == got.wire  # the sealed envelope, the same bytes on both sides
    sealed = json.loads(sent.wire)
    assert "queen" not in json.dumps(sealed["payload"]) and sealed["signature"] == sent.signature


async def test_keys_are_per_direction_and_a_disclosed_secret_opens_that_direction_only():
    guest, host, tap = await pair()
    sent = await guest.send(SECRET)
    await host.recv(timeout=1)
    reply = await host.send({"action": "ack"})
    await guest.recv(timeout=1)
    # a judge gets the captured frame and the guest→host secret, nothing else
    disclosed = DirectionKeys.derive(guest.keys.sending.secret)
    data = FrameOpener(disclosed.frame).open(tap.sent[0])
    envelope = Envelope.parse(data)
    verify_signature(envelope, disclosed.hmac)  # the secret is proved by the signature
    assert open_envelope(envelope, disclosed.aead).payload == SECRET
    assert open_envelope(envelope, disclosed.aead).to_dict() == sent.to_dict()
    with pytest.raises(EnvelopeError):  # it says nothing of what the host sent
        open_envelope(Envelope.parse(reply.wire), disclosed.aead)
    forged = DirectionKeys.derive(bytes(32))
    with pytest.raises(EnvelopeError) as info:
        verify_signature(envelope, forged.hmac)
    assert info.value.code == "envelope.bad_signature"


async def test_encrypt_false_is_refused_in_a_sealed_session():
    guest, _, _ = await pair()
    with pytest.raises(ValueError):
        await guest.send(SECRET, encrypt=False)


async def test_a_peer_sending_a_plaintext_envelope_is_not_sealed():
    guest, host, tap = await pair()
    plain = guest._builder.build({"action": "move"}).to_bytes()
    await tap.send(guest.frame_for(plain))
    with pytest.raises(EnvelopeError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "envelope.not_sealed"
    await guest.send({"action": "still_here"})  # the channel stays open for the abort
    assert (await host.recv(timeout=1)).payload["action"] == "still_here"


@pytest.mark.parametrize("guest_seal,host_seal", [(False, True), (True, False)])
async def test_sealing_off_on_one_side_only_is_refused_by_the_other(guest_seal, host_seal):
    a, b = memory_pair()
    guest, host = await handshake_pair(a, b, FakeClock(), guest_seal=guest_seal,
                                       host_seal=host_seal)
    assert isinstance(guest, HandshakeError) and isinstance(host, HandshakeError)
    assert guest.code == host.code == "handshake.sealing_refused"


async def test_sealing_off_on_both_sides_is_a_plaintext_debug_session():
    clock = FakeClock()
    a, b = memory_pair()
    guest_keys, host_keys = await handshake_pair(a, b, clock, guest_seal=False, host_seal=False)
    assert not guest_keys.sealed and not host_keys.sealed
    tap = Tap(a)
    guest = await SecureChannel(tap, guest_keys, clock=clock, heartbeat_interval=None,
                                peer_timeout=None).start()
    host = await SecureChannel(b, host_keys, clock=clock, heartbeat_interval=None,
                               peer_timeout=None).start()
    await guest.send(SECRET)
    got = await host.recv(timeout=1)
    assert got.payload == SECRET and not got.encrypt and b"queen" in tap.sent[0]


async def test_the_choice_is_bound_by_the_proofs():
    """A hello's seal choice is covered by its proof: turning sealing off on the path fails."""
    from lingxi.wire.handshake import _hello_proof_content

    payload = {"identity_key": "a" * 64, "ephemeral_key": "b" * 64, "nonce": "c" * 32,
               "expected_key": "", "challenge": "d" * 64}
    env = Envelope(id="x", type="p2p:handshake.hello", sender=GUEST, receiver=HOST,
                   payload=payload, timestamp="2026-11-30T08:00:00Z")
    assert _hello_proof_content(env, payload) != _hello_proof_content(
        env, {**payload, "seal": False})


@pytest.mark.parametrize("mode,code", [("drop", "transport.frame_lost"),
                                       ("duplicate", "transport.frame_duplicated"),
                                       ("hold", "transport.frame_reordered"),
                                       ("flip", "transport.frame_forged")])
async def test_a_carrier_that_misbehaves_is_caught_with_its_code(mode, code):
    guest, host, tap = await pair(reorder_grace=0.2)
    await guest.send({"action": "one"})
    assert (await host.recv(timeout=1)).payload["action"] == "one"
    tap.mode = mode
    await guest.send({"action": "two"})
    await guest.send({"action": "three"})
    received = []
    with pytest.raises(TransportError) as info:
        while True:
            received.append((await host.recv(timeout=2)).payload["action"])
    assert info.value.code == code
    assert "three" not in received  # nothing after the break is accepted
    if mode == "duplicate":
        assert received == ["two"]  # the first copy is fine, the second one is caught


async def test_a_frame_held_back_longer_than_max_delay_is_caught():
    clock = FakeClock()
    guest, host, _ = await pair(clock, max_delay=5.0)
    await guest.send({"action": "one"})
    assert (await host.recv(timeout=1)).payload["action"] == "one"
    await guest.send({"action": "two"})
    clock.now += 6.0  # the carrier sat on the frame for 6 s
    with pytest.raises(TransportError) as info:
        await host.recv(timeout=1)
    assert info.value.code == "transport.frame_delayed"


async def test_a_constant_clock_offset_is_not_a_delay():
    host_clock, guest_clock = FakeClock(), FakeClock()
    guest_clock.now -= 50.0  # the guest's clock is 50 s behind (inside the 120 s window)
    a, b = memory_pair()
    guest_keys, host_keys = await asyncio.gather(
        __import__("lingxi.wire.handshake", fromlist=["x"]).client_handshake(
            a, seeded_identity(2), GUEST, clock=guest_clock, timeout=2),
        __import__("lingxi.wire.handshake", fromlist=["x"]).server_handshake(
            b, seeded_identity(1), HOST, clock=host_clock, timeout=2))
    guest = await SecureChannel(a, guest_keys, clock=guest_clock, heartbeat_interval=None,
                                peer_timeout=None, max_delay=5.0).start()
    host = await SecureChannel(b, host_keys, clock=host_clock, heartbeat_interval=None,
                               peer_timeout=None, max_delay=5.0).start()
    await guest.send({"action": "one"})
    assert (await host.recv(timeout=1)).payload["action"] == "one"
    await host.send({"action": "two"})
    assert (await guest.recv(timeout=1)).payload["action"] == "two"


async def test_tcp_sessions_are_sealed_too():
    clock = FakeClock()
    seen = asyncio.get_running_loop().create_future()

    async def handler(channel):
        seen.set_result(await channel.recv(timeout=2))

    server = await serve_channels(handler, seeded_identity(1), HOST, clock=clock,
                                  heartbeat_interval=None, peer_timeout=None)
    port = server.sockets[0].getsockname()[1]
    guest = await connect_channel(f"tcp://127.0.0.1:{port}", seeded_identity(2), GUEST,
                                  clock=clock, heartbeat_interval=None, peer_timeout=None)
    assert guest.sealed
    await guest.send(SECRET)
    got = await asyncio.wait_for(seen, 2)
    assert got.encrypt and got.payload == SECRET
    await guest.close()
    server.close()
    await server.wait_closed()


def test_the_cipher_is_cryptographys_own_chacha20poly1305() -> None:
    """lingxi.wire.aead reads the class from cryptography's binding (skipping the import of
    the whole ciphers package): the very class the public module names."""
    from cryptography.hazmat.primitives.ciphers import aead as public

    from lingxi.wire import aead, frames

    assert aead.ChaCha20Poly1305 is public.ChaCha20Poly1305
    assert frames.ChaCha20Poly1305 is public.ChaCha20Poly1305
