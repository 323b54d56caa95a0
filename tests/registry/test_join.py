"""Two agents meet through the registry: host --post, browse, join, receipts — as processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

INVITATION = re.compile(r"invitation (inv-[0-9a-f]+) posted")
ENDPOINT = re.compile(r"on (tcp://[0-9.]+:[0-9]+)")


def lingxi(*args: str) -> list[str]:
    return [sys.executable, "-m", "lingxi", *args]


@pytest.fixture
def agents(tmp_path: Path) -> dict[str, dict[str, str]]:
    base = {**os.environ, "LINGXI_DATABASE_URL": f"sqlite:///{tmp_path / 'registry.db'}"}
    envs = {who: {**base, "LINGXI_HOME": str(tmp_path / who)} for who in ("alice", "bob")}
    for who, env in envs.items():
        done = subprocess.run(lingxi("register", "--nickname", who, "--json"), env=env,
                              check=True, capture_output=True, text=True, timeout=60)
        env["AGENT_ID"] = json.loads(done.stdout)["agent_id"]  # for the test, not lingxi
    return envs


def _host(env: dict[str, str], *extra: str) -> tuple[subprocess.Popen, str, str]:
    host = subprocess.Popen(
        lingxi("host", "--protocol-dir", "rock-paper-scissors", "--endpoint", "tcp://127.0.0.1:0",
               "--post", "--options", '{"best_of": 3}', "--accept-timeout", "150", *extra),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    endpoint = invitation = None
    assert host.stderr is not None
    for line in host.stderr:
        endpoint = endpoint or (ENDPOINT.search(line) and ENDPOINT.search(line).group(1))
        found = INVITATION.search(line)
        if found:
            invitation = found.group(1)
            break
    assert endpoint and invitation, "the host posted no invitation"
    return host, endpoint, invitation


def test_host_posts_guest_browses_and_joins_and_both_receipts_land(agents, tmp_path) -> None:
    host, _, invitation = _host(agents["alice"], "--state-dir", str(tmp_path / "h"))
    try:
        listed = subprocess.run(lingxi("browse", "--json"), env=agents["bob"], check=True,
                                capture_output=True, text=True, timeout=60)
        assert invitation in {i["invitation_id"] for i in json.loads(listed.stdout)["items"]}
        joined = subprocess.run(lingxi("join", invitation, "--json", "--state-dir",
                                       str(tmp_path / "g")), env=agents["bob"],
                                capture_output=True, text=True, timeout=90)
        if joined.returncode != 0:
            host.kill()
        out, host_err = host.communicate(timeout=90)
    finally:
        if host.poll() is None:
            host.kill()
    assert joined.returncode == 0, joined.stdout + joined.stderr + host_err
    assert host.returncode == 0, out
    guest = json.loads(joined.stdout)
    assert guest["ok"] and guest["receipts_verified"]
    # each side names its peer by the nickname the registry proved for the handshake's key
    for folder, peer in (("h", "bob"), ("g", "alice")):
        snapshot = json.loads((tmp_path / folder / "snapshot.json").read_text())
        assert snapshot["peer_nickname"] == peer
        # each side signed the registry checkpoint it was shown into its opening (18.3)
        assert snapshot["peer_registry_checkpoint"].startswith("lingxi.registry/")
    assert "registry.fork" not in joined.stderr + host_err  # one registry, one log: no warning
    code = ("import asyncio, json, sys\n"
            "from lingxi.cli.registry_common import EMBEDDED, run\n"
            "print(json.dumps(run(EMBEDDED, lambda c: c.sessions())))\n")
    sessions = json.loads(subprocess.run([sys.executable, "-c", code], env=agents["bob"],
                                         check=True, capture_output=True, text=True,
                                         timeout=60).stdout)["items"]
    record = next(s for s in sessions if s["invitation_id"] == invitation)
    assert record["status"] == "finished"
    verified = subprocess.run(lingxi("registry", "verify"), env=agents["bob"],
                              capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # both receipts signed the same result, so the game is rated, as proven from the log
    winner = guest["outcome"]["summary"]["winner"]
    ratings = {}
    for who, role in (("alice", "host"), ("bob", "guest")):
        shown = subprocess.run(lingxi("registry", "rating", agents[who]["AGENT_ID"], "--json"),
                               env=agents["bob"], check=True, capture_output=True, text=True,
                               timeout=60)
        (item,) = json.loads(shown.stdout)["items"]
        assert item["games"] == 1
        ratings[role] = item["rating"]
    assert sum(ratings.values()) == 3000
    expected = {"host": ratings["host"] > 1500, "guest": ratings["guest"] > 1500,
                "draw": ratings["host"] == 1500}
    assert expected[winner], (winner, ratings)
    listed = subprocess.run(lingxi("registry", "rating", agents["alice"]["AGENT_ID"]),
                            env=agents["bob"], check=True, capture_output=True, text=True,
                            timeout=60)
    assert f"rating {ratings['host']} (1 game)" in listed.stdout
    # the next invitation alice posts shows her rating to whoever browses
    again, _, second = _host(agents["alice"], "--state-dir", str(tmp_path / "h2"))
    try:
        for order in ("newest", "rating"):
            shown = subprocess.run(lingxi("browse", "--sort", order), env=agents["bob"],
                                   check=True, capture_output=True, text=True, timeout=60)
            row = next(line for line in shown.stdout.splitlines() if second in line)
            assert f"host alice ({agents['alice']['AGENT_ID']})" in row
            assert f"rating {ratings['host']} (1 game)" in row
    finally:
        again.kill()
        again.wait(timeout=30)


def test_a_guest_without_a_ticket_is_refused_and_the_invitation_stays(agents, tmp_path) -> None:
    host, endpoint, invitation = _host(agents["alice"], "--state-dir", str(tmp_path / "h"))
    try:
        direct = subprocess.run(lingxi("guest", "--endpoint", endpoint, "--state-dir",
                                       str(tmp_path / "x")), env=agents["bob"],
                                capture_output=True, text=True, timeout=60)
        assert direct.returncode != 0 and "handshake.ticket_refused" in direct.stderr
        joined = subprocess.run(lingxi("join", invitation, "--state-dir", str(tmp_path / "g")),
                                env=agents["bob"], capture_output=True, text=True, timeout=90)
        assert joined.returncode == 0, joined.stdout + joined.stderr
        host.communicate(timeout=90)
    finally:
        if host.poll() is None:
            host.kill()
    assert host.returncode == 0


def test_join_fetches_a_missing_spec_writes_a_skeleton_and_stops(agents, tmp_path) -> None:
    """The guest lacks the protocol: the spec comes from the registry (id re-checked), hooks
    never do: a skeleton is written, the join stops, and works once hooks are there."""
    from lingxi.protocols import builtin_dir

    builtin = builtin_dir("word-count")
    folder = tmp_path / "word-count-plus"
    folder.mkdir()
    spec = json.loads((builtin / "spec.json").read_text())
    spec["rules"] = {**spec.get("rules", {}), "house": "count only what you were sent"}
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "hooks.py").write_text((builtin / "hooks.py").read_text())
    host = subprocess.Popen(
        lingxi("host", "--protocol-dir", str(folder), "--endpoint", "tcp://127.0.0.1:0",
               "--post", "--accept-timeout", "150", "--state-dir", str(tmp_path / "h")),
        env=agents["alice"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        invitation = None
        assert host.stderr is not None
        for line in host.stderr:
            found = INVITATION.search(line)
            if found:
                invitation = found.group(1)
                break
        assert invitation
        first = subprocess.run(lingxi("join", invitation, "--state-dir", str(tmp_path / "g")),
                               env=agents["bob"], capture_output=True, text=True, timeout=90)
        assert first.returncode == 1 and "hooks.skeleton" in first.stderr, first.stderr
        cached = next((Path(agents["bob"]["LINGXI_HOME"]) / "protocols").glob("*/*"))
        assert json.loads((cached / "spec.json").read_text())["rules"]["house"]
        assert "LINGXI_SKELETON = True" in (cached / "hooks.py").read_text()
        (cached / "hooks.py").write_text((builtin / "hooks.py").read_text())  # written by hand
        (cached / ".lingxi-hooks.json").unlink()
        second = subprocess.run(lingxi("join", invitation, "--state-dir", str(tmp_path / "g")),
                                env=agents["bob"], capture_output=True, text=True, timeout=90)
        assert second.returncode == 0, second.stdout + second.stderr
        host.communicate(timeout=90)
    finally:
        if host.poll() is None:
            host.kill()
    assert host.returncode == 0
