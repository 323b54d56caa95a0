"""``lingxi host``, ``lingxi guest`` and ``lingxi session decide|verify|show``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import (
    POSITIVE_SECONDS,
    handle_errors,
    json_option,
    peer_text,
    print_json,
    safe_line,
)
from lingxi.cli.console import participation_options
from lingxi.cli.protocol_runtime import (
    allow_skeleton_option,
    check_local_options,
    limit_options,
    parse_json_arg,
    parse_options,
    strict_options_option,
)
from lingxi.cli.reach import reach_options
from lingxi.cli.session_compare import compare_cmd
from lingxi.errors import EXIT_FAILED, InputError, LingxiError

timeout_option = click.option("--timeout", "peer_timeout", type=POSITIVE_SECONDS, default=None,
                              help="Seconds the peer may stay silent when it is its turn "
                                   "(default: the spec's decision timeout + 30 s, at least 60 s, "
                                   "so a peer deciding by hand is not cut off).")
control_option = click.option("--control-mode", type=click.Choice(["autonomous", "hybrid", "human"]),
                              help="Where this side's decisions come from (local only; never "
                                   "changes the spec or its hash). Default: the spec's decision.mode.")
input_option = click.option("--input", "input_source", metavar="FILE|-",
                            help="Free mode: send the lines of FILE (or stdin with -); "
                                 "end of input ends the session.")
idle_option = click.option("--idle-timeout", type=POSITIVE_SECONDS, default=300.0,
                           show_default=True,
                           help="Free mode: end the session after this many seconds without "
                                "any message.")
def _peer_key(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An Ed25519 public key as `lingxi identity show` prints it (64 lowercase hex)."""
    if value is None:
        return None
    key = value.strip().lower()
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise click.BadParameter("expected the peer's public key: 64 hex characters, as "
                                 "`lingxi identity show` prints it")
    return key


state_option = click.option("--state-dir", type=click.Path(file_okay=False),
                            help="Session folder (default: $LINGXI_HOME/sessions/<id>-<role>).")


def session_options(command):
    """The options every command that plays a session shares (timeouts, control, input,
    state folder, limits, skeletons, --json), and the one-line error handling."""
    for option in (handle_errors, json_option, allow_skeleton_option, limit_options,
                   state_option, input_option, control_option, idle_option, timeout_option):
        command = option(command)
    return command


def _config(peer_timeout: float | None, control_mode: str | None, spec=None,
            idle_timeout: float = 300.0, limits: dict | None = None):
    from lingxi.session import SessionConfig
    from lingxi.session.core.decisions import DEFAULT_TIMEOUT

    if peer_timeout is None:
        decision = getattr(spec, "decision", None)
        peer_timeout = max(60.0, float(getattr(decision, "timeout_seconds", None)
                                       or DEFAULT_TIMEOUT) + 30.0)
    if peer_timeout <= 0 or idle_timeout <= 0:
        raise InputError("input.bad_timeout", "timeouts must be positive")
    return SessionConfig(peer_timeout=peer_timeout, control_mode=control_mode,
                         idle_timeout=idle_timeout, **(limits or {}))


def _play(part: Any, session: Any, ui_dir: Path | None, as_json: bool) -> Any:
    """Run one session coroutine factory with this terminal taking part; Ctrl-C aborts it
    (the driver tells the peer) and ends with one line and exit 1."""
    try:
        return asyncio.run(part.run(session, ui_dir))
    except KeyboardInterrupt:
        part.interrupted(as_json)


def _ui_dir(loaded: Any) -> Path | None:
    folder = getattr(loaded, "folder", None)
    ui = Path(folder) / "ui" if folder is not None else None
    return ui if ui is not None and ui.is_dir() else None


