"""Hostile hosts and guests over real loopback TCP, at the session layer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lingxi.errors import LingxiError
from lingxi.session import SessionConfig, load_protocol
from lingxi.session.conductor import conductor as conductor_module
from lingxi.session.net import guest_session, host_session
from lingxi.wire.identity import Identity

HANG_GUARD = 30  # seconds; only stops a broken run from hanging the suite


async def _host(protocol, tmp_path: Path, **kwargs):
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", identity=Identity.generate(), state_dir=tmp_path / "h",
        config=SessionConfig(peer_timeout=5), on_listening=ready.set_result,
        receipt_timeout=1.0, **kwargs))
    return task, await asyncio.wait_for(ready, HANG_GUARD)


@pytest.mark.parametrize("shape", ["absolute", "dotdot"])
async def test_a_host_cannot_make_the_guest_load_code_from_a_path(tmp_path, monkeypatch,
                                                                  shape) -> None:
    """Regression: an offered id like AAAAAAAA/tmp/x made the guest import /tmp/x/hooks.py."""
    monkeypatch.setenv("LINGXI_HOME", str(tmp_path / "home"))
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "ran"
    (evil / "spec.json").write_text((load_protocol("word-count").folder / "spec.json")
                                    .read_text())
    (evil / "hooks.py").write_text(f"open({str(marker)!r}, 'w').write('pwned')\n")
    protocol = load_protocol("word-count")
    protocol.spec.protocol_id = ("AAAAAAAA" + str(evil) if shape == "absolute"
                                 else "abcdefab/../../../../../../" + str(evil).lstrip("/"))
    task, endpoint = await _host(protocol, tmp_path)
    with pytest.raises(LingxiError) as info:
        await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                             state_dir=tmp_path / "g"), HANG_GUARD)
    assert info.value.code == "protocol.bad_id"
    assert not marker.exists()
    host = await asyncio.wait_for(task, HANG_GUARD)
    assert host.outcome.code == "protocol.bad_id" and host.outcome.by == "peer"


async def test_every_unknown_id_gets_the_same_refusal(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LINGXI_HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "protocols" / "abababab").mkdir(parents=True)  # a folder that exists
    codes = []
    for pid in ("ab" * 32, "cd" * 32):
        protocol = load_protocol("word-count")
        protocol.spec.protocol_id = pid
        task, endpoint = await _host(protocol, tmp_path / pid[:4])
        with pytest.raises(LingxiError) as info:
            await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                                 state_dir=tmp_path / pid[:4] / "g"), HANG_GUARD)
        codes.append((info.value.code, info.value.message.replace(pid[:16], "<id>")))
        await asyncio.wait_for(task, HANG_GUARD)
    assert codes[0] == codes[1] and codes[0][0] == "session.unknown_protocol"


async def test_a_guest_that_joined_for_one_protocol_refuses_another(tmp_path) -> None:
    task, endpoint = await _host(load_protocol("word-count"), tmp_path)
    with pytest.raises(LingxiError) as info:
        await asyncio.wait_for(guest_session(
            None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
            expected_protocol_id=load_protocol("chat").spec.protocol_id), HANG_GUARD)
    assert info.value.code == "session.protocol_mismatch"
    host = await asyncio.wait_for(task, HANG_GUARD)
    assert host.outcome.code == "session.protocol_mismatch"


@pytest.mark.parametrize("liar", ["host", "guest"])
@pytest.mark.parametrize("field,value", [("chains", [1]), ("count", "x"), ("head", 7)])
async def test_a_malformed_peer_receipt_is_reported_and_the_honest_receipt_kept(
        tmp_path, monkeypatch, liar, field, value) -> None:
    """Regression: AttributeError in the receipt exchange; no outcome, no local receipts.json."""
    honest_sign = conductor_module.sign_receipt

    def sign(body, identity):
        receipt = honest_sign(body, identity)
        if body["role"] != liar:
            return receipt
        if field == "count":
            receipt["chains"] = {**receipt["chains"],
                                 "guest_to_host": {"count": value, "head": "0" * 64}}
        else:
            receipt[field] = value
        return receipt

    monkeypatch.setattr(conductor_module, "sign_receipt", sign)
    task, endpoint = await _host(load_protocol("word-count"), tmp_path)
    guest = await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                                 state_dir=tmp_path / "g"), HANG_GUARD)
    host = await asyncio.wait_for(task, HANG_GUARD)
    honest = guest if liar == "host" else host
    assert honest.outcome.status == "completed"
    assert honest.peer_problems and honest.peer_problems[0].startswith("receipt.malformed")
    record = json.loads((honest.state_dir / "receipts.json").read_text())
    assert record["local"]["signature"] and record["peer_problems"] == honest.peer_problems


async def test_an_idle_connection_does_not_lock_out_the_guest(tmp_path) -> None:
    """Regression: one idle TCP connection closed every other guest."""
    task, endpoint = await _host(load_protocol("word-count"), tmp_path)
    port = int(endpoint.rsplit(":", 1)[1])
    idle = await asyncio.open_connection("127.0.0.1", port)  # connects, never speaks
    guest = await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                                 state_dir=tmp_path / "g"), HANG_GUARD)
    host = await asyncio.wait_for(task, HANG_GUARD)
    idle[1].close()
    assert guest.outcome.ok and host.outcome.ok and guest.receipts_verified


async def test_a_second_guest_is_told_the_host_is_busy(tmp_path) -> None:
    gate = asyncio.Event()

    async def slow_decider(request):
        await gate.wait()
        return None

    task, endpoint = await _host(load_protocol("guess-number"), tmp_path)
    first = asyncio.ensure_future(guest_session(
        None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g1",
        config=SessionConfig(peer_timeout=5, control_mode="human"), decider=slow_decider))
    await asyncio.sleep(0.5)
    with pytest.raises(LingxiError) as info:
        await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                             state_dir=tmp_path / "g2"), HANG_GUARD)
    assert info.value.code == "transport.busy"
    gate.set()
    first.cancel()
    task.cancel()
    await asyncio.gather(first, task, return_exceptions=True)


def test_a_peers_abort_text_cannot_forge_terminal_lines() -> None:
    """Regression: a peer's abort reason printed raw let it forge a 'session completed' line."""
    from click.testing import CliRunner

    from lingxi.cli import participate

    forged = "bye\r\x1b[2K\nsession completed (peer receipt verified)\x1b]0;owned\x07"

    class Result:
        outcome = type("O", (), {"status": "aborted", "code": "x\x1b[31m", "by": "peer",
                                 "reason": forged, "summary": {}, "ok": False})()
        receipts_verified = False
        peer_problems = ["no receipt from the peer"]

        def to_dict(self):
            return {"transcript_head": "h", "receipt_hash": None, "state_dir": "s"}

    runner = CliRunner()

    @__import__("click").command()
    def show() -> None:
        participate._report(Result(), False)

    out = runner.invoke(show).output
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    first = out.splitlines()[0]
    assert first.startswith("session aborted: the peer aborted") and "«" in first
    assert not any(line.startswith("session completed") for line in out.splitlines())


