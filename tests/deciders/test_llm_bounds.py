"""The model client keeps its bounds against a real local HTTP server that misbehaves.

The server (raw sockets on 127.0.0.1, a free port) drips its answer one byte
every half second, sends a 300 MB reply (with and without a Content-Length),
or echoes the ``Authorization`` header back. Each call must end by the clock,
stop reading at the byte cap, and never put the API key into any text: the
error, the reply, events.jsonl and every other file of the state folder, the
actor's errors, and what the CLI prints.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from lingxi import llm
from lingxi.actor.actors import ActorError, create_actor
from lingxi.deciders import make_decider
from lingxi.session.core.decisions import Decline
from lingxi.session.core.events import RequestDecision
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.runner import load_protocol

HANG_GUARD = 60  # seconds; only stops a broken run from hanging the suite
KEY = "sk-lingxi-test-" + "Q7w9ZpL2xV4nR8tK3mB6yH1cJ5"  # what the endpoint must not leak
KEY_ENV = "LINGXI_TEST_LLM_KEY"
HUGE = 300 * 1024 * 1024
DRIP = 0.5  # seconds between bytes
REPLY = json.dumps({"choices": [{"message": {"content": '{"value": "rock"}'}}]}).encode()


class Misbehaving(socketserver.BaseRequestHandler):
    """One HTTP/1.1 request, answered according to its path."""

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(HANG_GUARD)
        data = b""
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                return
            data += more
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            more = sock.recv(65536)
            if not more:
                return
            rest += more
        server: Server = self.server  # type: ignore[assignment]
        server.auth.append(headers.get("authorization"))
        try:
            getattr(self, "route_" + path.strip("/").split("/")[0].replace("-", "_"))(
                sock, headers)
        except OSError:  # the client stopped reading, as it should
            pass

    def route_drip(self, sock: socket.socket, headers: dict[str, str]) -> None:
        answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  b"Content-Length: " + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY)
        for index in range(len(answer)):  # from the status line on: headers drip too
            sock.sendall(answer[index:index + 1])
            time.sleep(DRIP)

    def _flood(self, sock: socket.socket, head: bytes, chunked: bool) -> None:
        sock.sendall(head)
        block = b" " * 65536
        server: Server = self.server  # type: ignore[assignment]
        while server.sent < HUGE:
            piece = (b"10000\r\n" + block + b"\r\n") if chunked else block
            sock.sendall(piece)
            server.sent += len(block)

    def route_huge_declared(self, sock: socket.socket, headers: dict[str, str]) -> None:
        self._flood(sock, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: " + str(HUGE).encode() + b"\r\n\r\n", chunked=False)

    def route_huge_chunked(self, sock: socket.socket, headers: dict[str, str]) -> None:
        self._flood(sock, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n", chunked=True)

    def _answer(self, sock: socket.socket, status: str, body: bytes) -> None:
        sock.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)

    def route_echo(self, sock: socket.socket, headers: dict[str, str]) -> None:
        auth = headers.get("authorization", "")
        token = auth.split(" ", 1)[-1]
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {auth}. "
                                                f"Key starts {token[:20]}, ends {token[-12:]}",
                                     "headers": {"Authorization": auth}}})
        self._answer(sock, "401 Unauthorized", body.encode())

    def route_echo_ok(self, sock: socket.socket, headers: dict[str, str]) -> None:
        auth = headers.get("authorization", "")
        content = f'You sent {auth}, so: {{"value": "rock"}}'
        self._answer(sock, "200 OK", json.dumps(
            {"choices": [{"message": {"content": content}}]}).encode())


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Misbehaving)
        self.sent = 0
        self.auth: list[str | None] = []

    def url(self, route: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{route}/v1"


@pytest.fixture
def server():
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def key(monkeypatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def _settings(url: str, timeout: float = 30.0, with_key: bool = False) -> llm.ChatSettings:
    options = {"url": url, "model": "m", "timeout": str(timeout)}
    if with_key:
        options["api_key_env"] = KEY_ENV
    return llm.settings_from_options(options, timeout=timeout, max_tokens=50)


def _call(settings: llm.ChatSettings, how: str) -> str:
    body = settings.body([{"role": "user", "content": "hi"}])
    if how == "sync":
        return llm.complete(settings, body)

    async def go() -> str:
        async with httpx.AsyncClient() as client:
            return await asyncio.wait_for(llm.acomplete(client, settings, body), HANG_GUARD)

    return asyncio.run(go())


def _leaks(text: str) -> list[str]:
    """The key, or any 8 characters of it, found in ``text``."""
    return sorted({KEY[i:i + 8] for i in range(len(KEY) - 7) if KEY[i:i + 8] in text})


# ----------------------------------------------------------------------- the clock

@pytest.mark.parametrize("how", ["sync", "async"])
def test_a_dripping_endpoint_is_cut_by_the_clock(server, how) -> None:
    # every read gets a byte well within the per-read timeout; only the clock can stop it
    with pytest.raises(llm.LlmError) as caught:
        _call(_settings(server.url("drip"), timeout=1.5), how)
    assert caught.value.kind == "timeout" and "within 1.5 s" in caught.value.message


async def test_a_dripping_endpoint_makes_the_decider_decline_in_time(server) -> None:
    decider = make_decider("llm", {"url": server.url("drip"), "model": "m", "timeout": "30"})
    request = RequestDecision("p1", ["rock", "paper"], {}, timeout_seconds=2.5)
    with pytest.raises(Decline) as declined:
        await asyncio.wait_for(decider(request), HANG_GUARD)
    assert declined.value.reason.startswith("decider.llm_timeout:")


# ------------------------------------------------------------------- the byte cap

@pytest.mark.parametrize("route", ["huge-declared", "huge-chunked"])
@pytest.mark.parametrize("how", ["sync", "async"])
def test_a_huge_reply_is_refused_while_it_streams(server, route, how) -> None:
    with pytest.raises(llm.LlmError) as caught:
        _call(_settings(server.url(route)), how)
    assert caught.value.kind == "too_large"
    assert str(llm.MAX_REPLY_BYTES) in caught.value.message
    assert server.sent < HUGE // 4  # it stopped reading; the server could not push it all


async def test_a_huge_reply_is_a_typed_decline(server) -> None:
    decider = make_decider("llm", {"url": server.url("huge-chunked"), "model": "m"})
    with pytest.raises(Decline) as declined:
        await asyncio.wait_for(decider(RequestDecision("p1", ["rock"], {}, timeout_seconds=20)),
                               HANG_GUARD)
    assert declined.value.reason.startswith("decider.llm_too_large:")


# ------------------------------------------------------------------- the key

@pytest.mark.parametrize("how", ["sync", "async"])
def test_an_echoed_key_is_redacted_from_the_error(server, key, how) -> None:
    with pytest.raises(llm.LlmError) as caught:
        _call(_settings(server.url("echo"), with_key=True), how)
    assert server.auth == [f"Bearer {key}"]  # the key was sent, and echoed back
    error = caught.value
    assert error.kind == "http" and error.details["status"] == 401
    assert "Incorrect API key provided" in error.message and "[redacted]" in error.message
    assert _leaks(str(error)) == [] and _leaks(json.dumps(error.to_dict())) == []


@pytest.mark.parametrize("how", ["sync", "async"])
def test_an_echoed_key_is_redacted_from_the_reply(server, key, how) -> None:
    text = _call(_settings(server.url("echo-ok"), with_key=True), how)
    assert _leaks(text) == [] and text.endswith('{"value": "rock"}')


def test_redaction_covers_the_key_its_fragments_and_bearer_tokens() -> None:
    secret = "abcdefghijklmnopqrstuvwxyz012345"
    text = f"full {secret}; head {secret[:10]}; tail {secret[-9:]}; Bearer other.token-1 x"
    out = llm.redact(text, [secret])
    assert secret[:8] not in out and secret[-8:] not in out and "other.token-1" not in out
    assert out.startswith("full [redacted]; head [redacted]; tail [redacted]; Bearer [redacted]")
    assert llm.redact("nothing to hide here", [secret]) == "nothing to hide here"


def test_a_key_in_the_url_is_never_shown() -> None:
    settings = llm.settings_from_options(
        {"url": "http://user:hunter2-secret@127.0.0.1:9/v1?key=hunter3-secret", "model": "m",
         "timeout": "2"}, timeout=2, max_tokens=5)
    with pytest.raises(llm.LlmError) as caught:
        llm.complete(settings, settings.body([]))
    assert "hunter2" not in caught.value.message and "hunter3" not in caught.value.message
    assert "127.0.0.1:9" in caught.value.message


async def test_the_key_is_in_no_file_of_the_state_folder(server, key, tmp_path) -> None:
    decider = make_decider("llm", {"url": server.url("echo"), "model": "m",
                                   "api_key_env": KEY_ENV})
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol("rock-paper-scissors"), options={"best_of": 1}, state_dir=tmp_path,
        seed=3, host_kwargs={"decider": decider}), HANG_GUARD)
    assert host.outcome.ok and guest.outcome.ok  # declined to the spec's fallback
    assert server.auth and all(a == f"Bearer {key}" for a in server.auth)
    events = (tmp_path / "host" / "events.jsonl").read_text(encoding="utf-8")
    assert "decider.llm_http" in events and "[redacted]" in events
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert _leaks(path.read_bytes().decode("utf-8", "replace")) == [], path


def test_the_actor_never_shows_the_key(server, key) -> None:
    actor = create_actor("llm", seed=1, options={"url": server.url("echo"), "model": "m",
                                                 "api_key_env": KEY_ENV})
    with pytest.raises(ActorError) as caught:
        actor.select({"any": "view"}, b"\x89PNG")
    assert caught.value.code == "actor.llm_http" and _leaks(str(caught.value)) == []
    actor.close()


def test_the_cli_prints_and_records_no_key(server, key, tmp_path) -> None:
    lingxi = str(Path(sys.executable).parent / "lingxi")
    folder = tmp_path / "rps"
    shutil.copytree(load_protocol("rock-paper-scissors").folder, folder,
                    ignore=shutil.ignore_patterns("ui"))
    env = {**os.environ, "LINGXI_HOME": str(tmp_path / "home"), "LINGXI_DEBUG": "",
           KEY_ENV: KEY}
    host = subprocess.Popen(
        [lingxi, "host", "--protocol-dir", str(folder), "--endpoint", "tcp://127.0.0.1:0",
         "--options", '{"best_of": 1}', "--state-dir", str(tmp_path / "h"),
         "--control-mode", "human", "--decider", "llm",
         "--decider-option", f"url={server.url('echo')}", "--decider-option", "model=m",
         "--decider-option", f"api_key_env={KEY_ENV}"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        endpoint = None
        seen = []
        deadline = time.monotonic() + HANG_GUARD
        while endpoint is None and time.monotonic() < deadline:
            line = host.stdout.readline()
            seen.append(line)
            if "tcp://127.0.0.1:" in line:
                endpoint = "tcp://" + line.split("tcp://", 1)[1].split()[0]
        assert endpoint, seen
        guest = subprocess.run([lingxi, "guest", "--endpoint", endpoint, "--protocol-dir",
                                str(folder), "--state-dir", str(tmp_path / "g")],
                               env=env, capture_output=True, text=True, timeout=HANG_GUARD)
        out, _ = host.communicate(timeout=HANG_GUARD)
    finally:
        host.kill()
    printed = "".join(seen) + out + guest.stdout + guest.stderr
    assert host.returncode == 0 and guest.returncode == 0, printed
    assert server.auth, "the decider was never asked"
    assert "llm_http" in printed and "[redacted]" in printed, printed  # the error was shown
    assert _leaks(printed) == []
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert _leaks(path.read_bytes().decode("utf-8", "replace")) == [], path
