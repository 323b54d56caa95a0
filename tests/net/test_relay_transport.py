"""The relay transport over a real nats-server: a sealed channel rides it unchanged, the
relay sees sealed frames only, credentials are per session, and the transport's own
guarantees (order, repair, back-pressure, size, flood) hold."""

from __future__ import annotations

import asyncio
import base64

import nats
import pytest
from relayhelpers import credential, relay_pair, sealed_channels

from lingxi.natsauth import NKey, user_jwt
from lingxi.wire.errors import TransportError
from lingxi.wire.relay_link import RelayLink
from lingxi.wire.relay_transport import open_to_host

HANG_GUARD = 20
SECRET = {"action": "move", "card": "queen of hearts"}


async def sniffer(keys, server):
    """What a relay operator sees: a user of the account allowed to read every subject."""
    import time

    seen: list[bytes] = []
    user = NKey.generate("user")
    token = user_jwt(keys.account, user.public, name="operator", now=int(time.time()),
                     expires=int(time.time()) + 60, publish=[], subscribe=[">"],
                     payload=1 << 20, subs=4)
    nc = await nats.connect(server.url, user_jwt_cb=lambda: token.encode(),
                            signature_cb=lambda n: base64.b64encode(user.sign(n.encode())))

    async def keep(msg):
        seen.append(msg.subject.encode() + b" " + msg.data)

    await nc.subscribe(">", cb=keep)
    await nc.flush()
    return nc, seen


