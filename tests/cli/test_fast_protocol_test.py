"""A plain ``lingxi protocol test`` runs without Click (lingxi.cli.fast), and every line
it takes binds as Click binds it; every other line, and every usage error, is Click's."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.cli import cli, fast, plain
from lingxi.cli.common import POSITIVE_SECONDS
from lingxi.cli.protocol_runtime import test_cmd as click_test_cmd

PROBE = """
import atexit, gc, sys
from lingxi.cli import main
def report():
    print("click" if "click" in sys.modules else "no click",
          "gc", gc.isenabled(), "frozen", gc.get_freeze_count() > 0, file=sys.stderr)
atexit.register(report)
sys.argv = ["lingxi", *sys.argv[1:]]
main()
"""


def _probe(argv: list[str], home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, LINGXI_HOME=str(home), PYTHONIOENCODING="utf-8", LINGXI_DEBUG="",
               COLUMNS="80")
    env.pop(fast.COMPLETE_VAR, None)
    return subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, encoding="utf-8", env=env, timeout=300)


def _clicked(argv: list[str], home: Path):
    return CliRunner().invoke(cli, argv, prog_name="lingxi", terminal_width=80,
                              env={"LINGXI_HOME": str(home), "LINGXI_DEBUG": ""})


# ------------------------------------------------------------------ the options, held equal

def _kind(param: click.Option) -> tuple[str, tuple[str, ...]]:
    kind = param.type
    if param.is_flag:
        return fast.FLAG, ()
    if isinstance(kind, click.Choice):
        return fast.TEXT, tuple(kind.choices)
    if isinstance(kind, click.IntRange):
        assert (kind.min, kind.max, kind.min_open, kind.clamp) == (1, None, False, False)
        return fast.COUNT, ()
    if kind is click.INT:
        return fast.INT, ()
    if kind is POSITIVE_SECONDS:
        return fast.SECONDS, ()
    if isinstance(kind, click.Path):
        assert not kind.exists and kind.readable and not kind.writable
        assert not kind.resolve_path and not kind.allow_dash and kind.type is None
        assert kind.file_okay != kind.dir_okay
        return (fast.FILE if kind.file_okay else fast.FOLDER), ()
    assert kind is click.STRING, (param.name, kind)
    return fast.TEXT, ()


def test_the_table_is_the_click_commands_options():
    params = click_test_cmd.params
    arguments = [p for p in params if isinstance(p, click.Argument)]
    assert [(a.name, a.nargs, a.required) for a in arguments] == [(fast.ARGUMENT, 1, True)]
    options = [p for p in params if isinstance(p, click.Option)]
    table = {}
    for option in options:
        assert not option.secondary_opts and not option.multiple and option.nargs == 1
        assert option.envvar is None and option.callback is None and not option.is_eager
        for name in option.opts:
            table[name] = (option.name, *_kind(option))
    assert table == fast.OPTIONS
    bound = _click_params(["x"])  # each option's default, as Click binds it
    assert bound is not None and bound.pop(fast.ARGUMENT) == "x"
    assert bound == fast.DEFAULTS


def _click_params(args: list[str]) -> dict | None:
    try:
        ctx = click_test_cmd.make_context("test", list(args))
    except (click.ClickException, click.exceptions.Exit):
        return None
    return dict(ctx.params)


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("fastpaths")
    (base / "file.json").write_text("{}")
    (base / "folder").mkdir()
    return {"file": str(base / "file.json"), "folder": str(base / "folder"),
            "absent": str(base / "absent")}


TAKEN = [
    ["rock-paper-scissors"],
    ["guess-number", "--seed", "7", "--json"],
    ["--seed=-3", "hero-duel", "--adversarial", "--timeout", "2.5"],
    ["x", "--options", '{"best_of": 3}', "--strict", "--max-messages", "10"],
    ["x", "--options", "--help"],  # Click too takes the next word as the value
    ["x", "--seed", "1", "--seed", "2"],  # the later one wins, as in Click
    ["x", "--control-mode", "autonomous", "--as", "guest", "--no-input", "--interactive"],
    ["x", "--max-bytes=1", "--max-state-bytes", "99", "--allow-skeleton-hooks"],
    ["x", "--seed", " 12 "],  # int() strips, as Click's INT does
]
REFUSED = [
    [], ["a", "b"], ["x", "--help"], ["x", "-h"], ["x", "--seed"], ["x", "--seed", "y"],
    ["x", "--seed="], ["x", "--json=1"], ["x", "--timeout", "0"], ["x", "--timeout", "nan"],
    ["x", "--timeout", "-1"], ["x", "--max-messages", "0"], ["x", "--control-mode", "human"],
    ["x", "--control-mode", "Autonomous"], ["x", "--as", "host2"], ["x", "--sed", "1"],
    ["--", "x"], ["-"], [""], ["x", "--options", ""], ["x", "-x"], ["x", "--no-such"],
]


@pytest.mark.parametrize("args", TAKEN, ids=" ".join)
def test_a_plain_line_is_taken_and_bound_as_click_binds_it(args):
    params = fast.parse(args)
    assert params is not None
    assert params == _click_params(args)


@pytest.mark.parametrize("args", REFUSED, ids=repr)
def test_anything_unsure_goes_to_click(args):
    assert fast.parse(args) is None


def test_paths_are_taken_as_click_takes_them(paths):
    for args in (["x", "--inputs", paths["file"]], ["x", "--inputs", paths["absent"]],
                 ["x", "--state-dir", paths["folder"]], ["x", "--state-dir", paths["absent"]]):
        assert fast.parse(args) == _click_params(args) is not None, args
    for args in (["x", "--inputs", paths["folder"]], ["x", "--state-dir", paths["file"]],
                 ["x", "--inputs", "a\0b"]):
        assert fast.parse(args) is None, args


WORDS = st.sampled_from([
    "rock-paper-scissors", "x", "-", "--", "", "-h", "--help", "7", "-1", "0", " 3", "1.5",
    "nan", "inf", "1e400", "y", "autonomous", "human", "hybrid", "host", "guest", "{}", "[1]",
    "--seed=4", "--seed=", "--json=", "--timeout=0.5", "--as=guest", "--options={}",
    "\u0663", "--se", "-s", "--json", "--adversarial", "\x00", "\ud800",
    *fast.OPTIONS])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=st.lists(WORDS, max_size=7))
def test_whatever_is_taken_binds_as_in_click(args):
    params = fast.parse(args)
    if params is not None:
        assert params == _click_params(args)


# ------------------------------------------------------------------ whole runs, both ways

def _runs(text: str) -> str:
    """``text`` with each run's own folder name (time and random suffix) made one."""
    return re.sub(r"-\d{8}T\d{6}-[0-9a-f]{6}", "-RUN", text)


