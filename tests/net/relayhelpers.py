"""A nats-server of the test's own (Debian's binary) trusting a relay key set, and credentials.

Every server listens on a free loopback port, writes into the test's tmp_path and is
stopped (then killed) when the test ends, failed or not.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from lingxi.natsauth import NKey
from lingxi.registry.models.relay import RelayKeys, server_config


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def nats_server_binary() -> str:
    """Debian's nats-server; skip (fail under CI=true) when it is not installed."""
    path = shutil.which("nats-server") or ("/usr/sbin/nats-server"
                                           if os.path.exists("/usr/sbin/nats-server") else None)
    if path is None:
        reason = "nats-server is not installed (apt-get install nats-server; .ci/run does it)"
        if in_ci():
            pytest.fail(reason + "; CI=true requires it", pytrace=False)
        pytest.skip(reason)
    return path


def die_with_parent() -> None:
    """In the child: be killed when the test process dies, even by SIGKILL (Linux)."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class NatsServer:
    """One nats-server process with the registry's trust; ``url``; ``stop()``/``kill()``."""

    def __init__(self, folder: Path, keys: RelayKeys | dict, *, port: int | None = None,
                 cluster_port: int | None = None, routes: tuple[str, ...] = (),
                 host: str = "127.0.0.1", netns: str | None = None) -> None:
        trust = keys if isinstance(keys, dict) else keys.trust(int(time.time()))
        self.port = port or free_port()
        self.host = host
        self.url = f"nats://{host}:{self.port}"
        folder.mkdir(parents=True, exist_ok=True)
        self.config = folder / f"nats-{self.port}.conf"
        self.log = folder / f"nats-{self.port}.log"
        self.config.write_text(server_config(
            trust, listen=f"{host}:{self.port}",
            cluster_listen=f"{host}:{cluster_port}" if cluster_port else None, routes=routes))
        command = [nats_server_binary(), "-c", str(self.config), "-l", str(self.log)]
        if netns:
            command = ["ip", "netns", "exec", netns, *command]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        self.wait_ready()

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited: {self.log.read_text()[-800:]}")
            if self.log.exists() and "Server is ready" in self.log.read_text():
                return
            time.sleep(0.05)
        raise RuntimeError("nats-server did not become ready")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


@pytest.fixture
def relay_keys() -> RelayKeys:
    return RelayKeys.generate()


