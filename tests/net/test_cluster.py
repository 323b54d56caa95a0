"""Past one machine: two clustered nats-server nodes, two registry processes on one
PostgreSQL database, the host on node 1 and the guest on node 2 — and node 1 dies
mid-session."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from relayhelpers import NatsServer, free_port, fresh_postgres_database, lingxi

HANG = 90


def _transcript_counts(folder):
    counts = {"host_to_guest": 0, "guest_to_host": 0}
    for line in (folder / "transcript.jsonl").read_text().splitlines():
        counts[json.loads(line)["direction"]] += 1
    return counts


@pytest.mark.postgres
@pytest.mark.slow  # a stress case: two relay nodes, one killed mid-session (90 s of a worker)
def test_a_session_rides_through_the_death_of_its_relay_node(tmp_path, processes):
    url, drop = fresh_postgres_database()
    nodes: list[NatsServer] = []
    registry_a = registry_b = None
    try:
        n1, n2 = free_port(), free_port()
        pa, pb = free_port(), free_port()
        key = ("--key-file", str(tmp_path / "server.key"))  # one registry, one key
        registry_a = processes(tmp_path / "reg-a", "server", "--port", str(pa), *key,
                               "--database-url", url, "--relay", f"nats://127.0.0.1:{n1}",
                               "--relay", f"nats://127.0.0.1:{n2}")
        registry_a.wait_for("registry on", 30)
        registry_b = processes(tmp_path / "reg-b", "server", "--port", str(pb), *key,
                               "--database-url", url, "--relay", f"nats://127.0.0.1:{n2}",
                               "--relay", f"nats://127.0.0.1:{n1}")
        registry_b.wait_for("registry on", 30)
        server_a, server_b = f"http://127.0.0.1:{pa}", f"http://127.0.0.1:{pb}"
        trust_a = httpx.get(f"{server_a}/v1/relay", timeout=10).json()["trust"]
        trust_b = httpx.get(f"{server_b}/v1/relay", timeout=10).json()["trust"]
        assert trust_a["account"] == trust_b["account"]  # one account on one database
        c1, c2 = free_port(), free_port()
        node1 = NatsServer(tmp_path / "node1", trust_a, port=n1, cluster_port=c1,
                           routes=(f"nats://127.0.0.1:{c2}",))
        node2 = NatsServer(tmp_path / "node2", trust_a, port=n2, cluster_port=c2,
                           routes=(f"nats://127.0.0.1:{c1}",))
        nodes += [node1, node2]
        deadline = time.monotonic() + 20
        while not all("Route connection created" in n.log.read_text() for n in nodes):
            assert time.monotonic() < deadline, "the nodes did not form a cluster"
            time.sleep(0.1)
        for name, server in (("host", server_a), ("guest", server_b)):
            done = lingxi(tmp_path / name, "register", "--nickname", name, "--server", server)
            assert done.returncode == 0, done.stdout + done.stderr

        host = processes(tmp_path / "host", "host", "--post", "--server", server_a,
                         "--protocol-dir", "chat", "--via", "relay", "--endpoint",
                         f"tcp://127.0.0.1:{free_port()}", "--input", "-",
                         "--accept-timeout", "60", "--idle-timeout", "60", stdin=True)
        invitation = host.wait_for("lingxi join inv-", 30).split("lingxi join ")[-1].split()[0]
        guest = processes(tmp_path / "guest", "join", invitation, "--server", server_b,
                          "--input", "-", "--idle-timeout", "60", stdin=True)
        guest.wait_for("path: relay", 30)
        host.wait_for("session started", 30)
        guest.say("hello before")
        host.wait_for("hello before", 20)
        host.say("hi before")
        guest.wait_for("hi before", 20)

        node1.kill()  # the host's node dies mid-session
        host.wait_for("relay: reconnected to nats://127.0.0.1:" + str(n2), 30)
        host.say("after the crash")
        guest.wait_for("after the crash", 30)
        guest.say("still here")
        host.wait_for("still here", 30)
        host.say("/quit")
        assert host.wait(HANG) == 0, host.text()
        assert guest.wait(HANG) == 0, guest.text()
        for process in (host, guest):
            assert "peer receipt verified" in process.text(), process.text()
            assert process.count("after the crash") == 1  # shown once: nothing came twice

        (host_dir,) = list((tmp_path / "host" / "sessions").glob("*-host"))
        (guest_dir,) = list((tmp_path / "guest" / "sessions").glob("*-guest"))
        assert _transcript_counts(host_dir) == _transcript_counts(guest_dir)
        for home, folder in ((tmp_path / "host", host_dir), (tmp_path / "guest", guest_dir)):
            verified = lingxi(home, "session", "verify", str(folder))
            assert verified.returncode == 0, verified.stdout
        finished = httpx.get(f"{server_b}/v1/sessions", params={"status": "finished"}).json()
        assert finished["items"] and finished["items"][0]["verified"] is True
    finally:
        for node in nodes:
            node.kill()
        for registry in (registry_a, registry_b):
            if registry is not None:
                registry.stop()
        drop()
