"""How a session reaches its peer: ``--via auto|direct|relay`` and ``--unsealed``.

One decorator gives ``lingxi host``, ``guest`` and ``join`` the same two options
as one ``reach`` argument, so the commands stay small and agree on the words.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from lingxi.errors import LingxiError

VIAS = ("auto", "direct", "relay")


@dataclass(frozen=True)
class Reach:
    via: str = "auto"
    unsealed: bool = False
    direct_timeout: float = 3.0

    @property
    def seal(self) -> bool:
        return not self.unsealed


def reach_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--via, --direct-timeout and --unsealed → one ``reach`` argument."""

    @functools.wraps(command)
    def wrapper(*args: Any, via: str, direct_timeout: float, unsealed: bool,
                **kwargs: Any) -> Any:
        return command(*args, reach=Reach(via, unsealed, direct_timeout), **kwargs)

    for option in (
        click.option("--unsealed", is_flag=True,
                     help="Debug only: send payloads in clear. The peer must choose it too, "
                          "or the handshake is refused (handshake.sealing_refused); the "
                          "choice is recorded in the session's events."),
        click.option("--direct-timeout", type=click.FloatRange(0.1, 60.0), default=3.0,
                     show_default=True, metavar="SECONDS",
                     help="With --via auto: how long reaching the host directly (the TCP "
                          "connection) may take before the relay is tried."),
        click.option("--via", type=click.Choice(VIAS), default="auto", show_default=True,
                     help="The path to the peer: direct TCP, the registry's NATS relay, or "
                          "auto (direct first, then the relay)."),
    ):
        wrapper = option(wrapper)
    return wrapper


_FINAL = ("handshake.ticket_refused", "handshake.sealing_refused", "transport.busy")


def worth_the_relay(error: Exception) -> bool:
    """A direct failure the relay may get around (not the right host saying no)."""
    code = getattr(error, "code", "")
    return isinstance(code, str) and code.startswith(("transport.", "handshake.")) \
        and code not in _FINAL


def concrete_endpoint(where: str, server: str) -> str:
    """The bound endpoint with a real address in place of 0.0.0.0 / ::, for an invitation.

    The address is the one this machine would use to reach the registry (a
    route lookup: a UDP socket is connected, nothing is sent).
    """
    import socket
    from urllib.parse import urlsplit

    from lingxi.wire.connection import format_endpoint
    from lingxi.wire.transport import parse_endpoint

    host, port = parse_endpoint(where)
    if host not in ("0.0.0.0", "::", ""):
        return where
    target = urlsplit(server).hostname if server.startswith(("http://", "https://")) else None
    family = socket.AF_INET6 if host == "::" else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((target or ("::1" if family == socket.AF_INET6 else "127.0.0.1"), 9))
            address = probe.getsockname()[0]
    except OSError:
        address = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    return format_endpoint(address, port)


