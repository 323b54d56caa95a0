"""Sealed frames: what a sealed channel puts on any transport after the handshake.

Every frame is ``counter (8 bytes, big-endian) ‖ ChaCha20-Poly1305(frame key,
nonce = 4 zero bytes ‖ counter, the envelope's bytes)``, with one frame key per
direction from the handshake and the counter starting at 0. So whoever carries
the bytes (a TCP path, a relay, anyone reading NATS) sees a counter, a length and
the timing, never an envelope header: not the message type, not the agent ids.

The counter is authenticated (it is the nonce), so the receiver knows the exact
order the peer sent in and tells every way a carrier can misbehave apart, each
with its own code (all end the channel):

- a frame that does not open: ``transport.frame_forged`` (injected or altered);
- an authentic frame with a counter already passed: ``transport.frame_duplicated``;
- an authentic frame ahead of the next expected one is *held*; if the missing
  one then arrives it is ``transport.frame_reordered``, if it does not arrive
  within the caller's grace (or too many are held) ``transport.frame_lost``.

This module is pure (no clock, no asyncio): the channel owns the grace timer.
"""

from __future__ import annotations

import struct

from cryptography.exceptions import InvalidTag

from lingxi.wire.aead import ChaCha20Poly1305
from lingxi.wire.errors import TransportError

OVERHEAD = 8 + 16  # counter + Poly1305 tag
MAX_HELD = 16      # authentic frames ahead of a gap kept before the gap counts as a loss
_COUNTER = struct.Struct(">Q")
_NONCE_PREFIX = b"\x00\x00\x00\x00"


def _cipher(key: bytes) -> ChaCha20Poly1305:
    if len(key) != 32:
        raise ValueError("a frame key is 32 bytes")
    return ChaCha20Poly1305(key)


class FrameSealer:
    """Seals one direction's frames, numbering them from 0."""

    def __init__(self, key: bytes) -> None:
        self._cipher = _cipher(key)
        self.counter = 0

    def seal(self, data: bytes) -> bytes:
        head = _COUNTER.pack(self.counter)
        self.counter += 1
        return head + self._cipher.encrypt(_NONCE_PREFIX + head, data, None)


HELD = None  # what FrameOpener.open returns for a frame kept until the gap before it closes


class FrameOpener:
    """Opens the peer's frames in order; raises a ``transport.frame_*`` error otherwise."""

    def __init__(self, key: bytes, *, max_held: int = MAX_HELD) -> None:
        self._cipher = _cipher(key)
        self.expected = 0
        self.max_held = max_held
        self.held: dict[int, bytes] = {}

    @property
    def holding(self) -> bool:
        """Whether a gap is open (the caller should arm its grace timer)."""
        return bool(self.held)

    def _decrypt(self, frame: bytes) -> tuple[int, bytes]:
        if len(frame) < OVERHEAD:
            raise TransportError("transport.frame_forged",
                                 f"a sealed frame is at least {OVERHEAD} bytes, got {len(frame)}")
        head = frame[:8]
        (counter,) = _COUNTER.unpack(head)
        try:
            return counter, self._cipher.decrypt(_NONCE_PREFIX + head, frame[8:], None)
        except InvalidTag:
            raise TransportError("transport.frame_forged",
                                 f"frame {counter} does not open with the peer's frame key "
                                 "(injected or altered on the way)",
                                 details={"counter": counter}) from None

    def open(self, frame: bytes) -> bytes | None:
        """The envelope bytes of the next frame in order, or :data:`HELD` (None)."""
        counter, data = self._decrypt(frame)
        if counter < self.expected:
            raise TransportError("transport.frame_duplicated",
                                 f"frame {counter} came again (the next expected is "
                                 f"{self.expected})",
                                 details={"counter": counter, "expected": self.expected})
        if counter > self.expected:
            if counter in self.held:
                raise TransportError("transport.frame_duplicated",
                                     f"frame {counter} came twice",
                                     details={"counter": counter, "expected": self.expected})
            self.held[counter] = data
            if len(self.held) > self.max_held:
                raise self.gap_error()
            return HELD
        if self.held:
            raise TransportError("transport.frame_reordered",
                                 f"frame {counter} came after frame {min(self.held)}, which "
                                 "was sent later",
                                 details={"counter": counter, "overtaken_by": sorted(self.held)})
        self.expected += 1
        return data

    def gap_error(self) -> TransportError:
        """The error for a gap that did not close in time."""
        first = min(self.held) if self.held else self.expected
        return TransportError("transport.frame_lost",
                              f"frame {self.expected} never came (frame {first} did)",
                              details={"missing": self.expected, "received": sorted(self.held)})
