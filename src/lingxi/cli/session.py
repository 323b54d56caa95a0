"""``lingxi session``: inspect, follow, steer and verify session state folders.

Every folder is read through the session record's folder model
(:mod:`lingxi.session.record.folder`); the commands that play a session are in
:mod:`lingxi.cli.participate`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from lingxi.cli.attach import ui_cmd
from lingxi.cli.common import (
    _JSON_UNSAFE,
    handle_errors,
    json_option,
    peer_text,
    print_json,
    safe_line,
)
from lingxi.cli.console import event_lines
from lingxi.cli.protocol_runtime import parse_json_arg, skeleton_cmd
from lingxi.cli.session_compare import compare_cmd
from lingxi.deciders.terminal import plain, shown
from lingxi.errors import EXIT_FAILED, InputError, LingxiError
from lingxi.home import sessions_dir
from lingxi.session.api import verify_session
from lingxi.session.core.decisions import legal_value
from lingxi.session.core.verdicts import verdict_line
from lingxi.session.errors import SessionFailed
from lingxi.session.record.folder import (
    SessionFolder,
    event_records,
    folder_at,
    listing,
    newest,
)
from lingxi.session.record.recorder import is_running, write_inbox
from lingxi.session.record.snapshot import pending_decision, read_object
from lingxi.wire.timefmt import parse_rfc3339


@click.group("session")
def session() -> None:
    """Inspect, decide in, and verify session state folders."""


session.add_command(compare_cmd)


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else "-"


def _outcome_words(outcome: dict[str, Any] | None) -> str:
    if not outcome:
        return "-"
    words = str(outcome.get("status") or "?")
    if outcome.get("code"):
        words += f" ({outcome.get('code')}, by {outcome.get('by')})"
    return safe_line(words, 120)


def _peer_words(row: dict[str, Any]) -> str:
    """The peer as a person knows it: its proven registry nickname (its own words: marked)
    with the key's short form beside it, else the short key alone."""
    key = row["peer"] or "-"
    if row.get("peer_nickname"):
        return f"{peer_text(row['peer_nickname'], 60)} (key {key})"
    return key


@session.command("list")
@json_option
@handle_errors
def list_cmd(as_json: bool) -> None:
    """List every session folder under $LINGXI_HOME/sessions, most recently updated first:
    state (running, waiting for decision, finished, gone: process ended), role, protocol,
    peer key, start time, outcome."""
    rows = listing(sessions_dir())
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no sessions")
        return
    for row in rows:
        click.echo(safe_line(
            f"{row['state']:<22} {row['role'] or '?':<5} {row['protocol'] or '?'}  "
            f"peer {_peer_words(row)}  started {_when(row['started'])}  "
            f"outcome {_outcome_words(row['outcome'])}", 600))
        pending = row["pending_decision"]
        if pending:
            legal = pending.get("legal")
            words = f": {_words(legal)}" if isinstance(legal, list) and legal else ""
            click.echo(f"  decision {safe_line(pending.get('point_id'), 40)} open{words} "
                       f"(until {safe_line(pending.get('deadline'), 40)}; lingxi session "
                       "decide VALUE)")
        click.echo(f"  {safe_line(row['state_dir'], 600)}")


