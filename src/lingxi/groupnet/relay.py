"""The relay as a carrier of group frames: one sealed relay link per member to the host.

A relay credential is strictly pairwise: it names one session's two subjects
(``…host`` and ``…guest``), and a relay transport joins exactly those two
sides. A group of N seats therefore uses N - 1 links, each between one member
and the host — the host is the sequencer, so every frame goes through it
anyway. Over each link the wire's handshake and sealed channel run as in a
two-party session, and the group frames ride as payloads of
``p2p:group_frame`` envelopes: the relay sees sizes and timing, never an
entry. The log, the sequencer and every member's checks are the ones TCP uses
(:mod:`lingxi.groupnet.runtime`).

A credential file is what the registry answers for one side of one link plus
the user NKey seed that signs the relay's nonce (``lingxi group
relay-credentials`` writes a table's set from the relay's keys).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.contract import Spec
from lingxi.errors import EXIT_USAGE, LingxiError
from lingxi.group.agents import SeatAgent
from lingxi.group.keys import Signer
from lingxi.groupnet.frames import MAX_FRAME, FrameError
from lingxi.groupnet.runtime import GroupHost, Outcome, play_seat
from lingxi.natsauth import NatsAuthError, NKey
from lingxi.wire.channel import SecureChannel
from lingxi.wire.connection import open_channel
from lingxi.wire.envelope import AgentEndpoint
from lingxi.wire.errors import TransportError
from lingxi.wire.handshake import server_handshake
from lingxi.wire.identity import Identity
from lingxi.wire.relay_link import RelayCredential, RelayLink
from lingxi.wire.relay_transport import RelayTransport, open_to_host

CREDENTIAL_FORMAT = "lingxi.relay-credential/1"
ACTION = "group_frame"
HEARTBEAT = 5.0


def link_session_id(group_id: str, seat: int) -> str:
    """The relay session of the link between the host and ``seat`` (a subject-safe name)."""
    return f"grp{hashlib.sha256(group_id.encode()).hexdigest()[:24]}-s{seat}"


def credential_document(answer: dict[str, Any], user: NKey) -> dict[str, Any]:
    """A credential file's content: the registry-shaped answer and the user's own seed."""
    return {"format": CREDENTIAL_FORMAT, **answer, "user_seed": user.seed}


def _bad(path: str, why: str) -> LingxiError:
    return LingxiError("group.bad_credential", f"{path}: {why}", exit_code=EXIT_USAGE)


def load_credential(path: str, role: str, *, now: float | None = None) -> RelayCredential:
    """The relay credential in ``path`` for ``role`` (host or guest); exit 2 otherwise."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise _bad(path, f"cannot read it ({error.strerror or error})") from None
    except (ValueError, UnicodeDecodeError):
        raise _bad(path, "not a JSON credential file") from None
    if not isinstance(doc, dict) or doc.get("format") != CREDENTIAL_FORMAT:
        raise _bad(path, f"not a {CREDENTIAL_FORMAT} file")
    try:
        user = NKey.from_seed(str(doc.get("user_seed")))
    except NatsAuthError:
        raise _bad(path, "its user_seed is not a user NKey seed") from None
    try:
        credential = RelayCredential.from_answer(doc, user)
    except TransportError as error:
        raise _bad(path, error.message) from None
    if credential.role != role:
        raise _bad(path, f"a {credential.role} credential where a {role} one is needed")
    if credential.expires_at <= (time.time() if now is None else now):
        raise LingxiError("group.credential_expired", f"{path}: the relay credential "
                          "expired", exit_code=EXIT_USAGE)
    return credential