def _report(result, as_json: bool, told: bool = False) -> None:
    """The end of a run on stdout; ``told``: the console already said how it ended."""
    data = result.to_dict()
    if as_json:
        print_json({"ok": result.outcome.ok and result.receipts_verified, **data})
    else:
        from lingxi.cli.console import outcome_words

        outcome = result.outcome
        line = f"session {outcome.status}"
        if outcome.code and outcome.by == "peer":  # the peer's own words: marked, escaped
            line += f": the peer aborted: code {peer_text(outcome.code, 120)}, " \
                    f"reason {peer_text(outcome.reason)}"
        elif outcome.code:
            line += f": {outcome.code} ({outcome.by}) {safe_line(outcome.reason, 400)}"
        elif not told:
            line += f": {outcome_words(outcome.to_dict(), outcome.role)}"
        click.echo(line)
        click.echo(f"transcript head {data['transcript_head']}")
        verdict = "verified" if result.receipts_verified else \
            f"NOT verified: {safe_line('; '.join(result.peer_problems), 400)}"
        click.echo(f"receipt {data['receipt_hash']} (peer receipt {verdict})")
        click.echo(f"state: {data['state_dir']}  (check: lingxi session verify {data['state_dir']})")
    if not (result.outcome.ok and result.receipts_verified):
        raise SystemExit(EXIT_FAILED)


def _inputs(source: str | None):
    from lingxi.session.net import lines_from

    if source is None:
        return None
    if source != "-":
        from lingxi.session.drivers.network import read_script

        read_script(source)  # refuse an unreadable or non-UTF-8 script before the session
    return lines_from(source)


@click.command("host")
@click.option("--post", is_flag=True,
              help="Post an invitation to the registry once listening; only a guest with its "
                   "ticket (lingxi join) may then open the session. The receipt is posted and "
                   "the invitation withdrawn at the end.")
@click.option("--server", default=lambda: os.environ.get("LINGXI_REGISTRY", "embedded"),
              show_default="embedded (or $LINGXI_REGISTRY)", metavar="URL",
              help="With --post: the registry (URL, or 'embedded' for the local database).")
@click.option("--advertise", metavar="tcp://HOST:PORT",
              help="With --post: the endpoint guests are told (default: the bound one).")
@click.option("--ttl", type=click.IntRange(60, 72 * 3600), default=None, metavar="SECONDS",
              help="With --post: how long the invitation stays open (default 2 h, at most 72 h).")
@click.option("--protocol-dir", "protocol", required=True, metavar="DIR|NAME",
              help="Local protocol folder (spec.json + hooks.py) or a built-in name.")
@click.option("--endpoint", default="tcp://127.0.0.1:7400", show_default=True,
              help="Where to listen, tcp://HOST:PORT (port 0 picks a free one).")
@click.option("--options", "options_text", metavar="JSON", help="Session options (or @file).")
@click.option("--accept-timeout", type=POSITIVE_SECONDS, default=None,
              help="Give up when no guest joined within this many seconds.")
@click.option("--seed", type=int, default=None, help="Seed the hooks' game randomness only (reproducible play); never nonces or keys, which always come from the OS.")
@click.option("--guest-key", callback=_peer_key, metavar="HEX",
              help="Accept only a guest with this identity key; any other is refused in the "
                   "handshake, before a payload is read.")
