"""A person taking part at the terminal (issue 12): two terminals playing
rock-paper-scissors, a live chat, Ctrl-C, the watching and steering commands
(session list/events/abort/decide), ``protocol test --control-mode human``, the
console's escaping and the terminal decider's parsing.

Terminals are pseudo-terminals driven by pexpect; HANG_GUARD only stops a
broken run from hanging the suite, nothing here asserts on timing.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.cli.console import event_lines
from lingxi.deciders.terminal import Terminal, TerminalDecider, parse_answer
from lingxi.session.core.events import RequestDecision
from lingxi.session.runner import load_protocol, run_pair

HANG_GUARD = 60
LINGXI = str(Path(sys.executable).parent / "lingxi")
PROMPT = r"1-3 \(\d+ s left\)> "
RPS3 = '{"best_of": 3, "termination": "fixed_rounds"}'
RPS = "rock-paper-scissors"


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "LINGXI_HOME": str(home), "LINGXI_DEBUG": "", "COLUMNS": "250"}


def _spawn(args: list[str], home: Path) -> pexpect.spawn:
    return pexpect.spawn(LINGXI, args, env=_env(home), encoding="utf-8", timeout=HANG_GUARD,
                         dimensions=(60, 250))


def _hosting(host: pexpect.spawn) -> str:
    host.expect(r"on (tcp://127\.0\.0\.1:\d+)")
    return host.match.group(1)


def _done(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    status = child.wait()
    return status


def _lingxi(args: list[str], home: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([LINGXI, *args], env=_env(home), capture_output=True, text=True,
                          timeout=HANG_GUARD, **kwargs)


def _quick_spec(tmp_path: Path, seconds: float) -> Path:
    """A copy of rock-paper-scissors whose decisions time out after ``seconds``."""
    folder = tmp_path / "rps-quick"
    shutil.copytree(load_protocol(RPS).folder, folder, ignore=shutil.ignore_patterns("ui"))
    spec = json.loads((folder / "spec.json").read_text())
    spec["decision"]["timeout_seconds"] = seconds
    (folder / "spec.json").write_text(json.dumps(spec))
    return folder


def _hold(folder: Path) -> int:
    """Hold a session folder's lock the way its running process does."""
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


# ------------------------------------------------------------------ two terminals

def test_two_people_play_best_of_3_in_two_terminals(tmp_path) -> None:
    host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0",
                   "--control-mode", "human", "--options", RPS3,
                   "--state-dir", str(tmp_path / "h")], tmp_path / "home-h")
    try:
        endpoint = _hosting(host)
        guest = _spawn(["guest", "--endpoint", endpoint, "--control-mode", "human",
                        "--state-dir", str(tmp_path / "g")], tmp_path / "home-g")
        try:
            host.expect("session started: Rock-Paper-Scissors")
            guest.expect("session started: Rock-Paper-Scissors")
            plays = [("1", "rock", "scissors", "scissors"), ("paper", "paper", "3", "scissors"),
                     ("Scissors", "scissors", "1", "rock")]
            for number, (host_types, host_value, guest_types, guest_value) \
                    in enumerate(plays, 1):
                host.expect(r"1\) rock\s+2\) paper\s+3\) scissors")  # plain words, numbered
                host.expect(PROMPT)
                host.sendline(host_types)
                guest.expect(PROMPT)
                guest.sendline(guest_types)
                # each round's result in the game's words, from each side, before the next
                host.expect_exact(f"round {number}: you {host_value}, the peer {guest_value}")
                guest.expect_exact(f"round {number}: you {guest_value}, the peer {host_value}")
            host.expect_exact("outcome: you lost 1–2")
            guest.expect_exact("outcome: you won 2–1")
            for side in (host, guest):
                side.expect("session completed")
            assert _done(host) == 0 and _done(guest) == 0
        finally:
            guest.terminate(force=True)
    finally:
        host.terminate(force=True)
    rounds = [json.loads(line) for line in (tmp_path / "g" / "events.jsonl").read_text()
              .splitlines() if '"event":"round"' in line]
    assert [(r["host"], r["guest"]) for r in rounds] == \
        [("rock", "scissors"), ("paper", "scissors"), ("scissors", "rock")]


