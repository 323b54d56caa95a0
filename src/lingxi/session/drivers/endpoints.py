"""Sessions between processes (TCP) or tasks (in-memory pair) over the real wire.

``host_session`` listens on ``tcp://HOST:PORT`` and serves one guest;
``guest_session`` connects. Both run the handshake (Ed25519 identities,
X25519 ephemeral keys, per-direction HMAC keys), then the same session
machine as ``protocol test`` through :class:`~lingxi.session.drivers.network.Driver`.
A guest without a local protocol folder looks the offered protocol_id up
among the built-ins and the protocol cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lingxi.errors import LingxiError
from lingxi.home import identity_dir, sessions_dir
from lingxi.session.core.machine import ROLE_DIRECTION, SessionConfig, SessionMachine
from lingxi.session.core.registry import make_machine
from lingxi.session.drivers.link import payload_to_event
from lingxi.session.drivers.network import Driver, DriveResult
from lingxi.session.errors import SessionError
from lingxi.session.record.recorder import Recorder
from lingxi.wire import AgentEndpoint, WireError
from lingxi.wire.channel import SecureChannel
from lingxi.wire.handshake import client_handshake, server_handshake
from lingxi.wire.identity import Identity
from lingxi.wire.transport import connect_tcp, memory_pair, parse_endpoint, serve_tcp


class LoadedProtocol(Protocol):
    """What a driver needs of a protocol: its spec and hooks per role."""

    spec: Any

    def hooks(self, role: str, seed: int) -> Any: ...


def local_identity(directory: Path | None = None) -> Identity:
    return Identity.load_or_create(directory or identity_dir())[0]


def endpoint_of(identity: Identity, where: str) -> AgentEndpoint:
    return AgentEndpoint(identity.agent_id, "lingxi", where)


def _state_dir(state_dir: str | Path | None, session_id: str, role: str) -> Path:
    return Path(state_dir) if state_dir is not None else sessions_dir() / f"{session_id}-{role}"


def _channel(transport: Any, keys: Any, config: SessionConfig) -> SecureChannel:
    beat = max(0.05, min(5.0, config.peer_timeout / 4))
    return SecureChannel(transport, keys, clock=time.time, heartbeat_interval=beat,
                         peer_timeout=max(config.peer_timeout * 2, beat * 3))


def _machine(protocol: LoadedProtocol, role: str, options: dict[str, Any] | None,
             config: SessionConfig, seed: int | None) -> SessionMachine:
    """``seed`` seeds the hooks' game randomness only; nonces and keys are the OS's."""
    hooks = protocol.hooks(role, seed if seed is not None else secrets.randbits(62))
    return make_machine(role, protocol.spec, hooks,
                        options=(options or {}) if role == "host" else None, config=config)


async def run_on_channel(protocol: LoadedProtocol, role: str, channel: SecureChannel, *,
                         identity: Identity, options: dict[str, Any] | None = None,
                         config: SessionConfig | None = None, state_dir: Path | None = None,
                         seed: int | None = None, keep_events: bool = True,
                         **driver_kwargs: Any) -> DriveResult:
    config = config or SessionConfig()
    machine = _machine(protocol, role, options, config, seed)
    recorder = Recorder(state_dir, role, clock=time.time, keep_events=keep_events)
    async with channel:
        return await Driver(machine, channel, recorder=recorder, identity=identity,
                            **driver_kwargs).run()


async def host_session(protocol: LoadedProtocol, endpoint: str, *,
                       options: dict[str, Any] | None = None,
                       config: SessionConfig | None = None, state_dir: str | Path | None = None,
                       identity: Identity | None = None, seed: int | None = None,
                       expected_guest_key: str | None = None,
                       on_listening: Callable[[str], None] | None = None,
                       accept_timeout: float | None = None,
                       on_refused: Callable[[Exception], None] | None = None,
                       **driver_kwargs: Any) -> DriveResult:
    """Listen on ``endpoint``, serve exactly one guest, return this side's result."""
    config = config or SessionConfig()
    protocol.spec.check_options(options or {})  # a usage error before anyone connects
    identity = identity or local_identity()
    host, port = parse_endpoint(endpoint)
    result: asyncio.Future[DriveResult] = asyncio.get_running_loop().create_future()

    busy = False

    async def handler(transport) -> None:
        nonlocal busy
        if result.done() or busy:
            return  # one guest per host run; others are disconnected
        busy = True
        try:
            keys = await server_handshake(transport, identity,
                                          endpoint_of(identity, endpoint), clock=time.time,
                                          expected_peer_key=expected_guest_key)
        except WireError as error:  # a failed handshake ends that connection only
            busy = False
            if on_refused is not None:
                on_refused(error)
            return
        folder = _state_dir(state_dir, keys.session_id, "host")
        try:
            outcome = await run_on_channel(protocol, "host", _channel(transport, keys, config),
                                           identity=identity, options=options, config=config,
                                           state_dir=folder, seed=seed, **driver_kwargs)
        except Exception as error:
            if not result.done():
                result.set_exception(error)
            return
        if not result.done():
            result.set_result(outcome)

    server = await serve_tcp(handler, host, port)
    actual = server.sockets[0].getsockname()[1]
    if on_listening is not None:
        on_listening(f"tcp://{host}:{actual}")
    try:
        return await asyncio.wait_for(result, accept_timeout)
    except TimeoutError:
        raise SessionError("session.no_guest", f"no guest joined within {accept_timeout:g}s",
                           exit_code=1) from None
    finally:
        server.close()
        await server.wait_closed()


