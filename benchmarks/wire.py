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
  length-prefixed frames of the same size.

Rates are given per wall-clock second and per CPU second of this process; the
machine is shared, so the CPU-second figure is the steadier "one core" number.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import statistics
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

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


async def timed_loop(step, seconds: float) -> Rate:
    count, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        await step()
        count += 1
    return Rate(count, time.perf_counter() - wall0, time.process_time() - cpu0)


async def bare_echo(seconds: float, frame: bytes) -> Rate:
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

    rate = await timed_loop(step, seconds)
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    return rate


async def channel_round_trips(seconds: float) -> Rate:
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

    rate = await timed_loop(step, seconds)
    await channel.close()
    server.close()
    await server.wait_closed()
    return rate


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
    runs: list[dict[str, Rate]] = []
    for number in range(1, max(1, args.repeat) + 1):
        rates = bench_sign_verify(args.seconds)
        rates["bare"] = asyncio.run(bare_echo(args.seconds, frame))
        rates["channel"] = asyncio.run(channel_round_trips(args.seconds))
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
    print(line("SecureChannel send + recv reply", sv["channel"], sv["bare"]))


if __name__ == "__main__":
    main()
