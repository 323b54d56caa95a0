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
import inspect
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lingxi.home import identity_dir, sessions_dir
from lingxi.session.core.decisions import with_decider
from lingxi.session.core.entropy import Entropy
from lingxi.session.core.machine import SessionConfig, SessionMachine
from lingxi.session.core.registry import make_machine
from lingxi.session.drivers.network import Driver, DriveResult
from lingxi.session.errors import PROTOCOL_MISMATCH, SessionError
from lingxi.session.record.recorder import Recorder
from lingxi.wire.channel import SecureChannel
from lingxi.wire.connection import connect, serve_one
from lingxi.wire.envelope import AgentEndpoint
from lingxi.wire.errors import TransportError
from lingxi.wire.handshake import Authorizer, client_handshake, pinned_key, server_handshake
from lingxi.wire.identity import Identity
from lingxi.wire.transport import memory_pair


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
    return SecureChannel(transport, keys, clock=time.time, **_channel_options(config))


def _machine(protocol: LoadedProtocol, role: str, options: dict[str, Any] | None,
             config: SessionConfig, seed: int | None,
             entropy: Entropy | None = None) -> SessionMachine:
    """``seed`` seeds the hooks' game randomness only; nonces and keys are the OS's unless a
    test injects ``entropy``."""
    hooks = protocol.hooks(role, seed if seed is not None else secrets.randbits(62))
    return make_machine(role, protocol.spec, hooks,
                        options=(options or {}) if role == "host" else None, config=config,
                        entropy=entropy)


async def run_on_channel(protocol: LoadedProtocol, role: str, channel: SecureChannel, *,
                         identity: Identity, options: dict[str, Any] | None = None,
                         config: SessionConfig | None = None, state_dir: Path | None = None,
                         seed: int | None = None, keep_events: bool = True,
                         entropy: Entropy | None = None,
                         **driver_kwargs: Any) -> DriveResult:
    config = with_decider(config or SessionConfig(), driver_kwargs.get("decider"))
    machine = _machine(protocol, role, options, config, seed, entropy)
    recorder = Recorder(state_dir, role, clock=time.time, keep_events=keep_events)
    recorder.event(channel.path_event())
    async with channel:
        return await Driver(machine, channel, recorder=recorder, identity=identity,
                            **driver_kwargs).run()


def _channel_options(config: SessionConfig) -> dict[str, Any]:
    """Heartbeats and the channel's silence limit, from the session's peer timeout."""
    beat = max(0.05, min(5.0, config.peer_timeout / 4))
    return {"heartbeat_interval": beat, "peer_timeout": max(config.peer_timeout * 2, beat * 3)}


def _authorizer(expected_guest_key: str | None, authorize: Authorizer | None
                ) -> Authorizer | None:
    """A pinned key and a caller's authoriser (e.g. a registry ticket check), both required."""
    pinned = pinned_key(expected_guest_key) if expected_guest_key else None
    if pinned is None or authorize is None:
        return pinned or authorize

    async def both(peer_key: str, ticket: str | None) -> None:
        for check in (pinned, authorize):
            outcome = check(peer_key, ticket)
            if inspect.isawaitable(outcome):
                await outcome

    return both


async def _maybe_await(value: Any) -> None:
    if inspect.isawaitable(value):
        await value


async def host_session(protocol: LoadedProtocol, endpoint: str, *,
                       options: dict[str, Any] | None = None,
                       config: SessionConfig | None = None, state_dir: str | Path | None = None,
                       identity: Identity | None = None, seed: int | None = None,
                       expected_guest_key: str | None = None,
                       authorize: Authorizer | None = None,
                       on_listening: Callable[[str], Any] | None = None,
                       advertised_endpoint: str | None = None,
                       accept_timeout: float | None = None,
                       on_refused: Callable[[Exception], None] | None = None,
                       on_closed: Callable[[DriveResult | None], Any] | None = None,
                       keep_events: bool = True, seal: bool = True,
                       on_host: Callable[[Any], Any] | None = None, listen: bool = True,
                       **driver_kwargs: Any) -> DriveResult:
    """Listen on ``endpoint`` (the bind address), serve exactly one guest, return this side's result.

    The wire's accept loop runs handshakes concurrently and gives the session to
    the first guest that completes one and passes ``authorize`` (and
    ``expected_guest_key``); later guests are told ``transport.busy``.
    ``on_listening(bound endpoint)`` may be async and runs before any guest is
    accepted (post an invitation there); ``advertised_endpoint`` is what the
    host tells peers; ``on_closed(result or None)`` always runs at the end.
    ``seal=False`` (debug) admits only a guest that also chose an unsealed session.
    ``on_host(accept loop)`` may attach other ways in (the relay); ``listen=False``
    takes guests from those only.
    """
    config = config or SessionConfig()
    protocol.spec.check_options(options or {})  # a usage error before anyone connects
    identity = identity or local_identity()
    result: DriveResult | None = None
    try:
        try:
            channel, _peer = await serve_one(
                endpoint, identity, endpoint_of(identity, advertised_endpoint or endpoint),
                authorize=_authorizer(expected_guest_key, authorize),
                on_listening=(lambda where: _maybe_await(on_listening(where)))
                if on_listening is not None else None,
                advertised_endpoint=advertised_endpoint, accept_timeout=accept_timeout,
                on_refused=on_refused, channel_options=_channel_options(config), seal=seal,
                on_host=on_host, listen=listen)
        except TransportError as error:
            if error.code != "transport.timeout":
                raise
            raise SessionError("session.no_guest", f"no guest joined within {accept_timeout:g}s",
                               exit_code=1) from None
        folder = _state_dir(state_dir, channel.session_id, "host")
        result = await run_on_channel(protocol, "host", channel, identity=identity,
                                      options=options, config=config, state_dir=folder,
                                      seed=seed, keep_events=keep_events, **driver_kwargs)
        return result
    finally:
        if on_closed is not None:
            await _maybe_await(on_closed(result))


