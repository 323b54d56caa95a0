"""`lingxi identity` and `lingxi envelope`: outputs, codes and exit statuses."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lingxi.cli import cli


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args, stdin=None):
        return runner.invoke(cli, list(args), input=stdin, catch_exceptions=False)

    return invoke


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "key.txt"
    path.write_text("k3y-shared-secret\n")
    return str(path)


def test_identity_show_before_init_is_exit_2(run):
    result = run("identity", "show", "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "identity.missing"


def test_identity_init_then_show(run):
    created = run("identity", "init", "--json")
    assert created.exit_code == 0
    data = json.loads(created.output)
    assert data["new"] is True and data["agent_id"].startswith("lx-")
    again = json.loads(run("identity", "init", "--json").output)
    assert again["new"] is False and again["public_key"] == data["public_key"]
    shown = run("identity", "show")
    assert shown.exit_code == 0 and data["public_key"] in shown.output


def test_sign_reproduces_a_vector_signature(run, key_file, signature_cases):
    case = signature_cases[0]["envelope"]
    result = run("envelope", "sign", "-k", key_file, "--from", "agent-guest-02",
                 "--to", "agent-host-01", "--timestamp", case["timestamp"],
                 stdin=json.dumps(case["payload"]))
    assert result.exit_code == 0, result.output
    env = json.loads(result.output)
    assert env["signature"] == case["signature"] and env["type"] == "p2p:move"


def test_sign_then_verify_round_trip(run, key_file):
    run("identity", "init")
    signed = run("envelope", "sign", "-k", key_file, "--to", "peer", "--ttl", "60",
                 stdin='{"action": "chat", "text": "你好"}')
    assert signed.exit_code == 0
    verified = run("envelope", "verify", "-k", key_file, "--json", stdin=signed.output)
    assert verified.exit_code == 0
    assert json.loads(verified.output)["payload"]["text"] == "你好"


def test_verify_vectors_at_their_time_and_with_ignore_time(run, tmp_path, signature_cases):
    for case in signature_cases:
        key = tmp_path / "k"
        key.write_bytes(case["key_utf8"].encode())
        env = case["envelope"]
        prefix = env["type"].split(":")[0]
        at = run("envelope", "verify", "-k", str(key), "--at", env["timestamp"],
                 "--prefix", prefix, stdin=json.dumps(env))
        assert at.exit_code == 0, at.output
        stored = run("envelope", "verify", "-k", str(key), "--ignore-time", stdin=json.dumps(env))
        assert stored.exit_code == 0


def test_verify_rejects_with_the_code_and_exit_1(run, key_file, signature_cases):
    env = dict(signature_cases[0]["envelope"])
    stale = run("envelope", "verify", "-k", key_file, "--json", stdin=json.dumps(env))
    assert stale.exit_code == 1
    assert json.loads(stale.output)["error"]["code"] == "envelope.stale"
    env["payload"] = {**env["payload"], "row": 9}
    tampered = run("envelope", "verify", "-k", key_file, "--ignore-time", stdin=json.dumps(env))
    assert tampered.exit_code == 1
    assert "envelope.bad_signature" in tampered.output


def test_verify_unreadable_input_is_exit_2(run, key_file, tmp_path):
    assert run("envelope", "verify", "-k", key_file, stdin="not json").exit_code == 2
    assert run("envelope", "verify", "-k", key_file, stdin=b"\xff\xfe").exit_code == 2
    assert run("envelope", "verify", "-k", str(tmp_path / "missing"), stdin="{}").exit_code == 2
    # readable JSON that is not an acceptable envelope is a rejection, not an input error
    assert run("envelope", "verify", "-k", key_file, stdin="[1]").exit_code == 1


def test_sign_input_problems_are_exit_2(run, key_file):
    no_receiver = run("envelope", "sign", "-k", key_file, "--from", "a", stdin='{"action": "x"}')
    assert no_receiver.exit_code == 2 and "--to" in no_receiver.output
    no_action = run("envelope", "sign", "-k", key_file, "--from", "a", "--to", "b", stdin="{}")
    assert no_action.exit_code == 2
    no_identity = run("envelope", "sign", "-k", key_file, "--to", "b", stdin='{"action": "x"}')
    assert no_identity.exit_code == 2 and "identity" in no_identity.output
    bad_json = run("envelope", "sign", "-k", key_file, "--from", "a", "--to", "b", stdin="{")
    assert bad_json.exit_code == 2


def test_sealed_envelope_needs_the_aead_key(run, key_file, tmp_path):
    aead = tmp_path / "aead.hex"
    aead.write_text("ab" * 32)
    signed = run("envelope", "sign", "-k", key_file, "--from", "a", "--to", "b",
                 "--aead-key-file", str(aead), stdin='{"action": "hand", "cards": [1, 2]}')
    assert signed.exit_code == 0 and "cards" not in signed.output
    closed = run("envelope", "verify", "-k", key_file, stdin=signed.output)
    assert closed.exit_code == 1 and "envelope.decrypt_failed" in closed.output
    opened = run("envelope", "verify", "-k", key_file, "--aead-key-file", str(aead), "--json",
                 stdin=signed.output)
    assert opened.exit_code == 0 and json.loads(opened.output)["payload"]["cards"] == [1, 2]


def test_help_texts_exist(run):
    for args in (("identity", "--help"), ("envelope", "sign", "--help"),
                 ("envelope", "verify", "--help"), ("identity", "init", "--help")):
        result = run(*args)
        assert result.exit_code == 0 and "Usage" in result.output