class RelayHost:
    """The host's way in through the relay, for one posted invitation.

    Once the invitation is posted it is polled; when a guest claims it, the
    host asks the registry for its credential for that session, joins the
    relay, and every connection a guest opens there goes to the same accept
    loop as TCP (``OneSessionHost.offer``): the first guest to complete the
    handshake with its ticket wins, whichever path it took.
    """

    def __init__(self, client: Any, echo: Callable[[str], None], *, poll: float = 0.5) -> None:
        self.client, self.echo, self.poll = client, echo, poll
        self.host: Any = None
        self.link: Any = None
        self.session_id: str | None = None
        self.errors: list[str] = []
        self._task: Any = None

    def attach(self, host: Any) -> None:
        self.host = host

    def watch(self, invitation_id: str) -> None:
        import asyncio

        self._task = asyncio.ensure_future(self._watch(invitation_id))

    async def _watch(self, invitation_id: str) -> None:
        import asyncio

        while True:
            try:
                invitation = await self.client.invitation(invitation_id)
                status, session_id = invitation.get("status"), invitation.get("session_id")
                if status == "claimed" and isinstance(session_id, str) \
                        and session_id != self.session_id:
                    await self._join(session_id)
                if status not in ("open", "claimed"):
                    return  # in session (or over): the link stays for a relayed session
            except LingxiError as error:  # one line, and try again: the registry may be back
                if str(error) not in self.errors:
                    self.errors.append(str(error))
                    self.echo(f"relay: {error}")
            await asyncio.sleep(self.poll)

    async def _join(self, session_id: str) -> None:
        from lingxi.natsauth import NKey
        from lingxi.registry.client.relay import relay_credential
        from lingxi.wire.relay_link import RelayCredential, RelayLink

        if self.link is not None:  # an earlier claim lapsed: its session is gone
            await self.link.close()
            self.link = None
        user = NKey.generate("user")

        async def renew() -> RelayCredential:
            answer = await relay_credential(self.client, session_id, user.public)
            return RelayCredential.from_answer(answer, user)

        credential = await renew()

        def arrived(transport: Any) -> None:
            self.echo(f"a guest is connecting through the relay (session {session_id})")
            self.host.offer(transport)

        self.link = await RelayLink(credential, renew=renew, on_open=arrived,
                                    on_event=self.echo).open()
        self.session_id = session_id

    async def close(self) -> None:
        import asyncio
        import contextlib

        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self.link is not None:
            await self.link.close()


def guest_reach(client: Any, session_id: str, reach: Reach, echo: Callable[[str], None],
                relay_timeout: float = 15.0) -> Callable[..., Any]:
    """The guest's connect for ``guest_session``: direct first (by ``reach``), then the relay."""

    async def connect_via(endpoint: str, identity: Any, local: Any, **options: Any) -> Any:
        from lingxi.wire.connection import connect

        failure: Exception | None = None
        if reach.via in ("auto", "direct"):
            try:  # the short deadline is for reaching the host; a handshake takes its own time
                direct = dict(options, connect_timeout=reach.direct_timeout) \
                    if reach.via == "auto" else options
                channel = await connect(endpoint, identity, local, **direct)
                echo(f"path: direct, {endpoint} ({'sealed' if channel.sealed else 'UNSEALED'})")
                return channel
            except LingxiError as error:
                if reach.via == "direct" or not worth_the_relay(error):
                    raise
                failure = error
            echo(f"direct path failed ({failure}); trying the relay")
        try:
            return await _through_relay(client, session_id, identity, local, echo,
                                        relay_timeout, **options)
        except LingxiError as error:
            if failure is None:
                raise
            raise LingxiError(error.code, f"{error.message} (and the direct path failed: "
                              f"{getattr(failure, 'code', 'error')})",
                              exit_code=error.exit_code) from None

    return connect_via


async def _through_relay(client: Any, session_id: str, identity: Any, local: Any,
                         echo: Callable[[str], None], relay_timeout: float,
                         **options: Any) -> Any:
    import asyncio

    from lingxi.natsauth import NKey
    from lingxi.registry.client.relay import relay_credential
    from lingxi.wire.connection import open_channel
    from lingxi.wire.relay_link import RelayCredential, RelayLink
    from lingxi.wire.relay_transport import open_to_host

    user = NKey.generate("user")

    async def renew() -> RelayCredential:
        answer = await relay_credential(client, session_id, user.public)
        return RelayCredential.from_answer(answer, user)

    link = await RelayLink(await renew(), renew=renew, on_event=echo).open()
    for name in ("connect_timeout", "max_frame", "read_timeout"):
        options.pop(name, None)
    try:
        transport = await open_to_host(link, timeout=relay_timeout)
        channel = await open_channel(transport, identity, local, **options)
    except BaseException:
        await link.close()
        raise
    def closed() -> None:
        asyncio.ensure_future(link.close())

    channel.add_end_callback(closed)
    echo(f"path: relay, {link.connected_url or link.credential.servers[0]} "
         f"({'sealed' if channel.sealed else 'UNSEALED'})")
    return channel
