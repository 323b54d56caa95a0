"""One NATS connection for one side of one session, holding its relay credential.

The link connects outbound to the relay's servers (every node of a cluster, so
nats-py fails over to the next when one dies), proves the credential (the
user JWT, and the server's nonce signed with the user's own NKey seed, which
never leaves this process), subscribes to the peer's subject and hands every
message to the :class:`~lingxi.wire.relay_transport.RelayTransport` whose
connection id it names. On the host's side a new connection id in an OPEN
becomes a new transport, given to ``on_open`` (the host's accept loop). After
a reconnect every transport sends again what was not acknowledged.

``renew()`` (optional, async) returns a fresh credential for the same user
key; the link asks for one before the current one expires and moves to a new
connection made with it before closing the old one (the relay drops a
connection whose JWT expired, and nats-py gives such a connection up), so a
session outlives any one credential; repeats across the switch are dropped by
the transports' sequence numbers.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lingxi.natsauth import NKey
from lingxi.records import FrozenRecord
from lingxi.roles import peer_of
from lingxi.wire.errors import TransportError
from lingxi.wire.relay_transport import ACCEPT, HEADER, OPEN, RelayTransport

MAX_CONNECTIONS = 32  # connection ids one host link keeps at once


@dataclass(frozen=True, repr=False, eq=False)
class RelayCredential(FrozenRecord):
    """What the registry's ``POST /v1/relay/credentials`` gave, with the user's own key."""

    servers: tuple[str, ...]
    jwt: str
    user: NKey
    role: str
    session_id: str
    send_subject: str
    receive_subject: str
    expires_at: float
    max_payload: int

    @classmethod
    def from_answer(cls, answer: dict[str, Any], user: NKey) -> RelayCredential:
        """Check the registry's answer (a registry is data, never trusted to be well formed)."""
        try:
            servers = tuple(str(s) for s in answer["servers"])
            credential = cls(servers, str(answer["jwt"]), user, str(answer["role"]),
                             str(answer["session_id"]), str(answer["send_subject"]),
                             str(answer["receive_subject"]), float(answer["expires_at"]),
                             int(answer["max_payload"]))
        except (KeyError, TypeError, ValueError):
            raise TransportError("transport.relay_refused",
                                 "the registry's relay credential is malformed") from None
        if not servers or not all(s.startswith("nats://") for s in servers):
            raise TransportError("transport.relay_refused",
                                 "the registry's relay credential names no nats:// server")
        if credential.role not in ("host", "guest", "probe"):
            raise TransportError("transport.relay_refused",
                                 "the registry's relay credential names no known role")
        return credential

    @property
    def peer_role(self) -> str:
        return peer_of(self.role)


Renew = Callable[[], Awaitable[RelayCredential]]


