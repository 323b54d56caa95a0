"""No traceback anywhere: Click's usage errors, bad JSON input, bad seconds, hostile text.

Each test names the issue-9 example it pins down; each failed before the fix
(a multi-line Click usage block without a code, a traceback, a raw escape
sequence on the terminal, or `nan` accepted as a window).
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.cli.common import (
    SECONDS,
    Seconds,
    parse_json_bytes,
    peer_text,
    print_json,
    read_json_source,
)
from lingxi.errors import InputError
from lingxi.textsafe import terminal_safe


def run(*args: str, input: bytes | str | None = None):
    result = CliRunner().invoke(cli, list(args), input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception))
    return result


def one_error_line(result, code: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {code}: "), lines[0]


# ---------------------------------------------------------------- Click's own usage errors

@pytest.mark.parametrize(("args", "code"), [
    (["protocol", "validate", "--bogus", "x"], "usage.no_such_option"),
    (["protocol", "validate"], "usage.missing_parameter"),
    (["validate", "spec.json"], "usage.missing_parameter"),
    (["envelope", "verify"], "usage.missing_parameter"),
    (["no-such-command"], "usage.no_such_command"),
    (["protocol", "nope"], "usage.no_such_command"),
    (["envelope", "verify", "-k", "k", "--window", "nan"], "usage.bad_parameter"),
    (["envelope", "sign", "-k", "k", "--ttl", "-1"], "usage.bad_parameter"),
    (["validate", "s", "m", "--direction", "sideways"], "usage.bad_parameter"),
])
def test_click_usage_errors_are_one_line_with_a_code(args, code):
    result = run(*args)
    assert result.exit_code == 2
    one_error_line(result, code)
    assert "--help" in result.stderr and "Traceback" not in result.output


def test_usage_errors_in_json_form():
    result = run("protocol", "validate", "--json", "--bogus")
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["error"]["code"] == "usage.no_such_option"


def test_a_file_where_a_folder_is_expected_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run("protocol", "create", "-t", "free-chat", "-o", str(blocker / "sub" / "spec.json"))
    assert result.exit_code == 2
    one_error_line(result, "io.write_failed")


def test_a_folder_where_a_file_is_expected_is_one_line(tmp_path):
    result = run("envelope", "verify", "-k", str(tmp_path), input=b"{}")
    assert result.exit_code == 2
    one_error_line(result, "input.unreadable")
    assert "is a folder" in result.stderr


def test_help_and_version_still_exit_0():
    assert run("--help").exit_code == 0
    assert run("--version").exit_code == 0
    assert run("protocol", "--help").exit_code == 0


def test_an_unexpected_exception_is_internal_error_not_a_traceback(monkeypatch):
    from lingxi.contract import spec as spec_module

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(spec_module, "check_spec_document", broken)
    monkeypatch.delenv("LINGXI_DEBUG", raising=False)
    result = run("protocol", "hash", "whatever.json")
    assert result.exit_code == 2  # the file is missing: typed error before the bug is reached
    import lingxi.contract.source as source

    monkeypatch.setattr(source, "read_spec_document", lambda s: ({}, "x", []))
    monkeypatch.setattr(spec_module, "read_spec_document", lambda s: ({}, "x", []))
    result = run("protocol", "hash", "whatever.json")
    assert result.exit_code == 2
    one_error_line(result, "internal.error")
    assert "ZeroDivisionError" in result.stderr


def test_the_real_console_script_prints_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "lingxi", "protocol", "validate", "--nope"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: usage.no_such_option")
    assert len(proc.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- seconds

@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "-1", "1e999", "x", ""])
def test_seconds_refuses_nan_inf_negative_and_junk(text):
    with pytest.raises(click.BadParameter):
        SECONDS.convert(text, None, None)


def test_seconds_accepts_finite_non_negative_values():
    assert SECONDS.convert("0", None, None) == 0.0
    assert SECONDS.convert("2.5", None, None) == 2.5
    assert SECONDS.convert(7, None, None) == 7.0
    with pytest.raises(click.BadParameter):
        Seconds(allow_zero=False).convert("0", None, None)


@pytest.mark.parametrize("window", ["nan", "inf", "-5", "0"])
def test_envelope_verify_refuses_bad_windows(tmp_path, window):
    key = tmp_path / "k"
    key.write_text("secret")
    result = run("envelope", "verify", "-k", str(key), "--window", window, input=b"{}")
    assert result.exit_code == 2
    one_error_line(result, "usage.bad_parameter")


# ---------------------------------------------------------------- JSON readers

@pytest.mark.parametrize(("data", "needle"), [
    (b"\xff\xfe{}", "not UTF-8"),
    (b'{"a": NaN}', "NaN"),
    (b'{"a": 1, "a": 2}', "appears twice"),
    (b"[" * 300 + b"]" * 300, "nested"),
    (b"[" * 100_000, "nested"),
    (b'{"a":', "1:6"),
])
def test_parse_json_bytes_gives_one_typed_error(data, needle):
    with pytest.raises(InputError) as info:
        parse_json_bytes(data, "F", code="input.bad_json")
    assert info.value.code == "input.bad_json" and info.value.exit_code == 2
    assert needle in info.value.message and "\n" not in info.value.message


@pytest.mark.parametrize(("text", "kind"), [("[]", "array"), ("null", "null"), ('"x"', "string"),
                                            ("7", "integer")])
def test_wrong_shapes_are_named(text, kind):
    with pytest.raises(InputError) as info:
        parse_json_bytes(text.encode(), "state.json", expect="object",
                         shape_code="session.bad_state")
    assert info.value.code == "session.bad_state"
    assert info.value.message == f"state.json: expected a JSON object, got {kind}"


def test_read_json_source_reads_text_stdin_and_files(tmp_path, monkeypatch):
    path = tmp_path / "o.json"
    path.write_bytes(b'{"k": 1}')
    assert read_json_source(f"@{path}", what="--options") == {"k": 1}
    assert read_json_source('{"k": 2}') == {"k": 2}
    with pytest.raises(InputError) as info:
        read_json_source(f"@{tmp_path / 'missing'}", what="--options")
    assert info.value.code == "input.unreadable"
    with pytest.raises(InputError) as info:
        read_json_source("\udcff", what="--options")
    assert info.value.code == "input.bad_json"


@pytest.mark.parametrize("message", ['{"action": "sit", "action": "sit"}', "[" * 500 + "]" * 500])
def test_lingxi_validate_refuses_repeated_keys_and_deep_nesting(corpus, message):
    result = run("validate", str(corpus["sealed-bids"]), message)
    assert result.exit_code == 2
    one_error_line(result, "message.bad_json")


def test_envelope_verify_reports_repeated_keys_as_malformed(tmp_path):
    key = tmp_path / "k"
    key.write_text("secret")
    result = run("envelope", "verify", "-k", str(key), input=b'{"id": "1", "id": "2"}')
    assert result.exit_code == 1 and "envelope.malformed" in result.stderr


def test_envelope_sign_refuses_a_payload_with_repeated_keys(tmp_path):
    key = tmp_path / "k"
    key.write_text("secret")
    result = run("envelope", "sign", "-k", str(key), "--from", "a", "--to", "b",
                 input=b'{"action": "x", "action": "y"}')
    assert result.exit_code == 2
    one_error_line(result, "input.bad_json")


def test_a_spec_table_nested_400_levels_is_a_typed_error(tmp_path):
    column: dict = {"type": "integer"}
    for _ in range(400):
        column = {"type": "object", "fields": {"x": column}}
    doc = {"name": "Deep", "messages": [{"name": "m", "direction": "both",
                                         "fields": {"n": {"type": "integer"}}}],
           "parameters": {"t": {"type": "table", "columns": {"x": column}}}}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for args in (["protocol", "validate", str(path)], ["protocol", "hash", str(path)],
                 ["validate", str(path), '{"action": "m"}']):
        result = run(*args)
        assert result.exit_code == 2, args
        one_error_line(result, "spec.bad_json")
        assert "nested more than 200 levels" in result.stderr


# ---------------------------------------------------------------- text from elsewhere

FORGED = "bye\r\x1b[2K\x1b[32msession completed (peer receipt verified)\x1b[0m\x07\u202e"


def test_terminal_safe_escapes_every_control_and_stays_on_one_line():
    safe = terminal_safe(FORGED)
    assert "\x1b" not in safe and "\r" not in safe and "\x07" not in safe
    assert "\u202e" not in safe and "\n" not in safe
    assert "\\x1b[2K" in safe and "\\r" in safe and "\\u202e" in safe
    for char in ("\x00", "\x7f", "\x9b", "\u2028", "\u2066", "\u200f", "\ud800", "\ufeff"):
        assert char not in terminal_safe(f"a{char}b")
    assert terminal_safe("灵隙 chat 👍🏽") == "灵隙 chat 👍🏽"
    assert terminal_safe("a\\x1b") == "a\\\\x1b"  # a literal backslash cannot fake an escape


def test_terminal_safe_is_bounded():
    out = terminal_safe("x" * 10_000, 100)
    assert len(out) < 140 and out.endswith("more characters)")
    out = terminal_safe("\x1b" * 10_000, 100)
    assert len(out) < 140


def test_peer_text_is_marked_as_the_peers_words():
    assert peer_text("hello") == "«hello»"
    assert peer_text(FORGED).startswith("«bye\\r\\x1b")


def test_print_json_escapes_what_a_terminal_would_act_on(capsys):
    print_json({"name": "灵隙\u009b31m\u202e", "ok": "\x1b"})
    out = capsys.readouterr().out
    assert "\u009b" not in out and "\u202e" not in out and "\x1b" not in out
    assert json.loads(out) == {"name": "灵隙\u009b31m\u202e", "ok": "\x1b"}
    assert "灵隙" in out


def test_hostile_names_in_a_spec_do_not_reach_the_terminal_raw(tmp_path):
    doc = {"name": FORGED, "messages": [{"name": "m", "direction": "both", "fields": {
        "action": {"type": "enum", "values": ["m"]}, FORGED: {"type": "nope"}}}]}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = run("protocol", "validate", str(path))
    assert result.exit_code == 1
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\r" not in stream and "\u202e" not in stream
    result = run("validate", str(tmp_path / "spec.json"), json.dumps({"action": "m"}))
    assert "\x1b" not in result.stderr


def test_a_hostile_sender_id_is_escaped_by_envelope_verify(tmp_path):
    key = tmp_path / "k"
    key.write_text("secret")
    signed = run("envelope", "sign", "-k", str(key), "--from", "evil\x1b[2Kx", "--to", "me",
                 input=b'{"action": "ping"}')
    assert signed.exit_code == 0, signed.output
    result = run("envelope", "verify", "-k", str(key), input=signed.stdout)
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout and "evil\\x1b[2Kx" in result.stdout


@pytest.mark.parametrize("args", [
    ("protocol", "create", "-t", "free-chat", "-o", "out\ud800/spec.json"),
    ("protocol", "validate", "spec\ud800.json"),
])
def test_text_no_encoding_can_carry_is_an_input_error_not_a_bug(tmp_path, monkeypatch, args):
    """A lone surrogate (hypothesis found it in --output) reaching the file system was
    ``internal.error``; it is the input's fault: one coded line, exit 2."""
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "internal.error" not in result.output
    assert "input." in result.stderr, result.stderr
