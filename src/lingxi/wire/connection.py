"""One connection path: a host's accept loop for its one session, and a guest's connect.

A host serves exactly one session per run. The lock-out that a naive "first
connection wins" loop invites (one idle TCP connection holding the session
while its handshake times out) is avoided like this:

- every connection gets its own handshake task at once, so handshakes run
  concurrently; each must finish (challenge → hello → authorise) within
  ``pre_auth_timeout`` seconds (default 3 s) or it is closed;
- at most ``max_pending`` handshakes are pending. When a new connection finds
  them all taken, the oldest one that has not delivered its hello yet (idle or
  trickling) is dropped to make room; only when every pending one is already
  being checked is the newcomer refused at once (``transport.busy``). So a
  flood of idle connections cannot keep out a guest who answers the
  challenge, and the work a host does for an attacker stays bounded;
- the session goes to the FIRST connection whose handshake completes and
  passes ``authorize``; every other pending handshake is then dropped, and
  every later connection is told ``transport.busy`` and closed, for as long
  as the host runs.

A dropped or refused connection is sent ``handshake.refused`` with the code
(informational, unauthenticated) and closed; nothing else is read from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lingxi.records import FrozenRecord
from lingxi.wire.channel import SecureChannel
from lingxi.wire.envelope import AgentEndpoint
from lingxi.wire.errors import TransportError, WireError
from lingxi.wire.handshake import (
    DEFAULT_HANDSHAKE_TIMEOUT,
    Authorizer,
    SessionKeys,
    client_handshake,
    pinned_key,
    send_refusal,
    server_handshake,
)
from lingxi.wire.identity import Identity
from lingxi.wire.pipeline import DEFAULT_WINDOW_SECONDS
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.transport import (
    DEFAULT_MAX_FRAME,
    DEFAULT_READ_TIMEOUT,
    FrameTransport,
    TcpTransport,
    connect_tcp,
    parse_endpoint,
)

__all__ = ["DEFAULT_MAX_PENDING", "DEFAULT_PRE_AUTH_TIMEOUT", "OneSessionHost", "PeerInfo",
           "connect", "format_endpoint", "open_channel", "pinned_key", "serve_one"]

DEFAULT_PRE_AUTH_TIMEOUT = 3.0
DEFAULT_MAX_PENDING = 32
HELLO_GUARD_CAPACITY = 100_000


@dataclass(frozen=True, repr=False, eq=False)
class PeerInfo(FrozenRecord):
    """Who won the session: authenticated key, the endpoint its hello claims, where it came from."""

    public_key: str           # Ed25519, hex (proved in the handshake)
    endpoint: AgentEndpoint   # the hello's sender (covered by the guest's proof)
    address: str              # tcp://IP:PORT the connection came from (not authenticated)
    ticket: str | None        # the ticket the hello carried, already accepted by authorize
    session_id: str


def format_endpoint(host: str, port: int) -> str:
    return f"tcp://[{host}]:{port}" if ":" in host else f"tcp://{host}:{port}"


def _local_endpoint(local: AgentEndpoint | None, identity: Identity, where: str) -> AgentEndpoint:
    if local is None:
        return AgentEndpoint(identity.agent_id, "lingxi", where)
    return dataclasses.replace(local, endpoint=where)


async def _listening_socket(host: str, port: int) -> socket.socket:
    """Bound and listening, so a guest connecting before accept() starts waits in the backlog."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)
    if not infos:
        raise OSError(f"no address for {host!r}")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


@dataclass(eq=False)
class _Pending:
    transport: TcpTransport
    opened: float
    hello_seen: bool = False
    dropped: bool = False
    claimed: bool = False
    task: asyncio.Task[None] | None = None


