"""One session's envelopes to frames and back, without I/O: the channel's byte logic.

``SessionCodec`` holds what a finished handshake gives one side (its
:class:`~lingxi.wire.handshake.SessionKeys`): the builder that signs (and
seals) what it sends, the receive pipeline that checks what arrives, and the
frame sealer/opener of a sealed session. :class:`~lingxi.wire.channel.SecureChannel`
moves its frames over asyncio; the session conductor uses the same codec so a
session in memory signs, seals and checks every byte as one over TCP does.
Clock, ids and nonces are injected.
"""

from __future__ import annotations

from collections.abc import Callable
from hashlib import blake2b
from typing import Any

from lingxi.wire.aead import aead_cipher, seal_envelope
from lingxi.wire.builder import EnvelopeBuilder, random_id, random_nonce
from lingxi.wire.envelope import Envelope
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.frames import HELD, FrameOpener, FrameSealer
from lingxi.wire.handshake import SessionKeys
from lingxi.wire.pipeline import DEFAULT_WINDOW_SECONDS, ReceivePipeline
from lingxi.wire.replay import ReplayGuard


class DigestGuard(ReplayGuard):
    """A replay guard that remembers 128 bits of each signature.

    Every key the receive pipeline gives its guard is a signature spelled as
    lowercase hex (an HMAC output): it is kept as its first 16 bytes; a key that
    is not hex, or is shorter, as its 128-bit BLAKE2b digest. The same verdicts as
    :class:`ReplayGuard`: 128 bits of an HMAC do not collide by chance, a peer
    would need some 2^64 tries to make two of its own collide, and a collision
    would refuse, never admit. 16 bytes per live envelope instead of a 64- or
    128-character string: a session that sends fast keeps a whole window's
    envelopes in it.
    """

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(_digest(key))

    def check_and_remember(self, key: str, expires_at: float, now: float) -> None:
        self._remember(_digest(key), expires_at, now)


def _digest(key: str) -> bytes:
    try:
        raw = bytes.fromhex(key[:32])
    except ValueError:
        raw = b""
    return raw if len(raw) == 16 else blake2b(key.encode(), digest_size=16).digest()


class SessionCodec:
    """Builds the frames one side sends and opens the frames its peer sends."""

    def __init__(self, keys: SessionKeys, *, clock: Callable[[], float],
                 id_factory: Callable[[], str] = random_id,
                 nonce_factory: Callable[[int], bytes] = random_nonce, prefix: str = "p2p",
                 window_seconds: float = DEFAULT_WINDOW_SECONDS) -> None:
        self.keys = keys
        self.prefix = prefix
        self.clock = clock
        self.builder = EnvelopeBuilder(keys.local, keys.peer, keys.send_key, clock=clock,
                                       id_factory=id_factory, conversation_id=keys.session_id,
                                       prefix=prefix, aead_key=keys.sending.aead,
                                       nonce_factory=nonce_factory)
        self.pipeline = ReceivePipeline(keys.recv_key, clock=clock,
                                        window_seconds=window_seconds,
                                        aead_key=keys.receiving.aead,
                                        expect_conversation_id=keys.session_id,
                                        expect_sender=keys.peer, expect_receiver=keys.local,
                                        replay_guard=DigestGuard())
        self.sealer = FrameSealer(keys.sending.frame) if keys.sealed else None
        self.opener = FrameOpener(keys.receiving.frame) if keys.sealed else None

    def build(self, payload: dict[str, Any], *, encrypt: bool | None = None,
              type: str | None = None, reply_to: str | None = None,
              correlation_id: str | None = None, ttl: int | None = None
              ) -> tuple[Envelope, bytes]:
        """The envelope as recorded (opened form when sealed) and the frame that carries it.

        Sealing the frame in the same step as building keeps the frame counter
        in the order the frames are handed to a transport.
        """
        sealer = self.sealer
        if sealer is not None and correlation_id is None and ttl is None \
                and encrypt is not False:  # a sealed session's usual envelope: one pass
            env = self.builder.build_sealed_opened(payload, type=type, reply_to=reply_to)
            return env, sealer.seal(env.__dict__["_wire"])
        env, data = self.envelope(payload, encrypt=encrypt, type=type, reply_to=reply_to,
                                  correlation_id=correlation_id, ttl=ttl)
        return env, self.frame_for(data)

    def envelope(self, payload: dict[str, Any], *, encrypt: bool | None = None,
                 **options: Any) -> tuple[Envelope, bytes]:
        """The envelope as recorded and its bytes as they travel, not yet in a frame."""
        if encrypt is False and self.keys.sealed:
            raise ValueError("this session is sealed; sealing off is agreed in the handshake "
                             "(seal=False on both sides), never per message")
        if self.keys.sealed or encrypt:
            _, opened = self.builder.build_sealed(payload, **options)
            return opened, opened.__dict__["_wire"]
        env = self.builder.build(payload, **options)
        return env, env.to_bytes()

    def frame_for(self, data: bytes) -> bytes:
        """The next frame carrying ``data`` as is (a forged or replayed envelope in tests)."""
        return self.sealer.seal(data) if self.sealer is not None else data

    def wire_bytes(self, opened: dict[str, Any]) -> bytes:
        """An opened envelope (as recorded) as it travels: its payload sealed again under
        this side's key, its signature kept. Tests use it to send an envelope whose
        payload was changed after it was signed."""
        plain = Envelope.from_dict({k: v for k, v in opened.items() if k != "encrypt"})
        if not opened.get("encrypt"):
            return plain.to_bytes()
        cipher = aead_cipher(self.keys.sending.aead)
        sealed = seal_envelope(plain, cipher, self.builder.nonce_factory)
        return sealed.replace(signature=opened.get("signature")).to_bytes()

    def open_frame(self, frame: bytes) -> bytes | None:
        """The envelope bytes inside ``frame``, or HELD (None) while a gap is open.

        Raises the frame layer's ``transport.frame_*`` error, which ends a session.
        """
        if self.opener is None:
            return frame
        return self.opener.open(frame)

    def accept(self, data: bytes) -> Envelope:
        """The checked (and opened) envelope in ``data``, or its :class:`EnvelopeError`."""
        env = self.pipeline.accept(data, expect_prefix=self.prefix)
        if self.keys.sealed and not env.encrypt:
            raise EnvelopeError("envelope.not_sealed", "a plaintext payload in a session "
                                "both sides agreed to seal", path="$.encrypt")
        return env


__all__ = ["HELD", "SessionCodec"]
