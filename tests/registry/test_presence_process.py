"""A real ``lingxi host --post`` keeps its invitation alive with heartbeats; SIGKILLed, it
stops, and the registry withdraws the invitation within its presence timeout."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from .servers import ServerProcess

INVITATION = re.compile(r"invitation (inv-[0-9a-f]+) posted")
PRESENCE = 3  # seconds: the server's --presence-timeout (heartbeats every second)


def _lingxi(*args: str) -> list[str]:
    return [sys.executable, "-m", "lingxi", *args]


def _until(check, what: str, limit: float = 60.0):
    """Poll ``check`` until it answers something truthy (a bound on waiting, not a timing)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting: {what}")


@pytest.mark.slow
def test_a_sigkilled_host_s_invitation_is_withdrawn(tmp_path):
    server = ServerProcess(f"sqlite:///{tmp_path / 'registry.db'}", str(tmp_path / "srv"),
                           extra=("--presence-timeout", str(PRESENCE))).wait_ready()
    env = {**os.environ, "LINGXI_HOME": str(tmp_path / "alice")}
    host = None
    try:
        subprocess.run(_lingxi("register", "--nickname", "alice", "--server", server.url),
                       env=env, check=True, capture_output=True, timeout=60)
        host = subprocess.Popen(
            _lingxi("host", "--protocol-dir", "rock-paper-scissors", "--endpoint",
                    "tcp://127.0.0.1:0", "--post", "--server", server.url, "--options",
                    '{"best_of": 3}', "--accept-timeout", "120",
                    "--state-dir", str(tmp_path / "h")),
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert host.stderr is not None
        invitation = next((m.group(1) for line in host.stderr
                           if (m := INVITATION.search(line))), None)
        assert invitation, "the host posted no invitation"

        def shown() -> dict:
            return httpx.get(f"{server.url}/v1/invitations/{invitation}", timeout=10).json()

        def listed() -> list[str]:
            items = httpx.get(f"{server.url}/v1/invitations", timeout=10).json()["items"]
            return [i["invitation_id"] for i in items]

        first = shown()
        assert first["status"] == "open" and invitation in listed()
        # the registry hears from the host again and again while it waits
        seen = {first["host_seen_at"]}

        def beaten_twice() -> bool:
            seen.add(shown()["host_seen_at"])
            return len(seen) >= 3

        _until(beaten_twice, "two heartbeats after the post")
        assert shown()["status"] == "open"
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=30)
        _until(lambda: invitation not in listed(), "the invitation leaving browse")
        assert shown()["status"] == "withdrawn"
    finally:
        if host is not None and host.poll() is None:
            host.kill()
            host.wait(timeout=30)
        if host is not None and host.stderr is not None:
            host.stderr.close()
        server.stop()