class ChannelPipe:
    """Group frames as payloads of one sealed channel (a pipe for the runtime).

    ``send`` queues in order; one task sends the queue through the channel,
    so the runtime never awaits a send, as on TCP.
    """

    def __init__(self, channel: SecureChannel) -> None:
        self.channel = channel
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._failed: LingxiError | None = None
        self._sender = asyncio.ensure_future(self._send_loop())

    def send(self, frame: dict[str, Any]) -> None:
        if self._failed is None:
            self._queue.put_nowait(frame)

    async def _send_loop(self) -> None:
        while True:
            frame = await self._queue.get()
            try:
                if self._failed is None:
                    await self.channel.send({"action": ACTION, "frame": frame})
            except LingxiError as error:  # the channel ended: the reader sees why
                self._failed = error
            finally:
                self._queue.task_done()

    async def recv(self, timeout: float) -> dict[str, Any]:
        try:
            env = await self.channel.recv(timeout=timeout)
        except TransportError as error:
            raise _frame_error(error) from None
        except LingxiError as error:
            raise FrameError("group.malformed", f"the channel refused an envelope: "
                             f"{error.code}") from None
        frame = env.payload.get("frame") if env.payload.get("action") == ACTION else None
        if not isinstance(frame, dict):
            raise FrameError("group.malformed", "a relay envelope that carries no group frame")
        if len(canonical_bytes(frame)) > MAX_FRAME:
            raise FrameError("group.frame_too_large", f"a frame over {MAX_FRAME} bytes")
        return frame

    async def drain(self) -> None:
        await self._queue.join()
        if self._failed is not None:
            raise _frame_error(self._failed)

    async def close(self) -> None:
        self._sender.cancel()
        await self.channel.close()


def _frame_error(error: LingxiError) -> FrameError:
    if error.code in ("transport.timeout", "transport.peer_silent"):
        return FrameError("group.peer_silent", error.message)
    if error.code == "transport.frame_too_large":
        return FrameError("group.frame_too_large", error.message)
    return FrameError("group.peer_closed", f"the relay connection ended ({error.code}: "
                      f"{error.message})")


def _channel_options(timeout: float) -> dict[str, Any]:
    return {"heartbeat_interval": HEARTBEAT, "peer_timeout": max(4 * HEARTBEAT, timeout * 4)}


def _local(identity: Identity, where: str) -> AgentEndpoint:
    return AgentEndpoint(identity.agent_id, "lingxi", where)


class RelayDoor:
    """The host's side of relay links: every transport a link opens gets the wire's
    handshake and sealed channel, then :meth:`GroupHost.serve` (a failed handshake costs
    that connection only). Links may come and go (a posted table opens one per claim)."""

    def __init__(self, host: GroupHost, identity: Identity) -> None:
        self.host, self.identity = host, identity
        self.local = _local(identity, "relay://group-host")
        self.tasks: set[asyncio.Task[None]] = set()

    async def _admit(self, transport: RelayTransport) -> None:
        try:
            keys = await server_handshake(transport, self.identity, self.local,
                                          clock=time.time)
            channel = await SecureChannel(transport, keys, clock=time.time,
                                          **_channel_options(self.host.timeout)).start()
        except LingxiError:
            transport.abort()
            return
        await self.host.serve(ChannelPipe(channel))

    def arrived(self, transport: RelayTransport) -> None:
        task = asyncio.ensure_future(self._admit(transport))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    offer = arrived  # the name the two-party relay watcher calls (cli.reach.RelayHost)

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()


async def host_over_relay(host: GroupHost, credentials: list[RelayCredential],
                          identity: Identity, ready=None) -> Outcome:
    """Sequence the group with every member reaching the host through its own relay link."""
    door = RelayDoor(host, identity)
    links: list[RelayLink] = []
    try:
        for credential in credentials:
            links.append(await RelayLink(credential, on_open=door.arrived).open())
        if ready is not None:
            ready(", ".join(sorted({s for c in credentials for s in c.servers})))
        return await host.play()
    finally:
        door.close()
        for link in links:
            await link.close()


async def join_over_relay(spec: Spec, credential: RelayCredential, seat: int, signer: Signer,
                          identity: Identity, agent: SeatAgent, *, timeout: float = 60.0,
                          host_key: str | None = None, joined=None) -> Outcome:
    """Play one seat to the end, reaching the host through the relay link ``credential`` names."""
    link = await RelayLink(credential).open()
    try:
        pipe = await pipe_through_link(link, identity, timeout=timeout, host_key=host_key)
        return await play_seat(pipe, spec, seat, signer, agent, timeout=timeout,
                               joined=joined)
    finally:
        await link.close()


async def pipe_through_link(link: RelayLink, identity: Identity, *, timeout: float = 60.0,
                            host_key: str | None = None,
                            answer_timeout: float | None = None) -> ChannelPipe:
    """A member's pipe to the host over an open relay link: the handshake (the host's
    identity checked against ``host_key``) and the sealed channel."""
    transport = await open_to_host(link, timeout=answer_timeout or timeout)
    channel = await open_channel(transport, identity, _local(identity, "relay://member"),
                                 expected_host_key=host_key, **_channel_options(timeout))
    return ChannelPipe(channel)