@pytest.fixture
def nats_servers(tmp_path):
    """Start servers with ``start(keys, **options)``; all are stopped at the end."""
    started: list[NatsServer] = []

    def start(keys: RelayKeys | dict, **options) -> NatsServer:
        server = NatsServer(tmp_path / "nats", keys, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


def credential(keys: RelayKeys, servers, role: str, session_id: str = "ses-test",
               ttl: int = 600, user: NKey | None = None):
    """A relay credential as the registry would issue it (without the registry)."""
    from lingxi.wire.relay_link import RelayCredential

    user = user or NKey.generate("user")
    answer = keys.credential(user_key=user.public, role=role, session_id=session_id,
                             now=int(time.time()), ttl=ttl)
    return RelayCredential.from_answer({**answer, "servers": list(servers)}, user)


class Process:
    """A ``lingxi`` command in its own LINGXI_HOME, output in a file, always ended by the test."""

    def __init__(self, home: Path, *args: str, netns: str | None = None,
                 env: dict | None = None, stdin: bool = False) -> None:
        import sys

        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.out = home / f"out-{time.monotonic_ns()}.log"
        lingxi = str(Path(sys.executable).with_name("lingxi"))
        command = [lingxi, *args]
        if netns:
            command = ["ip", "netns", "exec", netns, *command]
        environment = {**os.environ, "LINGXI_HOME": str(home), **(env or {})}
        environment.pop("LINGXI_REGISTRY", None)
        self.handle = self.out.open("wb")
        self.process = subprocess.Popen(command, stdout=self.handle, stderr=subprocess.STDOUT,
                                        env=environment, preexec_fn=die_with_parent,
                                        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL)

    def say(self, line: str) -> None:
        """One line on the command's standard input (free-mode chat)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def text(self) -> str:
        self.handle.flush()
        return self.out.read_text(errors="replace")

    def count(self, needle: str) -> int:
        return self.text().count(needle)

    def wait_for(self, needle: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if needle in text:
                return text
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} not in the output:\n{self.text()[-2000:]}")

    def wait(self, timeout: float = 60.0) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            self.handle.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.handle.close()


@pytest.fixture
def processes():
    """Start ``lingxi`` commands with ``start(home, *args)``; all are ended at the end."""
    started: list[Process] = []

    def start(home: Path, *args: str, **options) -> Process:
        process = Process(home, *args, **options)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def lingxi(home: Path, *args: str, netns: str | None = None, timeout: float = 60.0,
           env: dict | None = None) -> subprocess.CompletedProcess[str]:
    """Run one ``lingxi`` command to its end in ``home``."""
    import sys

    command = [str(Path(sys.executable).with_name("lingxi")), *args]
    if netns:
        command = ["ip", "netns", "exec", netns, *command]
    environment = {**os.environ, "LINGXI_HOME": str(home), **(env or {})}
    environment.pop("LINGXI_REGISTRY", None)
    return subprocess.run(command, capture_output=True, text=True, env=environment,
                          timeout=timeout)


def fresh_postgres_database():
    """``(url, drop)`` for a new empty database on 127.0.0.1:5432; skip without one (fail
    under CI=true)."""
    import secrets

    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             connect_timeout=3, autocommit=True) as conn:
            name = "lingxi_relay_" + secrets.token_hex(6)
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as error:  # noqa: BLE001 - any failure means "no server here"
        reason = f"no PostgreSQL at 127.0.0.1:5432 ({type(error).__name__}: {error})"
        if in_ci():
            pytest.fail(reason + "; .ci/run must start one", pytrace=False)
        pytest.skip(reason)

    def drop() -> None:
        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", drop


async def relay_pair(keys, servers, *, session_id="ses-test", host_link_class=None,
                     **transport_options):
    """Host and guest links for one session; returns (host link, guest link, host transport,
    guest transport). ``host_link_class``: a RelayLink subclass for the host (a lying relay)."""
    import asyncio

    from lingxi.wire.relay_link import RelayLink
    from lingxi.wire.relay_transport import open_to_host

    opened: asyncio.Queue = asyncio.Queue()
    host_link = await (host_link_class or RelayLink)(credential(keys, servers, "host", session_id),
                                on_open=opened.put_nowait,
                                transport_options=transport_options).open()
    guest_link = await RelayLink(credential(keys, servers, "guest", session_id)).open()
    guest_side = await open_to_host(guest_link, timeout=5, **transport_options)
    host_side = await asyncio.wait_for(opened.get(), 5)
    return host_link, guest_link, host_side, guest_side


async def sealed_channels(host_t, guest_t, **options):
    """A real handshake over the two transports, then a SecureChannel on each side."""
    import asyncio

    from lingxi.wire.channel import SecureChannel
    from lingxi.wire.envelope import AgentEndpoint
    from lingxi.wire.handshake import client_handshake, server_handshake
    from lingxi.wire.identity import Identity

    clock = time.time
    host_id, guest_id = Identity.generate(), Identity.generate()
    host_end = AgentEndpoint(host_id.agent_id, "lingxi", "relay://host")
    guest_end = AgentEndpoint(guest_id.agent_id, "lingxi", "relay://guest")
    guest_keys, host_keys = await asyncio.gather(
        client_handshake(guest_t, guest_id, guest_end, clock=clock, timeout=5),
        server_handshake(host_t, host_id, host_end, clock=clock, timeout=5))
    options.setdefault("heartbeat_interval", None)
    options.setdefault("peer_timeout", None)
    guest = await SecureChannel(guest_t, guest_keys, clock=clock, **options).start()
    host = await SecureChannel(host_t, host_keys, clock=clock, **options).start()
    return host, guest, host_id, guest_id