def test_a_run_without_click_prints_what_clicks_run_prints(tmp_path):
    argv = ["protocol", "test", "rock-paper-scissors", "--seed", "3", "--state-dir"]
    done = _probe([*argv, str(tmp_path / "a")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "no click gc True frozen True"
    clicked = _clicked([*argv, str(tmp_path / "b")], tmp_path)
    assert clicked.exit_code == 0
    assert done.stdout.replace("/a/", "/b/") == clicked.output
    assert done.stdout.splitlines()[-1] == "PASS"


def test_the_json_form_is_the_same(tmp_path):
    argv = ["protocol", "test", "guess-number", "--json", "--state-dir"]
    done = _probe([*argv, str(tmp_path / "s")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1].startswith("no click")
    clicked = _clicked([*argv, str(tmp_path / "s2")], tmp_path)
    ours, theirs = json.loads(done.stdout), json.loads(clicked.output)
    assert ours.pop("state_dir").endswith("/s") and theirs.pop("state_dir").endswith("/s2")
    assert ours == theirs and ours["ok"] is True


@pytest.mark.parametrize("argv", [
    ["protocol", "test", "no-such-protocol"],
    ["protocol", "test", "rock-paper-scissors", "--options", "[1]"],
    ["protocol", "test", "rock-paper-scissors", "--options", "{bad"],
    ["protocol", "test", "rock-paper-scissors", "--options", "{bad", "--json"],
    ["protocol", "test", "rock-paper-scissors", "--options", '{"best_of": "x"}'],
    ["protocol", "test", "rock-paper-scissors", "--options", '{"best_of": 3, "bst": 1}'],
    ["protocol", "test", "rock-paper-scissors", "--options", '{"bst": 1}', "--strict"],
    ["protocol", "test", "rock-paper-scissors", "--no-input", "--interactive"],
])
def test_the_commands_own_errors_are_the_same_line(tmp_path, argv):
    done = _probe(argv, tmp_path)
    assert done.stderr.splitlines()[-1].startswith("no click")
    clicked = _clicked(argv, tmp_path)
    assert done.returncode == clicked.exit_code
    assert _runs(done.stdout) == _runs(clicked.stdout)
    assert done.stderr.splitlines()[:-1] == clicked.stderr.splitlines()
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("argv", [
    ["protocol", "test"], ["protocol", "test", "rock-paper-scissors", "--seed", "x"],
    ["protocol", "test", "rock-paper-scissors", "--sed", "1"],
    ["protocol", "test", "rock-paper-scissors", "--timeout", "-1", "--json"],
    ["protocol", "test", "rock-paper-scissors", "--json=yes"],
])
def test_usage_errors_are_clicks_own(tmp_path, argv):
    done = _probe(argv, tmp_path)
    assert done.stderr.splitlines()[-1].startswith("click")
    clicked = _clicked(argv, tmp_path)
    assert done.returncode == clicked.exit_code == 2
    assert done.stdout == clicked.stdout
    assert done.stderr.splitlines()[:-1] == clicked.stderr.splitlines()
    if "--json" in argv:
        assert json.loads(done.stdout)["error"]["code"].startswith("usage.")
    else:
        assert len(done.stderr.splitlines()) == 2 and done.stderr.startswith("error: usage.")


def test_the_help_is_clicks(tmp_path):
    done = _probe(["protocol", "test", "--help"], tmp_path)
    assert done.returncode == 0 and done.stderr.startswith("click")
    clicked = subprocess.run([sys.executable, "-c", "from lingxi.cli import cli; "
                              "cli(['protocol', 'test', '--help'], prog_name='lingxi')"],
                             capture_output=True, text=True, encoding="utf-8",
                             env=dict(os.environ, COLUMNS="80", PYTHONIOENCODING="utf-8"))
    assert clicked.returncode == 0
    assert done.stdout == clicked.stdout
    assert done.stdout.startswith("Usage: lingxi protocol test [OPTIONS] PROTOCOL")


def test_shell_completion_goes_to_click(monkeypatch):
    monkeypatch.setenv(fast.COMPLETE_VAR, "bash_complete")
    assert fast.protocol_test(["protocol", "test", "x"]) is False
    monkeypatch.delenv(fast.COMPLETE_VAR)
    assert fast.protocol_test(["protocol", "list"]) is False
    assert fast.protocol_test(["protocol", "test", "--help"]) is False


# ------------------------------------------------------------------ the plumbing

def _stream(encoding: str, errors: str | None = "strict") -> io.TextIOWrapper:
    stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors)
    return stream


@pytest.mark.parametrize("text", ["plain", "灵隙 «words»", "\x1b[31mred\x1b[0m", ""])
@pytest.mark.parametrize("encoding", ["utf-8", "ascii", "latin-1"])
@pytest.mark.parametrize("err", [False, True])
def test_echo_writes_what_click_echo_writes(monkeypatch, text, encoding, err):
    name = "stderr" if err else "stdout"
    written = []
    for writer in (plain.echo, click.echo):
        stream = _stream(encoding)
        monkeypatch.setattr(sys, name, stream)
        try:
            writer(text, err=err)
            stream.flush()
            written.append(stream.buffer.getvalue())
        except UnicodeEncodeError as error:
            written.append(type(error))
    assert written[0] == written[1]


def test_guarded_reports_what_a_command_let_through(capsys, monkeypatch):
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stop:
        plain.guarded(["protocol", "test"], interrupted)
    assert stop.value.code == 1
    assert capsys.readouterr().err == "\nerror: usage.aborted: aborted\n"

    def clicks_own():
        raise click.BadParameter("no good", param_hint="'--seed'")

    with pytest.raises(SystemExit) as stop:
        plain.guarded(["x"], clicks_own, fast._clicks_own)
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("error: usage.bad_parameter: ")
    with pytest.raises(SystemExit) as stop:
        plain.guarded(["x"], lambda: (_ for _ in ()).throw(click.Abort()), fast._clicks_own)
    assert stop.value.code == 1
    assert capsys.readouterr().err == "error: usage.aborted: aborted\n"

    def bug():
        raise ZeroDivisionError("oops")

    monkeypatch.delenv("LINGXI_DEBUG", raising=False)
    with pytest.raises(SystemExit) as stop:
        plain.guarded(["protocol", "test", "--json"], bug, fast._clicks_own)
    assert stop.value.code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "internal.error" and "'protocol test'" in error["message"]

    with pytest.raises(SystemExit) as stop:
        plain.guarded([], lambda: 7)
    assert stop.value.code == 2
    with pytest.raises(SystemExit) as stop:
        plain.guarded([], lambda: None)
    assert stop.value.code == 0
