"""A relay that lies: it drops, duplicates, reorders or holds back frames — and renumbers
the relay headers so the transport's own repair cannot notice. The sealed channel's
authenticated frame counter catches each with its code; nothing after it is accepted."""

from __future__ import annotations

import asyncio

import pytest
from relayhelpers import relay_pair, sealed_channels

from lingxi.wire.errors import TransportError
from lingxi.wire.relay_link import RelayLink
from lingxi.wire.relay_transport import DATA, HEADER

FIRST_BAD = 3  # the guest's first data frames are its hello and the session's first message


class LyingRelay(RelayLink):
    """The host's link, receiving what a hostile relay operator chooses to deliver.

    ``mode`` (set after the handshake): drop, duplicate, reorder or delay the guest's
    frames from FIRST_BAD on, renumbering the relay headers so the transport's repair
    (sequence numbers, acks) sees an unbroken stream.
    """

    mode: str | None = None
    delay = 1.5
    held: bytes | None = None
    dropped: list[int]

    async def forward(self, data: bytes, seq: int | None = None) -> None:
        if seq is not None:
            kind, conn, _, ack = HEADER.unpack_from(data)
            data = HEADER.pack(kind, conn, seq, ack) + data[HEADER.size:]
        await super()._on_msg(_Msg(data))

    async def _on_msg(self, msg) -> None:
        data = msg.data
        kind, _, seq, _ = HEADER.unpack_from(data)
        mode = self.mode
        if mode is None or kind != DATA or seq < FIRST_BAD:
            await super()._on_msg(msg)
        elif mode == "lose-once":  # an honest loss, as in a crash: the resend gets through
            if seq == FIRST_BAD and not getattr(self, "dropped", None):
                self.dropped = [seq]
                return
            await super()._on_msg(msg)
        elif mode == "drop":  # frame 3 never arrives; later ones are renumbered to fit
            if seq > FIRST_BAD:
                await self.forward(data, seq - 1)
        elif mode == "duplicate":  # frame 3 twice; later ones renumbered
            await self.forward(data, seq + (seq > FIRST_BAD))
            if seq == FIRST_BAD:
                await self.forward(data, seq + 1)
        elif mode == "reorder":  # frames 3 and 4 swapped (their numbers kept)
            if seq == FIRST_BAD and self.held is None:
                self.held = data
            elif seq == FIRST_BAD + 1 and self.held is not None:
                await self.forward(data, FIRST_BAD)
                await self.forward(self.held, FIRST_BAD + 1)
            elif seq > FIRST_BAD + 1:
                await super()._on_msg(msg)
        elif mode == "delay":  # everything from frame 3 on is held back
            await asyncio.sleep(self.delay)
            await super()._on_msg(msg)


class _Msg:
    def __init__(self, data: bytes) -> None:
        self.data = data


@pytest.mark.parametrize("mode,code", [("drop", "transport.frame_lost"),
                                       ("duplicate", "transport.frame_duplicated"),
                                       ("reorder", "transport.frame_reordered"),
                                       ("delay", "transport.frame_delayed")])
async def test_a_lying_relay_is_caught_with_its_code(relay_keys, nats_servers, mode, code):
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t = await relay_pair(
        relay_keys, [server.url], host_link_class=LyingRelay)
    host, guest, *_ = await asyncio.wait_for(
        sealed_channels(host_t, guest_t, max_delay=1.0, reorder_grace=0.3), 20)
    host_link.mode = mode
    received = []
    for n in range(6):
        await guest.send({"action": "move", "n": n})
    with pytest.raises(TransportError) as info:
        while True:
            received.append((await asyncio.wait_for(host.recv(), 10)).payload["n"])
    assert info.value.code == code, info.value
    assert received == sorted(set(received))  # what was accepted came once and in order
    assert len(received) <= 2  # nothing from the first bad frame on
    await host_link.close()
    await guest_link.close()


async def test_an_honest_relay_that_loses_a_message_is_repaired(relay_keys, nats_servers):
    """Loss without lies (a node dying) is repaired by the transport: sent again, in order."""
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t = await relay_pair(
        relay_keys, [server.url], host_link_class=LyingRelay)
    host, guest, *_ = await asyncio.wait_for(sealed_channels(host_t, guest_t), 20)
    host_link.mode = "lose-once"
    for n in range(6):
        await guest.send({"action": "move", "n": n})
    got = [(await asyncio.wait_for(host.recv(), 10)).payload["n"] for _ in range(6)]
    assert got == list(range(6)) and host_link.dropped == [FIRST_BAD]
    assert guest_t.retransmitted >= 1
    await host_link.close()
    await guest_link.close()