async def test_a_sealed_session_rides_the_relay_and_the_relay_sees_no_content(
        relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    nc, seen = await sniffer(relay_keys, server)
    host_link, guest_link, host_t, guest_t = await relay_pair(relay_keys, [server.url])
    assert host_t.via == guest_t.via == "relay"
    host, guest, host_id, guest_id = await asyncio.wait_for(
        sealed_channels(host_t, guest_t), HANG_GUARD)
    for n in range(20):
        await guest.send({**SECRET, "n": n})
        got = await asyncio.wait_for(host.recv(), HANG_GUARD)
        assert got.payload == {**SECRET, "n": n} and got.encrypt
        await host.send({"action": "ack", "n": n})
        assert (await asyncio.wait_for(guest.recv(), HANG_GUARD)).payload["n"] == n
    await guest.close()
    await nc.flush()
    await asyncio.sleep(0.2)
    await nc.close()
    from lingxi.wire.relay_transport import DATA, HEADER

    handshake, after = [], []
    for item in seen:
        subject, _, data = item.partition(b" ")
        kind, _, seq, _ = HEADER.unpack_from(data)
        first = (1, 2) if subject.endswith(b".host") else (1,)
        (handshake if kind == DATA and seq in first else after).append(data)
    assert len(handshake) == 3 and b"handshake.hello" in b"".join(handshake)
    wire = b"\n".join(after)
    assert len(after) > 40
    for clear in (b"queen", b"p2p:move", b"\"ack\"", b"control.", guest_id.agent_id.encode(),
                  host_id.agent_id.encode(), host.session_id.encode()):
        assert clear not in wire  # after the handshake: sealed frames, sizes and timing
    await host_link.close()
    await guest_link.close()


async def test_another_sessions_credential_reaches_nothing_and_none_is_refused(
        relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t = await relay_pair(relay_keys, [server.url],
                                                              session_id="ses-a")
    # a client holding session B's guest credential aims at session A
    intruder_cred = credential(relay_keys, [server.url], "guest", "ses-b")
    intruder = await nats.connect(
        server.url, user_jwt_cb=lambda: intruder_cred.jwt.encode(),
        signature_cb=lambda n: base64.b64encode(intruder_cred.user.sign(n.encode())),
        error_cb=_collect(errors := []))
    got: list[bytes] = []

    async def keep(msg):
        got.append(msg.data)

    await intruder.subscribe("lingxi.relay.ses-a.host", cb=keep)
    await intruder.publish("lingxi.relay.ses-a.guest", b"\x01" + bytes(24))
    await intruder.flush()
    await guest_t.send(b"frame for the host")
    assert await asyncio.wait_for(host_t.recv(), 5) == b"frame for the host"
    await host_t.send(b"frame for the guest")
    assert await asyncio.wait_for(guest_t.recv(), 5) == b"frame for the guest"
    await asyncio.sleep(0.3)
    assert got == []
    assert sum("ermissions" in str(e) for e in errors) >= 2  # subscribe and publish refused
    assert len(host_link.transports) == 1  # the intruder's OPEN never arrived
    await intruder.close()
    # no credential at all: refused at connect
    with pytest.raises(Exception, match="Authorization"):
        await nats.connect(server.url, allow_reconnect=False, connect_timeout=2)
    # a credential signed by a key that is not the registry's account: refused too
    forged = credential(type(relay_keys).generate(), [server.url], "guest", "ses-a")
    with pytest.raises(TransportError) as info:
        await RelayLink(forged, reconnect_attempts=0).open()
    assert info.value.code == "transport.relay_refused"
    await host_link.close()
    await guest_link.close()


def _collect(into):
    async def on_error(error):
        into.append(error)
    return on_error


async def test_an_expired_credential_is_refused(relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    import time

    user = NKey.generate("user")
    answer = relay_keys.credential(user_key=user.public, role="guest", session_id="ses-x",
                                   now=int(time.time()) - 3600, ttl=60)
    from lingxi.wire.relay_link import RelayCredential

    stale = RelayCredential.from_answer({**answer, "servers": [server.url]}, user)
    with pytest.raises(TransportError) as info:
        await RelayLink(stale, reconnect_attempts=0).open()
    assert info.value.code == "transport.relay_refused"


async def test_the_guest_is_told_when_no_host_answers(relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    guest_link = await RelayLink(credential(relay_keys, [server.url], "guest")).open()
    with pytest.raises(TransportError) as info:
        await open_to_host(guest_link, timeout=0.6)
    assert info.value.code == "transport.relay_no_answer"
    await guest_link.close()


async def test_frames_keep_their_order_and_size_cap(relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t = await relay_pair(relay_keys, [server.url],
                                                              max_frame=4096)
    for n in range(300):
        guest_t.send_nowait(n.to_bytes(4, "big") * 16)
    got = [await asyncio.wait_for(host_t.recv(), 5) for _ in range(300)]
    assert [int.from_bytes(g[:4], "big") for g in got] == list(range(300))
    with pytest.raises(TransportError) as info:
        await guest_t.send(bytes(5000))
    assert info.value.code == "transport.frame_too_large"
    await host_link.close()
    await guest_link.close()


async def test_a_reader_that_stops_reading_pushes_back_on_the_sender(relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t = await relay_pair(
        relay_keys, [server.url], window=8, read_timeout=0.5)
    host_t.pause_reading()  # the reader stops: nothing more is acknowledged
    for _ in range(8):
        guest_t.send_nowait(b"x" * 100)
    with pytest.raises(TransportError) as info:
        await guest_t.send(b"one more")
    assert info.value.code == "transport.timeout"
    await host_link.close()
    await guest_link.close()


async def test_a_flooding_peer_is_cut_off(relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    host_link, guest_link, host_t, guest_t = await relay_pair(
        relay_keys, [server.url], rate=50.0)
    for _ in range(400):  # far beyond 50 frames per second with a burst of 100
        guest_t.send_nowait(b"flood")
    with pytest.raises(TransportError) as info:
        for _ in range(400):
            await asyncio.wait_for(host_t.recv(), 5)
    assert info.value.code == "transport.flood"
    await host_link.close()
    await guest_link.close()


async def test_the_relay_itself_refuses_a_message_over_the_credential_payload_cap(
        relay_keys, nats_servers):
    server = nats_servers(relay_keys)
    cred = credential(relay_keys, [server.url], "guest", "ses-cap")
    errors: list = []
    client = await nats.connect(
        server.url, user_jwt_cb=lambda: cred.jwt.encode(), allow_reconnect=False,
        signature_cb=lambda n: base64.b64encode(cred.user.sign(n.encode())),
        error_cb=_collect(errors))
    await client.publish(cred.send_subject, b"x" * (cred.max_payload + 1000))
    with pytest.raises(Exception):  # noqa: B017 - the connection is gone, whatever nats-py says
        await client.flush(timeout=2)
        await asyncio.sleep(0.5)
        await client.publish(cred.send_subject, b"again")
        await client.flush(timeout=2)
    for _ in range(100):  # the relay cut the connection for exactly this reason
        if "maximum payload exceeded" in server.log.read_text():
            break
        await asyncio.sleep(0.05)
    assert "maximum payload exceeded" in server.log.read_text()
    await client.close()


@pytest.mark.slow
async def test_a_session_outlives_its_credential_by_renewing_it(relay_keys, nats_servers):
    """The relay drops a connection whose JWT expired; the link renewed it in time, so the
    client reconnects with the fresh one and nothing is lost."""
    import time as clock

    from lingxi.wire.relay_link import RelayCredential

    server = nats_servers(relay_keys)
    user = NKey.generate("user")

    def mint(role, who):
        answer = relay_keys.credential(user_key=who.public, role=role, session_id="ses-renew",
                                       now=int(clock.time()), ttl=30)
        return RelayCredential.from_answer({**answer, "servers": [server.url]}, who)

    async def renew():
        return mint("guest", user)

    opened: asyncio.Queue = asyncio.Queue()
    host_link = await RelayLink(credential(relay_keys, [server.url], "host", "ses-renew"),
                                on_open=opened.put_nowait).open()
    guest_link = await RelayLink(mint("guest", user), renew=renew).open()
    guest_t = await open_to_host(guest_link, timeout=5)
    host_t = await asyncio.wait_for(opened.get(), 5)
    first_jwt = guest_link.credential.jwt
    deadline = clock.monotonic() + 40  # past the first credential's 30 s
    n = 0
    while clock.monotonic() < deadline:
        await guest_t.send(n.to_bytes(4, "big"))
        assert int.from_bytes(await asyncio.wait_for(host_t.recv(), 15), "big") == n
        n += 1
        await asyncio.sleep(0.5)
    assert guest_link.credential.jwt != first_jwt  # renewed
    assert guest_link.renewals >= 1  # moved to a connection with the fresh credential
    await host_link.close()
    await guest_link.close()
