"""`lingxi registry witness` as its own process beside a real registry, and
`lingxi registry verify --witness` requiring its cosignature."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx

from .servers import ServerProcess, free_port


def lingxi(home, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lingxi", *args], capture_output=True,
                          text=True, env={**os.environ, "LINGXI_HOME": str(home)}, timeout=120)


def test_a_witness_process_cosigns_and_verify_requires_it(tmp_path):
    server = ServerProcess(f"sqlite:///{tmp_path / 'registry.db'}", str(tmp_path / "home"))
    port = free_port()
    witness = None
    try:
        server.wait_ready()
        assert lingxi(tmp_path / "alice", "register", "--nickname", "alice", "--server",
                      server.url).returncode == 0
        witness = subprocess.Popen(
            [sys.executable, "-m", "lingxi", "registry", "witness", "--name", "w1",
             "--port", str(port), "--interval", "0.5", "--server", server.url,
             "--key-file", str(tmp_path / "w1.key")],
            env={**os.environ, "LINGXI_HOME": str(tmp_path / "wit")},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = f"http://127.0.0.1:{port}"
        deadline, info = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/v1/witness/checkpoint", timeout=2).status_code == 200:
                    info = httpx.get(url + "/v1/witness/info", timeout=2).json()
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        assert info is not None, "the witness never cosigned"
        ref = f"w1={info['public_key']}@{url}"
        done = lingxi(tmp_path / "alice", "registry", "verify", "--server", server.url,
                      "--witness", ref, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["witnessed_by"] == ["w1"]
        wrong = f"w1={'ab' * 32}@{url}"  # a key the witness does not hold: no cosignature
        done = lingxi(tmp_path / "alice", "registry", "verify", "--server", server.url,
                      "--witness", wrong)
        assert done.returncode == 1 and "required" in done.stderr
    finally:
        if witness is not None:
            witness.terminate()
            witness.wait(10)
            witness.stderr.close()
        server.stop()
