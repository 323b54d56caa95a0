"""The network driver over the wire's in-memory pair and over TCP between processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session, run_on_channel
from lingxi.session.record.verify import verify_state_dir
from lingxi.session.runner import load_protocol
from lingxi.wire.channel import SecureChannel
from lingxi.wire.handshake import client_handshake, server_handshake
from lingxi.wire.identity import Identity
from lingxi.wire.transport import memory_pair

HANG_GUARD = 30  # seconds; only stops a broken run from hanging the suite


async def _lines(items):
    for item in items:
        yield item
    yield None


@pytest.mark.parametrize("name", ["guess-number", "rock-paper-scissors", "hero-duel",
                                  "word-count", "chat"])
async def test_every_builtin_completes_over_the_memory_transport(name, tmp_path) -> None:
    kwargs = {}
    if name == "chat":
        kwargs = {"host_kwargs": {"inputs": _lines(["hi", "/quit"])},
                  "guest_kwargs": {"inputs": _lines(["hello"])}}
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol(name), seed=3, state_dir=tmp_path, config=SessionConfig(peer_timeout=5),
        **kwargs), HANG_GUARD)
    assert host.outcome.status == guest.outcome.status == "completed"
    assert host.receipts_verified and guest.receipts_verified
    assert host.head == guest.head
    for side in ("host", "guest"):
        assert verify_state_dir(tmp_path / side).ok
        events = (tmp_path / side / "events.jsonl").read_text().splitlines()
        assert json.loads(events[-1])["event"] == "receipts.exchanged"


async def _pair():
    a, b = memory_pair()
    ids = Identity.generate(), Identity.generate()
    from lingxi.wire import AgentEndpoint
    ends = [AgentEndpoint(i.agent_id, "t", "memory://x") for i in ids]
    gkeys, hkeys = await asyncio.gather(
        client_handshake(a, ids[0], ends[0], clock=time.time),
        server_handshake(b, ids[1], ends[1], clock=time.time))
    return (a, gkeys, ids[0]), (b, hkeys, ids[1])


async def test_a_silent_guest_ends_the_host_session_with_a_timeout(tmp_path) -> None:
    (a, gkeys, _), (b, hkeys, hid) = await _pair()
    silent = SecureChannel(a, gkeys, clock=time.time, heartbeat_interval=None,
                           peer_timeout=None)
    await silent.start()  # answers pings, never says anything
    host_channel = SecureChannel(b, hkeys, clock=time.time, heartbeat_interval=0.05,
                                 peer_timeout=5)
    result = await asyncio.wait_for(run_on_channel(
        load_protocol("rock-paper-scissors"), "host", host_channel, identity=hid,
        config=SessionConfig(peer_timeout=0.3), state_dir=tmp_path, receipt_timeout=0.2),
        HANG_GUARD)
    await silent.close()
    assert result.outcome.status == "aborted" and result.outcome.code == "session.timeout"
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert any(e["event"] == "violation" and e["code"] == "session.timeout" for e in events)


async def test_manual_decisions_arrive_through_session_decide(tmp_path) -> None:
    runner = CliRunner()

    async def answer() -> int:
        answered = 0
        snapshot = tmp_path / "guest" / "snapshot.json"
        while True:
            await asyncio.sleep(0.02)
            try:
                data = json.loads(snapshot.read_text())
            except (OSError, ValueError):
                continue
            if data.get("state") == "finished":
                return answered
            pending = data.get("pending_decision")
            if pending and pending["point_id"] != getattr(answer, "last", None):
                answer.last = pending["point_id"]
                assert pending["deadline"].endswith("Z")  # time left for the decider
                assert set(pending["view"]) == {"low", "high", "attempts_left"}
                low, high = pending["bounds"]
                result = runner.invoke(cli, ["session", "decide", "--state-dir",
                                             str(tmp_path / "guest"), "--decision",
                                             str((low + high) // 2)])
                assert result.exit_code == 0, result.output
                answered += 1

    helper = asyncio.ensure_future(answer())
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol("guess-number"), seed=1, state_dir=tmp_path,
        config=SessionConfig(peer_timeout=30, control_mode="human")), HANG_GUARD)
    answered = await asyncio.wait_for(helper, HANG_GUARD)
    assert guest.outcome.status == "completed" and answered >= 1
    assert guest.outcome.summary["attempts"] == answered
    events = [json.loads(x) for x in (tmp_path / "guest" / "events.jsonl").read_text()
              .splitlines()]
    assert sum(e["event"] == "decision.made" for e in events) == answered


def _held(folder: Path) -> int:
    """Hold a session folder's lock as its running process would (the liveness check)."""
    import fcntl

    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_decide_refuses_an_illegal_value(tmp_path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "snapshot.json").write_text(json.dumps({"pending_decision": {
        "point_id": "d1", "legal": ["rock", "paper"], "bounds": None}}))
    _held(folder)
    runner = CliRunner()
    bad = runner.invoke(cli, ["session", "decide", "--state-dir", str(folder),
                              "--decision", '"lizard"'])
    assert bad.exit_code == 1 and "decision.illegal" in bad.output
    good = runner.invoke(cli, ["session", "decide", "--state-dir", str(folder),
                               "--decision", '"rock"', "--json"])
    assert good.exit_code == 0
    queued = json.loads(Path(json.loads(good.output)["file"]).read_text())
    assert queued == {"point_id": "d1", "value": "rock"}


