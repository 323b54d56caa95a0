"""``lingxi protocol test|list|path``: run protocol folders and find the built-ins.

``protocol test``'s options are declared here, for Click; what it does is
:func:`lingxi.cli.selfplay.run_test`, which a plain ``protocol test`` also reaches
without Click (:mod:`lingxi.cli.fast`, its options held equal to these by
``tests/cli/test_fast_protocol_test.py``).
"""

from __future__ import annotations

from typing import Any

import click

from lingxi.cli.common import POSITIVE_SECONDS, handle_errors, json_option, print_json
from lingxi.cli.selfplay import check_local_options, parse_json_arg, parse_options, run_test
from lingxi.errors import InputError

__all__ = ["allow_skeleton_option", "check_local_options", "limit_options", "list_cmd",
           "parse_json_arg", "parse_options", "path_cmd", "skeleton_cmd",
           "strict_options_option", "test_cmd"]

strict_options_option = click.option(
    "--strict", "strict_options", is_flag=True,
    help="Refuse an option the spec does not declare (a misspelt one: options.undeclared, "
         "exit 2) instead of warning and ignoring it.")


allow_skeleton_option = click.option(
    "--allow-skeleton-hooks", is_flag=True,
    help="Load hooks that are still a generated skeleton (tests only; "
         "also LINGXI_ALLOW_SKELETON_HOOKS=1).")


def limit_options(command):
    """--max-messages / --max-bytes / --max-state-bytes: this run's session limits."""
    for name, what in (("--max-state-bytes", "bytes written to the session's state folder"),
                       ("--max-bytes", "envelope bytes received from the peer"),
                       ("--max-messages", "messages received from the peer")):
        command = click.option(name, type=click.IntRange(min=1), default=None, metavar="N",
                               help=f"End the session (session.too_long / session.too_large) "
                                    f"past N {what} (default: the spec's timing.limits, else "
                                    "a laptop-sized default).")(command)
    return command


@click.command("test")
@click.argument("protocol")
@click.option("--options", "options_text", metavar="JSON",
              help="Session options as JSON (or @file), checked against spec.parameters.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for hooks, engine nonces and keys: same seed, same outcome.")
@click.option("--adversarial", is_flag=True,
              help="Also play every cheating peer against the host and the guest.")
@click.option("--timeout", "peer_timeout", type=POSITIVE_SECONDS, default=30.0, show_default=True,
              help="Seconds (session time) a silent peer is given before the session aborts.")
@click.option("--control-mode", type=click.Choice(["autonomous", "hybrid", "human"]),
              default="autonomous", show_default=True,
              help="Where the host's decisions come from. human/hybrid at a terminal: you "
                   "play the host in real time (the guest's hooks decide); with --no-input or "
                   "without a terminal nobody answers and the timeout path is exercised.")
@click.option("--no-input", "no_input", is_flag=True,
              help="With --control-mode human/hybrid: never ask (nobody answers; the spec's "
                   "timeout action decides, in session time, at once).")
@click.option("--as", "person_role", type=click.Choice(["host", "guest"]), default="host",
              show_default=True,
              help="With a person at the terminal: the side they play (the other side's "
                   "hooks decide).")
@click.option("--interactive", is_flag=True,
              help="With --control-mode human/hybrid: ask at this terminal even when stdin is "
                   "not one (answers piped in).")
@click.option("--inputs", "inputs_file", type=click.Path(dir_okay=False),
              help='Free mode: JSON file {"host": [lines], "guest": [lines]} '
                   "(default: the folder's test-inputs.json).")
@click.option("--state-dir", type=click.Path(file_okay=False),
              help="Where to write both sides' state folders "
                   "(default: $LINGXI_HOME/sessions/protocol-test/<name>).")
@limit_options
@allow_skeleton_option
@strict_options_option
@json_option
def test_cmd(**params: Any) -> None:
    """Play PROTOCOL (a folder or a built-in name) against itself through the real machines.

    Prints a per-round summary, the outcome and the receipt hash. Exit 0 when
    the session completes with both receipts verified (and, with
    --adversarial, every cheat is detected), 1 otherwise, 2 for bad input.
    """
    run_test(**params)


@click.command("list")
@json_option
@handle_errors
def list_cmd(as_json: bool) -> None:
    """List the built-in protocols with their flow mode and protocol_id."""
    from lingxi.contract import load_spec
    from lingxi.protocols import builtin_dir, builtin_names

    rows = []
    for name in builtin_names():
        folder = builtin_dir(name)
        if folder is None:
            continue
        spec = load_spec(folder)
        rows.append({"name": name, "title": spec.name, "mode": spec.flow.mode,
                     "protocol_id": spec.protocol_id, "path": str(folder)})
    if as_json:
        print_json(rows)
        return
    for row in rows:
        click.echo(f"{row['name']:<22} {row['mode']:<19} {row['protocol_id'][:16]}…  {row['title']}")


@click.command("path")
@click.argument("name")
@handle_errors
def path_cmd(name: str) -> None:
    """Print the folder of built-in protocol NAME (to copy it or run it)."""
    from lingxi.protocols import builtin_dir, builtin_names

    folder = builtin_dir(name)
    if folder is None:
        raise InputError("protocol.not_found",
                         f"no built-in protocol {name!r}; built-ins: {', '.join(builtin_names())}")
    click.echo(str(folder))


@click.command("skeleton")
@click.argument("protocol_dir", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing hooks.py.")
@json_option
@handle_errors
def skeleton_cmd(protocol_dir: str, force: bool, as_json: bool) -> None:
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