def test_a_person_who_does_not_answer_gets_the_fallback(tmp_path) -> None:
    quick = _quick_spec(tmp_path, 1.5)
    host = _spawn(["host", "--protocol-dir", str(quick), "--endpoint", "tcp://127.0.0.1:0",
                   "--control-mode", "human", "--options", '{"best_of": 1}'], tmp_path / "h")
    try:
        endpoint = _hosting(host)
        guest = _lingxi_async(["guest", "--endpoint", endpoint, "--protocol-dir", str(quick)],
                              tmp_path / "g")
        host.expect(PROMPT)
        host.expect(r"time is up: (rock|paper|scissors) was played for you")
        host.expect("outcome: (you won|you lost|a draw)")
        assert _done(host) == 0
        assert guest.wait(HANG_GUARD) == 0
    finally:
        host.terminate(force=True)


def _lingxi_async(args: list[str], home: Path) -> subprocess.Popen:
    return subprocess.Popen([LINGXI, *args], env=_env(home), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_chat_is_live_in_both_terminals(tmp_path) -> None:
    host = _spawn(["host", "--protocol-dir", "chat", "--endpoint", "tcp://127.0.0.1:0",
                   "--input", "-"], tmp_path / "home-h")
    try:
        guest = _spawn(["guest", "--endpoint", _hosting(host), "--input", "-"],
                       tmp_path / "home-g")
        try:
            host.expect("session started: Chat")
            guest.expect("session started: Chat")
            guest.expect("the peer: «")  # the host's ready line, in the chat's words
            host.sendline("hello from the host \x1b[31m")
            guest.expect_exact("the peer: «#1: hello from the host \\x1b[31m»")  # escaped
            guest.sendline("hi back")
            host.expect_exact("the peer: «#1: hi back»")
            host.sendline("/quit")
            for side in (host, guest):
                side.expect("session completed")
            assert _done(host) == 0 and _done(guest) == 0
        finally:
            guest.terminate(force=True)
    finally:
        host.terminate(force=True)


def test_guest_ctrl_c_aborts_and_the_host_sees_it(tmp_path) -> None:
    host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0"],
                  tmp_path / "home-h")
    try:
        guest = _spawn(["guest", "--endpoint", _hosting(host), "--control-mode", "human"],
                       tmp_path / "home-g")
        try:
            guest.expect(PROMPT)
            guest.sendintr()
            guest.expect("session aborted: interrupted")
            assert "Traceback" not in guest.before
            assert _done(guest) == 1
            host.expect(r"the peer aborted: code «session\.aborted_locally»")
            host.expect("session aborted")
            assert _done(host) == 1
        finally:
            guest.terminate(force=True)
    finally:
        host.terminate(force=True)
    listed = _lingxi(["session", "list", "--json"], tmp_path / "home-g")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["role"] == "guest" and row["state"] == "finished"
    assert row["outcome"]["status"] == "aborted"
    assert row["outcome"]["code"] == "session.aborted_locally"
    late = _lingxi(["session", "decide", "rock", "--state-dir", row["state_dir"]],
                   tmp_path / "home-g")
    assert late.returncode == 1 and "session.finished" in late.stderr


# ------------------------------------------------------------ watching and steering

