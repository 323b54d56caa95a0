"""Two agents on different networks, each behind a NAT, meet and play through the relay.

The topology (tests/net/nattopology.py) is the test's own: namespaces and veths joined to
nothing outside, nftables masquerade on each NAT, all removed at the end.
"""

from __future__ import annotations

import time

import pytest
from nattopology import PUBLIC, nat_topology
from relayhelpers import lingxi, nats_server_binary

HANG = 120


def _registered(home, ns, server, name) -> None:
    done = lingxi(home, "register", "--nickname", name, "--server", server, netns=ns)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow  # two NAT namespaces, a registry, a relay and two agents: 2 min of a worker
def test_host_and_guest_behind_nats_meet_through_the_relay(tmp_path, processes):
    nats_server_binary()  # skip (fail under CI) without Debian's nats-server
    with nat_topology() as net:
        ns = net.ns
        server = f"http://{PUBLIC}:8470"
        relay = f"nats://{PUBLIC}:4222"
        registry = processes(tmp_path / "registry", "server", "--host", "0.0.0.0",
                             "--relay", relay, netns=ns["pub"])
        registry.wait_for("registry on", 30)
        nats = processes(tmp_path / "relay", "relay", "serve", "--listen", "0.0.0.0:4222",
                         "--server", server, netns=ns["pub"])
        nats.wait_for("relay on nats://", 30)
        _registered(tmp_path / "host", ns["hosta"], server, "alice")
        _registered(tmp_path / "guest", ns["guestb"], server, "bob")

        host = processes(tmp_path / "host", "host", "--post", "--server", server,
                         "--endpoint", "tcp://0.0.0.0:0", "--protocol-dir", "guess-number",
                         "--control-mode", "autonomous", "--accept-timeout", "90",
                         netns=ns["hosta"])
        text = host.wait_for("lingxi join inv-", 30)
        invitation = text.split("lingxi join ")[-1].split()[0]
        posted = lingxi(tmp_path / "guest", "browse", "--server", server, "--json",
                        netns=ns["guestb"])
        endpoint = next(i["endpoint"] for i in __import__("json").loads(posted.stdout)["items"]
                        if i["invitation_id"] == invitation)
        assert endpoint.startswith("tcp://10.1.0.2:")  # the host's own LAN address

        # from LAN B the host's address cannot be reached: the NAT, and no route
        port = endpoint.rsplit(":", 1)[1]
        probe = net.exec("guestb", "python3", "-c",
                         "import socket,sys;s=socket.socket();s.settimeout(2)\n"
                         f"try:\n s.connect(('10.1.0.2',{port}));print('reached')\n"
                         "except OSError as e:\n print('unreachable',e)", check=False)
        assert "unreachable" in probe.stdout, probe.stdout + probe.stderr

        started = time.monotonic()
        joined = lingxi(tmp_path / "guest", "join", invitation, "--server", server,
                        "--control-mode", "autonomous", "-q", netns=ns["guestb"], timeout=HANG)
        assert joined.returncode == 0, joined.stdout + joined.stderr
        assert "direct path failed" in joined.stderr
        assert "path: relay" in joined.stderr
        assert "peer receipt verified" in joined.stdout
        assert host.wait(HANG) == 0, host.text()
        assert "peer receipt verified" in host.text()
        assert time.monotonic() - started < HANG

        for home, role in ((tmp_path / "host", "host"), (tmp_path / "guest", "guest")):
            (folder,) = list((home / "sessions").glob(f"*-{role}"))
            checked = lingxi(home, "session", "verify", str(folder))
            assert checked.returncode == 0, checked.stdout
        log = lingxi(tmp_path / "guest", "registry", "verify", "--server", server,
                     netns=ns["guestb"])
        assert log.returncode == 0, log.stdout + log.stderr
        # lingxi doctor from behind NAT A: the relay works, direct reachability does not
        doctor = lingxi(tmp_path / "host", "doctor", "--server", server, "--json",
                        netns=ns["hosta"])
        checks = {c["name"]: c for c in __import__("json").loads(doctor.stdout)["checks"]}
        assert checks["identity"]["status"] == "ok"
        assert checks["registry"]["status"] == "ok", checks["registry"]
        assert checks["relay"]["status"] == "ok", checks["relay"]
        assert checks["direct"]["status"] == "warn" and "203.0.113.2" in checks["direct"][
            "detail"] and "relay" in checks["direct"]["detail"]
        assert checks["clock"]["status"] == "ok"
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert net.existing() == []  # every namespace (veths, nftables tables) is gone
    assert net.pids() == []


def test_the_topology_is_removed_when_the_body_fails(tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        with nat_topology() as net:
            assert len(net.existing()) == 5
            tables = net.exec("nata", "nft", "list", "tables").stdout
            assert "lingxi_nat" in tables
            raise RuntimeError("boom")
    assert net.existing() == []