async def guest_session(protocol: LoadedProtocol | None, endpoint: str, *,
                        config: SessionConfig | None = None, state_dir: str | Path | None = None,
                        identity: Identity | None = None, seed: int | None = None,
                        allow_skeleton: bool | None = None, keep_events: bool = True,
                        expected_host_key: str | None = None,
                        expected_protocol_id: str | None = None,
                        protocol_for: Callable[[str], LoadedProtocol] | None = None,
                        **driver_kwargs: Any) -> DriveResult:
    """Connect to a host at ``endpoint`` and play the guest's side."""
    config = config or SessionConfig()
    identity = identity or local_identity()
    host, port = parse_endpoint(endpoint)
    transport = await connect_tcp(host, port)
    keys = await client_handshake(transport, identity, endpoint_of(identity, "tcp://guest"),
                                  clock=time.time, expected_peer_key=expected_host_key)
    channel = _channel(transport, keys, config)
    folder = _state_dir(state_dir, keys.session_id, "guest")
    first: list[Any] = []
    recorder = Recorder(folder, "guest", clock=time.time, keep_events=keep_events)
    async with channel:
        if protocol is None:  # learn the protocol from the host's offer
            env = await channel.recv(timeout=config.peer_timeout)
            event = payload_to_event(env.payload, env.correlation_id)
            offered = getattr(event, "body", {}).get("protocol_id") if event else None
            if not isinstance(offered, str):
                await channel.abort("session.out_of_phase", "expected the session offer first")
                raise SessionError("session.no_offer", "the host did not start with an offer",
                                   exit_code=1)
            try:
                if expected_protocol_id is not None and offered != expected_protocol_id:
                    raise SessionError("session.protocol_mismatch",
                                       "the host offers another protocol than the one this "
                                       "guest joined for", exit_code=1)
                if protocol_for is None:
                    raise SessionError("session.unknown_protocol", "no local protocol given")
                protocol = protocol_for(offered)
            except LingxiError as error:  # tell the host instead of leaving it waiting
                with contextlib.suppress(WireError):
                    await channel.abort(error.code, error.message)
                raise
            recorder.envelope(ROLE_DIRECTION["host"], env.to_dict(), "received")
            first.append(event)
        machine = _machine(protocol, "guest", None, config, seed)
        return await Driver(machine, channel, recorder=recorder, identity=identity,
                            **driver_kwargs).run(first)


async def memory_session(protocol: LoadedProtocol, *, options: dict[str, Any] | None = None,
                         config: SessionConfig | None = None, state_dir: str | Path | None = None,
                         seed: int | None = None, keep_events: bool = True,
                         host_kwargs: dict[str, Any] | None = None,
                         guest_kwargs: dict[str, Any] | None = None
                         ) -> tuple[DriveResult, DriveResult]:
    """Both sides as tasks over the wire's in-memory transport pair (same code path as TCP)."""
    config = config or SessionConfig()
    a, b = memory_pair()
    ids = {r: Identity.generate() for r in ("host", "guest")}
    guest_keys, host_keys = await asyncio.gather(
        client_handshake(a, ids["guest"], endpoint_of(ids["guest"], "memory://guest"),
                         clock=time.time),
        server_handshake(b, ids["host"], endpoint_of(ids["host"], "memory://host"),
                         clock=time.time))
    root = Path(state_dir) if state_dir is not None else None
    return await asyncio.gather(
        run_on_channel(protocol, "host", _channel(b, host_keys, config), identity=ids["host"],
                       options=options, config=config, seed=seed, keep_events=keep_events,
                       state_dir=root / "host" if root else None, **(host_kwargs or {})),
        run_on_channel(protocol, "guest", _channel(a, guest_keys, config), identity=ids["guest"],
                       config=config, seed=seed, keep_events=keep_events,
                       state_dir=root / "guest" if root else None, **(guest_kwargs or {})))