def test_tcp_session_between_two_processes(tmp_path) -> None:
    lingxi = str(Path(sys.executable).parent / "lingxi")
    env_host = {**os.environ, "LINGXI_HOME": str(tmp_path / "home-host")}
    env_guest = {**os.environ, "LINGXI_HOME": str(tmp_path / "home-guest")}
    host = subprocess.Popen(
        [lingxi, "host", "--protocol-dir", "hero-duel", "--endpoint", "tcp://127.0.0.1:0",
         "--state-dir", str(tmp_path / "host"), "--timeout", "10", "--accept-timeout", "20",
         "--json"], env=env_host, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = host.stderr.readline()
        endpoint = banner.strip().rsplit(" on ", 1)[1]
        guest = subprocess.run(
            [lingxi, "guest", "--endpoint", endpoint, "--state-dir", str(tmp_path / "guest"),
             "--timeout", "10", "--json"], env=env_guest, capture_output=True, text=True,
            timeout=HANG_GUARD)
        out, _ = host.communicate(timeout=HANG_GUARD)
    finally:
        host.kill()
    assert guest.returncode == 0, guest.stdout + guest.stderr
    assert host.returncode == 0, out
    g, h = json.loads(guest.stdout), json.loads(out)
    assert g["outcome"]["status"] == h["outcome"]["status"] == "completed"
    assert g["transcript_head"] == h["transcript_head"]
    for side in ("host", "guest"):
        verified = subprocess.run([lingxi, "session", "verify", str(tmp_path / side), "--json"],
                                  capture_output=True, text=True, env=env_host)
        assert verified.returncode == 0 and json.loads(verified.stdout)["ok"]


async def test_a_bad_handshake_does_not_stop_the_host(tmp_path) -> None:
    from lingxi.session.net import guest_session, host_session

    protocol = load_protocol("word-count")
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    refused = []
    host_task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", identity=Identity.generate(), state_dir=tmp_path / "h",
        config=SessionConfig(peer_timeout=5), on_listening=ready.set_result,
        on_refused=refused.append))
    endpoint = await asyncio.wait_for(ready, HANG_GUARD)
    port = int(endpoint.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"\x00\x00\x00\x05hello")  # a frame that is not an envelope
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.close()
    guest = await asyncio.wait_for(guest_session(
        None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
        config=SessionConfig(peer_timeout=5)), HANG_GUARD)
    host = await asyncio.wait_for(host_task, HANG_GUARD)
    assert refused and guest.outcome.ok and host.outcome.ok
    assert guest.receipts_verified and host.receipts_verified