@strict_options_option
@session_options
@participation_options
@reach_options
def host(post: bool, server: str, advertise: str | None, ttl: int | None,
         protocol: str, endpoint: str, options_text: str | None, accept_timeout: float | None,
         seed: int | None, guest_key: str | None, peer_timeout: float | None,
         idle_timeout: float,
         control_mode: str | None, input_source: str | None, state_dir: str | None,
         max_messages: int | None, max_bytes: int | None, max_state_bytes: int | None,
         allow_skeleton_hooks: bool, strict_options: bool, as_json: bool, part: Any,
         reach: Any) -> None:
    """Host a protocol session on ENDPOINT and play it with one guest.

    With --control-mode human (or hybrid) this terminal asks you at every decision;
    the rounds, the peer's messages and the outcome are printed as they happen
    (stderr; --quiet turns that off). Ctrl-C aborts and tells the peer.
    """
    limits = {"max_messages": max_messages, "max_bytes": max_bytes,
              "max_state_bytes": max_state_bytes}
    from lingxi.session import load_protocol
    from lingxi.session.net import host_session

    loaded = load_protocol(protocol, allow_skeleton=allow_skeleton_hooks)
    options = parse_options(options_text)
    check_local_options(loaded.spec, options, strict_options)
    part.prepare(control_mode, input_source)

    def listening(where: str) -> None:
        click.echo(f"hosting {loaded.spec.name} ({loaded.spec.protocol_id[:16]}…) on {where}",
                   err=True)
        sys.stderr.flush()

    common: dict[str, Any] = dict(
        config=_config(peer_timeout, control_mode, loaded.spec, idle_timeout, limits),
        state_dir=state_dir, seed=seed, expected_guest_key=guest_key,
        accept_timeout=accept_timeout, inputs=_inputs(input_source), **part.driver_kwargs(),
        on_refused=lambda e: click.echo(safe_line(f"refused a connection: {e}", 400), err=True),
        seal=reach.seal)
    if post:
        from lingxi.cli.meet import host_posted

        def posted(where: str, invitation: dict[str, Any]) -> None:
            from lingxi.cli.registry_common import EMBEDDED, registry_name

            listening(where)
            join = f"lingxi join {invitation['invitation_id']}" + (
                f" --server {server}" if server != EMBEDDED else "")
            click.echo(f"invitation {invitation['invitation_id']} posted at "
                       f"{registry_name(server)} (expires {invitation.get('expires_at', '?')}); "
                       f"a guest joins with: {join}", err=True)
            if server == EMBEDDED:
                click.echo("  (the embedded registry is this home's own: a guest on another "
                           "machine needs a shared one — `lingxi server` there, --server URL "
                           "on both)", err=True)
            sys.stderr.flush()

        result = _play(part, lambda: host_posted(
            loaded, endpoint, server=server, advertise=advertise, ttl=ttl, options=options,
            announce=posted, via=reach.via, **common), _ui_dir(loaded), as_json)
    else:
        if advertise or ttl:
            raise InputError("input.needs_post", "--advertise and --ttl go with --post")
        if reach.via == "relay":
            raise InputError("input.relay_needs_registry", "the relay path needs a registry "
                             "invitation: lingxi host --post --server URL --via relay")
        result = _play(part, lambda: host_session(loaded, endpoint, options=options,
                                                  on_listening=listening, **common),
                       _ui_dir(loaded), as_json)
    _report(result, as_json, told=not part.quiet)


@click.command("guest")
@click.option("--endpoint", required=True, help="The host's tcp://HOST:PORT.")
@click.option("--protocol-dir", "protocol", metavar="DIR|NAME",
              help="Local protocol folder or built-in name (default: find the offered "
                   "protocol among the built-ins and the protocol cache).")
@click.option("--seed", type=int, default=None, help="Seed the hooks' game randomness only (reproducible play); never nonces or keys, which always come from the OS.")
@click.option("--host-key", callback=_peer_key, metavar="HEX",
              help="Refuse the host unless its identity key is this one (as its `lingxi "
                   "identity show` prints it); checked in the handshake, before any payload.")
@session_options
@participation_options
@reach_options
def guest(endpoint: str, protocol: str | None, seed: int | None, host_key: str | None,
          peer_timeout: float | None,
          idle_timeout: float, control_mode: str | None, input_source: str | None, state_dir: str | None,
          max_messages: int | None, max_bytes: int | None, max_state_bytes: int | None,
          allow_skeleton_hooks: bool, as_json: bool, part: Any, reach: Any) -> None:
    """Join the session hosted at ENDPOINT as the guest.

    Takes part like `lingxi host`: --control-mode human asks at this terminal, the
    console shows the session as it happens, Ctrl-C aborts and tells the host.
    """
    limits = {"max_messages": max_messages, "max_bytes": max_bytes,
              "max_state_bytes": max_state_bytes}
    from lingxi.session import load_protocol
    from lingxi.session.net import guest_session

    if reach.via == "relay":
        raise InputError("input.relay_needs_registry", "the relay path needs a registry "
                         "claim: lingxi join INVITATION --via relay")

    loaded = load_protocol(protocol, allow_skeleton=allow_skeleton_hooks) if protocol else None
    part.prepare(control_mode, input_source)
    config = _config(peer_timeout, control_mode, loaded and loaded.spec, idle_timeout, limits)
    inputs = _inputs(input_source)
    result = _play(part, lambda: guest_session(
        loaded, endpoint, config=config, state_dir=state_dir, seed=seed,
        allow_skeleton=allow_skeleton_hooks, expected_host_key=host_key, inputs=inputs,
        seal=reach.seal, **part.driver_kwargs()), _ui_dir(loaded), as_json)
    _report(result, as_json, told=not part.quiet)


