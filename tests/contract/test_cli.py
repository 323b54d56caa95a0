"""The contract commands: output, --json, exit codes 0/1/2, no tracebacks."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.contract.catalog import TEMPLATES


def run(*args: str, input: str | None = None):
    result = CliRunner().invoke(cli, list(args), input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    return result


def write(tmp_path, doc, name="spec.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# ---------------------------------------------------------------- protocol hash

def test_hash_prints_the_published_id_for_every_vector(protocol_vectors):
    for name, (path, published) in protocol_vectors.items():
        result = run("protocol", "hash", str(path))
        assert result.exit_code == 0, name
        assert result.stdout.strip() == published, name


def test_hash_accepts_a_directory_and_json(tmp_path, corpus):
    from lingxi.contract import protocol_id

    path = corpus["lantern-maze"]
    (tmp_path / "spec.json").write_bytes(path.read_bytes())
    result = run("protocol", "hash", str(tmp_path), "--json")
    data = json.loads(result.stdout)
    expected = protocol_id(json.loads(path.read_text(encoding="utf-8")))
    assert data["protocol_id"] == expected and data["valid"] is True


def test_hash_warns_on_unknown_version_and_still_prints(tmp_path, base_spec):
    from lingxi.contract import protocol_id

    base_spec["spec_version"] = "9.0"
    result = run("protocol", "hash", str(write(tmp_path, base_spec)))
    assert result.exit_code == 0
    assert result.stdout.strip() == protocol_id(base_spec)
    assert "spec.unknown_version" in result.stderr


def test_hash_of_unreadable_input_exits_2(tmp_path):
    assert run("protocol", "hash", str(tmp_path / "none.json")).exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    result = run("protocol", "hash", str(bad))
    assert result.exit_code == 2 and f"{bad}:1:2" in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- protocol validate

def test_validate_loads_every_vector(protocol_vectors):
    for name, (path, published) in protocol_vectors.items():
        result = run("protocol", "validate", str(path), "--json")
        data = json.loads(result.stdout)
        assert result.exit_code == 0 and data["ok"] and data["protocol_id"] == published, name
        unsupported = data["flow_mode"] in ("authoritative_realtime", "authoritative_group")
        assert unsupported == any(f["code"] == "spec.mode_not_supported"
                                  for f in data["findings"]), name


def test_validate_strict_fails_on_warnings(corpus):
    path = corpus["arena-clash"]  # authoritative_realtime: loads, but only with a warning
    assert run("protocol", "validate", str(path)).exit_code == 0
    assert run("protocol", "validate", str(path), "--strict").exit_code == 1


def test_validate_lists_one_line_per_problem_and_exits_1(tmp_path, base_spec):
    del base_spec["name"]
    base_spec["messages"][1]["fields"]["number"]["type"] = "float"
    result = run("protocol", "validate", str(write(tmp_path, base_spec)))
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("error:")]
    assert lines == [
        "error: name: name is required [spec.missing_field]",
        "error: messages[1].fields.number.type: unknown field type 'float' (known: array, "
        "boolean, ciphertext, enum, hash, id, integer, json, key, nonce, ot_blob, signature, "
        "text, ticket) [spec.unknown_field_type]",
    ]


def test_validate_rejects_unknown_version(tmp_path, base_spec):
    base_spec["spec_version"] = "2.0"
    result = run("protocol", "validate", str(write(tmp_path, base_spec)), "--json")
    assert result.exit_code == 1
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == [
        "spec.unknown_version"]


@pytest.mark.parametrize("content", [None, "", "[]", '{"a": 1,}', "\xff"])
def test_validate_unreadable_input_exits_2_without_traceback(tmp_path, content):
    path = tmp_path / "spec.json"
    if content is not None:
        path.write_bytes(content.encode("latin-1"))
    result = run("protocol", "validate", str(path))
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- protocol create

@pytest.mark.parametrize("template", list(TEMPLATES))
def test_every_template_creates_a_clean_spec(tmp_path, template):
    out = tmp_path / f"{template}.json"
    result = run("protocol", "create", "--template", template, "--output", str(out))
    assert result.exit_code == 0, result.output
    check = run("protocol", "validate", str(out), "--strict", "--json")
    data = json.loads(check.stdout)
    from lingxi.session import runnable_modes

    if data["flow_mode"] in runnable_modes() or data["flow_mode"] == "group":
        assert check.exit_code == 0 and data["findings"] == []
    else:  # validates, but the runtime says it does not run it: --strict fails, like test
        assert check.exit_code == 1
        assert [f["code"] for f in data["findings"]] == ["session.mode_not_supported"]
    assert run("protocol", "hash", str(out)).stdout.strip() == data["protocol_id"]


def test_validate_strict_and_protocol_test_agree_on_every_template(tmp_path):
    """Regression: validate --strict said ok for card-game while protocol test refused it."""
    for template in TEMPLATES:
        folder = tmp_path / template
        assert run("protocol", "create", "--template", template, "--output",
                   str(folder / "spec.json")).exit_code == 0
        strict_ok = run("protocol", "validate", str(folder), "--strict").exit_code == 0
        test = run("protocol", "test", str(folder), "--json")
        refused = "session.mode_not_supported" in test.output
        assert strict_ok == (not refused), template


def test_templates_cover_the_five_modes():
    from lingxi.contract import load_spec
    from lingxi.contract.catalog import template_document

    modes = {load_spec(template_document(n)).flow.mode for n in TEMPLATES}
    assert modes == {"session_loop", "simultaneous_round", "request_response", "free",
                     "mental_poker", "group"}
    sim = load_spec(template_document("simultaneous-choice"))
    assert sim.commit_reveal["algorithm"] == "SHA256" and sim.flow.round is not None


def test_create_refuses_to_overwrite_without_force(tmp_path):
    out = tmp_path / "spec.json"
    out.write_text("keep me", encoding="utf-8")
    result = run("protocol", "create", "-t", "free-chat", "-o", str(out))
    assert result.exit_code == 2 and "--force" in result.stderr
    assert out.read_text(encoding="utf-8") == "keep me"
    assert run("protocol", "create", "-t", "free-chat", "-o", str(out), "--force",
               "--name", "My Chat").exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8"))["name"] == "My Chat"


def test_create_into_a_directory_writes_spec_json(tmp_path):
    assert run("protocol", "create", "-t", "card-game", "-o", str(tmp_path)).exit_code == 0
    assert (tmp_path / "spec.json").is_file()


def test_create_lists_templates_and_names_them_on_error(tmp_path):
    listing = run("protocol", "create", "--list")
    assert listing.exit_code == 0 and all(n in listing.stdout for n in TEMPLATES)
    names = json.loads(run("protocol", "create", "--list", "--json").stdout)["templates"]
    assert [t["name"] for t in names] == list(TEMPLATES)
    for args in (["-t", "poker", "-o", str(tmp_path / "x.json")], ["-o", "x.json"]):
        result = run("protocol", "create", *args)
        assert result.exit_code == 2 and "turn-based-game" in result.stderr
    assert run("protocol", "create", "-t", "free-chat").exit_code == 2


# ---------------------------------------------------------------- lingxi validate

@pytest.fixture
def rps(corpus):
    """A simultaneous_round spec of the project's own corpus (seal/open/award)."""
    return str(corpus["sealed-bids"])


