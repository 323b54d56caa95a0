"""Helpers for the P2A caller tests: keys, endpoints, signed requests, a real server process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lingxi.serve.callers import add_caller
from lingxi.wire import AgentEndpoint, Envelope, EnvelopeBuilder, ReceivePipeline

SERVER_ID = "lx-server"
ALICE_KEY = "a1" * 32
BOB_KEY = "b2" * 32
ALICE = AgentEndpoint("alice", "lingxi", "lingxi://alice")
BOB = AgentEndpoint("bob", "lingxi", "lingxi://bob")
TEXT = "one two\nthree"
COUNTS = {"lines": 2, "words": 3, "characters": 13}


def register(path: Path, agent_id: str, key: str) -> None:
    add_caller(path, agent_id, new_key=lambda: key)


def server_endpoint(url: str = "http://127.0.0.1:8088/") -> AgentEndpoint:
    return AgentEndpoint(SERVER_ID, "lingxi", url)


def request(payload: dict[str, Any] | None = None, *, sender: AgentEndpoint = ALICE,
            key: str = ALICE_KEY, receiver: AgentEndpoint | None = None,
            clock: Any = time.time, algorithm: str = "HMAC-SHA256", prefix: str = "caller",
            **build: Any) -> Envelope:
    """A signed request (word-count ``request`` unless ``payload`` says otherwise)."""
    builder = EnvelopeBuilder(sender, receiver or server_endpoint(), key, clock=clock,
                              prefix=prefix, algorithm=algorithm)
    return builder.build(payload or {"action": "request", "text": TEXT}, **build)


def resign(doc: dict[str, Any], key: str = ALICE_KEY) -> bytes:
    """``doc`` (an envelope dict) signed again with ``key``, as bytes."""
    from lingxi.wire import sign_envelope

    env = Envelope.from_dict(doc)
    return sign_envelope(env, key, doc.get("signature_algorithm") or "HMAC-SHA256").to_bytes()


def verify_reply(body: bytes, sent: Envelope, key: str = ALICE_KEY) -> Envelope:
    """The reply checked as a careful caller would (signature, sender, binding, linkage)."""
    pipeline = ReceivePipeline(key, clock=time.time, expect_sender=SERVER_ID,
                               expect_receiver=sent.sender.agent_id)
    return pipeline.accept(body, expect_prefix="caller", expect_reply_to=sent.id,
                           expect_correlation_id=sent.correlation_id or sent.id)


def error_of(body: bytes) -> dict[str, Any]:
    doc = json.loads(body)
    assert doc["ok"] is False and set(doc) == {"ok", "error"}
    assert set(doc["error"]) == {"code", "message"}
    return doc["error"]


class ServerProcess:
    """``lingxi serve`` in a child process on a free loopback port."""

    def __init__(self, home: Path, callers: Path, *args: str, protocol: str = "word-count"):
        env = {**os.environ, "LINGXI_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lingxi", "serve", "--protocol-dir", protocol, "--http",
             "127.0.0.1:0", "--callers", str(callers), "--agent-id", SERVER_ID, "--json",
             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            self.proc.wait(10)
            raise RuntimeError(f"lingxi serve did not start: {err}")
        self.info = json.loads(line)
        self.url: str = self.info["url"]

    def stop(self) -> tuple[int, str]:
        """SIGINT, as Ctrl-C would; the exit status and what it wrote to stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err
