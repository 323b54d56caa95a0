"""The relay link in one process: a node dies and the link moves to the other, a credential is
replaced mid-session, the last node dies and every transport ends with one code."""

from __future__ import annotations

import asyncio
import time

import pytest
from relayhelpers import NatsServer, credential, free_port

from lingxi.wire.errors import TransportError
from lingxi.wire.relay_link import RelayLink, _finish
from lingxi.wire.relay_transport import open_to_host


def cluster(tmp_path, keys):
    ports = [free_port() for _ in range(4)]
    one = NatsServer(tmp_path / "one", keys, port=ports[0], cluster_port=ports[2],
                     routes=(f"nats://127.0.0.1:{ports[3]}",))
    two = NatsServer(tmp_path / "two", keys, port=ports[1], cluster_port=ports[3],
                     routes=(f"nats://127.0.0.1:{ports[2]}",))
    deadline = time.monotonic() + 20
    while not all("Route connection created" in n.log.read_text() for n in (one, two)):
        assert time.monotonic() < deadline, "no cluster"
        time.sleep(0.05)
    return one, two


async def pair(keys, host_servers, guest_servers, **link_options):
    opened: asyncio.Queue = asyncio.Queue()
    events: list[str] = []
    host_link = await RelayLink(credential(keys, host_servers, "host", "ses-f"),
                                on_open=opened.put_nowait, on_event=events.append,
                                **link_options).open()
    guest_link = await RelayLink(credential(keys, guest_servers, "guest", "ses-f"),
                                 **link_options).open()
    guest_t = await open_to_host(guest_link, timeout=5)
    host_t = await asyncio.wait_for(opened.get(), 5)
    return host_link, guest_link, host_t, guest_t, events


async def exchange(host_t, guest_t, tag: bytes, count: int = 5) -> None:
    for n in range(count):
        await guest_t.send(tag + bytes([n]))
        await host_t.send(tag + bytes([n]))
    got_host = [await asyncio.wait_for(host_t.recv(), 15) for _ in range(count)]
    got_guest = [await asyncio.wait_for(guest_t.recv(), 15) for _ in range(count)]
    assert got_host == got_guest == [tag + bytes([n]) for n in range(count)]


async def test_the_link_moves_to_the_other_node_and_nothing_is_lost(tmp_path, relay_keys):
    one, two = cluster(tmp_path, relay_keys)
    try:
        host_link, guest_link, host_t, guest_t, events = await pair(
            relay_keys, [one.url, two.url], [two.url, one.url])
        assert host_link.connected_url == one.url and guest_link.connected_url == two.url
        await exchange(host_t, guest_t, b"before")
        one.kill()
        for n in range(5):  # sent while the host's node is gone: kept and sent again
            await guest_t.send(b"during" + bytes([n]))
        got = [await asyncio.wait_for(host_t.recv(), 20) for _ in range(5)]
        assert got == [b"during" + bytes([n]) for n in range(5)]
        assert host_link.reconnects >= 1 and host_link.connected_url == two.url
        assert any("reconnected to " + two.url in e for e in events)
        await exchange(host_t, guest_t, b"after")
        await host_link.close()
        await guest_link.close()
    finally:
        one.kill()
        two.kill()


async def test_a_credential_replaced_mid_session_loses_and_repeats_nothing(
        nats_servers, relay_keys):
    from lingxi.natsauth import NKey

    server = nats_servers(relay_keys)
    user = NKey.generate("user")

    async def renew():  # what the CLI's renew does: the same user key, a fresh JWT
        return credential(relay_keys, [server.url], "guest", "ses-f", user=user)

    opened: asyncio.Queue = asyncio.Queue()
    async with RelayLink(credential(relay_keys, [server.url], "host", "ses-f"),
                         on_open=opened.put_nowait) as host_link:
        guest_link = await RelayLink(await renew(), renew=renew).open()
        guest_t = await open_to_host(guest_link, timeout=5)
        host_t = await asyncio.wait_for(opened.get(), 5)
        await exchange(host_t, guest_t, b"one")
        old_client = guest_link._nc
        await guest_link.rotate()
        assert guest_link.renewals == 1 and guest_link._nc is not old_client
        assert old_client.is_closed  # made before break, then the old one closed
        await exchange(host_t, guest_t, b"two")
        await guest_link.close()
    with pytest.raises(ValueError):
        await host_link.rotate()  # no renew(): nothing to rotate to


async def test_when_every_node_is_gone_each_transport_ends_with_one_code(
        nats_servers, relay_keys):
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t, _ = await pair(
        relay_keys, [server.url], [server.url], reconnect_attempts=2)
    server.kill()
    with pytest.raises(TransportError) as info:
        await asyncio.wait_for(host_t.recv(), 30)
    assert info.value.code == "transport.relay_unreachable"
    await host_link.close()
    await guest_link.close()


async def test_a_suspended_publish_is_finished_in_order():
    """The rare path of RelayLink.publish: nats-py's publish had to wait (a full buffer)."""
    order: list[str] = []
    gate: asyncio.Future = asyncio.get_running_loop().create_future()

    async def publish(name, wait):
        order.append(f"queued {name}")
        if wait:
            await gate
            await asyncio.sleep(0)
        order.append(f"done {name}")

    coro = publish("a", True)
    yielded = coro.send(None)  # what RelayLink.publish does: one step
    task = asyncio.ensure_future(_finish(coro, yielded))
    gate.set_result(None)
    await task
    assert order == ["queued a", "done a"]
