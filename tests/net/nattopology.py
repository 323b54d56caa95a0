"""Two private LANs, each behind a masquerading NAT, and a "public" segment — all made of
network namespaces of the test's own, joined by veth pairs, with nothing linked to the
machine's own namespace (so nothing can be routed out), and all removed at the end.

    hosta 10.1.0.2 ── 10.1.0.1 nata 203.0.113.2 ──┐
                       (masquerade)                pub 203.0.113.1 / .5   registry, nats-server
    guestb 10.2.0.2 ── 10.2.0.1 natb 203.0.113.6 ──┘

The addresses are documentation ranges and private ranges that exist only inside these
namespaces. A NAT forwards what its LAN starts (and the answers to it) and drops anything
new from outside; the public segment forwards nothing and has no route to either LAN.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from contextlib import contextmanager

import pytest

PUBLIC = "203.0.113.1"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(command), capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip() or done.stdout.strip()}")
    return done


def require_namespaces() -> None:
    """Skip with the reason where namespaces or nftables cannot be used (fail under CI=true)."""
    reason = None
    if shutil.which("ip") is None:
        reason = "the ip command (iproute2) is missing"
    elif shutil.which("nft") is None:
        reason = "nftables is missing (apt-get install nftables; .ci/run does it)"
    else:
        probe = f"lxprobe{secrets.token_hex(3)}"
        made = _run("ip", "netns", "add", probe, check=False)
        if made.returncode != 0:
            reason = f"network namespaces cannot be made here: {made.stderr.strip()}"
        else:
            _run("ip", "netns", "del", probe, check=False)
    if reason:
        if _in_ci():
            pytest.fail(reason + "; CI=true requires them", pytrace=False)
        pytest.skip(reason)


class Topology:
    """The namespaces, by role: ``pub``, ``nata``, ``natb``, ``hosta``, ``guestb``."""

    def __init__(self) -> None:
        tag = secrets.token_hex(3)
        self.tag = tag
        self.ns = {role: f"lx{tag}{role}" for role in ("pub", "nata", "natb", "hosta",
                                                        "guestb")}

    def exec(self, role: str, *command: str, check: bool = True
             ) -> subprocess.CompletedProcess[str]:
        return _run("ip", "netns", "exec", self.ns[role], *command, check=check)

    def _link(self, a: str, a_addr: str, b: str, b_addr: str, name: str) -> tuple[str, str]:
        left, right = f"v{self.tag}{name}a", f"v{self.tag}{name}b"
        _run("ip", "link", "add", left, "netns", self.ns[a], "type", "veth", "peer", "name",
             right, "netns", self.ns[b])
        for role, dev, addr in ((a, left, a_addr), (b, right, b_addr)):
            self.exec(role, "ip", "addr", "add", addr, "dev", dev)
            self.exec(role, "ip", "link", "set", dev, "up")
        return left, right

    def build(self) -> None:
        for name in self.ns.values():
            _run("ip", "netns", "add", name)
        for role in self.ns:
            self.exec(role, "ip", "link", "set", "lo", "up")
        _, wan_a = self._link("pub", "203.0.113.1/30", "nata", "203.0.113.2/30", "pa")
        _, wan_b = self._link("pub", "203.0.113.5/30", "natb", "203.0.113.6/30", "pb")
        lan_a, _ = self._link("nata", "10.1.0.1/24", "hosta", "10.1.0.2/24", "la")
        lan_b, _ = self._link("natb", "10.2.0.1/24", "guestb", "10.2.0.2/24", "lb")
        self.exec("nata", "ip", "route", "add", "default", "via", "203.0.113.1")
        self.exec("natb", "ip", "route", "add", "default", "via", "203.0.113.5")
        self.exec("hosta", "ip", "route", "add", "default", "via", "10.1.0.1")
        self.exec("guestb", "ip", "route", "add", "default", "via", "10.2.0.1")
        for role, wan, lan in (("nata", wan_a, lan_a), ("natb", wan_b, lan_b)):
            self.exec(role, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
            rules = (f"table ip lingxi_nat {{\n"
                     f"  chain nat_out {{ type nat hook postrouting priority 100; "
                     f"oifname \"{wan}\" masquerade; }}\n"
                     f"  chain lan_only {{ type filter hook forward priority 0; policy drop;\n"
                     f"    ct state established,related accept\n"
                     f"    iifname \"{lan}\" oifname \"{wan}\" accept\n"
                     f"  }}\n}}\n")
            done = subprocess.run(["ip", "netns", "exec", self.ns[role], "nft", "-f", "-"],
                                  input=rules, capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                raise RuntimeError(f"nft in {role}: {done.stderr.strip()}")
        self.exec("pub", "sysctl", "-q", "-w", "net.ipv4.ip_forward=0")

    def pids(self) -> list[int]:
        found: list[int] = []
        for name in self.ns.values():
            done = _run("ip", "netns", "pids", name, check=False)
            found += [int(p) for p in done.stdout.split()]
        return found

    def remove(self) -> None:
        """Kill whatever still runs inside, then delete every namespace (their veths and
        nftables tables go with them)."""
        import signal
        import time

        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while pids and self.pids() and time.monotonic() < deadline:
                time.sleep(0.05)
        for name in self.ns.values():
            _run("ip", "netns", "del", name, check=False)

    def existing(self) -> list[str]:
        listed = _run("ip", "netns", "list", check=False).stdout
        return [name for name in self.ns.values() if name in listed]


@contextmanager
def nat_topology():
    """Build the topology; always remove it, also when the body or the build fails."""
    require_namespaces()
    topology = Topology()
    try:
        topology.build()
        yield topology
    finally:
        topology.remove()
