"""A session's authenticated channel: signed envelopes over a frame transport.

``SecureChannel`` signs what it sends with the session's send key and runs
every incoming frame through a :class:`ReceivePipeline` bound to the session
(recv key, conversation id = session id, sender = the handshake's peer,
receiver = us). Frames are handled as soon as the transport reads them (push
mode; a background task reads transports that only offer ``recv``): pings are
answered, pongs counted, everything else queued for ``recv``. A watchdog task
sends ``control.ping`` every ``heartbeat_interval`` seconds and ends the
channel with ``transport.peer_silent`` when nothing arrived for
``peer_timeout`` seconds.

An envelope the pipeline rejects is raised from ``recv`` once (the channel
stays open so the caller can send ``abort`` with evidence); a transport failure
or the peer's ``control.close`` ends the channel and every later ``recv``
raises it.

Sealed by default: when the handshake agreed to seal (it does unless both
sides chose ``--unsealed``), every payload this channel sends is ``encrypt:
true`` under this direction's AEAD key, and every envelope travels inside a
sealed frame (:mod:`lingxi.wire.frames`), so a carrier sees sizes and timing
only and cannot drop, repeat, reorder or hold back a frame unnoticed. A frame
that breaks the order, or that comes later than ``max_delay`` seconds after it
was sent (measured against the peer's clock as seen in the handshake), ends
the channel with its ``transport.frame_*`` code. A plaintext envelope from the
peer in a sealed session is ``envelope.not_sealed``.

Both sides record the same form of every envelope: ``send`` returns, and
``recv`` delivers, the *opened* envelope (plaintext payload, ``encrypt: true``,
the signature of the sealed form), with ``wire`` = the sealed envelope's bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from lingxi.wire.builder import random_id, random_nonce
from lingxi.wire.codec import HELD, SessionCodec
from lingxi.wire.control import CONTROL_PREFIX, abort_payload, control_kind, control_payload
from lingxi.wire.envelope import AgentEndpoint, Envelope
from lingxi.wire.errors import EnvelopeError, TransportError
from lingxi.wire.handshake import Authorizer, SessionKeys, server_handshake
from lingxi.wire.identity import Identity
from lingxi.wire.pipeline import DEFAULT_WINDOW_SECONDS, check_expectations
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.transport import (
    DEFAULT_MAX_FRAME,
    DEFAULT_READ_TIMEOUT,
    FrameTransport,
    TcpTransport,
    serve_tcp,
)

INBOX_LIMIT = 64  # accepted envelopes waiting for recv() before the transport pauses
DEFAULT_MAX_DELAY = 30.0  # seconds a frame may take from the peer's clock to ours
DEFAULT_REORDER_GRACE = 0.5  # seconds a gap in the frame counter may stay open


class SecureChannel:
    """One session's signed (optionally sealed) envelope stream; see the module doc."""

    def __init__(self, transport: FrameTransport, keys: SessionKeys, *,
                 clock: Callable[[], float], id_factory: Callable[[], str] = random_id,
                 nonce_factory: Callable[[int], bytes] = random_nonce, prefix: str = "p2p",
                 window_seconds: float = DEFAULT_WINDOW_SECONDS,
                 heartbeat_interval: float | None = 5.0, peer_timeout: float | None = 20.0,
                 max_delay: float | None = DEFAULT_MAX_DELAY,
                 reorder_grace: float = DEFAULT_REORDER_GRACE) -> None:
        if heartbeat_interval is not None and peer_timeout is not None \
                and heartbeat_interval >= peer_timeout:
            raise ValueError("heartbeat_interval must be shorter than peer_timeout")
        self.transport = transport
        self.keys = keys
        self.prefix = prefix
        self.heartbeat_interval = heartbeat_interval
        self.peer_timeout = peer_timeout
        self.max_delay = max_delay
        self.reorder_grace = reorder_grace
        self.clock = clock
        self.codec = SessionCodec(keys, clock=clock, id_factory=id_factory,
                                  nonce_factory=nonce_factory, prefix=prefix,
                                  window_seconds=window_seconds)
        self.pipeline = self.codec.pipeline
        self._builder = self.codec.builder
        self._gap_timer: asyncio.TimerHandle | None = None
        self._inbox: deque[Envelope | EnvelopeError] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._terminal: TransportError | None = None
        self._last_rx = 0.0
        self._started = False
        self._reading_paused = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._end_callbacks: list[Callable[[], None]] = []
        self.pongs = 0

    # ---- properties ----------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self.keys.session_id

    @property
    def peer(self) -> AgentEndpoint:
        return self.keys.peer

    @property
    def closed(self) -> bool:
        return self._terminal is not None

    @property
    def sealed(self) -> bool:
        """Whether payloads and frames are sealed (agreed in the handshake)."""
        return self.keys.sealed

    @property
    def via(self) -> str:
        """The path the frames take: ``direct`` (TCP), ``relay`` or ``memory``."""
        return str(getattr(self.transport, "via", "direct"))

    def path_event(self) -> dict[str, Any]:
        """What a session records about its path: the carrier and whether it was sealed.

        Sealing off is the explicit debug choice both sides made in the handshake
        (``--unsealed``); recording it keeps that choice visible in the record.
        """
        return {"event": "wire.path", "via": self.via, "sealed": self.keys.sealed,
                "peer_address": self.transport.peer}

    # ---- lifecycle -------------------------------------------------------------
    async def start(self) -> SecureChannel:
        if not self._started:
            self._started = True
            self._loop = asyncio.get_running_loop()
            self._last_rx = self._loop.time()
            set_handler = getattr(self.transport, "set_frame_handler", None)
            if set_handler is not None:
                set_handler(self._on_frame, self._on_transport_error)
            else:
                self._tasks.append(asyncio.create_task(self._read_loop()))
            if self.heartbeat_interval is not None or self.peer_timeout is not None:
                self._tasks.append(asyncio.create_task(self._keepalive()))
        return self

    async def __aenter__(self) -> SecureChannel:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, reason: str | None = None) -> None:
        """Tell the peer (``control.close``), then close the transport."""
        if self._terminal is None:
            with contextlib.suppress(TransportError):
                await self._send_payload(control_payload("close", reason=reason))
        self._end(TransportError("transport.closed", "channel closed locally"))
        await self._shutdown()

    async def _shutdown(self) -> None:
        self._cancel_gap_timer()
        await self.transport.close()
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()
        for task in self._tasks:
            if task is not current:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def add_end_callback(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once when the channel ends (at once if it already has)."""
        if self._terminal is not None:
            callback()
        else:
            self._end_callbacks.append(callback)

    def _end(self, error: TransportError) -> None:
        if self._terminal is None:
            self._terminal = error
            self._wake()
            callbacks, self._end_callbacks = self._end_callbacks, []
            for callback in callbacks:
                with contextlib.suppress(Exception):
                    callback()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _deliver(self, item: Envelope | EnvelopeError) -> None:
        self._inbox.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if len(self._inbox) >= INBOX_LIMIT and not self._reading_paused:
            pause = getattr(self.transport, "pause_reading", None)
            if pause is not None:
                self._reading_paused = True
                pause()

    # ---- sending ---------------------------------------------------------------
    def _build(self, payload: dict[str, Any], *, encrypt: bool | None = None,
               **options: Any) -> tuple[Envelope, bytes]:
        """The envelope as recorded (opened form when sealed) and the frame that carries it."""
        return self.codec.build(payload, encrypt=encrypt, **options)

    def frame_for(self, data: bytes) -> bytes:
        """The next frame of this channel carrying ``data`` as is (tests: a peer that sends
        bytes of its own choosing inside an authentic frame)."""
        return self.codec.frame_for(data)

    async def send_frames(self, frames: list[bytes]) -> None:
        """Send frames a caller built with :attr:`codec`, in the order they were sealed.

        All are handed to the transport before the first wait, so no ping of the
        keepalive can slip between them and break the frame order.
        """
        if self._terminal is not None:
            raise self._terminal
        try:
            send_nowait = getattr(self.transport, "send_nowait", None)
            if send_nowait is not None and frames:
                for frame in frames[:-1]:
                    send_nowait(frame)
                await self.transport.send(frames[-1])  # writes at once, then waits to drain
            else:
                for frame in frames:
                    await self.transport.send(frame)
        except TransportError as error:
            self._end(error)
            raise

    async def _send_payload(self, payload: dict[str, Any], **options: Any) -> Envelope:
        env, frame = self._build(payload, **options)
        await self.transport.send(frame)
        return env

    async def send(self, payload: dict[str, Any], *, type: str | None = None,
                   reply_to: str | None = None, correlation_id: str | None = None,
                   ttl: int | None = None, encrypt: bool | None = None) -> Envelope:
        """Sign and seal ``payload``, send it, return the envelope as recorded.

        A sealed session seals every payload (``encrypt=False`` is refused);
        an unsealed one seals only when ``encrypt=True``. The returned
        envelope is the opened form with ``wire`` = the sealed bytes, exactly
        what the peer's ``recv`` returns.
        """
        if self._terminal is not None:
            raise self._terminal
        env, frame = self.codec.build(payload, type=type, reply_to=reply_to,
                                      correlation_id=correlation_id, ttl=ttl, encrypt=encrypt)
        try:
            await self.transport.send(frame)
        except TransportError as error:
            self._end(error)
            raise
        return env

    async def send_control(self, kind: str, *, reply_to: str | None = None,
                           **fields: Any) -> Envelope:
        return await self.send(control_payload(kind, **fields), reply_to=reply_to)

    async def abort(self, reason: str, message: str = "",
                    evidence: dict[str, Any] | None = None) -> Envelope:
        """Send ``control.abort`` with a reason code and evidence (the channel stays open)."""
        return await self.send(abort_payload(reason, message, evidence))

    # ---- receiving -------------------------------------------------------------
    async def recv(self, *, timeout: float | None = None, expect_reply_to: str | None = None,
                   expect_correlation_id: str | None = None) -> Envelope:
        """The next accepted envelope (session message or abort/receipt control).

        Raises the pipeline's :class:`EnvelopeError` for a rejected envelope,
        ``transport.timeout`` after ``timeout`` seconds, and the channel's
        terminal :class:`TransportError` once it has ended.
        """
        while not self._inbox:
            if self._terminal is not None:
                raise self._terminal
            waiter = (self._loop or asyncio.get_running_loop()).create_future()
            self._waiter = waiter
            try:
                if timeout is None:
                    await waiter
                else:
                    async with asyncio.timeout(timeout):
                        await waiter
            except TimeoutError:
                raise TransportError("transport.timeout",
                                     f"no envelope within {timeout:g} s") from None
            finally:
                self._waiter = None
        item = self._inbox.popleft()
        if self._reading_paused and len(self._inbox) < INBOX_LIMIT // 2:
            self._reading_paused = False
            self.transport.resume_reading()  # type: ignore[attr-defined]
        return self._checked(item, expect_reply_to, expect_correlation_id)

    @staticmethod
    def _checked(item: Envelope | EnvelopeError, reply_to: str | None,
                 correlation_id: str | None) -> Envelope:
        if isinstance(item, EnvelopeError):
            raise item
        if (reply_to is not None and item.reply_to != reply_to) \
                or (correlation_id is not None and item.correlation_id != correlation_id):
            check_expectations(item, reply_to=reply_to, correlation_id=correlation_id)  # raises
        return item

    def _on_frame(self, frame: bytes) -> None:
        """Check one incoming frame and act on it; runs as soon as the frame is read."""
        assert self._loop is not None  # set by start(), before any frame is read
        if self._terminal is not None:
            return
        self._last_rx = self._loop.time()
        try:
            data = self.codec.open_frame(frame)
        except TransportError as error:
            self._fail_now(error)
            return
        if data is HELD:
            if self._gap_timer is None:
                self._gap_timer = self._loop.call_later(self.reorder_grace, self._gap_expired)
            return
        try:
            env = self.codec.accept(data)
        except EnvelopeError as error:
            self._deliver(error)
            return
        except Exception as error:  # a bug must end the channel, not hang recv()
            self._fail_now(TransportError("transport.closed", f"channel failed: {error!r}"))
            return
        max_delay = self.max_delay
        if max_delay is not None and self.keys.sealed:
            lateness = self.clock() - env.instant - self.keys.peer_clock_offset
            if lateness > max_delay:
                self._fail_late(lateness)
                return
        action = env.payload.get("action")
        if type(action) is not str or not action.startswith(CONTROL_PREFIX):
            self._deliver(env)  # a session message: the usual frame
            return
        kind = control_kind(env)
        if kind is None or kind in ("abort", "receipt"):
            self._deliver(env)
        elif kind == "ping":
            self._pong(env)
        elif kind == "pong":
            self.pongs += 1
        elif kind == "close":
            reason = env.payload.get("reason")
            self._fail_now(TransportError("transport.closed",
                                          f"peer closed the session ({reason or 'no reason'})",
                                          details={"reason": reason}))

    def _fail_late(self, lateness: float) -> None:
        """End the channel: a frame took ``lateness`` seconds, longer than ``max_delay``."""
        self._fail_now(TransportError("transport.frame_delayed",
                                      f"a frame arrived {lateness:.1f} s after it was sent "
                                      f"(the limit is {self.max_delay:g} s)",
                                      details={"lateness": round(lateness, 3)}))

    def _gap_expired(self) -> None:
        self._gap_timer = None
        opener = self.codec.opener
        if opener is not None and opener.holding and self._terminal is None:
            self._fail_now(opener.gap_error())

    def _cancel_gap_timer(self) -> None:
        if self._gap_timer is not None:
            self._gap_timer.cancel()
            self._gap_timer = None

    def _pong(self, ping: Envelope) -> None:
        """Answer ``ping`` from the reader. A transport that can write at once gets the pong
        now; for one that can only be awaited, the pong is built when its task runs, never
        before: a frame numbered now and written later would land after a frame numbered
        after it (this side's close), and the peer would hold that close for the gap until
        the hang-up, losing its reason."""
        payload = control_payload("pong", nonce=ping.payload.get("nonce"))
        send_nowait = getattr(self.transport, "send_nowait", None)
        if send_nowait is None:
            task = asyncio.ensure_future(self._pong_later(payload, ping.id))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            return
        frame = self._pong_frame(payload, ping.id)
        if frame is not None:
            with contextlib.suppress(TransportError):
                # the peer went away: as for a ping, the reader ends the channel with what
                # it still has to read (the peer's close and its reason), not this pong
                send_nowait(frame)

    async def _pong_later(self, payload: dict[str, Any], reply_to: str) -> None:
        frame = self._pong_frame(payload, reply_to) if self._terminal is None else None
        if frame is not None:
            with contextlib.suppress(TransportError):
                await self.transport.send(frame)

    def _pong_frame(self, payload: dict[str, Any], reply_to: str) -> bytes | None:
        """The pong's frame, numbered now; None when it cannot be built (the channel ends)."""
        try:
            return self._build(payload, reply_to=reply_to)[1]
        except TransportError as error:
            self._end(error)
            return None

    def _fail_now(self, error: TransportError) -> None:
        self._cancel_gap_timer()
        self._end(error)
        abort = getattr(self.transport, "abort", None)
        if abort is not None:
            abort()
        else:
            asyncio.ensure_future(self.transport.close())

    def _on_transport_error(self, error: TransportError) -> None:
        self._end(error)

    async def _read_loop(self) -> None:
        """Pull mode, for transports without a frame handler."""
        try:
            while self._terminal is None:
                self._on_frame(await self.transport.recv())
        except TransportError as error:
            self._end(error)
            await self.transport.close()

    async def _keepalive(self) -> None:
        """Ping every heartbeat_interval; end the channel after peer_timeout of silence."""
        loop = asyncio.get_running_loop()
        interval, timeout = self.heartbeat_interval, self.peer_timeout
        ticks = [t for t in (interval, timeout / 4 if timeout is not None else None) if t]
        tick = min(ticks)
        next_ping = loop.time() + interval if interval is not None else float("inf")
        counter = 0
        try:
            while self._terminal is None:
                await asyncio.sleep(tick)
                now = loop.time()
                if timeout is not None and now - self._last_rx > timeout:
                    self._end(TransportError("transport.peer_silent",
                                             f"nothing from the peer for {timeout:g} s"))
                    await self.transport.close()
                    return
                if interval is not None and now >= next_ping:
                    counter += 1
                    next_ping = now + interval
                    try:
                        await self._send_payload(control_payload("ping",
                                                                 nonce=f"{counter:032x}"))
                    except TransportError:
                        # the peer went away: the reader ends the channel with what it still
                        # has to read (the peer's close and its reason), not this ping
                        next_ping = float("inf")
        except TransportError as error:
            self._end(error)


async def connect_channel(endpoint: str, identity: Identity, local: AgentEndpoint, *,
                          clock: Callable[[], float], expected_peer_key: str | None = None,
                          ticket: str | None = None, max_frame: int = DEFAULT_MAX_FRAME,
                          read_timeout: float = DEFAULT_READ_TIMEOUT,
                          handshake_timeout: float = 10.0, **channel_options: Any
                          ) -> SecureChannel:
    """Connect to ``tcp://HOST:PORT``, run the guest handshake, start the channel.

    Kept for existing callers; it is :func:`lingxi.wire.connection.connect`.
    """
    from lingxi.wire.connection import connect

    return await connect(endpoint, identity, local, expected_host_key=expected_peer_key,
                         ticket=ticket, clock=clock, max_frame=max_frame,
                         read_timeout=read_timeout, handshake_timeout=handshake_timeout,
                         **channel_options)


async def serve_channels(handler: Callable[[SecureChannel], Awaitable[None]], identity: Identity,
                         local: AgentEndpoint, *, clock: Callable[[], float],
                         host: str = "127.0.0.1", port: int = 0,
                         expected_peer_key: str | None = None,
                         authorize: Authorizer | None = None,
                         max_frame: int = DEFAULT_MAX_FRAME,
                         read_timeout: float = DEFAULT_READ_TIMEOUT,
                         handshake_timeout: float = 10.0, seal: bool = True,
                         **channel_options: Any) -> asyncio.Server:
    """Listen on ``host:port``; run the host handshake per guest and hand ``handler`` a channel.

    A server of many sessions (each connection its own); a host of ONE session
    uses :func:`lingxi.wire.connection.serve_one`. A guest that fails the
    handshake or ``authorize`` is dropped before anything else is read. The
    channel is closed when ``handler`` returns.
    """
    hello_guard = ReplayGuard(100_000)

    async def on_transport(transport: TcpTransport) -> None:
        keys = await server_handshake(transport, identity, local, clock=clock,
                                      expected_peer_key=expected_peer_key, authorize=authorize,
                                      hello_guard=hello_guard, timeout=handshake_timeout,
                                      seal=seal)
        channel = await SecureChannel(transport, keys, clock=clock, **channel_options).start()
        try:
            await handler(channel)
        finally:
            await channel.close()

    return await serve_tcp(on_transport, host, port, max_frame=max_frame,
                           read_timeout=read_timeout)
