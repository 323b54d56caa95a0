"""Hostile input at every file or JSON argument of the CLI: never a traceback, exit 0/1/2.

One table, :data:`TARGETS`, lists each place a command reads something a user
or a peer supplied (a file, stdin, a JSON argument, a state file under
$LINGXI_HOME). Hypothesis feeds each one random bytes, random JSON of every
shape, random UTF-8 and a few known-nasty documents (deep nesting, NaN,
repeated keys, a BOM), and the command must answer with exit 0, 1 or 2, one
typed error at most, no traceback and no ``internal.error`` (the root group's
last resort, which would mean a bug was reached).

To cover more commands, add a :class:`Target` to :data:`TARGETS` (the session
commands belong here too: ``session verify|show|decide`` on a hostile
snapshot.json/receipts.json, ``--options @F``, ``--inputs F``…).
LINGXI_HYPOTHESIS_EXAMPLES raises the number of examples per target.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.cli import cli

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "contract" / "corpus"
GOOD_SPEC = CORPUS / "sealed-bids.json"
GOOD_MESSAGE = '{"action": "sit"}'
GOOD_PAYLOAD = b'{"action": "ping", "n": 1}'

EXAMPLES = int(os.environ.get("LINGXI_HYPOTHESIS_EXAMPLES", "40"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


# ---------------------------------------------------------------- hostile inputs

INTERNAL_ERROR = re.compile(r"^error: internal\.error\b", re.MULTILINE)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                             max_size=4),
    max_leaves=25)

NASTY = st.sampled_from([
    b"", b"\xef\xbb\xbf{}", b"[" * 5000 + b"]" * 5000, b"{" * 3000, b'{"a": NaN}',
    b'{"a": Infinity}', b'{"a": 1, "a": 2}', b"\xff\xfe\x00{", b"null", b"[]", b'"x"', b"7",
    b'{"name": "x", "messages": [' + b"[" * 400 + b"]" * 400 + b"]}",
    b'{"action": "sit", "action": "sit"}', b"\x00" * 64, b"-----BEGIN PRIVATE KEY-----\n",
    json.dumps({"name": "\x1b[2J\r", "messages": [{"name": "\u202e", "direction": "both",
                                                  "fields": {"\x07": {"type": "text"}}}]}
               ).encode(),
])

HOSTILE_BYTES = st.one_of(
    st.binary(max_size=300),
    JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8")),
    st.text(max_size=200).map(lambda t: t.encode("utf-8")),
    NASTY,
)

# Command-line text may hold lone surrogates (bytes that were not UTF-8 in argv).
ARG_TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=()), max_size=60),
    JSON_VALUES.map(json.dumps),
    st.sampled_from(["nan", "inf", "-1", "1e999", "@", "-", "[" * 3000, "{\"a\":1,\"a\":2}"]),
)


# ---------------------------------------------------------------- the table

@dataclass(frozen=True)
class Target:
    """One place a command reads outside input.

    ``build(folder, hostile)`` writes whatever files it needs into ``folder``
    (the run's LINGXI_HOME is ``folder / "home"``) and returns
    ``(argv, stdin bytes or None)``.
    """

    name: str
    build: Callable[[Path, object], tuple[list[str], bytes | None]]
    kind: str = "bytes"  # "bytes" (file or stdin content) or "text" (an argument)


def _file(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


def _key(folder: Path) -> str:
    return _file(folder, "good.key", b"shared-secret\n")


def _identity_files(folder: Path, key: bytes | None = None, info: bytes | None = None) -> None:
    ident = folder / "home" / "identity"
    ident.mkdir(parents=True, mode=0o700)
    if key is not None:
        (ident / "ed25519.key").write_bytes(key)
        (ident / "ed25519.key").chmod(0o600)
    if info is not None:
        (ident / "identity.json").write_bytes(info)


def _signed_envelope(folder: Path) -> bytes:
    result = CliRunner().invoke(cli, ["envelope", "sign", "-k", _key(folder), "--from", "a",
                                      "--to", "b"], input=GOOD_PAYLOAD)
    assert result.exit_code == 0, result.output
    return result.stdout.encode("utf-8")


TARGETS: list[Target] = [
    Target("protocol validate FILE",
           lambda d, b: (["protocol", "validate", _file(d, "spec.json", b)], None)),
    Target("protocol validate --strict --json DIR",
           lambda d, b: (["protocol", "validate", "--strict", "--json",
                          str(Path(_file(d, "spec.json", b)).parent)], None)),
    Target("protocol hash FILE",
           lambda d, b: (["protocol", "hash", _file(d, "spec.json", b)], None)),
    Target("protocol hash --json FILE",
           lambda d, b: (["protocol", "hash", "--json", _file(d, "spec.json", b)], None)),
    Target("protocol create --name TEXT",
           lambda d, t: (["protocol", "create", "-t", "free-chat", "--name", t, "-o",
                          str(d / "out")], None), "text"),
    Target("protocol create --template TEXT",
           lambda d, t: (["protocol", "create", "-t", t, "-o", str(d / "out")], None), "text"),
    Target("protocol create --output TEXT",
           lambda d, t: (["protocol", "create", "-t", "free-chat", "-o",
                          str(d / "out" / t.replace("\x00", ""))], None), "text"),
    Target("validate SPEC(hostile) MESSAGE",
           lambda d, b: (["validate", _file(d, "spec.json", b), GOOD_MESSAGE], None)),
    Target("validate SPEC MESSAGE(text)",
           lambda d, t: (["validate", str(GOOD_SPEC), t], None), "text"),
    Target("validate SPEC @FILE",
           lambda d, b: (["validate", str(GOOD_SPEC), "@" + _file(d, "m.json", b)], None)),
    Target("validate SPEC - (stdin) --json",
           lambda d, b: (["validate", str(GOOD_SPEC), "-", "--json"], b)),
    Target("validate --message TEXT",
           lambda d, t: (["validate", str(GOOD_SPEC), GOOD_MESSAGE, "--message", t], None),
           "text"),
    Target("envelope sign --key-file(hostile)",
           lambda d, b: (["envelope", "sign", "-k", _file(d, "k", b), "--from", "a", "--to",
                          "b"], GOOD_PAYLOAD)),
    Target("envelope sign (stdin payload)",
           lambda d, b: (["envelope", "sign", "-k", _key(d), "--from", "a", "--to", "b"], b)),
    Target("envelope sign --aead-key-file(hostile)",
           lambda d, b: (["envelope", "sign", "-k", _key(d), "--from", "a", "--to", "b",
                          "--aead-key-file", _file(d, "aead", b)], GOOD_PAYLOAD)),
    Target("envelope sign --from/--type/--timestamp TEXT",
           lambda d, t: (["envelope", "sign", "-k", _key(d), "--from", t or "a", "--to", "b",
                          "--type", f"p2p:{t}", "--timestamp", t], GOOD_PAYLOAD), "text"),
    Target("envelope verify (stdin envelope)",
           lambda d, b: (["envelope", "verify", "-k", _key(d), "--json"], b)),
    Target("envelope verify --key-file(hostile)",
           lambda d, b: (["envelope", "verify", "-k", _file(d, "k", b)], _signed_envelope(d))),
    Target("envelope verify --aead-key-file(hostile)",
           lambda d, b: (["envelope", "verify", "-k", _key(d), "--aead-key-file",
                          _file(d, "aead", b)], _signed_envelope(d))),
    Target("envelope verify --at/--window TEXT",
           lambda d, t: (["envelope", "verify", "-k", _key(d), "--at", t, "--window", t],
                         _signed_envelope(d)), "text"),
    Target("identity show (hostile ed25519.key)",
           lambda d, b: (_identity_files(d, key=b) or ["identity", "show"], None)),
    Target("identity init --json (hostile ed25519.key)",
           lambda d, b: (_identity_files(d, key=b) or ["identity", "init", "--json"], None)),
    Target("identity show (hostile identity.json)",
           lambda d, b: (_identity_files(d, info=b) or ["identity", "init"], None)),
]


def _session_folder(folder: Path, **hostile_files: bytes) -> str:
    """A finished self-play's guest folder with some of its state files replaced."""
    from lingxi.session import load_protocol, run_pair

    state = folder / "state"
    if not (state / "guest").is_dir():
        run_pair(load_protocol("rock-paper-scissors"), seed=1, state_dir=state)
    guest = state / "guest"
    for name, data in hostile_files.items():
        (guest / name.replace("_", ".")).write_bytes(data)
    return str(guest)


_PENDING = json.dumps({"state": "running", "pending_decision": {
    "point_id": "d1", "legal": ["rock", "paper", "scissors"], "bounds": None,
    "deadline": "2999-01-01T00:00:00.000000Z"}}).encode()
_HELD: list[int] = []


def _live_folder(folder: Path, snapshot: bytes) -> str:
    """A folder whose lock this process holds (a "running" session) with ``snapshot``."""
    import fcntl

    live = folder / "live"
    live.mkdir(exist_ok=True)
    (live / "snapshot.json").write_bytes(snapshot)
    if not (live / ".lock").exists():
        fd = os.open(live / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _HELD.append(fd)
    return str(live)


def _sessions_home(folder: Path, **hostile_files: bytes) -> None:
    """A hostile session folder under the run's $LINGXI_HOME/sessions (for `session list`)."""
    target = folder / "home" / "sessions" / "x-guest"
    target.mkdir(parents=True, exist_ok=True)
    for name, data in hostile_files.items():
        (target / name.replace("_", ".")).write_bytes(data)


TARGETS += [
    Target("session verify (hostile snapshot.json)",
           lambda d, b: (["session", "verify", _session_folder(d, snapshot_json=b)], None)),
    Target("session verify (hostile receipts.json)",
           lambda d, b: (["session", "verify", "--json",
                          _session_folder(d, receipts_json=b)], None)),
    Target("session verify (hostile transcript.jsonl)",
           lambda d, b: (["session", "verify", _session_folder(d, transcript_jsonl=b)], None)),
    Target("session verify --peer-key TEXT",
           lambda d, t: (["session", "verify", _session_folder(d), "--peer-key", t], None),
           "text"),
    Target("session show (hostile snapshot.json)",
           lambda d, b: (["session", "show", _session_folder(d, snapshot_json=b)], None)),
    Target("session decide (hostile snapshot.json)",
           lambda d, b: (["session", "decide", "--state-dir",
                          _session_folder(d, snapshot_json=b), "--decision", '"rock"'], None)),
    Target("session decide --decision TEXT",
           lambda d, t: (["session", "decide", "--state-dir", _session_folder(d),
                          "--decision", t], None), "text"),
    Target("session decide --decision @FILE",
           lambda d, b: (["session", "decide", "--state-dir", _session_folder(d),
                          "--decision", "@" + _file(d, "v.json", b)], None)),
    Target("session decide VALUE(text)",
           lambda d, t: (["session", "decide", t or "x", "--state-dir", _session_folder(d)],
                         None), "text"),
    Target("session decide VALUE (a live folder, hostile snapshot.json)",
           lambda d, b: (["session", "decide", "rock", "--state-dir",
                          _live_folder(d, b)], None)),
    Target("session decide VALUE(text) into a live folder",
           lambda d, t: (["session", "decide", t or "x", "--state-dir",
                          _live_folder(d, _PENDING)], None), "text"),
    Target("session decide --point TEXT",
           lambda d, t: (["session", "decide", "rock", "--point", t, "--state-dir",
                          _live_folder(d, _PENDING)], None), "text"),
    Target("session list (hostile snapshot.json)",
           lambda d, b: (_sessions_home(d, snapshot_json=b) or ["session", "list"], None)),
    Target("session list --json (hostile snapshot.json)",
           lambda d, b: (_sessions_home(d, snapshot_json=b) or ["session", "list", "--json"],
                         None)),
    Target("session events (hostile events.jsonl)",
           lambda d, b: (["session", "events", _session_folder(d, events_jsonl=b)], None)),
    Target("session events --json (hostile events.jsonl)",
           lambda d, b: (["session", "events", "--json",
                          _session_folder(d, events_jsonl=b)], None)),
    Target("session events --follow (hostile events.jsonl, finished)",
           lambda d, b: (["session", "events", "--follow",
                          _session_folder(d, events_jsonl=b)], None)),
    Target("session abort (hostile snapshot.json)",
           lambda d, b: (["session", "abort", _session_folder(d, snapshot_json=b)], None)),
    Target("session abort --reason TEXT (finished)",
           lambda d, t: (["session", "abort", _session_folder(d), "--reason", t], None),
           "text"),
    Target("host --decider TEXT",
           lambda d, t: (["host", "--protocol-dir", "chat", "--endpoint", "tcp://127.0.0.1:0",
                          "--accept-timeout", "0.05", "--decider", t or "x"], None), "text"),
    Target("host --decider terminal --decider-option TEXT",
           lambda d, t: (["host", "--protocol-dir", "chat", "--endpoint", "tcp://127.0.0.1:0",
                          "--accept-timeout", "0.05", "--decider", "terminal",
                          "--decider-option", t], None), "text"),
    Target("protocol test --options @FILE",
           lambda d, b: (["protocol", "test", "guess-number", "--options",
                          "@" + _file(d, "o.json", b), "--state-dir", str(d / "t")], None)),
    Target("protocol test --options TEXT",
           lambda d, t: (["protocol", "test", "guess-number", "--options", t,
                          "--state-dir", str(d / "t")], None), "text"),
    Target("protocol test --inputs FILE",
           lambda d, b: (["protocol", "test", "chat", "--inputs", _file(d, "i.json", b),
                          "--state-dir", str(d / "t")], None)),
    Target("protocol test --timeout TEXT",
           lambda d, t: (["protocol", "test", "word-count", "--timeout", t,
                          "--state-dir", str(d / "t")], None), "text"),
    Target("host --input FILE (refused before listening when unreadable)",
           lambda d, b: (["host", "--protocol-dir", "chat", "--endpoint", "tcp://127.0.0.1:0",
                          "--accept-timeout", "0.05", "--input", _file(d, "lines.txt", b)],
                         None)),
    Target("host --options @FILE",
           lambda d, b: (["host", "--protocol-dir", "guess-number", "--endpoint",
                          "tcp://127.0.0.1:0", "--accept-timeout", "0.05",
                          "--options", "@" + _file(d, "o.json", b)], None)),
    Target("host --timeout TEXT",  # a valid --accept-timeout would wait that long: fixed here
           lambda d, t: (["host", "--protocol-dir", "chat", "--endpoint", "tcp://127.0.0.1:0",
                          "--accept-timeout", "0.05", "--timeout", t], None), "text"),
    Target("play --brief FILE (before any browser: the game does not exist)",
           lambda d, b: (["play", str(d / "no-such-game"), "--brief",
                          _file(d, "brief.json", b), "--actor", "random"], None)),
    Target("play --brief TEXT",
           lambda d, t: (["play", str(d / "no-such-game"), "--brief", t or "x"], None), "text"),
    Target("play --actor scripted --actor-option script=FILE",
           lambda d, b: (["play", str(d / "no-such-game"), "--actor", "scripted",
                          "--actor-option", "script=" + _file(d, "moves.json", b)], None)),
    Target("play --actor-option TEXT",  # no llm here: it would reach for a URL
           lambda d, t: (["play", str(d / "no-such-game"), "--actor", "scripted",
                          "--actor-option", t], None), "text"),
    Target("protocol preflight FILE (embedded registry)",
           lambda d, b: (["protocol", "preflight", _file(d, "spec.json", b)], None)),
    Target("protocol register FILE (embedded registry)",
           lambda d, b: (["protocol", "register", _file(d, "spec.json", b)], None)),
    Target("protocol fetch/search TEXT",
           lambda d, t: (["protocol", "fetch", t or "x"], None), "text"),
    Target("join TEXT (an invitation id)",
           lambda d, t: (["join", t or "x"], None), "text"),
    Target("protocol skeleton (hostile spec.json)",
           lambda d, b: (["protocol", "skeleton", str(Path(_file(d, "spec.json", b)).parent),
                          "--force"], None)),
]


def run_target(target: Target, folder: Path, hostile) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    argv, stdin = target.build(folder, hostile)
    env = {"LINGXI_HOME": str(folder / "home"), "LINGXI_DEBUG": ""}
    result = CliRunner().invoke(cli, argv, input=stdin, env=env)
    where = f"{target.name}: {argv!r}"
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        where, repr(result.exception))
    assert result.exit_code in (0, 1, 2), (where, result.exit_code, result.output)
    assert "Traceback" not in result.output, (where, result.output)
    # the code an escaped error prints, at the start of its line (a hostile value may itself
    # be the text "internal.error", echoed inside a usage error)
    assert not INTERNAL_ERROR.search(result.output), (where, result.output)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) <= 1, (where, result.stderr)


