"""Wire benchmark: sign+verify per second, and loopback TCP round trips per second.

Run: .venv/bin/python benchmarks/wire.py [--seconds S] [--repeat N]

Each figure comes with a baseline measured in the same run, and a ratio:
- sign+verify: ``sign_envelope`` on a freshly built envelope and
  ``verify_signature`` on a separately built copy (both compute the canonical
  payload JSON and the HMAC, as a real sender and receiver do) vs. two bare
  ``hmac.new(key, content, sha256).hexdigest()`` calls over the same content;
- the full receive path: build + serialise + ``ReceivePipeline.accept``
  (parse, version, fields, signature, binding, window, replay guard);
- round trips between two SecureChannels over loopback TCP (both ends in this
  one process and one event loop, so on one core) vs. a bare asyncio echo of
  length-prefixed frames of the same size, and vs. the floor (issue 22.3):
  the same echo plus the work no implementation can skip — per message one
  JSON encode and one decode of the envelope, one HMAC-SHA256 sign and one
  verify, one ChaCha20-Poly1305 seal and one open (sealing is on by default);
  a second variant adds the frame-level seal/open the channel also does.
  The four round-trip variants take turns in 0.1 s slices on one event loop
  until each had ``--seconds``, so load from other work falls on all of them.

Rates are given per wall-clock second and per CPU second of this process; the
machine is shared, so the CPU-second figure is the steadier "one core" number.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import statistics
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305  # noqa: E402

from lingxi.wire import (  # noqa: E402
    AgentEndpoint,
    Envelope,
    EnvelopeBuilder,
    ReceivePipeline,
    sign_envelope,
    signature_content,
    verify_signature,
)
from lingxi.wire.channel import connect_channel, serve_channels  # noqa: E402
from lingxi.wire.identity import Identity  # noqa: E402

KEY = b"benchmark-shared-key-0123456789ab"
HOST = AgentEndpoint("agent-host-01", "sys-a", "tcp://127.0.0.1:7401", agent_name="Host")
GUEST = AgentEndpoint("agent-guest-02", "sys-b", "tcp://127.0.0.1:7402")
PAYLOAD = {"action": "move", "turn": 3, "row": 2, "col": 5, "note": "benchmark 基准"}
BATCH = 200


class Rate:
    """Operations per wall second and per CPU second."""

    def __init__(self, count: int, wall: float, cpu: float) -> None:
        self.count, self.wall, self.cpu = count, count / wall, count / max(cpu, 1e-9)


def median_rate(rates: list[Rate]) -> Rate:
    """The median wall and CPU rates of several runs (taken separately)."""
    out = Rate(1, 1.0, 1.0)
    out.count = sum(rate.count for rate in rates)
    out.wall = statistics.median(rate.wall for rate in rates)
    out.cpu = statistics.median(rate.cpu for rate in rates)
    return out


def measure(fn, seconds: float) -> Rate:
    """Run ``fn`` (a batch of BATCH operations) repeatedly for about ``seconds``."""
    fn()
    count, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        fn()
        count += BATCH
    return Rate(count, time.perf_counter() - wall0, time.process_time() - cpu0)


def bench_sign_verify(seconds: float) -> dict[str, Rate]:
    builder = EnvelopeBuilder(GUEST, HOST, KEY, clock=time.time)
    fields = builder.build(PAYLOAD).to_dict()
    fields.pop("signature")
    template = Envelope.from_dict(fields)
    content = signature_content(template)

    def baseline():
        for _ in range(BATCH):
            mac = hmac.new(KEY, content, hashlib.sha256).hexdigest()
            hmac.compare_digest(mac, hmac.new(KEY, content, hashlib.sha256).hexdigest())

    def sign_verify():
        for _ in range(BATCH):
            signed = sign_envelope(template.replace(payload=dict(PAYLOAD)), KEY)
            received = signed.replace(payload=dict(PAYLOAD))  # a receiver's own copy: no cache
            verify_signature(received, KEY)

    now = [time.time()]
    pipeline = ReceivePipeline(KEY, clock=lambda: now[0], replay_capacity=10**7)

    def full_pipeline():
        for _ in range(BATCH):
            pipeline.accept(builder.build(PAYLOAD).to_bytes())
        now[0] = time.time()

    return {"baseline": measure(baseline, seconds), "sign_verify": measure(sign_verify, seconds),
            "pipeline": measure(full_pipeline, seconds)}


async def bare_echo(frame: bytes):
    async def echo(reader, writer):
        try:
            while True:
                (size,) = struct.unpack(">I", await reader.readexactly(4))
                body = await reader.readexactly(size)
                writer.write(struct.pack(">I", len(body)) + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def step():
        writer.write(struct.pack(">I", len(frame)) + frame)
        await writer.drain()
        (size,) = struct.unpack(">I", await reader.readexactly(4))
        await reader.readexactly(size)

    async def teardown():
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()

    return step, teardown


async def floor_echo(envelope: dict, frames_sealed: bool):
    """The bare echo plus the unavoidable per-message work on both sides."""
    key, cipher = KEY, ChaCha20Poly1305(bytes(32))
    frame_cipher = ChaCha20Poly1305(bytes(range(32)))
    nonce = bytes(12)
    dumps, loads, new, compare = json.dumps, json.loads, hmac.new, hmac.compare_digest

    def outgoing(env: dict) -> bytes:
        body = dumps(env["payload"], separators=(",", ":"), sort_keys=True).encode()
        sealed = cipher.encrypt(nonce, body, b"header")
        signature = new(key, b"sender|receiver|timestamp|" + sealed, "sha256").hexdigest()
        data = dumps({**env, "payload": sealed.hex(), "signature": signature},
                     separators=(",", ":")).encode()
        return frame_cipher.encrypt(nonce, data, None) if frames_sealed else data

    def incoming(data: bytes) -> dict:
        if frames_sealed:
            data = frame_cipher.decrypt(nonce, data, None)
        env = loads(data)
        sealed = bytes.fromhex(env["payload"])
        expected = new(key, b"sender|receiver|timestamp|" + sealed, "sha256").hexdigest()
        if not compare(expected, env["signature"]):
            raise AssertionError("bad signature")
        env["payload"] = loads(cipher.decrypt(nonce, sealed, b"header"))
        return env

    async def echo(reader, writer):
        try:
            while True:
                (size,) = struct.unpack(">I", await reader.readexactly(4))
                env = incoming(await reader.readexactly(size))
                body = outgoing(env)
                writer.write(struct.pack(">I", len(body)) + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def step():
        body = outgoing(envelope)
        writer.write(struct.pack(">I", len(body)) + body)
        await writer.drain()
        (size,) = struct.unpack(">I", await reader.readexactly(4))
        incoming(await reader.readexactly(size))

    async def teardown():
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()

    return step, teardown


async def channel_round_trips():
    host_identity, guest_identity = Identity.generate(), Identity.generate()

    async def echo(channel):
        while True:
            env = await channel.recv()
            await channel.send({**env.payload, "action": "echo"}, reply_to=env.id)

    server = await serve_channels(echo, host_identity, HOST, clock=time.time)
    port = server.sockets[0].getsockname()[1]
    channel = await connect_channel(f"tcp://127.0.0.1:{port}", guest_identity, GUEST,
                                    clock=time.time, expected_peer_key=host_identity.public_hex)

    async def step():
        sent = await channel.send(PAYLOAD)
        await channel.recv(expect_reply_to=sent.id)

    async def teardown():
        await channel.close()
        server.close()
        await server.wait_closed()

    return step, teardown


SLICE = 0.1  # seconds per turn when the round-trip variants take turns


async def round_trips(seconds: float, frame: bytes, envelope: dict) -> dict[str, Rate]:
    """The bare echo, both floors and the channel, taking turns in slices of SLICE seconds
    on one event loop until each had ``seconds``: load that comes and goes on a shared
    machine then falls on all four alike, and the ratios compare like with like."""
    variants = {"bare": await bare_echo(frame),
                "floor": await floor_echo(envelope, frames_sealed=False),
                "floor2": await floor_echo(envelope, frames_sealed=True),
                "channel": await channel_round_trips()}
    totals = {name: [0, 0.0, 0.0] for name in variants}
    for step, _ in variants.values():
        for _ in range(50):  # warm up each path
            await step()
    for _ in range(max(1, round(seconds / SLICE))):
        for name, (step, _) in variants.items():
            count, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
            while time.perf_counter() - wall0 < SLICE:
                await step()
                count += 1
            total = totals[name]
            total[0] += count
            total[1] += time.perf_counter() - wall0
            total[2] += time.process_time() - cpu0
    for _, teardown in variants.values():
        await teardown()
    return {name: Rate(count, wall, cpu) for name, (count, wall, cpu) in totals.items()}


def line(label: str, rate: Rate, base: Rate | None = None) -> str:
    text = f"  {label:<36} {rate.wall:>9,.0f} /s wall {rate.cpu:>9,.0f} /s CPU"
    if base is not None:
        text += f"   ratio {rate.wall / base.wall:.3f} wall, {rate.cpu / base.cpu:.3f} CPU"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run everything this many times, then print the median of each")
    args = parser.parse_args()

    frame = EnvelopeBuilder(GUEST, HOST, KEY, clock=time.time).build(PAYLOAD).to_bytes()
    envelope = json.loads(frame)
    runs: list[dict[str, Rate]] = []
    for number in range(1, max(1, args.repeat) + 1):
        rates = bench_sign_verify(args.seconds)
        rates.update(asyncio.run(round_trips(args.seconds, frame, envelope)))
        runs.append(rates)
        if args.repeat > 1:
            print(f"run {number}: round trips {rates['channel'].wall:,.0f} /s wall, "
                  f"bare echo {rates['bare'].wall:,.0f} /s wall, "
                  f"ratio {rates['channel'].wall / rates['bare'].wall:.3f}", flush=True)
    sv = {name: median_rate([run[name] for run in runs]) for name in runs[0]}
    if args.repeat > 1:
        print(f"median of {len(runs)} runs (ratios are between the medians)")
    print("sign+verify in one process")
    print(line("baseline: 2 bare hmac (sign+compare)", sv["baseline"]))
    print(line("sign_envelope + verify_signature", sv["sign_verify"], sv["baseline"]))
    print(line("build+bytes+ReceivePipeline.accept", sv["pipeline"], sv["baseline"]))
    print(f"round trips over loopback TCP ({len(frame)}-byte envelopes, both ends on one loop)")
    print(line("baseline: bare asyncio frame echo", sv["bare"]))
    print(line("floor: echo + JSON, HMAC, AEAD", sv["floor"], sv["bare"]))
    print(line("floor + frame AEAD", sv["floor2"], sv["bare"]))
    print(line("SecureChannel send + recv reply", sv["channel"], sv["bare"]))
    floor, floor2, channel = sv["floor"].cpu, sv["floor2"].cpu, sv["channel"].cpu
    print(f"SecureChannel costs {floor / channel:.2f}x the floor in CPU "
          f"({floor2 / channel:.2f}x the floor with frame sealing; goal <= 1.3x)")


if __name__ == "__main__":
    main()
