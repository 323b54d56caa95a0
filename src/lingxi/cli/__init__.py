"""The ``lingxi`` command line. Nothing imports this package.

Every command group lives in its own module and is imported only when used,
so ``lingxi --help`` stays fast. Errors of every kind, Click's usage errors
included, reach the user as one line with a stable code (see
:class:`lingxi.cli.common.LingxiGroup`).

This module itself imports nothing but the standard library: ``lingxi
--help`` on a wide enough terminal (the common case, and any pipe) is
printed from :data:`COMMANDS` without loading Click at all, which is most of
a start-up's cost on a busy machine. The Click group (:data:`cli`) is built
on first use by :func:`lingxi.cli.lazy.build_root`; ``tests/cli`` holds the
two renderings of the help equal. A plain ``lingxi protocol test …`` runs
without Click too (:mod:`lingxi.cli.fast`: Click parses every line that one is
not sure of).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import click

COMMANDS: dict[str, tuple[str, str]] = {
    "protocol": ("lingxi.cli.protocol:protocol",
                 "Work with protocol contracts: validate, hash, create, test, list."),
    "validate": ("lingxi.cli.validate:validate",
                 "Check one message payload against a spec."),
    "identity": ("lingxi.cli.identity:identity",
                 "Create or show this agent's Ed25519 identity key."),
    "envelope": ("lingxi.cli.envelope:envelope",
                 "Sign or verify a Synapse envelope."),
    "host": ("lingxi.cli.participate:host",
             "Host a protocol session and wait for a guest."),
    "guest": ("lingxi.cli.participate:guest",
              "Join a hosted session as the guest."),
    "join": ("lingxi.cli.participate:join",
             "Claim a registry invitation and play the session as its guest."),
    "session": ("lingxi.cli.session:session",
                "Inspect, decide in, and verify sessions."),
    "play": ("lingxi.cli.play:play",
             "Let an actor play a browser game through ActorView/4."),
    "demo": ("lingxi.cli.demo:demo",
             "Run the built-in demonstration on embedded defaults."),
    "server": ("lingxi.cli.registry:server",
               "Run the community registry (JSON API, docs, read-only page)."),
    "register": ("lingxi.cli.registry:register",
                 "Register this agent's key under a nickname at a registry."),
    "browse": ("lingxi.cli.registry:browse",
               "List open invitations at a registry."),
    "registry": ("lingxi.cli.registry:registry",
                 "Verify a registry's transparency log against your own copy."),
    "doctor": ("lingxi.cli.doctor:doctor",
               "Check identity, registry, relay, direct reachability, clock, Chromium."),
    "relay": ("lingxi.cli.relay:relay",
              "Run the NATS relay through which agents behind NATs meet."),
    "mcp": ("lingxi.cli.mcp:mcp",
            "Serve Lingxi to an MCP-capable assistant over stdio."),
    "skill": ("lingxi.cli.mcp:skill",
              "Install the Lingxi skill file for assistants that read skills."),
    "serve": ("lingxi.cli.serve:serve",
              "Serve a request_response protocol to signed HTTP callers (P2A)."),
    "callers": ("lingxi.cli.serve:callers",
                "Register who may call `lingxi serve`, each with its own key."),
    "call": ("lingxi.cli.call:call",
             "Send one signed request to a served protocol and verify the reply."),
    "group": ("lingxi.cli.group:group",
              "Group sessions (A2N): N members on one signed, ordered log."),
}

ROOT_HELP = """Lingxi (灵隙): agents agree on a protocol contract and run it peer-to-peer.

Data lives under $LINGXI_HOME (default ~/.lingxi).
"""
HELP_FLAGS = ("-h", "--help")
OPTIONS = (("--version", "Show the version and exit."),
           (", ".join(HELP_FLAGS), "Show this message and exit."))
# Click writes help at min(terminal columns, 80) - 2 characters; at that width
# nothing of ours wraps, so the help is the same text every time.
HELP_WIDTH = 78


def _terminal_columns() -> int:
    """What ``shutil.get_terminal_size().columns`` says, without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _rows(rows: list[tuple[str, str]]) -> list[str]:
    """A Click definition list: names padded to one column, texts wrapped beside them."""
    first = max(len(name) for name, _ in rows)
    width = max(HELP_WIDTH - (first + 2) - 2, 10)
    out = []
    for name, text in rows:
        lines = [text]
        if len(text) > width:
            import textwrap  # only when a text is too long for one line

            lines = textwrap.TextWrapper(width, replace_whitespace=False).wrap(text)
        out.append(f"  {name:<{first}}  {lines[0]}")
        out += [" " * (first + 4) + line for line in lines[1:]]
    return out


def root_help_text() -> str:
    """``lingxi --help`` as Click prints it at :data:`HELP_WIDTH` (tested against Click)."""
    lines = ["Usage: lingxi [OPTIONS] COMMAND [ARGS]...", ""]
    lines += [f"  {line}" if line else "" for line in ROOT_HELP.strip().splitlines()]
    lines += ["", "Options:", *_rows(list(OPTIONS)), "", "Commands:"]
    lines += _rows(sorted((name, text) for name, (_, text) in COMMANDS.items()))
    lines += ["", f"  {root_example()}"]
    return "\n".join(lines) + "\n"


def root_example() -> str:
    """The root help's last line (its epilog), from the one table of examples."""
    from lingxi.cli.examples import example_line

    return example_line("")


def _fast_help(argv: list[str]) -> bool:
    """Print the root help without Click when that gives the very same text."""
    if len(argv) != 1 or argv[0] not in HELP_FLAGS:
        return False
    if min(_terminal_columns(), 80) - 2 < HELP_WIDTH:
        return False
    text = root_help_text()
    if max(len(line) for line in text.splitlines()) > HELP_WIDTH:
        return False
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except UnicodeEncodeError:  # a terminal that cannot show 灵隙: let Click decide
        return False
    return True


def main() -> None:
    if _fast_help(sys.argv[1:]):
        return
    import gc

    # Start-up (Click, the command's modules) makes long-lived objects only: the cyclic
    # collector would walk them again and again and free nothing. It is paused until the
    # command to run is imported (lingxi.cli.plain.resume_gc), then started again with
    # what exists so far frozen out of its walks.
    gc.disable()
    from lingxi.cli import plain

    plain.gc_paused = True
    from lingxi.cli.fast import protocol_test

    if protocol_test(sys.argv[1:]):  # a plain `protocol test`, without Click (it exits)
        return
    _root()(prog_name="lingxi")


def _root() -> click.Group:
    group = globals().get("cli")
    if group is None:
        from lingxi.cli.lazy import build_root

        group = build_root(COMMANDS, ROOT_HELP, epilog=root_example())
        globals()["cli"] = group
    return group


def __getattr__(name: str) -> Any:
    """``cli``: the Click group, built on first use."""
    if name == "cli":
        return _root()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