@pytest.mark.parametrize("target", [t for t in TARGETS if t.kind == "bytes"],
                         ids=lambda t: t.name)
@SETTINGS
@given(hostile=HOSTILE_BYTES)
def test_hostile_bytes(tmp_path_factory, target, hostile):
    run_target(target, tmp_path_factory.mktemp("hostile"), hostile)


@pytest.mark.parametrize("target", [t for t in TARGETS if t.kind == "text"],
                         ids=lambda t: t.name)
@SETTINGS
@given(hostile=ARG_TEXT)
def test_hostile_arguments(tmp_path_factory, target, hostile):
    run_target(target, tmp_path_factory.mktemp("hostile"), hostile)


def test_the_table_covers_every_command_in_this_area():
    covered = {" ".join(t.name.split()[:2]) for t in TARGETS}
    for command in ("protocol validate", "protocol hash", "protocol create", "envelope sign",
                    "envelope verify", "identity show", "identity init"):
        assert command in covered, command
    assert any(t.name.startswith("validate ") for t in TARGETS)
    for command in ("session verify", "session show", "session decide", "session list",
                    "session events", "session abort", "host --decider", "protocol test",
                    "host --input", "host --options", "protocol skeleton", "play --brief",
                    "play --actor", "protocol preflight", "protocol register", "join TEXT"):
        assert command in {" ".join(t.name.split()[:2]) for t in TARGETS}, command