def test_validate_message_ok(rps):
    msg = json.dumps({"action": "seal", "lot": 1, "hash": "0" * 64})
    result = run("validate", rps, msg, "--direction", "guest_to_host")
    assert result.exit_code == 0 and result.stdout.strip() == "valid: seal (both)"


def test_validate_message_reports_every_problem(rps):
    msg = json.dumps({"action": "open", "lot": -1, "bid": "ten", "x": 1})
    result = run("validate", rps, msg, "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and not data["ok"]
    assert [(f["path"], f["code"]) for f in data["findings"]] == [
        ("lot", "message.out_of_range"), ("bid", "message.wrong_type"),
        ("x", "message.unknown_field"), ("nonce", "message.missing_field")]


def test_validate_message_direction_and_name(rps):
    msg = json.dumps({"action": "award"})
    result = run("validate", rps, msg, "-d", "guest_to_host")
    assert result.exit_code == 1 and "message.wrong_direction" in result.stdout
    end = json.dumps({"action": "sit"})
    assert run("validate", rps, end, "--message", "sit").exit_code == 0
    assert run("validate", rps, end, "--message", "nope").exit_code == 2
    assert run("validate", rps, end, "-d", "sideways").exit_code == 2


def test_validate_message_from_stdin_and_file(rps, tmp_path):
    msg = json.dumps({"action": "sit"})
    assert run("validate", rps, "-", input=msg).exit_code == 0
    path = tmp_path / "m.json"
    path.write_text(msg, encoding="utf-8")
    assert run("validate", rps, f"@{path}").exit_code == 0
    assert run("validate", rps, f"@{tmp_path / 'missing.json'}").exit_code == 2


@pytest.mark.parametrize("msg", ['{"action":', "NaN", "[" * 50000])
def test_validate_unreadable_message_exits_2(rps, msg):
    result = run("validate", rps, msg)
    assert result.exit_code == 2 and "message.bad_json" in result.stderr
    assert "Traceback" not in result.output


def test_validate_with_bad_spec_exits_2(tmp_path, base_spec):
    base_spec["spec_version"] = "3"
    result = run("validate", str(write(tmp_path, base_spec)), '{"action": "join"}')
    assert result.exit_code == 2 and "spec.unknown_version" in result.stderr
    assert run("validate", str(tmp_path / "nope"), "{}").exit_code == 2


@pytest.mark.parametrize("args,mention", [
    (["protocol", "validate"], "Exit 0"),
    (["protocol", "hash"], "protocol_id"),
    (["protocol", "create"], "free-chat"),
    (["validate"], "Exit 0 valid"),
])
def test_commands_have_help(args, mention):
    result = run(*args, "--help")
    assert result.exit_code == 0 and "Usage:" in result.stdout
    assert mention in " ".join(result.stdout.split())