def _waiting_host(tmp_path: Path) -> tuple[subprocess.Popen, Path, subprocess.Popen]:
    """A host whose person never answers (stdin closed) and a guest, both running."""
    host = subprocess.Popen([LINGXI, "host", "--protocol-dir", RPS, "--endpoint",
                             "tcp://127.0.0.1:0", "--control-mode", "human"],
                            env=_env(tmp_path / "home"), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert host.stderr is not None
    endpoint = None
    deadline = time.monotonic() + HANG_GUARD
    while endpoint is None and time.monotonic() < deadline:
        found = re.search(r"on (tcp://127\.0\.0\.1:\d+)", host.stderr.readline())
        endpoint = found.group(1) if found else None
    assert endpoint, "the host did not listen"
    guest = _lingxi_async(["guest", "--endpoint", endpoint], tmp_path / "home-g")
    while time.monotonic() < deadline:
        for snapshot in (tmp_path / "home" / "sessions").glob("*-host/snapshot.json"):
            try:
                if json.loads(snapshot.read_text()).get("pending_decision"):
                    return host, snapshot.parent, guest
            except ValueError:  # being rewritten
                pass
        time.sleep(0.05)
    raise AssertionError("the host never waited for a decision")


def test_plain_text_decide_list_events_and_abort_on_a_running_session(tmp_path) -> None:
    home = tmp_path / "home"
    host, folder, guest = _waiting_host(tmp_path)
    try:
        listed = json.loads(_lingxi(["session", "list", "--json"], home).stdout)
        assert [(r["state"], r["role"]) for r in listed] == [("waiting for decision", "host")]
        assert listed[0]["pending_decision"]["point_id"] == "d1"
        text = _lingxi(["session", "list"], home).stdout
        assert "decision d1 open: rock, paper, scissors" in text
        bad = _lingxi(["session", "decide", "lizard"], home)
        assert bad.returncode == 1 and "decision.illegal" in bad.stderr
        assert "choose one of: rock, paper, scissors" in bad.stderr
        good = _lingxi(["session", "decide", "paper"], home)  # plain text, no JSON quoting
        assert good.returncode == 0, good.stderr
        follow = subprocess.Popen([LINGXI, "session", "events", str(folder), "--follow"],
                                  env=_env(home), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + HANG_GUARD
        while '"point_id":"d2"' not in (folder / "events.jsonl").read_text():  # round 2 asks
            assert time.monotonic() < deadline, "the answer was not taken"
            time.sleep(0.05)
        aborted = _lingxi(["session", "abort", "--reason", "enough"], home)
        assert aborted.returncode == 0, aborted.stderr
        assert "session aborted: session.aborted_locally (enough)" in aborted.stdout
        out, _ = follow.communicate(timeout=HANG_GUARD)
        assert follow.returncode == 0
        assert "you chose paper" in out and "round 1: you paper, the peer " in out
        assert "aborting: enough" in out and "outcome: the session was aborted" in out
        again = _lingxi(["session", "abort", str(folder)], home)
        assert again.returncode == 1 and "session.finished" in again.stderr
        assert host.wait(HANG_GUARD) == 1 and guest.wait(HANG_GUARD) == 1
        assert host.stderr is not None
        console = host.stderr.read()
        # stdin was closed: the terminal said so, and the next point says how to answer
        assert "no more input at this terminal" in console
        assert "your move: round 2: rock, paper or scissors? (needed within 60 s): choose one " \
            "of: rock, paper, scissors" in console
        assert "answer with: lingxi session decide <value> --point d2" in console
        raw = _lingxi(["session", "events", str(folder), "--json"], home)
        assert all(json.loads(line)["event"] for line in raw.stdout.splitlines())
    finally:
        for process in (host, guest):
            process.kill()
            process.communicate()


def _pending_folder(tmp_path: Path, *, state: str = "running", deadline: str | None = None,
                    held: bool = True) -> Path:
    folder = tmp_path / f"s-{state}-{held}-{bool(deadline)}"
    folder.mkdir()
    pending = {"point_id": "d1", "legal": ["rock", "paper", "scissors"], "bounds": None,
               "deadline": deadline or "2999-01-01T00:00:00.000000Z", "view": {}}
    (folder / "snapshot.json").write_text(json.dumps({"state": state,
                                                      "pending_decision": pending}))
    if held:
        _hold(folder)
    return folder


@pytest.mark.parametrize("case, code", [
    ("finished", "session.finished"), ("dead", "session.not_running"),
    ("expired", "decision.expired"), ("illegal", "decision.illegal"),
    ("stale", "decision.stale")])
def test_session_decide_refusals(tmp_path, case, code) -> None:
    finished = run_pair(load_protocol(RPS), seed=1, state_dir=tmp_path / "done")
    assert finished.host.ok
    folder = {"finished": lambda: tmp_path / "done" / "guest",
              "dead": lambda: _pending_folder(tmp_path, held=False),
              "expired": lambda: _pending_folder(tmp_path,
                                                 deadline="2001-01-01T00:00:00.000000Z"),
              }.get(case, lambda: _pending_folder(tmp_path))()
    value = "lizard" if case == "illegal" else "rock"
    extra = ["--point", "d7"] if case == "stale" else []
    result = CliRunner().invoke(cli, ["session", "decide", value, "--state-dir", str(folder),
                                      *extra])
    assert result.exit_code == 1, result.output
    assert f"error: {code}" in result.stderr
    if case == "illegal":
        assert "choose one of: rock, paper, scissors" in result.stderr
    assert not list((Path(folder) / "inbox").glob("*.json"))


def test_session_decide_takes_plain_text_or_json(tmp_path) -> None:
    folder = _pending_folder(tmp_path)
    runner = CliRunner()
    for given, value in ((["rock"], "rock"), (["--decision", "paper"], "paper"),
                         (["--decision", '"scissors"'], "scissors")):
        result = runner.invoke(cli, ["session", "decide", *given, "--state-dir", str(folder),
                                     "--json"])
        assert result.exit_code == 0, result.output
        queued = json.loads(Path(json.loads(result.stdout)["file"]).read_text())
        assert queued == {"point_id": "d1", "value": value}
    numbers = tmp_path / "numbers"
    numbers.mkdir()
    (numbers / "snapshot.json").write_text(json.dumps({"state": "running", "pending_decision": {
        "point_id": "d2", "legal": [], "bounds": [1, 100]}}))
    _hold(numbers)
    result = runner.invoke(cli, ["session", "decide", "42", "--state-dir", str(numbers)])
    assert result.exit_code == 0 and "queued" in result.stdout
    out = runner.invoke(cli, ["session", "decide", "420", "--state-dir", str(numbers)])
    assert out.exit_code == 1 and "a whole number from 1 to 100" in out.stderr
    both = runner.invoke(cli, ["session", "decide", "1", "--decision", "2",
                               "--state-dir", str(numbers)])
    assert both.exit_code == 2


def test_session_list_names_the_peer_by_its_nickname_as_data(tmp_path, monkeypatch) -> None:
    """The peer's proven nickname is shown beside its key's short form; it is the peer's
    own words, so a terminal control sequence in it reaches the screen escaped."""
    home = tmp_path / "home"
    monkeypatch.setenv("LINGXI_HOME", str(home))
    for name, nickname in (("a-host", "bob"), ("b-guest", "\x1b[2Jmallory"), ("c-guest", None)):
        folder = home / "sessions" / name
        folder.mkdir(parents=True)
        snap = {"state": "finished", "role": name.split("-")[1], "protocol": "rps",
                "peer_public_key": "ab" * 32, "pending_decision": None}
        if nickname is not None:
            snap["peer_nickname"] = nickname
        (folder / "snapshot.json").write_text(json.dumps(snap))
    result = CliRunner().invoke(cli, ["session", "list"])
    assert result.exit_code == 0, result.output
    assert "peer «bob» (key abababababababab)" in result.stdout
    assert "\x1b" not in result.stdout and "mallory" in result.stdout
    assert "peer abababababababab  started" in result.stdout
    rows = json.loads(CliRunner().invoke(cli, ["session", "list", "--json"]).stdout)
    assert sorted(str(r["peer_nickname"]) for r in rows) == sorted(["bob", "\x1b[2Jmallory",
                                                                     "None"])


def test_session_list_shows_a_dead_process_as_gone(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("LINGXI_HOME", str(home))
    run_pair(load_protocol(RPS), seed=1, state_dir=home / "sessions" / "protocol-test" / "r1")
    dead = home / "sessions" / "abc-guest"
    dead.mkdir(parents=True)
    (dead / "snapshot.json").write_text(json.dumps({"state": "running", "role": "guest",
                                                    "protocol": "X", "pending_decision": None}))
    result = CliRunner().invoke(cli, ["session", "list", "--json"])
    assert result.exit_code == 0, result.output
    states = {Path(r["state_dir"]).relative_to(home / "sessions").as_posix(): r["state"]
              for r in json.loads(result.stdout)}
    assert states == {"abc-guest": "gone: process ended",
                      "protocol-test/r1/host": "finished", "protocol-test/r1/guest": "finished"}
    text = CliRunner().invoke(cli, ["session", "list"])
    assert "gone: process ended" in text.stdout and "protocol-test/r1/host" in text.stdout
    nothing = CliRunner().invoke(cli, ["session", "abort", str(dead)])
    assert nothing.exit_code == 1 and "session.not_running" in nothing.stderr
    follow = CliRunner().invoke(cli, ["session", "events", str(dead), "--follow"])
    assert follow.exit_code == 1 and "session.not_running" in follow.stderr


# ------------------------------------------------------------------- protocol test

def test_protocol_test_human_passes_when_nobody_answers() -> None:
    result = CliRunner().invoke(cli, ["protocol", "test", RPS, "--control-mode", "human",
                                      "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] and "interactive" not in data


def test_protocol_test_human_with_a_person_answering(tmp_path) -> None:
    test = _spawn(["protocol", "test", RPS, "--control-mode", "human", "--options",
                   '{"best_of": 1}', "--state-dir", str(tmp_path / "t")], tmp_path / "home")
    try:
        test.expect(r"1\) rock\s+2\) paper\s+3\) scissors")
        test.expect(PROMPT)
        test.sendline("2")
        test.expect("round 1: you paper, the peer ")
        test.expect("PASS")
        assert _done(test) == 0
    finally:
        test.terminate(force=True)
    rounds = [json.loads(line) for line in (tmp_path / "t" / "host" / "events.jsonl")
              .read_text().splitlines() if '"event":"round"' in line]
    assert [r["host"] for r in rounds] == ["paper"]


# -------------------------------------------------------------------- option plumbing

@pytest.mark.parametrize("extra, code", [
    (["--decider", "nope"], "decider.unknown"),
    (["--decider", "llm"], "decider.bad_option"),  # url and model are required
    (["--decider", "terminal", "--decider-option", "colour=red"], "decider.bad_option"),
    (["--decider", "terminal", "--decider-option", "input=/no/such/file"], "decider.bad_option"),
    (["--decider-option", "url=http://x"], "usage.decider_option_alone"),
    (["--decider-option", "novalue"], "usage.bad_decider_option"),
    (["--control-mode", "autonomous", "--decider", "terminal"], "usage.decider_unused"),
    (["--control-mode", "human", "--input", "-"], "usage.stdin_conflict"),
])
def test_participation_options_are_checked_before_listening(tmp_path, extra, code) -> None:
    result = CliRunner().invoke(cli, ["host", "--protocol-dir", "chat", "--endpoint",
                                      "tcp://127.0.0.1:0", "--accept-timeout", "0.05", *extra],
                                env={"LINGXI_HOME": str(tmp_path)})
    assert result.exit_code == 2, result.output
    assert f"error: {code}" in result.stderr
    assert "hosting" not in result.stderr


def test_ui_without_the_ui_server_is_a_typed_error(tmp_path, monkeypatch) -> None:
    """A build without the browser UI (no starlette/uvicorn): --ui says so, before connecting."""
    monkeypatch.setitem(sys.modules, "lingxi.ui.server", None)  # import now fails
    result = CliRunner().invoke(cli, ["guest", "--endpoint", "tcp://127.0.0.1:9", "--ui"],
                                env={"LINGXI_HOME": str(tmp_path)})
    assert result.exit_code == 2 and "error: ui.unavailable" in result.stderr


def test_ui_serves_the_running_session_beside_the_terminal(tmp_path) -> None:
    """--ui: the URL is printed, the page's API shows the session, an answer given there
    settles the terminal's open prompt."""
    import urllib.request

    host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0",
                   "--control-mode", "human", "--ui", "--options", '{"best_of": 1}',
                   "--state-dir", str(tmp_path / "h")], tmp_path / "home-h")
    try:
        host.expect(r"ui: (http://127\.0\.0\.1:\d+)/\?token=(\S+)")
        base, token = host.match.group(1), host.match.group(2)
        guest = _lingxi_async(["guest", "--endpoint", _hosting(host)], tmp_path / "home-g")
        host.expect(PROMPT)
        with urllib.request.urlopen(f"{base}/api/state?token={token}") as reply:
            state = json.loads(reply.read())
        assert state["role"] == "host" and state["pending_decision"]["point_id"] == "d1"
        answer = urllib.request.Request(
            f"{base}/api/decide", data=json.dumps({"value": "scissors"}).encode(),
            headers={"Content-Type": "application/json", "X-Lingxi-Token": token,
                     "Origin": base}, method="POST")
        with urllib.request.urlopen(answer) as reply:
            assert json.loads(reply.read())["ok"]
        host.expect_exact("you chose scissors")
        host.expect("outcome: (you won|you lost|a draw)")
        assert _done(host) == 0 and guest.wait(HANG_GUARD) == 0
    finally:
        host.terminate(force=True)


def test_terminal_decider_answers_come_from_the_input_option(tmp_path) -> None:
    """--decider terminal --decider-option input=FILE: the answers file decides the host's
    rounds while stdin stays free (here: closed)."""
    answers = tmp_path / "answers.txt"
    answers.write_text("lizard\n3\nrock\n")
    host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0",
                   "--decider", "terminal", "--decider-option", f"input={answers}",
                   "--options", '{"best_of": 2, "termination": "fixed_rounds"}',
                   "--state-dir", str(tmp_path / "h")], tmp_path / "home-h")
    try:
        guest = _lingxi_async(["guest", "--endpoint", _hosting(host)], tmp_path / "home-g")
        host.expect("lizard is not one of the choices: type a number from 1 to 3 or the word")
        host.expect("outcome: (you won|you lost|a draw)")
        assert _done(host) == 0 and guest.wait(HANG_GUARD) == 0
    finally:
        host.terminate(force=True)
    rounds = [json.loads(line) for line in (tmp_path / "h" / "events.jsonl").read_text()
              .splitlines() if '"event":"round"' in line]
    assert [r["host"] for r in rounds] == ["scissors", "rock"]


def test_quiet_keeps_the_console_off_and_json_keeps_stdout_pure(tmp_path) -> None:
    common = ["--protocol-dir", "word-count", "--seed", "1"]
    host = subprocess.Popen([LINGXI, "host", *common, "--endpoint", "tcp://127.0.0.1:0",
                             "--json"], env=_env(tmp_path / "h"), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert host.stderr is not None
    found = None
    while found is None:
        line = host.stderr.readline()
        assert line, "the host ended before listening"
        found = re.search(r"on (tcp://127\.0\.0\.1:\d+)", line)
    guest = _lingxi(["guest", "--endpoint", found.group(1), "--quiet"], tmp_path / "g")
    out, err = host.communicate(timeout=HANG_GUARD)
    assert host.returncode == 0 and json.loads(out)["ok"]  # stdout: one JSON document
    assert "session started: " in err and "outcome: the session completed" in err
    assert guest.returncode == 0 and "session started" not in guest.stderr
    assert "session completed" in guest.stdout


# ---------------------------------------------------------------- console and decider

def test_the_console_escapes_peer_text_and_never_prints_payloads() -> None:
    received = {"event": "message.received", "message": "chat", "role": "host",
                "payload": {"action": "chat", "text": "SECRET-PAYLOAD"},
                "text": "#1: \x1b[2Jsession completed\r\u202e"}
    (line,) = event_lines(received)
    assert line == "the peer: «#1: \\x1b[2Jsession completed\\r\\u202e»"
    bare = dict(received, text=None)
    assert event_lines(bare) == []  # undescribed: bookkeeping, never its message name
    aborted = {"event": "peer.aborted", "code": "x\x07", "reason": "\x1b]0;title\x07"}
    assert "\x1b" not in event_lines(aborted)[0] and "\x07" not in event_lines(aborted)[0]
    for record in (received, bare, aborted, {"event": "round", "round": 1, "host": "rock",
                                             "guest": "paper\x1b", "result": {"a": "\x1b"}}):
        assert all("SECRET" not in x and "\x1b" not in x for x in event_lines(record))


def _request(**extra) -> RequestDecision:
    base = dict(point_id="d1", legal=["rock", "paper", "scissors"],
                view={"round": 2, "my_wins": 1}, timeout_seconds=60.0)
    return RequestDecision(**{**base, **extra})


@pytest.mark.parametrize("typed, expected", [
    ("2", (True, "paper")), ("rock", (True, "rock")), (" Scissors ", (True, "scissors")),
    ("4", (False, None)), ("lizard", (False, None)), ("", (False, None))])
def test_parse_answer_takes_numbers_and_words(typed, expected) -> None:
    ok, value = parse_answer(typed, _request())
    assert ok == expected[0]
    if ok:
        assert value == expected[1]
    else:
        assert "type a number from 1 to 3 or the word" in value


def test_parse_answer_integers_in_bounds_hybrid_enter_and_free_text() -> None:
    numbers = _request(legal=[], bounds=(1, 100))
    assert parse_answer("42", numbers) == (True, 42)
    assert parse_answer("0", numbers)[0] is False and "from 1 to 100" in \
        parse_answer("0", numbers)[1]
    assert parse_answer("x", numbers) == (False, "x is not a whole number")
    hybrid = _request(view={"round": 1, "suggested": "paper"})
    assert parse_answer("", hybrid) == (True, "paper")
    assert parse_answer("three words here", _request(legal=[])) == (True, "three words here")


async def test_the_terminal_decider_prompts_and_asks_again(tmp_path) -> None:
    answers = tmp_path / "answers"
    answers.write_text("lizard\n2\n")
    shown: list[str] = []

    class Capture:
        def write(self, text: str) -> None:
            shown.append(text)

        def flush(self) -> None:
            pass

    decider = TerminalDecider.from_options({"input": str(answers)},
                                           terminal=Terminal(lambda: Capture()))
    value = await asyncio.wait_for(decider(_request(
        view={"round": 2, "suggested": "rock"}, message="round 2: your throw",
        bounds=None, peer_text={"note": "play \x1b[1mrock"})), HANG_GUARD)
    assert value == "paper"
    text = "".join(shown)
    assert "-- round 2: your throw (60 s to answer) --" in text
    assert "  round: 2" in text and "  1) rock   <- suggested (Enter takes it)" in text
    assert "  2) paper" in text and "  3) scissors" in text
    assert "note (the peer's words): «play \\x1b[1mrock»" in text
    assert "lizard is not one of the choices" in text
    assert '"' not in text  # plain words, not JSON
    # the input ended: the terminal leaves later points to `session decide` or the timer
    assert await asyncio.wait_for(decider(_request(point_id="d2")), HANG_GUARD) is None
    assert "no more input at this terminal" in "".join(shown)


def test_protocol_test_interactive_plays_the_guest_from_a_pipe(tmp_path) -> None:
    """--interactive --as guest: a pipe answers the guest's guesses (bounds, re-ask)."""
    answers = "abc\n500\n50\n25\n37\n43\n40\n41\n42\n"  # seed 0 hides 42
    result = _lingxi(["protocol", "test", "guess-number", "--control-mode", "human",
                      "--interactive", "--as", "guest", "--seed", "0", "--state-dir",
                      str(tmp_path / "t")], tmp_path / "home", input=answers)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "abc is not a whole number" in result.stderr
    assert "500 is out of range: a whole number from 1 to 100" in result.stderr
    made = [json.loads(line)["value"] for line in (tmp_path / "t" / "guest" / "events.jsonl")
            .read_text().splitlines() if '"event":"decision.made"' in line]
    assert made[0] == 50 and made == [50, 25, 37, 43, 40, 41, 42][:len(made)]


def test_host_decider_llm_options_reach_the_model(tmp_path) -> None:
    """--decider llm --decider-option url=… model=…: the CLI builds the model decider from
    the options; a local fake chat endpoint answers "paper" every round."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Model(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server API)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            asked.append(body["model"])
            data = json.dumps({"choices": [{"index": 0, "message": {
                "role": "assistant", "content": '{"value": "paper"}'}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0",
                       "--decider", "llm", "--decider-option", f"url={url}",
                       "--decider-option", "model=fake-model", "--options",
                       '{"best_of": 2, "termination": "fixed_rounds"}',
                       "--state-dir", str(tmp_path / "h")], tmp_path / "home-h")
        try:
            guest = _lingxi_async(["guest", "--endpoint", _hosting(host)], tmp_path / "home-g")
            host.expect_exact("asking fake-model for d1 (attempt 1)")
            host.expect_exact('fake-model answered d1: {"value": "paper"}')
            host.expect("round 2: you paper, the peer ")
            host.expect("outcome: (you won|you lost|a draw)")
            assert _done(host) == 0 and guest.wait(HANG_GUARD) == 0
        finally:
            host.terminate(force=True)
    finally:
        server.shutdown()
        server.server_close()
    assert asked and set(asked) == {"fake-model"}
    rounds = [json.loads(line) for line in (tmp_path / "h" / "events.jsonl").read_text()
              .splitlines() if '"event":"round"' in line]
    assert [r["host"] for r in rounds] == ["paper", "paper"]


def test_a_console_line_never_runs_into_an_open_prompt() -> None:
    written: list[str] = []

    class Capture:
        def write(self, text: str) -> None:
            written.append(text)

        def flush(self) -> None:
            pass

    terminal = Terminal(lambda: Capture())
    terminal.prompt("1-3 (60 s left)> ")
    terminal.say("the peer is deciding (up to 60 s)")  # the prompt is shown again below it
    terminal.say("time is up: fallback rock", settles=True)  # the point is settled: no prompt
    terminal.answered(echo=True)  # the cancelled prompt has nothing left to end
    terminal.say("round 1: host rock, guest paper")
    assert "".join(written) == ("1-3 (60 s left)> \nthe peer is deciding (up to 60 s)\n"
                                "1-3 (60 s left)> \ntime is up: fallback rock\n"
                                "round 1: host rock, guest paper\n")


def test_a_guest_ui_switches_to_the_offered_protocols_page(tmp_path) -> None:
    """A guest without --protocol-dir starts its UI before the offer names the protocol;
    once the session started, the UI serves that protocol's own page."""
    import urllib.request

    host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0",
                   "--options", '{"best_of": 1}'], tmp_path / "home-h")
    try:
        guest = _spawn(["guest", "--endpoint", _hosting(host), "--control-mode", "human",
                        "--ui"], tmp_path / "home-g")
        try:
            guest.expect(r"ui: (http://127\.0\.0\.1:\d+)/\?token=(\S+)")
            base, token = guest.match.group(1), guest.match.group(2)
            guest.expect(PROMPT)
            with urllib.request.urlopen(f"{base}/?token={token}") as page:
                assert page.headers["X-Lingxi-Page"] == "protocol"
            guest.sendline("rock")
            guest.expect("outcome: (you won|you lost|a draw)")
            assert _done(guest) == 0 and _done(host) == 0
        finally:
            guest.terminate(force=True)
    finally:
        host.terminate(force=True)