@click.group("session")
def session() -> None:
    """Inspect, decide in, and verify session state folders."""


session.add_command(compare_cmd)


# ------------------------------------------------------------------ finding session folders

def _session_folders() -> list[Path]:
    """Every session folder under $LINGXI_HOME/sessions: ``<id>-<role>/`` and, one level
    deeper, ``protocol-test/<run>/<role>/``."""
    from lingxi.home import sessions_dir
    from lingxi.session.record.recorder import EVENTS, LOCK, SNAPSHOT

    found: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            return
        for child in children:
            if any((child / name).exists() for name in (SNAPSHOT, EVENTS, LOCK)):
                found.append(child)
            elif depth < 2:
                walk(child, depth + 1)

    walk(sessions_dir(), 0)
    return found


def _snapshot(folder: Path) -> dict[str, Any]:
    """snapshot.json, or {} when it is missing or unreadable (a listing never fails on one)."""
    from lingxi.session.record.recorder import SNAPSHOT
    from lingxi.session.record.snapshot import read_object

    try:
        return read_object(folder / SNAPSHOT)
    except LingxiError:
        return {}


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _first_event_time(folder: Path) -> float | None:
    from lingxi.session.record.recorder import EVENTS

    try:
        with open(folder / EVENTS, "rb") as handle:
            first = json.loads(handle.readline(65536) or b"null")
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    stamp = first.get("t") if isinstance(first, dict) else None
    return float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) \
        else None


def _state_of(folder: Path, snapshot: dict[str, Any]) -> str:
    """running / waiting for decision / finished / gone: process ended (liveness, not the
    snapshot alone: a process that died leaves a snapshot that still says running)."""
    from lingxi.session.record.recorder import is_running

    finished = snapshot.get("state") == "finished"
    if finished:
        return "finished"
    if not is_running(folder):
        return "gone: process ended"
    return "waiting for decision" if snapshot.get("pending_decision") else "running"


def _row(folder: Path) -> dict[str, Any]:
    from lingxi.session.record.recorder import LOCK, SNAPSHOT

    snap = _snapshot(folder)
    outcome = snap.get("outcome") if isinstance(snap.get("outcome"), dict) else None
    role = snap.get("role") if isinstance(snap.get("role"), str) else folder.name.rsplit("-", 1)[-1]
    peer = snap.get("peer_public_key")
    state = _state_of(folder, snap)
    pending = snap.get("pending_decision") if state == "waiting for decision" else None
    return {"state_dir": str(folder), "state": state, "role": role,
            "pending_decision": {k: pending.get(k) for k in ("point_id", "legal", "deadline")}
            if isinstance(pending, dict) else None,
            "protocol": snap.get("protocol") if isinstance(snap.get("protocol"), str) else None,
            "session_id": snap.get("session_id") if isinstance(snap.get("session_id"), str)
            else None,
            "peer": peer[:16] if isinstance(peer, str) else None,
            "started": _mtime(folder / LOCK) or _first_event_time(folder),
            "updated": _mtime(folder / SNAPSHOT) or _mtime(folder),
            "outcome": None if outcome is None else {
                k: outcome.get(k) for k in ("status", "code", "by", "reason", "summary")}}


def _rows() -> list[dict[str, Any]]:
    """All session folders, most recently updated first."""
    return sorted((_row(f) for f in _session_folders()), key=lambda r: -(r["updated"] or 0))