async def test_a_flooding_chat_peer_over_tcp_is_stopped_at_the_byte_limit(tmp_path) -> None:
    """Regression: 20,000 long chat lines grew the host from 35 to 186 MB with no limit."""
    lines = [f"{'x' * 1900}{i}" for i in range(400)] + ["/quit"]

    async def flood():
        for line in lines:
            yield line
        yield None

    config = SessionConfig(peer_timeout=5, max_bytes=150_000)
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(host_session(
        load_protocol("chat"), "tcp://127.0.0.1:0", identity=Identity.generate(),
        state_dir=tmp_path / "h", config=config, on_listening=ready.set_result,
        receipt_timeout=1.0))
    endpoint = await asyncio.wait_for(ready, HANG_GUARD)
    guest = await asyncio.wait_for(guest_session(
        None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g", config=config,
        inputs=flood()), HANG_GUARD)
    host = await asyncio.wait_for(task, HANG_GUARD)
    assert host.outcome.code == "session.too_large" and host.outcome.by == "local"
    assert guest.outcome.status == "aborted"
    assert host.outcome.messages < 120


class _OfferRewriter:
    """A hostile host: its offer is changed after signing, or signed an hour ago."""

    cheated = None

    def __init__(self, how: str) -> None:
        self.how = how

    def outgoing(self, side, payload, correlation_id):
        return [(payload, correlation_id)]

    def wire(self, side, envelope):
        if envelope["payload"].get("action") != "session.offer":
            return [envelope]
        if self.how == "changed":
            changed = json.loads(json.dumps(envelope))
            changed["payload"]["options"] = {"best_of": 9, "termination": "fixed_rounds"}
            return [changed]
        builder = side.codec.builder
        clock = builder.clock
        builder.clock = lambda: clock() - 3600
        try:
            stale = builder.build(envelope["payload"], encrypt=True)
        finally:
            builder.clock = clock
        return [stale.to_bytes()]


@pytest.mark.parametrize("how,code", [("changed", "envelope.bad_signature"),
                                      ("stale", "envelope.stale")])
async def test_a_refused_offer_aborts_with_the_wires_code_and_is_recorded(tmp_path, how,
                                                                         code) -> None:
    """Regression (17.8): the guest said session.no_offer and told the host out_of_phase."""
    task, endpoint = await _host(load_protocol("rock-paper-scissors"), tmp_path,
                                 adversary=_OfferRewriter(how))
    with pytest.raises(LingxiError) as refused:
        await asyncio.wait_for(guest_session(None, endpoint, identity=Identity.generate(),
                                             state_dir=tmp_path / "g"), HANG_GUARD)
    assert refused.value.code == code
    host = await asyncio.wait_for(task, HANG_GUARD)
    assert host.outcome.status == "aborted" and host.outcome.code == code
    assert host.outcome.by == "peer"
    events = [json.loads(line) for line in (tmp_path / "g" / "events.jsonl").read_text()
              .splitlines()]
    assert [e["code"] for e in events if e["event"] == "offer.rejected"] == [code]
