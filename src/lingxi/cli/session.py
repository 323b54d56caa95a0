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
from lingxi.cli.protocol_runtime import (
    allow_skeleton_option,
    limit_options,
    parse_json_arg,
    parse_options,
)
from lingxi.errors import EXIT_FAILED, InputError

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


def _announce(record: dict[str, Any]) -> None:
    """Console listener: say when a decision waits for `lingxi session decide`."""
    if record.get("event") != "decision.requested":
        return
    click.echo(safe_line(f"decision {record.get('point_id')} needed (timeout "
                         f"{record.get('timeout_seconds')}s): "
                         f"legal={json.dumps(record.get('legal'), ensure_ascii=False)} "
                         f"view={json.dumps(record.get('view'), ensure_ascii=False)}", 2000),
               err=True)
    click.echo("  answer with: lingxi session decide <value> "
               "[--state-dir <this session's folder>]", err=True)


def _live():
    from lingxi.session.drivers.live import LiveSession

    live = LiveSession()
    live.listen(_announce)
    return live


def _report(result, as_json: bool) -> None:
    data = result.to_dict()
    if as_json:
        print_json({"ok": result.outcome.ok and result.receipts_verified, **data})
    else:
        outcome = result.outcome
        line = f"session {outcome.status}"
        if outcome.code and outcome.by == "peer":  # the peer's own words: marked, escaped
            line += f": the peer aborted: code {peer_text(outcome.code, 120)}, " \
                    f"reason {peer_text(outcome.reason)}"
        elif outcome.code:
            line += f": {outcome.code} ({outcome.by}) {safe_line(outcome.reason, 400)}"
        click.echo(line)
        if outcome.summary:
            click.echo("summary: " + safe_line(json.dumps(outcome.summary, ensure_ascii=False),
                                               400))
        click.echo(f"transcript head {data['transcript_head']}")
        verdict = "verified" if result.receipts_verified else \
            f"NOT verified: {safe_line('; '.join(result.peer_problems), 400)}"
        click.echo(f"receipt {data['receipt_hash']} (peer receipt {verdict})")
        click.echo(f"state: {data['state_dir']}  (check: lingxi session verify {data['state_dir']})")
    if not (result.outcome.ok and result.receipts_verified):
        raise SystemExit(EXIT_FAILED)


def _inputs(source: str | None):
    from lingxi.session import lines_from

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
@session_options
def host(post: bool, server: str, advertise: str | None, ttl: int | None,
         protocol: str, endpoint: str, options_text: str | None, accept_timeout: float | None,
         seed: int | None, guest_key: str | None, peer_timeout: float | None,
         idle_timeout: float,
         control_mode: str | None, input_source: str | None, state_dir: str | None,
         max_messages: int | None, max_bytes: int | None, max_state_bytes: int | None,
         allow_skeleton_hooks: bool, as_json: bool) -> None:
    """Host a protocol session on ENDPOINT and play it with one guest."""
    limits = {"max_messages": max_messages, "max_bytes": max_bytes,
              "max_state_bytes": max_state_bytes}
    from lingxi.session import host_session, load_protocol

    loaded = load_protocol(protocol, allow_skeleton=allow_skeleton_hooks)
    options = parse_options(options_text)

    def listening(where: str) -> None:
        click.echo(f"hosting {loaded.spec.name} ({loaded.spec.protocol_id[:16]}…) on {where}",
                   err=True)
        sys.stderr.flush()

    common: dict[str, Any] = dict(
        config=_config(peer_timeout, control_mode, loaded.spec, idle_timeout, limits),
        state_dir=state_dir, seed=seed, expected_guest_key=guest_key,
        accept_timeout=accept_timeout, live=_live(), inputs=_inputs(input_source),
        on_refused=lambda e: click.echo(safe_line(f"refused a connection: {e}", 400), err=True))
    if post:
        from lingxi.cli.meet import host_posted

        def posted(where: str, invitation: dict[str, Any]) -> None:
            listening(where)
            click.echo(f"invitation {invitation['invitation_id']} posted (expires "
                       f"{invitation.get('expires_at', '?')}); a guest joins with: lingxi join "
                       f"{invitation['invitation_id']}", err=True)
            sys.stderr.flush()

        result = asyncio.run(host_posted(loaded, endpoint, server=server, advertise=advertise,
                                         ttl=ttl, options=options, announce=posted, **common))
    else:
        if advertise or ttl:
            raise InputError("input.needs_post", "--advertise and --ttl go with --post")
        result = asyncio.run(host_session(loaded, endpoint, options=options,
                                          on_listening=listening, **common))
    _report(result, as_json)


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
def guest(endpoint: str, protocol: str | None, seed: int | None, host_key: str | None,
          peer_timeout: float | None,
          idle_timeout: float, control_mode: str | None, input_source: str | None, state_dir: str | None,
          max_messages: int | None, max_bytes: int | None, max_state_bytes: int | None,
          allow_skeleton_hooks: bool, as_json: bool) -> None:
    """Join the session hosted at ENDPOINT as the guest."""
    limits = {"max_messages": max_messages, "max_bytes": max_bytes,
              "max_state_bytes": max_state_bytes}
    from lingxi.session import guest_session, load_protocol

    loaded = load_protocol(protocol, allow_skeleton=allow_skeleton_hooks) if protocol else None
    result = asyncio.run(guest_session(
        loaded, endpoint,
        config=_config(peer_timeout, control_mode, loaded and loaded.spec, idle_timeout, limits),
        state_dir=state_dir,
        seed=seed, allow_skeleton=allow_skeleton_hooks, expected_host_key=host_key,
        live=_live(),
        inputs=_inputs(input_source)))
    _report(result, as_json)


