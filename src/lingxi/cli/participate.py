"""``lingxi host``, ``lingxi guest`` and ``lingxi join``: this terminal plays one session.

The three share their options (timeouts, control, input, state folder, limits), the
console that takes part, and the end-of-run report; ``host --post`` and ``join`` meet
through a registry (:mod:`lingxi.cli.meet`), the session itself runs peer to peer.
"""

from __future__ import annotations

import asyncio
import os
import sys
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
from lingxi.cli.console import outcome_words, participation_options
from lingxi.cli.meet import host_posted, join_invitation
from lingxi.cli.protocol_runtime import (
    allow_skeleton_option,
    check_local_options,
    limit_options,
    parse_options,
    strict_options_option,
)
from lingxi.cli.reach import reach_options
from lingxi.cli.registry_common import EMBEDDED, explain, make_client, registry_name, server_option
from lingxi.errors import EXIT_FAILED, InputError, LingxiError
from lingxi.session import SessionConfig, load_protocol
from lingxi.session.core.decisions import DEFAULT_TIMEOUT

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
@click.option("--protocol-dir", "--protocol", "protocol", required=True, metavar="DIR|NAME",
              help="Local protocol folder (spec.json + hooks.py) or a built-in name.")
@click.option("--seats", type=click.IntRange(min=2, max=16), default=None,
              help="A group protocol (holdem, group-vote): the table's seats, this one "
                   "included; with --post the same as `lingxi group host PROTOCOL --post`.")
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
         protocol: str, seats: int | None, endpoint: str, options_text: str | None,
         accept_timeout: float | None,
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
    from lingxi.cli.group import group_spec_or_none

    if seats is not None or group_spec_or_none(protocol) is not None:  # a group table
        from lingxi.cli.table import host_table_command

        host_table_command(protocol, seats, post=post, server=server, endpoint=endpoint,
                           advertise=advertise, ttl=ttl, via=reach.via,
                           timeout=peer_timeout, accept_timeout=accept_timeout,
                           control_mode=control_mode, as_json=as_json,
                           options=parse_options(options_text),
                           strict_options=strict_options)
        return
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

        def posted(where: str, invitation: dict[str, Any]) -> None:
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


@click.command("join")
@click.argument("invitation_id")
@server_option
@click.option("--protocol-dir", "protocol", metavar="DIR|NAME",
              help="Local protocol folder or built-in name (default: the built-ins and the "
                   "protocol cache; a missing spec is fetched from the registry).")
@click.option("--seed", type=int, default=None,
              help="Seed the hooks' game randomness only; never nonces or keys.")
@session_options
@participation_options
@reach_options
def join(invitation_id: str, server: str, protocol: str | None, seed: int | None,
         peer_timeout: float | None, idle_timeout: float, control_mode: str | None,
         input_source: str | None, state_dir: str | None, max_messages: int | None,
         max_bytes: int | None, max_state_bytes: int | None,
         allow_skeleton_hooks: bool, as_json: bool, part: Any, reach: Any) -> None:
    """Claim INVITATION_ID at a registry and play the session as its guest.

    The host's identity key is checked against the invitation in the
    handshake; the session runs peer to peer; both signed receipts go to the
    registry at the end. A seat of a group table (`lingxi host --seats N
    --post`; browse shows the table) is played as that seat, its record
    written under $LINGXI_HOME/groups/.
    """

    limits = {"max_messages": max_messages, "max_bytes": max_bytes,
              "max_state_bytes": max_state_bytes}
    from lingxi.cli.table import SeatRun, finish_seat, play_if_seat

    part.prepare(control_mode, input_source)
    config = _config(peer_timeout, control_mode, None, idle_timeout, limits)
    inputs = _inputs(input_source)

    async def main() -> Any:
        client = make_client(server, identity="create")
        try:
            async with client:
                seat = await play_if_seat(client, invitation_id, reach=reach,
                                          timeout=peer_timeout, control_mode=control_mode)
                if seat is not None:  # a seat of a group table, played to the end
                    return seat
                return await join_invitation(
                    client, invitation_id, protocol_dir=protocol,
                    allow_skeleton=allow_skeleton_hooks, config=config,
                    state_dir=state_dir, seed=seed, inputs=inputs, seal=reach.seal,
                    reach=reach, **part.driver_kwargs())
        except LingxiError as error:  # say which registry was asked
            if error.code.startswith("registry."):
                raise explain(error, server) from None
            raise

    result = _play(part, main, None, as_json)
    if isinstance(result, SeatRun):
        finish_seat(result, as_json)
        return
    _report(result, as_json)