class OneSessionHost:
    """Listen on ``endpoint`` and give one session to the first guest that is authorised.

    ``start()`` binds and listens (guests that connect now wait in the
    kernel's backlog; nothing is accepted yet) and returns the real bound
    endpoint; ``accept()`` starts accepting and returns the winner's started
    channel; ``close()`` stops listening and drops every other connection.
    The presented :class:`AgentEndpoint` is ``local_endpoint`` (or one made
    from the identity) with its ``endpoint`` set to ``advertised_endpoint``,
    or to the bound endpoint when none is given.
    """

    def __init__(self, endpoint: str, identity: Identity,
                 local_endpoint: AgentEndpoint | None = None, *,
                 authorize: Authorizer | None = None,
                 advertised_endpoint: str | None = None,
                 pre_auth_timeout: float = DEFAULT_PRE_AUTH_TIMEOUT,
                 max_pending: int = DEFAULT_MAX_PENDING,
                 clock: Callable[[], float] = time.time,
                 rng: Callable[[int], bytes] = os.urandom,
                 window_seconds: float = DEFAULT_WINDOW_SECONDS,
                 max_frame: int = DEFAULT_MAX_FRAME,
                 read_timeout: float = DEFAULT_READ_TIMEOUT,
                 on_refused: Callable[[WireError], None] | None = None,
                 channel_options: dict[str, Any] | None = None,
                 seal: bool = True, listen: bool = True) -> None:
        if not pre_auth_timeout > 0:
            raise ValueError("pre_auth_timeout must be positive")
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.bind_host, self.bind_port = parse_endpoint(endpoint)
        if advertised_endpoint is not None:
            parse_endpoint(advertised_endpoint)  # transport.bad_endpoint (exit 2) if not one
        self.identity = identity
        self.authorize = authorize
        self.pre_auth_timeout = pre_auth_timeout
        self.max_pending = max_pending
        self.clock, self.rng, self.window_seconds = clock, rng, window_seconds
        self.max_frame, self.read_timeout = max_frame, read_timeout
        self.on_refused = on_refused
        self.channel_options = dict(channel_options or {})
        self.seal = seal
        self.listen = listen
        self._requested_local = local_endpoint
        self._advertised = advertised_endpoint
        self.bound_endpoint: str | None = None
        self.local: AgentEndpoint | None = None
        self.hello_guard = ReplayGuard(HELLO_GUARD_CAPACITY)
        self._server: asyncio.Server | None = None
        self._pending: dict[TcpTransport, _Pending] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._taken = False
        self._closing = False
        self._refusing = 0  # refusals being sent now
        self._result: asyncio.Future[tuple[SessionKeys, TcpTransport]] | None = None
        self._handed_over = False
        self.refused = 0  # connections refused or dropped (for tests and logs)

    # ---- lifecycle -------------------------------------------------------------
    @property
    def advertised_endpoint(self) -> str | None:
        return self._advertised or self.bound_endpoint

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def start(self) -> str:
        """Bind the socket (port 0 → a free port); returns the real bound endpoint."""
        if self._server is not None or (not self.listen and self._result is not None):
            return self.bound_endpoint  # type: ignore[return-value]
        loop = asyncio.get_running_loop()
        self._result = loop.create_future()
        host = self
        if not self.listen:  # relay only: connections come through offer()
            self.bound_endpoint = format_endpoint(self.bind_host, self.bind_port)
            self.local = _local_endpoint(self._requested_local, self.identity,
                                         self.advertised_endpoint or self.bound_endpoint)
            return self.bound_endpoint

        class _Accepted(TcpTransport):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                super().connection_made(transport)
                host._on_connection(self)

        try:
            sock = await _listening_socket(self.bind_host, self.bind_port)
            self._server = await loop.create_server(
                lambda: _Accepted(max_frame=self.max_frame, read_timeout=self.read_timeout),
                sock=sock, start_serving=False)
        except OSError as error:
            where = format_endpoint(self.bind_host, self.bind_port)
            raise TransportError("transport.connect_failed",
                                 f"cannot listen on {where}: {error}") from None
        address = self._server.sockets[0].getsockname()
        self.bound_endpoint = format_endpoint(address[0], address[1])
        self.local = _local_endpoint(self._requested_local, self.identity,
                                     self.advertised_endpoint or self.bound_endpoint)
        return self.bound_endpoint

    async def accept(self, timeout: float | None = None) -> tuple[SecureChannel, PeerInfo]:
        """Start accepting; the winner's started channel and who it is.

        ``timeout``: no authorised guest within that many seconds is
        ``transport.timeout``. Connections keep being told ``transport.busy``
        after this returns, until :meth:`close`.
        """
        await self.start()
        assert self._result is not None
        if self._server is not None:
            await self._server.start_serving()
        try:
            async with asyncio.timeout(timeout):
                keys, transport = await asyncio.shield(self._result)
        except TimeoutError:
            raise TransportError("transport.timeout",
                                 f"no guest completed the handshake within {timeout:g} s",
                                 details={"accept_timeout": timeout}) from None
        self._handed_over = True
        channel = SecureChannel(transport, keys, clock=self.clock, **self.channel_options)
        peer = PeerInfo(keys.peer_identity, keys.peer, transport.peer, keys.ticket,
                        keys.session_id)
        return await channel.start(), peer

    async def close(self) -> None:
        """Stop listening; drop pending handshakes and refused connections still closing."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        for entry in list(self._pending.values()):
            entry.dropped = True
            entry.transport.abort()
            if entry.task is not None:
                entry.task.cancel()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self._server.wait_closed()
        if self._result is not None and not self._result.done():
            self._result.cancel()
        elif self._result is not None and not self._handed_over \
                and not self._result.cancelled() and self._result.exception() is None:
            self._result.result()[1].abort()  # a winner nobody took (accept timed out or never ran)

    def close_soon(self) -> None:
        """Schedule :meth:`close` (for callbacks that cannot await)."""
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().create_task(self.close())

    async def __aenter__(self) -> OneSessionHost:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ---- connections -----------------------------------------------------------
    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def offer(self, transport: FrameTransport) -> None:
        """A connection that came another way (the relay): the same accept loop as TCP.

        Connections offered before :meth:`accept` runs are handled at once too
        (the relay has no kernel backlog to wait in)."""
        self._on_connection(transport)  # type: ignore[arg-type]

    def _on_connection(self, transport: TcpTransport) -> None:
        if self._closing:
            transport.abort()
            return
        if self._taken:
            self._refuse(transport, "transport.busy", "the host is already in a session")
            return
        if len(self._pending) >= self.max_pending:
            victim = next((e for e in self._pending.values() if not e.hello_seen), None)
            if victim is None:
                self._refuse(transport, "transport.busy",
                             f"the host is checking {self.max_pending} other guests; try again")
                return
            self._drop(victim, "transport.busy",
                       "dropped for a newer connection: too many pending handshakes")
        entry = _Pending(transport, self.clock())
        self._pending[transport] = entry
        entry.task = self._spawn(self._handshake(entry))

    def _drop(self, entry: _Pending, code: str, message: str) -> None:
        entry.dropped = True
        self._pending.pop(entry.transport, None)
        if entry.task is not None:
            entry.task.cancel()
        self._refuse(entry.transport, code, message)

    def _refuse(self, transport: TcpTransport, code: str, message: str) -> None:
        """Tell the connection why, then close it; under a flood just close it.

        At most ``4 * max_pending`` refusals are being sent at a time (each may
        wait up to a second for a peer that does not read), so the work and
        the sockets a flood costs the host stay bounded.
        """
        self.refused += 1
        self._report(TransportError(code, message, details={"address": transport.peer}))
        if self._refusing >= 4 * self.max_pending:
            transport.abort()
            return
        self._refusing += 1
        self._spawn(self._refuse_and_close(transport, code, message))

    async def _refuse_and_close(self, transport: TcpTransport, code: str, message: str) -> None:
        try:
            if self.local is not None and not transport.closed:
                await send_refusal(transport, self.local, None, code, message, clock=self.clock)
        finally:
            self._refusing -= 1
            await transport.close()

    def _report(self, error: WireError) -> None:
        if self.on_refused is not None:
            with contextlib.suppress(Exception):  # a logging callback must not break the loop
                self.on_refused(error)

    def _claim(self, entry: _Pending) -> bool:
        """Called by a handshake right before its welcome: the first caller gets the session."""
        if self._taken or self._closing or entry.dropped:
            return False
        self._taken = entry.claimed = True
        for other in list(self._pending.values()):
            if other is not entry:
                self._drop(other, "transport.busy", "another guest took the session")
        return True

    async def _handshake(self, entry: _Pending) -> None:
        transport = entry.transport
        assert self.local is not None and self._result is not None

        def hello_seen() -> None:
            entry.hello_seen = True

        try:
            async with asyncio.timeout(self.pre_auth_timeout):
                keys = await server_handshake(
                    transport, self.identity, self.local, authorize=self.authorize,
                    claim=lambda: self._claim(entry), on_hello=hello_seen, clock=self.clock, rng=self.rng,
                    hello_guard=self.hello_guard, window_seconds=self.window_seconds,
                    timeout=self.pre_auth_timeout + 1.0,  # the deadline above fires first
                    seal=self.seal)
        except TimeoutError:
            if entry.claimed:
                self._taken = False
            if not entry.dropped:
                self._pending.pop(transport, None)
                self._refuse(transport, "transport.timeout",
                             f"no complete handshake within {self.pre_auth_timeout:g} s")
            return
        except WireError as error:  # refused and closed by server_handshake
            if entry.claimed:  # the welcome could not be sent: the session is free again
                self._taken = False
            error.details.setdefault("address", transport.peer)
            self._report(error)
            self.refused += 1
            return
        except asyncio.CancelledError:
            if not entry.dropped:  # host closing
                transport.abort()
            raise
        except Exception as error:  # an authoriser's bug: the host's caller must see it
            if not self._result.done():
                self._result.set_exception(error)
            return
        finally:
            if self._pending.get(transport) is entry:
                del self._pending[transport]
        if self._closing or self._result.done():
            transport.abort()
            return
        self._result.set_result((keys, transport))


async def serve_one(endpoint: str, identity: Identity,
                    local_endpoint: AgentEndpoint | None = None, *,
                    authorize: Authorizer | None = None,
                    on_listening: Callable[[str], Awaitable[None]] | None = None,
                    advertised_endpoint: str | None = None,
                    pre_auth_timeout: float = DEFAULT_PRE_AUTH_TIMEOUT,
                    max_pending: int = DEFAULT_MAX_PENDING,
                    accept_timeout: float | None = None,
                    on_host: Callable[[OneSessionHost], Any] | None = None,
                    **options: Any) -> tuple[SecureChannel, PeerInfo]:
    """Host one session: bind, ``await on_listening(bound endpoint)``, accept, return.

    The listener stays up after this returns, telling later guests
    ``transport.busy``; it closes when the channel ends (``await
    channel.close()`` is the finally step) or, on any failure here, before
    this raises. ``options``: :class:`OneSessionHost` keyword arguments
    (``clock``, ``rng``, ``on_refused``, ``channel_options``, ``seal``, ``listen``,
    limits). ``on_host(host)`` is called once the host is started, before
    ``on_listening``: the place to attach other ways in (a relay link calling
    ``host.offer``).
    """
    host = OneSessionHost(endpoint, identity, local_endpoint, authorize=authorize,
                          advertised_endpoint=advertised_endpoint,
                          pre_auth_timeout=pre_auth_timeout, max_pending=max_pending, **options)
    try:
        bound = await host.start()
        if on_host is not None:
            on_host(host)
        if on_listening is not None:
            await on_listening(bound)
        channel, peer = await host.accept(accept_timeout)
    except BaseException:
        await host.close()
        raise
    channel.add_end_callback(host.close_soon)
    return channel, peer


async def connect(endpoint: str, identity: Identity, local_endpoint: AgentEndpoint | None = None,
                  *, expected_host_key: str | None = None, ticket: str | None = None,
                  clock: Callable[[], float] = time.time,
                  rng: Callable[[int], bytes] = os.urandom,
                  handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
                  connect_timeout: float = 10.0, max_frame: int = DEFAULT_MAX_FRAME,
                  read_timeout: float = DEFAULT_READ_TIMEOUT,
                  window_seconds: float = DEFAULT_WINDOW_SECONDS,
                  seal: bool = True, **channel_options: Any) -> SecureChannel:
    """Connect to ``tcp://HOST:PORT`` as a guest, run the handshake, return the started channel.

    ``expected_host_key`` refuses any other host (``handshake.identity_mismatch``);
    ``ticket`` is presented in the hello. A host that refuses is reported with
    its code (``transport.busy``, ``handshake.ticket_refused``, …). ``seal=False``:
    an unsealed (debug) session, which the host must have chosen too.
    """
    host, port = parse_endpoint(endpoint)
    transport = await connect_tcp(host, port, max_frame=max_frame, read_timeout=read_timeout,
                                  connect_timeout=connect_timeout)
    return await open_channel(transport, identity, local_endpoint,
                              expected_host_key=expected_host_key, ticket=ticket, clock=clock,
                              rng=rng, handshake_timeout=handshake_timeout,
                              window_seconds=window_seconds, seal=seal, **channel_options)


async def open_channel(transport: FrameTransport, identity: Identity,
                       local_endpoint: AgentEndpoint | None = None, *,
                       expected_host_key: str | None = None, ticket: str | None = None,
                       clock: Callable[[], float] = time.time,
                       rng: Callable[[int], bytes] = os.urandom,
                       handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
                       window_seconds: float = DEFAULT_WINDOW_SECONDS,
                       seal: bool = True, **channel_options: Any) -> SecureChannel:
    """The guest's handshake and started channel over a transport already open (TCP, relay)."""
    local = local_endpoint or AgentEndpoint(identity.agent_id, "lingxi", "tcp://guest")
    try:
        keys = await client_handshake(transport, identity, local, clock=clock, rng=rng,
                                      expected_peer_key=expected_host_key, ticket=ticket,
                                      window_seconds=window_seconds, timeout=handshake_timeout,
                                      seal=seal)
    except BaseException:
        await transport.close()
        raise
    channel = SecureChannel(transport, keys, clock=clock, window_seconds=window_seconds,
                            **channel_options)
    return await channel.start()
