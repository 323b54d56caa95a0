"""``lingxi demo --relay``: the main job across the relay (``make demo-relay``).

A registry process tied to a relay (``lingxi server --relay``), the relay itself
(``lingxi relay serve``: Debian's nats-server with the registry's trust), agent
"alice" hosting rock-paper-scissors through the relay only — as a host behind a
NAT would, nothing listening where her invitation points — and agent "bob"
joining: his direct attempt fails, he meets her through the relay, the game runs
in sealed frames the relay cannot read, and both receipts, both session folders
and the registry's log are checked. Everything on loopback, in a temporary folder,
every process ended at the end.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import click


def _lingxi(*args: str) -> list[str]:
    return [sys.executable, "-m", "lingxi", *args]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(path: Path, needle: str, process: subprocess.Popen[bytes],
              timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        if needle in text:
            return text
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise click.ClickException(f"{needle!r} did not appear in {path}")


def relay_journey(seed: int, work: Path) -> bool:
    """Run the journey; print what happens; True when every check passed."""
    from lingxi.cli.relay import nats_server_binary

    nats_server_binary()  # a one-line error (exit 2) when Debian's nats-server is missing
    registry_port, nats_port = _free_port(), _free_port()
    server, relay = f"http://127.0.0.1:{registry_port}", f"nats://127.0.0.1:{nats_port}"
    homes = {who: work / f"{who}-home" for who in ("registry", "relay", "alice", "bob")}
    envs = {who: {**os.environ, "LINGXI_HOME": str(home)} for who, home in homes.items()}
    for env in envs.values():
        env.pop("LINGXI_REGISTRY", None)
        env.pop("LINGXI_DATABASE_URL", None)
    running: list[subprocess.Popen[bytes]] = []

    def start(who: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        homes[who].mkdir(parents=True, exist_ok=True)
        log = homes[who] / f"{args[0]}.log"
        process = subprocess.Popen(_lingxi(*args), env=envs[who], stdout=log.open("wb"),
                                   stderr=subprocess.STDOUT)
        running.append(process)
        return process, log

    def run(who: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(_lingxi(*args), env=envs[who], capture_output=True, text=True,
                              check=False, timeout=120)

    try:
        registry, log = start("registry", "server", "--port", str(registry_port),
                              "--relay", relay)
        _wait_for(log, "registry on", registry)
        click.echo(f"  registry on {server}, tied to the relay {relay}")
        nats, log = start("relay", "relay", "serve", "--listen", f"127.0.0.1:{nats_port}",
                          "--server", server)
        _wait_for(log, "relay on", nats)
        click.echo(f"  relay: nats-server on {relay}, admitting only users the registry signs")
        for who in ("alice", "bob"):
            done = run(who, "register", "--nickname", who, "--server", server)
            if done.returncode != 0:
                click.echo(f"  register {who}: {done.stderr.strip()}")
                return False
        unreachable = f"tcp://127.0.0.1:{_free_port()}"
        host, log = start("alice", "host", "--post", "--server", server, "--via", "relay",
                          "--protocol-dir", "rock-paper-scissors", "--endpoint", unreachable,
                          "--options", '{"best_of": 3}', "--seed", str(seed),
                          "--accept-timeout", "60", "--state-dir",
                          str(work / "relay" / "host"))
        text = _wait_for(log, "lingxi join inv-", host)
        invitation = text.split("lingxi join ")[-1].split()[0]
        click.echo(f"  alice posts {invitation}, reachable only through the relay (nothing "
                   f"listens at {unreachable}, as behind a NAT)")
        guest = run("bob", "join", invitation, "--server", server, "--seed", str(seed),
                    "--state-dir", str(work / "relay" / "guest"), "-q")
        for line in guest.stderr.splitlines():
            if line.startswith(("direct path", "path:", "relay:")):
                click.echo(f"  bob: {line}")
        host.wait(60)
        ok = guest.returncode == 0 and host.returncode == 0
        click.echo(f"  bob (guest): {' | '.join(guest.stdout.strip().splitlines()[:2])}")
        for role in ("host", "guest"):
            folder = work / "relay" / role
            check = run("bob", "session", "verify", str(folder))
            click.echo(f"  lingxi session verify {role}: "
                       f"{(check.stdout.strip().splitlines() or ['?'])[-1]}")
            ok &= check.returncode == 0
        log_check = run("bob", "registry", "verify", "--server", server)
        click.echo(f"  lingxi registry verify (bob's copy): "
                   f"{(log_check.stdout.strip().splitlines() or [log_check.stderr.strip()])[-1]}")
        return ok and log_check.returncode == 0
    finally:
        for process in reversed(running):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