async def test_guest_without_the_protocol_tells_the_host(tmp_path) -> None:
    from lingxi.errors import LingxiError
    from lingxi.session.net import guest_session, host_session

    protocol = load_protocol("word-count")
    protocol.spec.protocol_id = "ab" * 32  # a protocol no guest has
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    host_task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", identity=Identity.generate(), state_dir=tmp_path / "h",
        config=SessionConfig(peer_timeout=20), on_listening=ready.set_result,
        receipt_timeout=0.2))
    endpoint = await asyncio.wait_for(ready, HANG_GUARD)
    with pytest.raises(LingxiError) as info:
        await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                             state_dir=tmp_path / "g"), HANG_GUARD)
    assert info.value.code == "session.unknown_protocol"
    host = await asyncio.wait_for(host_task, HANG_GUARD)
    assert host.outcome.status == "aborted" and host.outcome.by == "peer"
    assert host.outcome.code == "session.unknown_protocol"


def test_decide_finds_the_waiting_session(lingxi_home) -> None:
    runner = CliRunner()
    none = runner.invoke(cli, ["session", "decide", "--decision", "1"])
    assert none.exit_code == 2 and "session.no_pending_decision" in none.output
    for name, pending in (("old-guest", None), ("live-guest", {"point_id": "d3", "legal": [],
                                                               "bounds": [1, 9]})):
        folder = lingxi_home / "sessions" / name
        folder.mkdir(parents=True)
        (folder / "snapshot.json").write_text(json.dumps({"state": "running",
                                                          "pending_decision": pending}))
        _held(folder)
        time.sleep(0.01)  # "live-guest" is the newer folder
    result = runner.invoke(cli, ["session", "decide", "--decision", "4", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["state_dir"].endswith("live-guest") and data["point_id"] == "d3"
    out_of_bounds = runner.invoke(cli, ["session", "decide", "--decision", "10"])
    assert out_of_bounds.exit_code == 1


async def test_garbage_from_the_peer_aborts_the_network_session(tmp_path) -> None:
    (a, gkeys, _), (b, hkeys, hid) = await _pair()
    host_channel = SecureChannel(b, hkeys, clock=time.time, heartbeat_interval=None,
                                 peer_timeout=None)
    guest = await SecureChannel(a, gkeys, clock=time.time, heartbeat_interval=None,
                                peer_timeout=None).start()
    task = asyncio.ensure_future(run_on_channel(
        load_protocol("guess-number"), "host", host_channel, identity=hid,
        config=SessionConfig(peer_timeout=10), state_dir=tmp_path, receipt_timeout=0.2))
    await guest.recv(timeout=5)  # the host's offer
    await a.send(guest.frame_for(b"{not json"))  # junk inside an authentic frame
    result = await asyncio.wait_for(task, HANG_GUARD)
    assert result.outcome.code == "envelope.malformed" and result.outcome.by == "local"
    abort = await guest.recv(timeout=5)
    assert abort.payload["action"] == "control.abort"
    assert abort.payload["reason"] == "envelope.malformed"


async def test_garbage_on_the_path_aborts_the_network_session(tmp_path) -> None:
    (a, gkeys, _), (b, hkeys, hid) = await _pair()
    host_channel = SecureChannel(b, hkeys, clock=time.time, heartbeat_interval=None,
                                 peer_timeout=None)
    task = asyncio.ensure_future(run_on_channel(
        load_protocol("guess-number"), "host", host_channel, identity=hid,
        config=SessionConfig(peer_timeout=10), state_dir=tmp_path, receipt_timeout=0.2))
    await a.recv(idle_timeout=5)  # the host's offer (a sealed frame)
    await a.send(b"{not json")  # bytes injected on the path: not a frame of the guest's
    result = await asyncio.wait_for(task, HANG_GUARD)
    assert result.outcome.code == "transport.frame_forged" and result.outcome.by == "local"
