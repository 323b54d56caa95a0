"""Issue 23: the relay as a transport for group entries, every seat a separate process.

Each member reaches the host through its own relay link (a credential is pairwise); the
log, the sequencer and the verifier are those of TCP. The nats-server is the test's own,
on a free loopback port (tests/net's fixture), trusting a fresh relay key set.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lingxi.group import verify_records
from lingxi.groupnet.relay import link_session_id
from net.relayhelpers import NatsServer, credential

LINGXI = [sys.executable, "-m", "lingxi"]


def _env(tmp_path: Path, who: str) -> dict[str, str]:
    return {**os.environ, "LINGXI_HOME": str(tmp_path / f"home-{who}")}


class Spy(threading.Thread):
    """Someone on the relay who reads one link's two subjects (as the relay operator can)."""

    def __init__(self, keys, relay: NatsServer, session_id: str) -> None:
        super().__init__(daemon=True)
        self.credentials = [credential(keys, [relay.url], role, session_id)
                            for role in ("host", "guest")]
        self.seen: list[bytes] = []
        self.ready, self.stop = threading.Event(), threading.Event()

    def run(self) -> None:
        asyncio.run(self._listen())

    async def _listen(self) -> None:
        from lingxi.wire.relay_link import RelayLink

        links = [await RelayLink(c, on_data=self.seen.append).open() for c in self.credentials]
        self.ready.set()
        while not self.stop.is_set():
            await asyncio.sleep(0.05)
        for link in links:
            await link.close()


def _mint(tmp_path: Path, keys, relay: NatsServer, seats: int, *extra: str) -> Path:
    seeds = tmp_path / "relay-seeds.json"
    seeds.write_text(json.dumps(keys.to_seeds()))
    seeds.chmod(0o600)
    out = tmp_path / "table"
    done = subprocess.run([*LINGXI, "group", "relay-credentials", "--relay-seeds", str(seeds),
                           "--relay", relay.url, "--seats", str(seats), "--out", str(out),
                           "--json", *extra], env=_env(tmp_path, "mint"), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["files"]) == 2 * (seats - 1)
    assert all((out / f).stat().st_mode & 0o077 == 0 for f in os.listdir(out))
    (out / "group_id").write_text(json.loads(done.stdout)["group_id"])
    return out