def _print_event(record: dict[str, Any], info: dict[str, Any], as_json: bool) -> None:
    if as_json:  # one line per event; characters a terminal acts on written as \u escapes
        text = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                          default=str)
        click.echo(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
        return
    stamp = record.get("t")
    when = time.strftime("%H:%M:%S", time.localtime(stamp)) \
        if isinstance(stamp, int | float) and 0 <= stamp < 2**33 else "--:--:--"
    role = safe_line(record.get("role") or info.get("role") or "?", 8)
    for line in event_lines(record, info, unknown=True):
        click.echo(f"{when} {role:<5} {line}")


@session.command("events")
@click.argument("state_dir", required=False, type=click.Path(file_okay=False))
@click.option("--follow", "-f", is_flag=True,
              help="Keep printing new events until the session finishes or its process is "
                   "gone (exit 1 then).")
@json_option
@handle_errors
def events_cmd(state_dir: str | None, follow: bool, as_json: bool) -> None:
    """Print a session's events, one line each (default: the most recently updated session).

    The lines are the live console's; --json prints each event as one JSON line.
    """
    found = folder_at(state_dir, sessions_dir())
    folder = found.path
    info = {**found.snapshot(), "state_dir": str(folder)}
    path, position, pending, finished = found.events, 0, b"", False
    finished_at: float | None = None
    while True:
        alive = is_running(folder)
        try:
            with open(path, "rb") as handle:
                handle.seek(position)
                chunk = handle.read()
        except FileNotFoundError:
            chunk = b""
        position += len(chunk)
        data = pending + chunk
        complete, _, pending = data.rpartition(b"\n") if follow else (data, b"", b"")
        for record in event_records(complete):
            finished = finished or record["event"] == "session.finished"
            _print_event(record, info, as_json)
        sys.stdout.flush()
        if not follow:
            return
        if finished:  # the receipts line comes a moment later, while the process ends
            finished_at = finished_at or time.monotonic()
            if not alive or time.monotonic() - finished_at > FOLLOW_AFTER_END:
                return
        elif not alive:
            if not info.get("state") == "finished":
                raise SessionFailed("session.not_running",
                                    f"the session's process is gone ({folder})")
            return
        time.sleep(FOLLOW_POLL)


FOLLOW_POLL = 0.2
FOLLOW_AFTER_END = 6.0
ABORT_WAIT = 5.0


@session.command("abort")
@click.argument("state_dir", required=False, type=click.Path(file_okay=False))
@click.option("--reason", default="aborted by the local participant", show_default=True,
              help="Why (the peer is told).")
@json_option
@handle_errors
def abort_cmd(state_dir: str | None, reason: str, as_json: bool) -> None:
    """Abort a running session (default: the most recently updated running one); the peer
    is told. Waits a few seconds for the session to confirm it finished."""
    found = SessionFolder(Path(state_dir)) if state_dir else newest(sessions_dir(), "running")
    folder = found.path
    found.live_snapshot()
    write_inbox(folder, {"abort": reason.encode("utf-8", "replace")[:500]
                        .decode("utf-8", "ignore") or "aborted"})
    deadline = time.monotonic() + ABORT_WAIT
    snap: dict[str, Any] = {}
    while time.monotonic() < deadline:
        snap = found.snapshot()
        if snap.get("state") == "finished":
            break
        time.sleep(0.1)
    outcome = snap.get("outcome") if isinstance(snap.get("outcome"), dict) else None
    if snap.get("state") != "finished" or outcome is None:
        raise SessionFailed("session.abort_pending", f"the abort is queued in {folder}, but "
                            f"the session did not confirm within {ABORT_WAIT:g} s")
    if as_json:
        print_json({"ok": True, "state_dir": str(folder), "outcome": outcome})
    else:
        click.echo(f"session {safe_line(outcome.get('status'), 40)}: "
                   f"{safe_line(outcome.get('code'), 80)} ({safe_line(outcome.get('reason'), 300)})")


def _decision_value(text: str, legal: list[Any], what: str) -> Any:
    """A decision typed as plain text (one of the legal values, as its word) or as JSON."""
    if legal:
        words = [plain(v) for v in legal]
        if text in words:
            return legal[words.index(text)]
    try:
        return parse_json_arg(text, what)
    except InputError:
        if legal and not text.startswith("@"):
            raise SessionFailed("decision.illegal", f"{safe_line(text, 60)!r} is not allowed; "
                                f"choose one of: {_words(legal)}") from None
        raise


def _words(legal: list[Any]) -> str:
    return ", ".join(shown(v, 60) for v in legal[:30]) + (" …" if len(legal) > 30 else "")


@session.command("decide")
@click.argument("value", required=False)
@click.option("--state-dir", type=click.Path(file_okay=False),
              help="The running session's state folder (default: the most recent session "
                   "under $LINGXI_HOME/sessions that waits for a decision).")
@click.option("--decision", "decision_text", metavar="VALUE",
              help="The value (instead of the VALUE argument): a legal value as plain text "
                   "(rock), else JSON (42, '\"x\"'), or @file.")
@click.option("--point", "point_id", help="The decision point id (default: the pending one).")
@json_option
@handle_errors
def decide(value: str | None, state_dir: str | None, decision_text: str | None,
           point_id: str | None, as_json: bool) -> None:
    """Answer a pending decision of a running session (through its inbox).

    VALUE is plain text when it is one of the legal values (lingxi session decide rock),
    JSON otherwise (42, '"x"'). Refused with exit 1: a finished session, a session
    whose process is gone, a decision past its deadline, an illegal value.
    """
    if (value is None) == (decision_text is None):
        raise InputError("usage.missing_parameter",
                         "give the value once: lingxi session decide VALUE (or --decision VALUE)")
    text = value if value is not None else decision_text
    assert text is not None
    found = SessionFolder(Path(state_dir)) if state_dir else newest(sessions_dir(), "waiting")
    folder = found.path
    pending = pending_decision(found.live_snapshot())
    if pending is None:
        raise InputError("session.no_pending_decision", "the session is not waiting for a decision")
    if point_id not in (None, pending["point_id"]):
        raise SessionFailed("decision.stale", f"decision {safe_line(point_id, 40)} is not open "
                            f"(open: {safe_line(pending['point_id'], 40)})")
    try:
        deadline = parse_rfc3339(pending.get("deadline")) if pending.get("deadline") else None
    except LingxiError:
        deadline = None
    if deadline is not None and time.time() > deadline:
        raise SessionFailed("decision.expired", f"decision {safe_line(pending['point_id'], 40)} "
                            "is past its deadline (the spec's timeout action applies)")
    legal = pending.get("legal") or []
    decided = _decision_value(text, legal, "--decision" if value is None else "VALUE")
    bounds = tuple(pending["bounds"]) if pending.get("bounds") else None
    if not legal_value(decided, legal, bounds):
        allowed = f"choose one of: {_words(legal)}" if legal else \
            f"a whole number from {bounds[0]} to {bounds[1]}" if bounds else "any value"
        raise SessionFailed("decision.illegal",
                            f"{safe_line(plain_value(decided), 60)!r} is not allowed; {allowed}")
    target = pending["point_id"]
    path = write_inbox(folder, {"point_id": target, "value": decided})
    if as_json:
        print_json({"ok": True, "point_id": target, "value": decided, "file": str(path),
                    "state_dir": str(folder)})
    else:
        click.echo(f"decision for {safe_line(target, 40)} queued in {safe_line(folder, 400)}: "
                   f"{safe_line(plain_value(decided), 200)}")


def plain_value(value: Any) -> str:
    return plain(value)


@session.command("verify")
@click.argument("state_dir", metavar="STATE_DIR|GROUP_RECORD", type=click.Path())
@click.option("--peer-key", metavar="HEX",
              help="The peer's Ed25519 public key (64 hex): check the peer receipt against it "
                   "instead of the key snapshot.json names.")
@click.option("--peer-record", type=click.Path(exists=True), metavar="DIR|FILE",
              help="The peer's state folder (or transcript.jsonl): the verdict also weighs "
                   "what the peer's record holds (as `lingxi session compare`).")
@json_option
@handle_errors
def verify(state_dir: str, peer_key: str | None, peer_record: str | None,
           as_json: bool) -> None:
    """Check a session folder offline: the transcript hash chain, both receipts, and the
    flow mode's own check (e.g. every reveal against its commitment).

    A group record (the JSON `lingxi group host/join/test --record` writes) is
    checked by the group verifier, as `lingxi group verify` does.
    """
    if Path(state_dir).is_file():
        _verify_group_record(state_dir, peer_key, peer_record, as_json)
        return
    result = verify_session(state_dir, peer_key=peer_key, peer_record=peer_record)
    if as_json:
        print_json(result.to_dict())
    else:
        click.echo(f"transcript: {result.entries} envelopes, head {result.head}")
        for which, info in result.keys.items():
            click.echo(f"{which} key: {info['key']} ({info['source']})")
        for which, info in result.receipts.items():
            state = "ok" if info["ok"] else "BAD (see problems)"
            click.echo(f"{which} receipt ({info.get('role', '?')}): {state}")
        for note in result.notes:
            click.echo(f"note: {safe_line(note, 400)}")
        if result.verdict is not None:
            click.echo(f"verdict: {safe_line(verdict_line(result.verdict), 600)}")
        for problem in result.problems:
            click.echo(f"problem: {safe_line(problem, 400)}")
        click.echo("verified" if result.ok else "NOT verified")
    if not result.ok:
        raise SystemExit(EXIT_FAILED)


def _verify_group_record(path: str, peer_key: str | None, peer_record: str | None,
                         as_json: bool) -> None:
    """A file given to `session verify`: a group record goes to the group verifier."""
    from lingxi.cli.common import read_json_file
    from lingxi.cli.group import check_group_records, is_group_record

    data = read_json_file(path, what="record", expect="object")
    if not is_group_record(data):
        raise InputError("session.not_found", f"{safe_line(path, 300)} is neither a session "
                         "state folder nor a group record")
    if peer_key or peer_record:
        raise InputError("usage.bad_option", "--peer-key and --peer-record are for session "
                         "folders; give other members' records to lingxi group verify")
    check_group_records([data], None, as_json)


@session.command("show")
@click.argument("state_dir", type=click.Path(file_okay=False))
@json_option
@handle_errors
def show(state_dir: str, as_json: bool) -> None:
    """Print a session folder's snapshot (state, outcome, pending decision)."""
    found = SessionFolder(Path(state_dir))
    if not found.snapshot_file.is_file():
        raise InputError("session.not_found", f"{state_dir} is not a session state folder")
    data: Any = read_object(found.snapshot_file)
    if as_json:
        print_json(data)
        return
    for key in ("session_id", "protocol", "role", "mode", "state", "position", "outcome",
                "pending_decision"):
        click.echo(f"{key}: {safe_line(json.dumps(data.get(key), ensure_ascii=False), 2000)}")


@session.command("skeleton", hidden=True)
@click.argument("protocol_dir", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing hooks.py.")
@json_option
@click.pass_context
def skeleton(ctx: click.Context, protocol_dir: str, force: bool, as_json: bool) -> None:
    """Moved: lingxi protocol skeleton PROTOCOL_DIR (this name still works and says so)."""
    click.echo("note: `lingxi session skeleton` moved to `lingxi protocol skeleton`", err=True)
    ctx.invoke(skeleton_cmd, protocol_dir=protocol_dir, force=force, as_json=as_json)


session.add_command(ui_cmd)