def _newest(which: str) -> Path:
    """The most recently updated session folder that is ``which`` (waiting, running, any)."""
    from lingxi.home import sessions_dir

    wanted = {"waiting": ("waiting for decision",),
              "running": ("running", "waiting for decision")}.get(which)
    for row in _rows():
        if wanted is None or row["state"] in wanted:
            return Path(row["state_dir"])
    if which == "waiting":
        raise InputError("session.no_pending_decision",
                         f"no session under {sessions_dir()} is waiting for a decision")
    if which == "running":
        raise SessionFailed("session.not_running",
                            f"no session under {sessions_dir()} is running")
    raise InputError("session.not_found", f"no session folder under {sessions_dir()}")


class SessionFailed(LingxiError):
    """The checked session cannot take this request (finished, gone, expired): exit 1."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message, exit_code=EXIT_FAILED)


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else "-"


def _outcome_words(outcome: dict[str, Any] | None) -> str:
    if not outcome:
        return "-"
    words = str(outcome.get("status") or "?")
    if outcome.get("code"):
        words += f" ({outcome.get('code')}, by {outcome.get('by')})"
    return safe_line(words, 120)


@session.command("list")
@json_option
@handle_errors
def list_cmd(as_json: bool) -> None:
    """List every session folder under $LINGXI_HOME/sessions, most recently updated first:
    state (running, waiting for decision, finished, gone: process ended), role, protocol,
    peer key, start time, outcome."""
    rows = _rows()
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no sessions")
        return
    for row in rows:
        click.echo(safe_line(
            f"{row['state']:<22} {row['role'] or '?':<5} {row['protocol'] or '?'}  "
            f"peer {row['peer'] or '-'}  started {_when(row['started'])}  "
            f"outcome {_outcome_words(row['outcome'])}", 600))
        pending = row["pending_decision"]
        if pending:
            legal = pending.get("legal")
            words = f": {_words(legal)}" if isinstance(legal, list) and legal else ""
            click.echo(f"  decision {safe_line(pending.get('point_id'), 40)} open{words} "
                       f"(until {safe_line(pending.get('deadline'), 40)}; lingxi session "
                       "decide VALUE)")
        click.echo(f"  {safe_line(row['state_dir'], 600)}")


def _folder_arg(state_dir: str | None, which: str) -> Path:
    from lingxi.session.record.recorder import EVENTS, SNAPSHOT

    folder = Path(state_dir) if state_dir else _newest(which)
    if not ((folder / SNAPSHOT).is_file() or (folder / EVENTS).is_file()):
        raise InputError("session.not_found", f"{folder} is not a session state folder")
    return folder


def _event_records(data: bytes) -> list[dict[str, Any]]:
    out = []
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("event"), str):
            out.append(record)
    return out


def _print_event(record: dict[str, Any], info: dict[str, Any], as_json: bool) -> None:
    from lingxi.cli.common import _JSON_UNSAFE
    from lingxi.cli.console import event_lines

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
    from lingxi.session.record.recorder import EVENTS, is_running

    folder = _folder_arg(state_dir, "any")
    info = {**_snapshot(folder), "state_dir": str(folder)}
    path, position, pending, finished = folder / EVENTS, 0, b"", False
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
        for record in _event_records(complete):
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


def _live_folder(folder: Path) -> dict[str, Any]:
    """The snapshot of a session that can still be steered (typed refusals otherwise)."""
    from lingxi.session.record.recorder import SNAPSHOT, is_running
    from lingxi.session.record.snapshot import read_object

    if not (folder / SNAPSHOT).is_file():
        raise InputError("session.not_found", f"{folder} is not a session state folder")
    snap = read_object(folder / SNAPSHOT)
    if snap.get("state") == "finished":
        raise SessionFailed("session.finished", f"the session in {folder} has ended")
    if not is_running(folder):
        raise SessionFailed("session.not_running", f"the session's process is gone ({folder}); "
                            "nothing would read the request")
    return snap


@session.command("abort")
@click.argument("state_dir", required=False, type=click.Path(file_okay=False))
@click.option("--reason", default="aborted by the local participant", show_default=True,
              help="Why (the peer is told).")
@json_option
@handle_errors
def abort_cmd(state_dir: str | None, reason: str, as_json: bool) -> None:
    """Abort a running session (default: the most recently updated running one); the peer
    is told. Waits a few seconds for the session to confirm it finished."""
    from lingxi.session.record.recorder import write_inbox

    folder = Path(state_dir) if state_dir else _newest("running")
    _live_folder(folder)
    write_inbox(folder, {"abort": reason.encode("utf-8", "replace")[:500]
                        .decode("utf-8", "ignore") or "aborted"})
    deadline = time.monotonic() + ABORT_WAIT
    snap: dict[str, Any] = {}
    while time.monotonic() < deadline:
        snap = _snapshot(folder)
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
    from lingxi.deciders.terminal import plain

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
    from lingxi.deciders.terminal import shown

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
    from lingxi.session.core.decisions import legal_value
    from lingxi.session.record.recorder import write_inbox
    from lingxi.session.record.snapshot import pending_decision
    from lingxi.wire.timefmt import parse_rfc3339

    if (value is None) == (decision_text is None):
        raise InputError("usage.missing_parameter",
                         "give the value once: lingxi session decide VALUE (or --decision VALUE)")
    text = value if value is not None else decision_text
    assert text is not None
    folder = Path(state_dir) if state_dir else _newest("waiting")
    pending = pending_decision(_live_folder(folder))
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
    from lingxi.deciders.terminal import plain

    return plain(value)


@session.command("verify")
@click.argument("state_dir", type=click.Path(file_okay=False))
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
    """
    from lingxi.session import verify_session

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
            from lingxi.session.core.verdicts import verdict_line

            click.echo(f"verdict: {safe_line(verdict_line(result.verdict), 600)}")
        for problem in result.problems:
            click.echo(f"problem: {safe_line(problem, 400)}")
        click.echo("verified" if result.ok else "NOT verified")
    if not result.ok:
        raise SystemExit(EXIT_FAILED)