async def guest_session(protocol: LoadedProtocol | None, endpoint: str, *,
                        config: SessionConfig | None = None, state_dir: str | Path | None = None,
                        identity: Identity | None = None, seed: int | None = None,
                        keep_events: bool = True,
                        expected_host_key: str | None = None,
                        expected_protocol_id: str | None = None,
                        ticket: str | None = None,
                        protocol_for: Callable[[str], LoadedProtocol] | None = None,
                        entropy: Entropy | None = None, seal: bool = True,
                        reach: Callable[..., Any] | None = None,
                        **driver_kwargs: Any) -> DriveResult:
    """Connect to a host at ``endpoint`` and play the guest's side.

    Without ``protocol`` the host's offer names it, and ``protocol_for(id)``
    finds it locally; ``expected_protocol_id`` (a guest that joined for a
    given protocol) refuses any other offer before any hooks load.
    ``reach`` replaces the direct connect (same arguments as
    :func:`lingxi.wire.connection.connect`), e.g. to fall back to the relay.
    """
    config = with_decider(config or SessionConfig(), driver_kwargs.get("decider"))
    identity = identity or local_identity()
    channel = await (reach or connect)(endpoint, identity, endpoint_of(identity, "tcp://guest"),
                            expected_host_key=expected_host_key, ticket=ticket, seal=seal,
                            **_channel_options(config))
    folder = _state_dir(state_dir, channel.session_id, "guest")
    recorder = Recorder(folder, "guest", clock=time.time, keep_events=keep_events)
    recorder.event(channel.path_event())
    if protocol is not None and expected_protocol_id not in (None, protocol.spec.protocol_id):
        await channel.close()
        raise SessionError(PROTOCOL_MISMATCH, "the local protocol is not the one expected",
                           exit_code=1)

    def machine_for(offered: Any) -> SessionMachine:
        """The guest's machine once the offer names the protocol (checked before any hook)."""
        if expected_protocol_id is not None and offered != expected_protocol_id:
            raise SessionError(PROTOCOL_MISMATCH, "the host offers another protocol than the "
                               "one this guest joined for", exit_code=1)
        if protocol is not None:
            return _machine(protocol, "guest", None, config, seed, entropy)
        if protocol_for is None:
            raise SessionError("session.unknown_protocol", "no local protocol to play")
        return _machine(protocol_for(offered), "guest", None, config, seed, entropy)

    async with channel:
        return await Driver(machine_for, channel, recorder=recorder, identity=identity,
                            offer_timeout=config.peer_timeout, **driver_kwargs).run()


async def memory_session(protocol: LoadedProtocol, *, options: dict[str, Any] | None = None,
                         config: SessionConfig | None = None, state_dir: str | Path | None = None,
                         seed: int | None = None, keep_events: bool = True,
                         host_kwargs: dict[str, Any] | None = None,
                         guest_kwargs: dict[str, Any] | None = None,
                         guest_config: SessionConfig | None = None
                         ) -> tuple[DriveResult, DriveResult]:
    """Both sides as tasks over the wire's in-memory transport pair (same code path as TCP).

    ``guest_config`` (default: ``config``) lets the guest play another control mode
    (``protocol test --control-mode human``: a person hosts, the guest's hooks decide)."""
    config = config or SessionConfig()
    guest_config = guest_config or config
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
        run_on_channel(protocol, "guest", _channel(a, guest_keys, guest_config),
                       identity=ids["guest"], config=guest_config, seed=seed, keep_events=keep_events,
                       state_dir=root / "guest" if root else None, **(guest_kwargs or {})))
