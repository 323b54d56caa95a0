"""Direct first, relay when needed — the real commands on loopback: a registry process tied to
a nats-server, a host that posts, a guest that joins."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from relayhelpers import NatsServer, free_port, lingxi

HANG = 90


class World:
    def __init__(self, root: Path, processes) -> None:
        self.root = root
        self.nats_port = free_port()
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.registry = processes(root / "registry", "server", "--port", str(port),
                                  "--relay", f"nats://127.0.0.1:{self.nats_port}")
        self.registry.wait_for("registry on", 30)
        trust = httpx.get(f"{self.url}/v1/relay", timeout=10).json()["trust"]
        self.nats = NatsServer(root / "nats", trust, port=self.nats_port)
        self.processes = processes
        for name in ("host", "guest"):
            done = lingxi(root / name, "register", "--nickname", name, "--server", self.url)
            assert done.returncode == 0, done.stdout + done.stderr

    def host(self, *extra: str):
        process = self.processes(self.root / "host", "host", "--post", "--server", self.url,
                                 "--protocol-dir", "guess-number", "--accept-timeout", "60",
                                 "--control-mode", "autonomous", *extra)
        text = process.wait_for("lingxi join inv-", 30)
        invitation = text.split("lingxi join ")[-1].split()[0]
        return process, invitation

    def join(self, invitation: str, *extra: str):
        return lingxi(self.root / "guest", "join", invitation, "--server", self.url,
                      "--control-mode", "autonomous", "-q", *extra, timeout=HANG)

    def close(self) -> None:
        self.nats.kill()


@pytest.fixture
def world(tmp_path, processes):
    world = World(tmp_path, processes)
    yield world
    world.close()


def _events(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]


def _session_dir(home: Path, role: str) -> Path:
    (folder,) = list((home / "sessions").glob(f"*-{role}"))
    return folder


def test_a_host_that_cannot_be_reached_directly_is_met_through_the_relay(world):
    port = free_port()  # nothing listens here: the direct path fails
    host, invitation = world.host("--via", "relay", "--endpoint", f"tcp://127.0.0.1:{port}")
    joined = world.join(invitation)
    assert joined.returncode == 0, joined.stdout + joined.stderr
    assert "direct path failed (transport.connect_failed" in joined.stderr
    assert "path: relay" in joined.stderr and "(sealed)" in joined.stderr
    assert "peer receipt verified" in joined.stdout
    assert host.wait(HANG) == 0, host.text()
    assert "through the relay" in host.text()
    for role in ("host", "guest"):
        folder = _session_dir(world.root / role, role)
        path = next(e for e in _events(folder) if e["event"] == "wire.path")
        assert path["via"] == "relay" and path["sealed"] is True
        verified = lingxi(world.root / role, "session", "verify", str(folder))
        assert verified.returncode == 0, verified.stdout
    checked = lingxi(world.root / "guest", "registry", "verify", "--server", world.url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    session = httpx.get(f"{world.url}/v1/sessions", params={"status": "finished"}).json()
    assert session["items"] and session["items"][0]["verified"] is True


def test_a_reachable_host_is_met_directly(world):
    host, invitation = world.host("--endpoint", "tcp://127.0.0.1:0")
    joined = world.join(invitation)
    assert joined.returncode == 0, joined.stdout + joined.stderr
    assert "path: direct" in joined.stderr and "relay" not in joined.stderr
    assert host.wait(HANG) == 0
    path = next(e for e in _events(_session_dir(world.root / "guest", "guest"))
                if e["event"] == "wire.path")
    assert path["via"] == "direct"


def test_via_direct_fails_with_one_coded_line_when_the_host_cannot_be_reached(world):
    port = free_port()
    host, invitation = world.host("--via", "relay", "--endpoint", f"tcp://127.0.0.1:{port}")
    started = time.monotonic()
    joined = world.join(invitation, "--via", "direct")
    assert joined.returncode == 1
    lines = [line for line in joined.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: transport.connect_failed: ")
    assert time.monotonic() - started < 30
    host.stop()


def test_a_relay_only_host_needs_an_endpoint_for_its_invitation(world):
    done = lingxi(world.root / "host", "host", "--post", "--server", world.url,
                  "--protocol-dir", "guess-number", "--via", "relay",
                  "--endpoint", "tcp://127.0.0.1:0")
    assert done.returncode == 2 and "input.relay_needs_endpoint" in done.stderr
