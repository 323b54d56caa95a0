"""Frames over a NATS relay: the same transport interface as TCP, both sides outbound.

A session's two sides each hold a short-lived credential from the registry
(``lingxi.registry.models.relay``) that lets them publish on their own subject
of that one session and subscribe to the other side's. One NATS connection is
a :class:`RelayLink`; over it, each attempt of a guest to reach the host is a
:class:`RelayTransport` with its own connection id, carrying frames — the very
bytes a TCP transport would carry, so the handshake, signatures, replay guard,
sealing and tickets run on top unchanged and the relay sees sealed frames only.

Every NATS message is ``kind (1) ‖ connection id (8) ‖ sequence (8) ‖ ack (8) ‖
body`` (big-endian):

- ``OPEN`` (guest → host, repeated every 0.25 s until answered) and ``ACCEPT``
  (host → guest) start a connection; ``CLOSE`` ends it.
- ``DATA`` carries one frame with a sequence number from 1; every message
  carries the cumulative ``ack`` of frames this side has handed to its reader.
- The sender keeps what is not acknowledged and sends it again when no ack
  came for a while (1 s, doubling to 8 s) and at once after the NATS client
  reconnected to another node, so a node that dies mid-session loses nothing;
  the receiver takes frames strictly in sequence and drops repeats and gaps.
  That repair is only for a relay that fails honestly: a lying one is caught
  above, by the sealed channel's authenticated frame counter.
- **Back-pressure**: at most ``window`` frames (or ``window_bytes``) wait
  unacknowledged; ``send`` then waits for acks, at most ``read_timeout``
  (``transport.timeout``). A reader that stops reading stops acking.
- **Size**: a frame over ``max_frame`` is refused on send and ends the
  connection on receipt (``transport.frame_too_large``).
- **Heartbeat**: an ack goes out after ``keepalive`` seconds without traffic;
  nothing from the peer for ``idle_timeout`` is ``transport.peer_silent``.
- **Flood**: frames beyond ``rate`` per second (bytes beyond ``byte_rate``),
  with a burst of twice that, end the connection with ``transport.flood``.

nats-py is imported here and in :mod:`lingxi.wire.relay_link` only (an
import-linter contract keeps it out of the rest of the wire).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import struct
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from lingxi.wire.errors import TransportError
from lingxi.wire.transport import DEFAULT_MAX_FRAME, DEFAULT_READ_TIMEOUT, _Inbox

if TYPE_CHECKING:
    from lingxi.wire.relay_link import RelayLink

OPEN, ACCEPT, DATA, ACK, CLOSE = 1, 2, 3, 4, 5
HEADER = struct.Struct(">BQQQ")
OPEN_EVERY = 0.25
ACK_DELAY = 0.005
RTO_MIN, RTO_MAX = 1.0, 8.0


class _Bucket:
    """A token bucket: ``rate`` per second, ``2 × rate`` at most banked."""

    def __init__(self, rate: float) -> None:
        self.rate, self.tokens, self.at = rate, 2 * rate, time.monotonic()

    def take(self, amount: float) -> bool:
        now = time.monotonic()
        self.tokens = min(2 * self.rate, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < amount:
            return False
        self.tokens -= amount
        return True


class RelayTransport(_Inbox):
    """One connection between host and guest through the relay (see the module doc)."""

    via = "relay"

    def __init__(self, link: RelayLink, conn_id: int, *, max_frame: int = DEFAULT_MAX_FRAME,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, window: int = 256,
                 window_bytes: int = 8 * 1024 * 1024, keepalive: float = 2.0,
                 idle_timeout: float | None = 60.0, rate: float = 2000.0,
                 byte_rate: float = 32 * 1024 * 1024) -> None:
        self._init_inbox()
        self.link, self.conn_id = link, conn_id
        self.max_frame, self.read_timeout = max_frame, read_timeout
        self.window, self.window_bytes = window, window_bytes
        self.keepalive, self.idle_timeout = keepalive, idle_timeout
        self.peer = f"relay://{link.credential.session_id}/{link.peer_role}"
        self.accepted = asyncio.get_running_loop().create_future()
        self._loop = asyncio.get_running_loop()
        self._next_seq = 1
        self._unacked: deque[tuple[int, bytes]] = deque()
        self._unacked_bytes = 0
        self._received = 0      # highest sequence taken in order
        self._ack_sent = -1
        self._ack_timer: asyncio.TimerHandle | None = None
        self._space = asyncio.Event()
        self._space.set()
        self._rto = RTO_MIN
        self._last_progress = self._last_rx = self._last_tx = self._loop.time()
        self._frames_in = _Bucket(rate)
        self._bytes_in = _Bucket(byte_rate)
        self._timer_task = self._loop.create_task(self._tick())
        self.retransmitted = 0  # frames sent again (for tests and benchmarks)

    # ---- acks -------------------------------------------------------------------
    def _ack_value(self) -> int:
        return self._received - len(self._frames)  # queued frames are not handed over yet

    def _send(self, kind: int, seq: int = 0, body: bytes = b"") -> None:
        ack = self._ack_value()
        self._ack_sent = ack
        self._last_tx = self._loop.time()
        self.link.publish(HEADER.pack(kind, self.conn_id, seq, ack) + body)

    def _ack_soon(self) -> None:
        if self._ack_timer is None and self._error is None:
            self._ack_timer = self._loop.call_later(ACK_DELAY, self._ack_now)

    def _ack_now(self) -> None:
        self._ack_timer = None
        if self._error is None and self._ack_value() != self._ack_sent:
            self._send(ACK)

    def _acked(self, ack: int) -> None:
        progressed = False
        while self._unacked and self._unacked[0][0] <= ack:
            _, frame = self._unacked.popleft()
            self._unacked_bytes -= len(frame)
            progressed = True
        if progressed:
            self._rto = RTO_MIN
            self._last_progress = self._loop.time()
            if len(self._unacked) < self.window and self._unacked_bytes < self.window_bytes:
                self._space.set()

    def resend(self) -> None:
        """Send every unacknowledged frame again (after a reconnect, or on timeout)."""
        for seq, frame in list(self._unacked):
            self.retransmitted += 1
            self._send(DATA, seq, frame)

    # ---- receiving ----------------------------------------------------------------
    def on_message(self, kind: int, seq: int, ack: int, body: bytes) -> None:
        """One message for this connection, from the link (already demultiplexed)."""
        if self._error is not None:
            return
        self._last_rx = self._loop.time()
        if kind == ACCEPT and not self.accepted.done():
            self.accepted.set_result(None)
        self._acked(ack)
        if kind == DATA:
            if seq == self._received + 1:
                if len(body) > self.max_frame:
                    self._fail(TransportError(
                        "transport.frame_too_large",
                        f"frame of {len(body)} bytes exceeds the {self.max_frame}-byte cap",
                        details={"size": len(body), "max_frame": self.max_frame}))
                    return
                if not (self._frames_in.take(1) and self._bytes_in.take(len(body))):
                    self._fail(TransportError("transport.flood", "the peer sends more frames "
                                              "than the relay transport's rate limit"))
                    return
                self._received = seq
                self._push(body)
            self._ack_soon()  # also re-acks a repeat or a gap, so the sender knows
        elif kind == CLOSE:
            self._terminate(TransportError("transport.closed", "the peer closed the relay "
                                           "connection"))
            self._stop()

    async def recv(self, idle_timeout: float | None = None) -> bytes:
        frame = await super().recv(idle_timeout)
        self._ack_soon()
        return frame

    def frames_taken(self) -> None:
        self._ack_soon()

    # ---- sending --------------------------------------------------------------------
    def send_nowait(self, frame: bytes) -> None:
        self._check_send(frame)
        seq = self._next_seq
        self._next_seq += 1
        self._unacked.append((seq, frame))
        self._unacked_bytes += len(frame)
        if len(self._unacked) >= self.window or self._unacked_bytes >= self.window_bytes:
            self._space.clear()
        if self._ack_timer is not None:  # the data carries the ack
            self._ack_timer.cancel()
            self._ack_timer = None
        self._send(DATA, seq, frame)

    async def send(self, frame: bytes) -> None:
        """Queue the frame at once (order is kept), then wait while the window is full."""
        self.send_nowait(frame)
        if not self._space.is_set():
            try:
                async with asyncio.timeout(self.read_timeout):
                    await self._space.wait()
            except TimeoutError:
                self._fail(TransportError("transport.timeout", "the peer is not reading "
                                          f"(no ack for {self.read_timeout:g} s)"))
                raise self._error from None  # type: ignore[misc]
            if self._error is not None:
                raise self._error

    # ---- timers ---------------------------------------------------------------------
    async def _tick(self) -> None:
        step = max(0.05, min(self.keepalive, RTO_MIN) / 2)
        try:
            while self._error is None:
                await asyncio.sleep(step)
                now = self._loop.time()
                if self.idle_timeout is not None and now - self._last_rx > self.idle_timeout:
                    self._fail(TransportError("transport.peer_silent", "nothing from the peer "
                                              f"on the relay for {self.idle_timeout:g} s"))
                    return
                if self._unacked and now - self._last_progress > self._rto:
                    self.resend()
                    self._last_progress = now
                    self._rto = min(RTO_MAX, self._rto * 2)
                if self.accepted.done() and now - self._last_tx > self.keepalive:
                    self._send(ACK)
        except asyncio.CancelledError:
            pass

    # ---- ending ---------------------------------------------------------------------
    def _stop(self) -> None:
        if self._ack_timer is not None:
            self._ack_timer.cancel()
            self._ack_timer = None
        self._timer_task.cancel()
        self._space.set()
        self.link.forget(self)

    def _fail(self, error: TransportError) -> None:
        self._terminate(error)
        with contextlib.suppress(Exception):
            self._send(CLOSE)
        self._stop()

    def lost(self, error: TransportError) -> None:
        """The link gave up (no relay node reachable): end with its error."""
        self._terminate(error)
        self._stop()

    def abort(self) -> None:
        if self._error is None:
            self._terminate(TransportError("transport.closed", "connection closed locally"))
            with contextlib.suppress(Exception):
                self._send(CLOSE)
        self._stop()

    async def close(self) -> None:
        """Wait (at most 1 s) until the peer acknowledged what was sent, then close."""
        if self._error is None:
            deadline = self._loop.time() + 1.0
            while self._unacked and self._error is None and self._loop.time() < deadline:
                await asyncio.sleep(0.01)
        self.abort()


def new_conn_id() -> int:
    return int.from_bytes(os.urandom(8), "big") >> 1 or 1


async def open_to_host(link: RelayLink, *, timeout: float = 10.0,
                       make: Callable[..., RelayTransport] = RelayTransport,
                       **options: object) -> RelayTransport:
    """The guest's side: open a connection to the host over ``link``.

    OPEN is repeated until the host ACCEPTs (it may still be joining the
    relay); ``transport.relay_no_answer`` after ``timeout`` seconds.
    """
    transport = make(link, new_conn_id(), **options)
    link.adopt(transport)
    deadline = asyncio.get_running_loop().time() + timeout
    while not transport.accepted.done():
        if transport.closed:
            raise transport._error  # type: ignore[misc]
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            transport.abort()
            raise TransportError("transport.relay_no_answer",
                                 f"the host did not answer on the relay within {timeout:g} s "
                                 "(is it hosting with --via auto or relay?)")
        transport._send(OPEN)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(min(OPEN_EVERY, left)):
                await asyncio.shield(transport.accepted)
    return transport