@session.command("show")
@click.argument("state_dir", type=click.Path(file_okay=False))
@json_option
@handle_errors
def show(state_dir: str, as_json: bool) -> None:
    """Print a session folder's snapshot (state, outcome, pending decision)."""
    from lingxi.session.record.recorder import SNAPSHOT
    from lingxi.session.record.snapshot import read_object

    path = Path(state_dir) / SNAPSHOT
    if not path.is_file():
        raise InputError("session.not_found", f"{state_dir} is not a session state folder")
    data: Any = read_object(path)
    if as_json:
        print_json(data)
        return
    for key in ("session_id", "protocol", "role", "mode", "state", "position", "outcome",
                "pending_decision"):
        click.echo(f"{key}: {safe_line(json.dumps(data.get(key), ensure_ascii=False), 2000)}")


@session.command("skeleton")
@click.argument("protocol_dir", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing hooks.py.")
@json_option
@handle_errors
def skeleton(protocol_dir: str, force: bool, as_json: bool) -> None:
    """Write a hooks.py skeleton (and .lingxi-hooks.json) for PROTOCOL_DIR's spec.json.

    The skeleton lists the spec's constraints and one placeholder per hook the
    flow mode needs; host, guest and `protocol test` refuse it until every
    placeholder is written and the LINGXI_SKELETON line removed.
    """
    from lingxi.contract import load_spec
    from lingxi.hooks import write_skeleton
    from lingxi.session import flow_mode

    spec = load_spec(protocol_dir)
    mode = flow_mode(spec.flow.mode)
    written = mode.skeleton_methods(spec.raw)
    path = write_skeleton(spec, protocol_dir, written, protocol_id=spec.protocol_id, force=force)
    methods = [m.name for m in written]
    if as_json:
        print_json({"ok": True, "hooks": str(path), "mode": spec.flow.mode, "methods": methods})
    else:
        click.echo(f"wrote {path} ({spec.flow.mode}); write: {', '.join(methods)}")


def _attach() -> None:
    from lingxi.cli.attach import ui_cmd

    session.add_command(ui_cmd)


_attach()
