"""Length-prefixed JSON frames with a hard size cap, and the envelope each entry rides in.

Every log entry travels as a Synapse ``group:<action>`` envelope with
``broadcast: true``, no receiver and the group's ``group_id``; the entry
(signed by its sender, countersigned by the sequencer) is its payload's
``entry``. No HMAC: the members share no key, and the Ed25519 signatures in
the entry are what every member checks.
"""

from __future__ import annotations

import asyncio
import json
import struct
import uuid
from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.errors import LingxiError
from lingxi.wire.agent_fields import lingxi_endpoint
from lingxi.wire.envelope import AgentEndpoint, Envelope
from lingxi.wire.identity import agent_id_for
from lingxi.wire.timefmt import format_rfc3339

MAX_FRAME = 256 * 1024
_HEADER = struct.Struct(">I")


class FrameError(LingxiError):
    exit_code = 1


async def read_frame(reader: asyncio.StreamReader, timeout: float) -> dict[str, Any]:
    try:
        header = await asyncio.wait_for(reader.readexactly(4), timeout)
        (size,) = _HEADER.unpack(header)
        if size > MAX_FRAME:
            raise FrameError("group.frame_too_large", f"a frame of {size} bytes (limit "
                             f"{MAX_FRAME})")
        body = await asyncio.wait_for(reader.readexactly(size), timeout)
    except (asyncio.IncompleteReadError, ConnectionError):  # a killed peer may reset it
        raise FrameError("group.peer_closed", "the peer closed the connection") from None
    except TimeoutError:
        raise FrameError("group.peer_silent", f"no frame within {timeout:g} s") from None
    try:
        frame = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise FrameError("group.malformed", "a frame is not JSON") from None
    if not isinstance(frame, dict):
        raise FrameError("group.malformed", "a frame is a JSON object")
    return frame


def write_frame(writer: asyncio.StreamWriter, frame: dict[str, Any]) -> None:
    body = canonical_bytes(frame)
    writer.write(_HEADER.pack(len(body)) + body)


class TcpPipe:
    """Frames over one TCP connection: the carrier the runtime reads and writes.

    A pipe is what the host and a member exchange frames through, whatever
    carries them (this one, or the relay's sealed channel in
    :mod:`lingxi.groupnet.relay`): ``recv`` (FrameError on any failure),
    ``send`` (queued in order, never awaits), ``drain`` and ``close``.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def recv(self, timeout: float) -> dict[str, Any]:
        return await read_frame(self.reader, timeout)

    def send(self, frame: dict[str, Any]) -> None:
        write_frame(self.writer, frame)

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError:
            raise FrameError("group.peer_closed", "the peer closed the connection") from None

    async def close(self) -> None:
        self.writer.close()


def endpoint(key: str) -> AgentEndpoint:
    """A member's AgentEndpoint from its identity key (agent id and default lingxi:// URL)."""
    agent = agent_id_for(key)
    return AgentEndpoint(agent_id=agent, system_id="lingxi", endpoint=lingxi_endpoint(agent))


def entry_envelope(entry: dict[str, Any], when: float) -> dict[str, Any]:
    """The ``group:`` envelope of a log entry (broadcast to every member)."""
    kind = entry["kind"]
    action = entry["body"]["payload"]["action"] if kind == "message" else kind
    env = Envelope(id=str(uuid.uuid4()), type=f"group:{action}",
                   sender=endpoint(entry["sender"]), payload={"action": action, "entry": entry},
                   timestamp=format_rfc3339(when), group_id=entry["group"], broadcast=True)
    return env.to_dict()


def entry_of(envelope: Any) -> Any:
    """The entry an envelope carries (checked by the log, not here), after the envelope rules."""
    env = Envelope.from_dict(envelope)
    if env.prefix != "group" or env.broadcast is not True or env.receiver is not None:
        raise FrameError("group.malformed", "log entries ride in broadcast group: envelopes")
    return env.payload.get("entry")
