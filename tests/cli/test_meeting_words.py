"""Meeting without guessing (issue 21, item 4): every registry command says which registry
it asked; a missing invitation says where it looked and how to reach another machine's
registry; the host's hint is the complete join command, --server included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from lingxi.cli import cli

HANG_GUARD = 60
LINGXI = [sys.executable, "-m", "lingxi"]


def _env(home: Path) -> dict[str, str]:
    return {"LINGXI_HOME": str(home), "LINGXI_DATABASE_URL": ""}


def test_browse_names_the_embedded_registry_and_json_stays_pure(tmp_path) -> None:
    text = CliRunner().invoke(cli, ["browse"], env=_env(tmp_path))
    assert text.exit_code == 0 and text.stdout.strip() == "no open invitation"
    assert f"registry: the embedded registry (sqlite:///{tmp_path}/registry/" in text.stderr
    data = CliRunner().invoke(cli, ["browse", "--json"], env=_env(tmp_path))
    assert json.loads(data.stdout)["items"] == [] and "registry:" not in data.stderr


def test_a_missing_invitation_says_where_it_looked_and_how_to_meet_another_machine(
        tmp_path) -> None:
    result = CliRunner().invoke(cli, ["join", "inv-00000000000000000000"], env=_env(tmp_path))
    assert result.exit_code == 1
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: registry.invitation_not_found: no invitation "
                           "inv-00000000000000000000 (asked the embedded registry (sqlite:///")
    assert "run `lingxi server` on one and pass --server http://HOST:8470 on both" in line


def test_an_unreachable_registry_is_named(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["browse", "--server", "http://127.0.0.1:9"],
                                env=_env(tmp_path))
    assert result.exit_code != 0
    assert "registry: http://127.0.0.1:9" in result.stderr
    assert "(asked http://127.0.0.1:9)" in result.stderr


def test_the_hosts_hint_is_the_whole_join_command(tmp_path) -> None:
    """Against a registry server: the hint carries --server; the guest's own terminal can
    paste it as it is."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "registry"))
    from servers import ServerProcess

    server = ServerProcess(f"sqlite:///{tmp_path / 'reg.db'}", str(tmp_path / "srv")
                           ).wait_ready()
    host = None
    try:
        for who in ("alice", "bob"):
            subprocess.run([*LINGXI, "register", "--nickname", who, "--server", server.url],
                           env={**os.environ, **_env(tmp_path / who)}, check=True,
                           capture_output=True, timeout=HANG_GUARD)
        env = {**os.environ, **_env(tmp_path / "alice")}
        host = subprocess.Popen([*LINGXI, "host", "--protocol-dir", "rock-paper-scissors",
                                 "--endpoint", "tcp://127.0.0.1:0", "--post", "--server",
                                 server.url, "--accept-timeout", "20"],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert host.stderr is not None
        hint = ""
        for line in host.stderr:
            if "a guest joins with:" in line:
                hint = line.strip()
                break
        command = hint.split("a guest joins with: ", 1)[1]
        assert hint.startswith("invitation inv-") and f"posted at {server.url}" in hint
        assert command.startswith("lingxi join inv-") and command.endswith(
            f" --server {server.url}")
        joined = subprocess.run([*LINGXI, *command.split()[1:]], capture_output=True,
                                text=True, timeout=HANG_GUARD,
                                env={**os.environ, **_env(tmp_path / "bob")})
        assert joined.returncode == 0, joined.stderr
        assert f"registry: {server.url}" in joined.stderr
        assert host.wait(HANG_GUARD) == 0
        # each side names the other by its registry nickname (bound to the proven key)
        assert "you are the guest, playing «alice» (key " in joined.stderr
        assert "you are the host, playing «bob» (key " in host.stderr.read()
    finally:
        if host is not None and host.poll() is None:
            host.kill()
        server.stop()