class RelayLink:
    """A connected NATS client for one credential (see the module doc)."""

    def __init__(self, credential: RelayCredential, *, renew: Renew | None = None,
                 on_open: Callable[[RelayTransport], None] | None = None,
                 connect_timeout: float = 5.0, reconnect_attempts: int = 40,
                 transport_options: dict[str, Any] | None = None,
                 on_event: Callable[[str], None] | None = None,
                 on_data: Callable[[bytes], None] | None = None) -> None:
        self.credential = credential
        self.on_data = on_data  # a probe's raw messages, instead of transports
        self.renew = renew
        self.on_open = on_open
        self.connect_timeout = connect_timeout
        self.reconnect_attempts = reconnect_attempts
        self.transport_options = dict(transport_options or {})
        self.on_event = on_event
        self.transports: dict[int, RelayTransport] = {}
        self.reconnects = 0
        self.renewals = 0
        self.errors: list[str] = []
        self._nc: Any = None
        self._closed = False
        self._renewer: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    @property
    def peer_role(self) -> str:
        return self.credential.peer_role

    @property
    def connected_url(self) -> str | None:
        nc = self._nc
        url = getattr(nc, "connected_url", None) if nc is not None else None
        return None if url is None else f"nats://{url.hostname}:{url.port}"

    # ---- connecting ---------------------------------------------------------------
    async def open(self) -> RelayLink:
        """Connect and subscribe; ``transport.relay_unreachable`` / ``relay_refused``."""
        try:
            self._nc = await self._connect(self.credential)
        except TransportError:
            self._closed = True
            raise
        if self.renew is not None:
            self._renewer = asyncio.ensure_future(self._renew_loop())
        return self

    async def _connect(self, credential: RelayCredential) -> Any:
        """A connected, subscribed NATS client for ``credential``.

        nats-py keeps retrying a refused credential, so the first refusal it
        reports ends the attempt here, as does an overall deadline. The
        client's callbacks act only while it is this link's current client
        (a replaced one closing says nothing).
        """
        from nats.aio.client import Client

        nc = Client()
        errors: list[str] = []

        def current() -> bool:
            return self._nc is nc and not self._closed

        async def on_error(error: Exception) -> None:
            errors.append(str(error)[:300])
            self.errors.append(str(error)[:300])

        async def on_disconnected() -> None:
            if current() and self.on_event is not None:
                self.on_event("relay: lost the relay node; reconnecting")

        async def on_reconnected() -> None:
            if current():
                await self._on_reconnected()

        async def on_closed() -> None:
            if current():
                await self._on_closed()

        attempt = asyncio.ensure_future(nc.connect(
            list(credential.servers), name=f"lingxi-{credential.role}",
            user_jwt_cb=lambda: credential.jwt.encode(),
            signature_cb=lambda nonce: base64.b64encode(credential.user.sign(nonce.encode())),
            error_cb=on_error, disconnected_cb=on_disconnected,
            reconnected_cb=on_reconnected, closed_cb=on_closed,
            allow_reconnect=True, max_reconnect_attempts=max(1, self.reconnect_attempts),
            reconnect_time_wait=0.25,  # type: ignore[arg-type]  # floats work
            connect_timeout=self.connect_timeout,  # type: ignore[arg-type]
            ping_interval=5, max_outstanding_pings=2,
            dont_randomize=True))  # the registry lists its nearest node first
        deadline = asyncio.get_running_loop().time() + 2 * self.connect_timeout + 1.0
        failure: TransportError | None = None
        while not attempt.done():
            await asyncio.wait({attempt}, timeout=0.05)
            refusal = next((e for e in errors if _refused(e)), None)
            if refusal is not None:
                failure = TransportError("transport.relay_refused",
                                         f"the relay refused this credential: {refusal[:160]}")
            elif asyncio.get_running_loop().time() > deadline:
                failure = TransportError("transport.relay_unreachable", "cannot reach the relay "
                                         f"at {', '.join(credential.servers)} (timed out)")
            if failure is not None and not attempt.done():
                attempt.cancel()
                break
        if failure is None and attempt.exception() is not None:
            text = str(attempt.exception())
            failure = TransportError(
                "transport.relay_refused" if _refused(text) else "transport.relay_unreachable",
                f"cannot use the relay at {', '.join(credential.servers)}: "
                f"{text[:160] or type(attempt.exception()).__name__}")
        if failure is None:
            await nc.subscribe(credential.receive_subject, cb=self._on_msg,
                               pending_msgs_limit=65536, pending_bytes_limit=64 * 1024 * 1024)
            await nc.flush(timeout=self.connect_timeout)  # type: ignore[arg-type]
            if any("Permissions" in e for e in errors):
                failure = TransportError("transport.relay_refused", "the relay refused this "
                                         f"credential's subjects: {errors[-1][:160]}")
        if failure is not None:
            with contextlib.suppress(BaseException):
                await attempt
            with contextlib.suppress(Exception):
                await nc.close()
            raise failure
        return nc

    async def _renew_loop(self) -> None:
        """Renew a third of the credential's life before it expires (at least 20 s before)."""
        while not self._closed and self.renew is not None:
            left = self.credential.expires_at - time.time()
            await asyncio.sleep(max(1.0, left - max(20.0, left / 3)))
            if self._closed:
                return
            try:
                await self.rotate()
            except Exception as error:  # keep the current one; try again soon
                self.errors.append(f"renewal failed: {error}")
                await asyncio.sleep(2.0)

    async def rotate(self) -> None:
        """Get a fresh credential and move to a connection made with it (make before break):
        the relay drops a connection whose JWT expired, and nats-py gives such a connection
        up instead of reconnecting. Frames the old connection may not have carried are sent
        again; the peer's transport drops what it already has."""
        if self.renew is None:
            raise ValueError("this link has no renew()")
        fresh = await self.renew()  # a JWT is bound to its user key: the fresh one's own
        nc = await self._connect(fresh)
        old, self._nc, self.credential = self._nc, nc, fresh
        self.renewals += 1
        for transport in list(self.transports.values()):
            transport.resend()
        if old is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await old.drain()
            with contextlib.suppress(Exception):
                await old.close()

    # ---- callbacks from nats-py (for the current client) ---------------------------
    async def _on_reconnected(self) -> None:
        self.reconnects += 1
        for transport in list(self.transports.values()):
            transport.resend()
        if self.on_event is not None:
            self.on_event(f"relay: reconnected to {self.connected_url}; unacknowledged frames "
                          "sent again")

    async def _on_closed(self) -> None:
        if not self._closed:
            error = TransportError("transport.relay_unreachable",
                                   "lost the relay and could not reconnect to any node")
            for transport in list(self.transports.values()):
                transport.lost(error)

    async def _on_msg(self, msg: Any) -> None:
        data = msg.data
        if self.on_data is not None:
            self.on_data(data)
            return
        if len(data) < HEADER.size:
            return  # not ours: a carrier may inject anything; the channel catches frames
        kind, conn_id, seq, ack = HEADER.unpack_from(data)
        transport = self.transports.get(conn_id)
        if transport is None:
            if kind != OPEN or self.on_open is None or self._closed:
                return
            if len(self.transports) >= MAX_CONNECTIONS:
                return
            transport = RelayTransport(self, conn_id, **self.transport_options)
            self.adopt(transport)
            transport._send(ACCEPT)
            transport.accepted.set_result(None)
            self.on_open(transport)
            return
        if kind == OPEN:
            transport._send(ACCEPT)  # the guest has not heard the first one yet
            return
        transport.on_message(kind, seq, ack, data[HEADER.size:])

    # ---- for transports -----------------------------------------------------------
    def adopt(self, transport: RelayTransport) -> None:
        self.transports[transport.conn_id] = transport

    def forget(self, transport: RelayTransport) -> None:
        if self.transports.get(transport.conn_id) is transport:
            del self.transports[transport.conn_id]

    def publish(self, data: bytes) -> None:
        """Hand one message to the NATS client now, in call order (never awaits).

        nats-py's ``publish`` queues synchronously and only awaits when its
        buffer is full; it is stepped here once, and finished in a task in
        that rare case, so messages keep the order they were published in.
        """
        nc = self._nc
        if nc is None or self._closed:
            return
        coro = nc.publish(self.credential.send_subject, data)
        try:
            yielded = coro.send(None)
        except StopIteration:
            return
        except Exception as error:  # disconnected with a full buffer: resent on reconnect
            self.errors.append(f"publish: {error}"[:300])
            return
        task = asyncio.ensure_future(_finish(coro, yielded))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    # ---- ending -------------------------------------------------------------------
    async def close(self) -> None:
        if self._closed:
            return
        for transport in list(self.transports.values()):
            await transport.close()
        self._closed = True
        if self._renewer is not None:
            self._renewer.cancel()
        nc, self._nc = self._nc, None
        if nc is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await nc.drain()
            with contextlib.suppress(Exception):
                await nc.close()

    async def __aenter__(self) -> RelayLink:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()



def _refused(text: str) -> bool:
    lowered = text.lower()
    return "authorization" in lowered or "authentication" in lowered


async def _finish(coro: Any, yielded: Any) -> None:
    """Drive a coroutine that suspended after its first step to the end."""
    try:
        while True:
            if yielded is None:
                await asyncio.sleep(0)
            else:
                with contextlib.suppress(Exception):  # the coroutine sees it on resuming
                    await yielded
            yielded = coro.send(None)
    except StopIteration:
        return
    except Exception:
        return