def _host(tmp_path: Path, table: Path, protocol: str, seats: int, *extra: str):
    creds = [a for s in range(1, seats) for a in ("--relay-credential",
                                                  str(table / f"host-seat{s}.json"))]
    host = subprocess.Popen([*LINGXI, "group", "host", protocol, "--seats", str(seats),
                             "--via", "relay", *creds, "--record", str(tmp_path / "r0.json"),
                             "--json", *extra], env=_env(tmp_path, "0"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert host.stderr is not None
    line = host.stderr.readline()
    assert "group host on relay nats://127.0.0.1:" in line, line
    return host


def _join(tmp_path: Path, table: Path, protocol: str, seat: int, *extra: str):
    return subprocess.Popen([*LINGXI, "group", "join", "--via", "relay", "--relay-credential",
                             str(table / f"seat{seat}.json"), "--protocol", protocol, "--seat",
                             str(seat), "--record", str(tmp_path / f"r{seat}.json"), "--json",
                             *extra], env=_env(tmp_path, str(seat)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(("protocol", "seats"), [("holdem", 4), ("group-vote", 5)])
def test_every_seat_a_process_over_the_relay_ends_with_the_same_verified_record(
        tmp_path, relay_keys, nats_servers, protocol, seats) -> None:
    relay = nats_servers(relay_keys)
    table = _mint(tmp_path, relay_keys, relay, seats)
    spy = Spy(relay_keys, relay, link_session_id((table / "group_id").read_text(), 2))
    spy.start()
    assert spy.ready.wait(20)
    host = _host(tmp_path, table, protocol, seats)
    members = [_join(tmp_path, table, protocol, seat) for seat in range(1, seats)]
    outputs = []
    try:
        for proc in [host, *members]:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, (out, err)
            outputs.append(json.loads(out))
    finally:
        spy.stop.set()
        spy.join(10)
    assert all(o["ok"] and o["record_verified"] for o in outputs)
    assert len({o["head"] for o in outputs}) == 1
    assert all(o["result"] == outputs[0]["result"] for o in outputs)
    if protocol == "holdem":
        assert sum(outputs[0]["result"]["delta"]) == 0
    else:
        assert sum(outputs[0]["result"]["counts"].values()) == seats
    records = [json.loads((tmp_path / f"r{s}.json").read_text()) for s in range(seats)]
    verdict = verify_records(records)  # a third party with every member's record: no fork
    assert verdict.ok and all(m["receipt"] for m in verdict.members)
    assert len({m["key"] for m in verdict.members}) == seats
    # seat 2's link carried the whole log, but the relay saw sealed frames only: after the
    # handshake (identity keys in clear, as in any session) no entry, move or signature
    seen = b"".join(spy.seen)
    assert len(spy.seen) > len(records[2]["entries"])
    assert b"relay://member" in seen  # the handshake went through this spy's subjects
    sig = records[2]["entries"][-1]["sig"].encode()
    for clear in (b"group_frame", b"hp_shuffle", b"hp_bet", b"vote_commit", b"motion",
                  b"group:", b'"entry"', sig):
        assert clear not in seen, clear


def test_relay_credentials_are_checked_before_anything_is_sent(
        tmp_path, relay_keys, nats_servers) -> None:
    relay = nats_servers(relay_keys)
    table = _mint(tmp_path, relay_keys, relay, 2, "--ttl", "30")
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*LINGXI, "group", *args], env=_env(tmp_path, "x"),
                              capture_output=True, text=True, timeout=60)
    wrong_role = run("join", "--via", "relay", "--relay-credential",
                     str(table / "host-seat1.json"), "--protocol", "holdem", "--seat", "1")
    assert wrong_role.returncode == 2 and "group.bad_credential" in wrong_role.stderr
    too_few = run("host", "holdem", "--seats", "3", "--via", "relay", "--relay-credential",
                  str(table / "host-seat1.json"))
    assert too_few.returncode == 2 and "group.bad_credential" in too_few.stderr
    junk = tmp_path / "junk.json"
    junk.write_text('{"format": "lingxi.relay-credential/1", "user_seed": "nope"}')
    bad = run("join", "--via", "relay", "--relay-credential", str(junk), "--protocol",
              "holdem", "--seat", "1")
    assert bad.returncode == 2 and "group.bad_credential" in bad.stderr
    endpoint_too = run("join", "tcp://127.0.0.1:9", "--via", "relay", "--relay-credential",
                       str(table / "seat1.json"), "--protocol", "holdem", "--seat", "1")
    assert endpoint_too.returncode == 2
    for result in (wrong_role, too_few, bad, endpoint_too):
        assert "Traceback" not in result.stderr
    expired = json.loads((table / "seat1.json").read_text())
    expired["expires_at"] = 1
    (tmp_path / "old.json").write_text(json.dumps(expired))
    old = run("join", "--via", "relay", "--relay-credential", str(tmp_path / "old.json"),
              "--protocol", "holdem", "--seat", "1")
    assert old.returncode == 2 and "group.credential_expired" in old.stderr


@pytest.mark.parametrize("forged", ["another account", "another link"])
def test_a_member_whose_credential_the_relay_refuses_fails_in_one_line(
        tmp_path, relay_keys, nats_servers, forged) -> None:
    from lingxi.registry.models.relay import RelayKeys

    relay = nats_servers(relay_keys)
    signer = RelayKeys.generate() if forged == "another account" else relay_keys
    table = _mint(tmp_path, signer, relay, 2)
    if forged == "another link":  # a valid credential, listening on another link's subject
        doc = json.loads((table / "seat1.json").read_text())
        doc["receive_subject"] = doc["receive_subject"].replace("-s1.", "-s9.")
        (table / "seat1.json").write_text(json.dumps(doc))
    member = _join(tmp_path, table, "holdem", 1, "--timeout", "5")
    out, err = member.communicate(timeout=120)
    assert member.returncode == 1, (out, err)
    # the server refuses the connection, or drops the subscription the JWT does not allow
    # (then no host ever answers on it); either way one coded line, never another link
    assert json.loads(out)["error"]["code"] in (
        ("transport.relay_refused",) if forged == "another account" else
        ("transport.relay_refused", "transport.relay_no_answer"))
    assert "Traceback" not in err


def _identity(tmp_path: Path, who: str) -> str:
    done = subprocess.run([*LINGXI, "identity", "init", "--json"], env=_env(tmp_path, who),
                          capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout)["public_key"]


def test_a_pinned_host_key_admits_that_host_only(tmp_path, relay_keys,
                                                 nats_servers) -> None:
    relay = nats_servers(relay_keys)
    table = _mint(tmp_path, relay_keys, relay, 2)
    real = _identity(tmp_path, "0")
    host = _host(tmp_path, table, "holdem", 2, "--timeout", "20")
    other = _join(tmp_path, table, "holdem", 1, "--host-key", "ab" * 32, "--timeout", "10")
    out, err = other.communicate(timeout=120)
    assert other.returncode != 0 and json.loads(out)["error"]["code"] == \
        "handshake.identity_mismatch", (out, err)
    member = _join(tmp_path, table, "holdem", 1, "--host-key", real)
    for proc in (member, host):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (out, err)
    assert json.loads((tmp_path / "r1.json").read_text())["entries"][0]["sender"] == real



def test_a_member_killed_mid_hand_over_the_relay_forfeits_and_only_it_pays(
        tmp_path, relay_keys, nats_servers) -> None:
    import signal

    relay = nats_servers(relay_keys)
    table = _mint(tmp_path, relay_keys, relay, 3)
    host = _host(tmp_path, table, "holdem", 3, "--timeout", "10")
    members = [_join(tmp_path, table, "holdem", seat) for seat in (1, 2)]
    assert members[1].stderr is not None
    assert "joined group" in members[1].stderr.readline()
    members[1].send_signal(signal.SIGKILL)  # seat 2 vanishes: its link goes silent
    out, err = host.communicate(timeout=180)
    members[0].communicate(timeout=60)
    members[1].wait(timeout=10)
    result = json.loads(out)["result"]
    assert result["kind"] == "forfeit" and result["culprit_seat"] == 2, (out, err)
    assert all(d >= 0 for s, d in enumerate(result["delta"]) if s != 2)
    assert verify_records([json.loads((tmp_path / "r0.json").read_text())]).ok


async def test_hostile_frames_through_a_sealed_link_are_refused_and_the_group_plays_on(
        relay_keys, nats_servers) -> None:
    """A member's link is sealed, not trusted: what comes through it is checked like TCP."""
    from lingxi.contract import load_spec
    from lingxi.group.agents import agent_for
    from lingxi.group.keys import Signer
    from lingxi.groupnet.relay import host_over_relay, join_over_relay
    from lingxi.groupnet.runtime import GroupHost
    from lingxi.protocols.catalogue import resolve_folder
    from lingxi.wire.connection import open_channel
    from lingxi.wire.errors import TransportError
    from lingxi.wire.identity import Identity
    from lingxi.wire.relay_link import RelayLink
    from lingxi.wire.relay_transport import open_to_host

    relay = nats_servers(relay_keys)
    spec = load_spec(resolve_folder("group-vote"))
    cred = {(role, seat): credential(relay_keys, [relay.url], role, link_session_id("g", seat))
            for role in ("host", "guest") for seat in (1, 2)}
    seed = os.urandom(32)
    host = GroupHost(spec, 3, Signer(seed), agent_for(spec, 0, os.urandom), group_id="g",
                     timeout=30)
    hosting = asyncio.ensure_future(host_over_relay(host, [cred["host", 1], cred["host", 2]],
                                                    Identity.from_seed(seed)))

    async def hostile(*payloads: dict) -> list[dict]:
        """Open link 1, send ``payloads`` through the sealed channel; what came back."""
        link = await RelayLink(cred["guest", 1]).open()
        try:
            channel = await open_channel(await open_to_host(link, timeout=20),
                                         Identity.generate(), None)
            got = [(await channel.recv(timeout=30)).payload]  # the backlog: the open entry
            for payload in payloads:
                await channel.send(payload)
            with pytest.raises(TransportError) as ended:
                while True:
                    got.append((await channel.recv(timeout=30)).payload)
            assert ended.value.code == "transport.closed"  # the host ended it (no time-out)
            return got
        finally:
            await link.close()

    first = await hostile({"action": "not_a_group_frame"})
    entry = first[0]["frame"]["envelope"]
    assert entry["type"] == "group:open" and entry["payload"]["entry"]["seq"] == 0
    forged = json.loads(json.dumps(entry))
    forged["payload"]["entry"]["body"]["seats"] = {"min": 2, "max": 16}
    answers = await hostile({"action": "group_frame", "frame": {"t": "submit",
                                                                "envelope": forged}},
                            {"action": "group_frame", "frame": {"t": "x" * 300_000}})
    refused = [a["frame"] for a in answers if a.get("frame", {}).get("t") == "refused"]
    assert refused and refused[0]["code"] in ("group.bad_signature", "group.stale")
    outcomes = await asyncio.gather(*(
        join_over_relay(spec, cred["guest", seat], seat, Signer(os.urandom(32)),
                        Identity.generate(), agent_for(spec, seat, os.urandom), timeout=30)
        for seat in (1, 2)), hosting)
    records = [o.record for o in outcomes]
    assert all(o.problem is None for o in outcomes)
    assert verify_records(records).ok and outcomes[0].result == outcomes[2].result
