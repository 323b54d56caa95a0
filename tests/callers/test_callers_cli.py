"""The command line of P2A: `lingxi callers add|list|remove`, `lingxi serve`, `lingxi call`."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys

import pytest
from callerhelpers import ALICE_KEY, SERVER_ID, TEXT, ServerProcess
from click.testing import CliRunner

from lingxi.cli import cli


def run(*args: str, home=None, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ}
    if home is not None:
        env["LINGXI_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "lingxi", *args], capture_output=True,
                          text=True, timeout=60, env=env, input=input, check=False)


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


# ---------------------------------------------------------------- callers add/list/remove

def test_add_prints_the_key_once_and_keeps_the_file_private(tmp_path):
    path = tmp_path / "callers.json"
    result = invoke("callers", "add", "alice", "--callers", str(path),
                    "--save-key", str(tmp_path / "alice.key"))
    assert result.exit_code == 0, result.output
    key = result.output.strip().splitlines()[-1]
    assert len(key) == 64 and all(c in "0123456789abcdef" for c in key)
    assert (tmp_path / "alice.key").read_text() == key + "\n"
    for file in (path, tmp_path / "alice.key"):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["callers"]["alice"]["key"] == key
    listed = invoke("callers", "list", "--callers", str(path), "--json")
    assert listed.exit_code == 0 and key not in listed.output
    assert [c["agent_id"] for c in json.loads(listed.output)["callers"]] == ["alice"]


def test_add_twice_needs_replace_which_rotates_the_key(tmp_path):
    path = str(tmp_path / "callers.json")
    first = json.loads(invoke("callers", "add", "alice", "--callers", path, "--json").output)
    again = invoke("callers", "add", "alice", "--callers", path)
    assert again.exit_code == 2 and "callers.exists" in again.output
    second = json.loads(invoke("callers", "add", "alice", "--callers", path, "--replace",
                               "--json").output)
    assert second["key"] != first["key"]


def test_save_key_never_overwrites(tmp_path):
    (tmp_path / "alice.key").write_text("precious")
    result = invoke("callers", "add", "alice", "--callers", str(tmp_path / "c.json"),
                    "--save-key", str(tmp_path / "alice.key"))
    assert result.exit_code == 2 and "callers.key_file_exists" in result.output
    assert (tmp_path / "alice.key").read_text() == "precious"
    assert not (tmp_path / "c.json").exists()  # nothing registered either


@pytest.mark.parametrize("agent_id", ["a|b", "", "x" * 200, "sp ace", "\x1b[2J"])
def test_bad_caller_ids_are_usage_errors(tmp_path, agent_id):
    result = invoke("callers", "add", agent_id, "--callers", str(tmp_path / "c.json"))
    assert result.exit_code == 2 and "callers.bad_id" in result.output
    assert "\x1b" not in result.output


def test_remove_and_unknown(tmp_path):
    path = str(tmp_path / "c.json")
    invoke("callers", "add", "alice", "--callers", path)
    assert invoke("callers", "remove", "alice", "--callers", path).exit_code == 0
    gone = invoke("callers", "remove", "alice", "--callers", path)
    assert gone.exit_code == 2 and "callers.unknown" in gone.output


def test_a_callers_file_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "c.json"
    invoke("callers", "add", "alice", "--callers", str(path))
    os.chmod(path, 0o644)
    listed = invoke("callers", "list", "--callers", str(path))
    assert listed.exit_code == 2 and "callers.insecure_permissions" in listed.output
    served = run("serve", "--protocol-dir", "word-count", "--http", "127.0.0.1:0",
                 "--callers", str(path), "--agent-id", SERVER_ID, home=tmp_path / "home")
    assert served.returncode == 2 and "callers.insecure_permissions" in served.stderr


@pytest.mark.parametrize("content", ["{not json", '{"kind": "other"}', "[]",
                                     '{"kind": "lingxi.callers/1", "callers": {"a": {"key": "short"}}}',
                                     '{"kind": "lingxi.callers/1", "callers": {"a|b": {"key": "'
                                     + "k" * 40 + '"}}}'])
def test_a_broken_callers_file_is_one_coded_error(tmp_path, content):
    path = tmp_path / "c.json"
    path.write_text(content)
    os.chmod(path, 0o600)
    result = invoke("callers", "list", "--callers", str(path))
    assert result.exit_code == 2 and "callers.bad_file" in result.output
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- serve

def test_serve_refuses_what_it_cannot_serve(tmp_path):
    home = tmp_path / "home"
    cases = [
        (["--protocol-dir", "rock-paper-scissors", "--http", "127.0.0.1:0"],
         "serve.not_request_response"),
        (["--protocol-dir", "word-count", "--http", "localhost"], "serve.bad_address"),
        (["--protocol-dir", "word-count", "--http", "127.0.0.1:99999"], "serve.bad_address"),
        (["--protocol-dir", "word-count", "--http", "127.0.0.1:0", "--public-url", "ftp://x/"],
         "serve.bad_url"),
        (["--protocol-dir", "word-count", "--http", "127.0.0.1:0", "--agent-id", "a|b"],
         "serve.bad_agent_id"),
        (["--protocol-dir", "no-such-protocol", "--http", "127.0.0.1:0"], "protocol.not_found"),
    ]
    for args, code in cases:
        result = run("serve", *args, "--callers", str(tmp_path / "c.json"), home=home)
        assert result.returncode == 2, (args, result.stderr)
        assert code in result.stderr and "Traceback" not in result.stderr


def test_serve_on_a_port_in_use_is_a_coded_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run("serve", "--protocol-dir", "word-count", "--http", f"127.0.0.1:{port}",
                     "--callers", str(tmp_path / "c.json"), home=tmp_path / "home")
    assert result.returncode == 2 and "serve.port_unavailable" in result.stderr


def test_serve_announces_logs_safely_and_stops_cleanly(tmp_path, callers_file):
    import httpx
    from callerhelpers import request, server_endpoint

    server = ServerProcess(tmp_path / "home", callers_file)
    assert server.info["agent_id"] == SERVER_ID and server.info["callers"] == 2
    sent = request({"action": "request", "text": "x", "\x1b[2J\u202ename": 1},
                   receiver=server_endpoint(server.url))
    answer = httpx.post(server.url, content=sent.to_bytes(),
                        headers={"Content-Type": "application/json"}, timeout=30)
    assert answer.status_code == 422
    code, err = server.stop()
    assert code == 0
    line = next(x for x in err.splitlines() if "message.unknown_field" in x)
    assert "caller alice" in line and "\\x1b[2J\\u202ename" in line
    assert "\x1b" not in err and "\u202e" not in err and "Traceback" not in err


# ------------------------------------------------------------------------------ call

@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "alice.key"
    path.write_text(ALICE_KEY + "\n")
    return path


def test_call_prints_the_verified_reply(server, key_file):
    result = run("call", server.url, json.dumps({"action": "request", "text": TEXT}),
                 "--protocol-dir", "word-count", "--from", "alice", "--key-file", str(key_file))
    assert result.returncode == 0, result.stderr
    assert "caller:delivery" in result.stdout and "verified" in result.stdout
    assert '"words": 3' in result.stdout


def test_call_json_and_stdin(server, key_file):
    result = run("call", server.url, "-", "--protocol-dir", "word-count", "--from", "alice",
                 "--key-file", str(key_file), "--to", SERVER_ID, "--algorithm", "HMAC-SHA512",
                 "--json", input=json.dumps({"action": "request", "text": "a b"}))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["ok"] is True and out["reply"]["payload"]["words"] == 2
    assert out["reply"]["reply_to"] == out["request"]["id"]
    assert out["request"]["signature_algorithm"] == "HMAC-SHA512"


def test_call_with_a_wrong_key_reports_the_servers_code(server, tmp_path):
    wrong = tmp_path / "wrong.key"
    wrong.write_text("not-alices-key-but-long-enough-anyway\n")
    result = run("call", server.url, json.dumps({"action": "request", "text": "x"}),
                 "--protocol-dir", "word-count", "--from", "alice", "--key-file", str(wrong))
    assert result.returncode == 1
    assert "envelope.bad_signature" in result.stderr and "Traceback" not in result.stderr
    as_json = run("call", server.url, json.dumps({"action": "request", "text": "x"}),
                  "--protocol-dir", "word-count", "--from", "alice", "--key-file", str(wrong),
                  "--json")
    assert json.loads(as_json.stdout)["error"]["code"] == "envelope.bad_signature"


@pytest.mark.parametrize("args, code", [
    (["http://127.0.0.1:9/", '{"action": "request", "text": 5}'], "message.wrong_type"),
    (["http://127.0.0.1:9/", "not json"], "input.bad_json"),
    (["http://127.0.0.1:9/", "[1]"], "input.bad_payload"),
    (["tcp://127.0.0.1:9", '{"action": "request", "text": "x"}'], "call.bad_url"),
])
def test_call_usage_errors_send_nothing(key_file, args, code):
    result = run("call", *args, "--protocol-dir", "word-count", "--from", "alice",
                 "--key-file", str(key_file))
    assert result.returncode == 2, result.stderr
    assert code in result.stderr


def test_call_to_nobody_is_unreachable(key_file):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        result = run("call", f"http://127.0.0.1:{port}/", '{"action": "request", "text": "x"}',
                     "--protocol-dir", "word-count", "--from", "alice", "--key-file",
                     str(key_file), "--timeout", "5")
    assert result.returncode == 1 and "call.unreachable" in result.stderr