@click.group("session")
def session() -> None:
    """Inspect, decide in, and verify session state folders."""


def _waiting_session() -> Path:
    """The most recently updated session folder that waits for a decision."""
    from lingxi.home import sessions_dir

    best: tuple[float, Path] | None = None
    root = sessions_dir()
    for snapshot in root.glob("*/snapshot.json") if root.is_dir() else []:
        try:
            data = json.loads(snapshot.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(data, dict) and data.get("pending_decision") \
                and data.get("state") != "finished":
            stamp = snapshot.stat().st_mtime
            if best is None or stamp > best[0]:
                best = (stamp, snapshot.parent)
    if best is None:
        raise InputError("session.no_pending_decision",
                         f"no session under {root} is waiting for a decision")
    return best[1]


@session.command("decide")
@click.option("--state-dir", type=click.Path(file_okay=False),
              help="The running session's state folder (default: the most recent session "
                   "under $LINGXI_HOME/sessions that waits for a decision).")
@click.option("--decision", "decision_text", required=True, metavar="JSON",
              help='The value to decide, as JSON (e.g. \'"rock"\' or 42), or @file.')
@click.option("--point", "point_id", help="The decision point id (default: the pending one).")
@json_option
@handle_errors
def decide(state_dir: str | None, decision_text: str, point_id: str | None,
           as_json: bool) -> None:
    """Answer a pending decision of a running session (through its inbox)."""
    from lingxi.files import write_private_json as write_json_atomic
    from lingxi.session.core.decisions import legal_value
    from lingxi.session.record.recorder import INBOX, SNAPSHOT
    from lingxi.session.record.snapshot import pending_decision, read_object

    folder = Path(state_dir) if state_dir else _waiting_session()
    value = parse_json_arg(decision_text, "--decision")
    snapshot_path = folder / SNAPSHOT
    if not snapshot_path.is_file():
        raise InputError("session.not_found", f"{folder} is not a session state folder")
    pending = pending_decision(read_object(snapshot_path))
    if pending is None and point_id is None:
        raise InputError("session.no_pending_decision", "the session is not waiting for a decision")
    if pending is not None:
        bounds = tuple(pending["bounds"]) if pending.get("bounds") else None
        if (point_id in (None, pending["point_id"])
                and not legal_value(value, pending.get("legal") or [], bounds)):
            raise InputError("decision.illegal",
                             f"{value!r} is not allowed; legal: {pending.get('legal')} "
                             f"bounds: {bounds}", exit_code=EXIT_FAILED)
    target = point_id or (pending or {}).get("point_id")
    (folder / INBOX).mkdir(exist_ok=True)
    path = folder / INBOX / f"{time.time_ns()}.json"
    write_json_atomic(path, {"point_id": target, "value": value})
    if as_json:
        print_json({"ok": True, "point_id": target, "value": value, "file": str(path),
                    "state_dir": str(folder)})
    else:
        click.echo(f"decision for {target} queued in {folder}: "
                   f"{json.dumps(value, ensure_ascii=False)}")


@session.command("verify")
@click.argument("state_dir", type=click.Path(file_okay=False))
@click.option("--peer-key", metavar="HEX",
              help="The peer's Ed25519 public key (64 hex): check the peer receipt against it "
                   "instead of the key snapshot.json names.")
@json_option
@handle_errors
def verify(state_dir: str, peer_key: str | None, as_json: bool) -> None:
    """Check a session folder offline: the transcript hash chain, both receipts, and the
    flow mode's own check (e.g. every reveal against its commitment).

    Example: lingxi session verify ~/.lingxi/sessions/<id>-guest --peer-key <hex>
    """
    from lingxi.session import verify_session

    result = verify_session(state_dir, peer_key=peer_key)
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
