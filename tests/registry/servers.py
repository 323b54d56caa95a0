"""Real registry server processes (`python -m lingxi server`) for race and crash tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    def __init__(self, database_url: str, home: str, claim_timeout: float = 30,
                 key_file: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # processes on one database share one key file (beside their homes by default)
        key_file = key_file or os.path.join(os.path.dirname(home), "server.key")
        env = {**os.environ, "LINGXI_HOME": home, "LINGXI_REGISTRY_KEY_FILE": key_file}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lingxi", "server", "--port", str(self.port),
             "--database-url", database_url, "--claim-timeout", str(claim_timeout)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_ready(self, timeout: float = 30) -> ServerProcess:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("registry server exited: "
                                   + self.proc.stderr.read().decode(errors="replace"))
            try:
                if httpx.get(self.url + "/v1/info", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("registry server did not answer in time")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.proc.stderr:
            self.proc.stderr.close()