def _manual_spec(tmp_path: Path) -> Path:
    """A copy of rock-paper-scissors whose spec says decision.mode: manual."""
    folder = tmp_path / "rps-manual"
    shutil.copytree(load_protocol(RPS).folder, folder, ignore=shutil.ignore_patterns("ui"))
    spec = json.loads((folder / "spec.json").read_text())
    spec["decision"]["mode"] = "manual"
    (folder / "spec.json").write_text(json.dumps(spec))
    return folder


def test_a_manual_spec_asks_the_person_at_the_terminal(tmp_path) -> None:
    """No --control-mode: the spec's decision.mode manual is the wiring, and a person at a
    terminal is asked; the other side says --control-mode autonomous."""
    manual = _manual_spec(tmp_path)
    host = _spawn(["host", "--protocol-dir", str(manual), "--endpoint", "tcp://127.0.0.1:0",
                   "--options", '{"best_of": 1}', "--state-dir", str(tmp_path / "h")],
                  tmp_path / "home-h")
    try:
        guest = _lingxi_async(["guest", "--endpoint", _hosting(host), "--protocol-dir",
                               str(manual), "--control-mode", "autonomous"], tmp_path / "g")
        host.expect(r"-- round 1: rock, paper or scissors\? \(\d+ s to answer\) --")
        host.expect(PROMPT)
        host.sendline("scissors")
        host.expect("outcome: (you won|you lost|a draw)")
        assert _done(host) == 0 and guest.wait(HANG_GUARD) == 0
    finally:
        host.terminate(force=True)
    made = [json.loads(line)["value"] for line in (tmp_path / "h" / "events.jsonl")
            .read_text().splitlines() if '"event":"decision.made"' in line]
    assert made == ["scissors"]


def test_an_auto_spec_never_asks_the_person_at_the_terminal(tmp_path) -> None:
    host = _spawn(["host", "--protocol-dir", RPS, "--endpoint", "tcp://127.0.0.1:0",
                   "--options", '{"best_of": 1}', "--state-dir", str(tmp_path / "h")],
                  tmp_path / "home-h")
    try:
        guest = _lingxi_async(["guest", "--endpoint", _hosting(host)], tmp_path / "g")
        host.expect("outcome: (you won|you lost|a draw)")
        assert "s to answer" not in host.before
        assert _done(host) == 0 and guest.wait(HANG_GUARD) == 0
    finally:
        host.terminate(force=True)
    assert '"event":"decision.requested"' not in (tmp_path / "h" / "events.jsonl").read_text()
