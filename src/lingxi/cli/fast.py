"""``lingxi protocol test`` started without Click (issue 22.7, docs/benchmarks.md).

Importing Click and building its command is a tenth of a default game's whole
run, so a plain ``lingxi protocol test …`` is parsed here, by the same rules
as Click's parser for that one command, and handed to
:func:`lingxi.cli.selfplay.run_test`, the function Click's command calls too.

Only what is certain is taken: the line must bind the way Click would bind it,
every value must convert the way Click's parameter types would convert it,
and the host must be run by its hooks (``--control-mode autonomous``, the
default). Anything else — ``--help``, an unknown or misspelt option, a missing
or extra argument, a value Click would refuse, ``--``, an empty value, a person
at the terminal, shell completion — goes to Click as before, so every usage
error is Click's own text with its ``usage.*`` code, and the help is Click's.
``tests/cli/test_fast_protocol_test.py`` holds :data:`OPTIONS` equal to the
Click command's options and both paths' output equal.
"""

from __future__ import annotations

import os
import stat
from typing import Any

# kinds of value, each converted as the Click type named beside it would
FLAG = "flag"  # is_flag=True: present -> True; a value given with "=" is an error
TEXT = "text"  # a plain str option
INT = "int"  # click.INT: int(value)
COUNT = "count"  # click.IntRange(min=1): int(value), at least 1
SECONDS = "seconds"  # lingxi.cli.common.POSITIVE_SECONDS: finite, more than 0
FILE = "file"  # click.Path(dir_okay=False): need not exist; if it does, a readable non-folder
FOLDER = "folder"  # click.Path(file_okay=False): need not exist; if it does, a readable non-file

# option name -> (parameter, kind, choices); choices only for a click.Choice of plain text
OPTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "--options": ("options_text", TEXT, ()),
    "--seed": ("seed", INT, ()),
    "--adversarial": ("adversarial", FLAG, ()),
    "--timeout": ("peer_timeout", SECONDS, ()),
    "--control-mode": ("control_mode", TEXT, ("autonomous", "hybrid", "human")),
    "--no-input": ("no_input", FLAG, ()),
    "--as": ("person_role", TEXT, ("host", "guest")),
    "--interactive": ("interactive", FLAG, ()),
    "--inputs": ("inputs_file", FILE, ()),
    "--state-dir": ("state_dir", FOLDER, ()),
    "--max-messages": ("max_messages", COUNT, ()),
    "--max-bytes": ("max_bytes", COUNT, ()),
    "--max-state-bytes": ("max_state_bytes", COUNT, ()),
    "--allow-skeleton-hooks": ("allow_skeleton_hooks", FLAG, ()),
    "--strict": ("strict_options", FLAG, ()),
    "--json": ("as_json", FLAG, ()),
}
ARGUMENT = "protocol"
DEFAULTS: dict[str, Any] = {
    "options_text": None, "seed": 0, "adversarial": False, "peer_timeout": 30.0,
    "control_mode": "autonomous", "no_input": False, "person_role": "host",
    "interactive": False, "inputs_file": None, "state_dir": None, "max_messages": None,
    "max_bytes": None, "max_state_bytes": None, "allow_skeleton_hooks": False,
    "strict_options": False, "as_json": False,
}
COMMAND = ("protocol", "test")
COMPLETE_VAR = "_LINGXI_COMPLETE"  # Click's shell completion for prog_name "lingxi"


class _ClickDecides(Exception):
    """The line is not one this parser is sure of: Click parses it."""


def _path_ok(value: str, kind: str) -> str:
    """What ``click.Path`` returns for ``value``, or _ClickDecides where it might refuse."""
    try:
        st = os.stat(value)
    except OSError:
        return value  # need not exist
    except ValueError:  # a NUL, text the file system cannot take: Click decides
        raise _ClickDecides from None
    if stat.S_ISDIR(st.st_mode) if kind == FILE else stat.S_ISREG(st.st_mode):
        raise _ClickDecides
    if not os.access(value, os.R_OK):
        raise _ClickDecides
    return value


def _convert(value: str, kind: str, choices: tuple[str, ...]) -> Any:
    if value == "":
        raise _ClickDecides
    if choices:
        if value not in choices:
            raise _ClickDecides
        return value
    if kind == TEXT:
        return value
    if kind in (INT, COUNT):
        try:
            number = int(value)
        except ValueError:
            raise _ClickDecides from None
        if kind == COUNT and number < 1:
            raise _ClickDecides
        return number
    if kind == SECONDS:
        from lingxi.cli.plain import seconds_problem

        seconds, problem = seconds_problem(value, allow_zero=False)
        if problem is not None:
            raise _ClickDecides
        return seconds
    return _path_ok(value, kind)


def parse(args: list[str]) -> dict[str, Any] | None:
    """``protocol test``'s parameters from the words after ``protocol test``, bound as
    Click binds them (a later option wins, options anywhere around the argument);
    None when Click is to parse the line itself."""
    params = dict(DEFAULTS)
    arguments: list[str] = []
    rest = list(args)
    try:
        while rest:
            word = rest.pop(0)
            if word[:1] != "-" or word == "-":
                if word == "-":
                    raise _ClickDecides
                arguments.append(word)
                continue
            name, equals, value = word.partition("=")
            if name not in OPTIONS:  # --help, -h, --, an unknown or misspelt option
                raise _ClickDecides
            dest, kind, choices = OPTIONS[name]
            if kind == FLAG:
                if equals:
                    raise _ClickDecides
                params[dest] = True
                continue
            if not equals:
                if not rest:
                    raise _ClickDecides
                value = rest.pop(0)
            params[dest] = _convert(value, kind, choices)
    except _ClickDecides:
        return None
    if len(arguments) != 1 or arguments[0] == "":
        return None
    if params["control_mode"] != "autonomous":  # a person may be asked: Click's path
        return None
    params[ARGUMENT] = arguments[0]
    return params


def protocol_test(argv: list[str]) -> bool:
    """Run ``lingxi protocol test …`` without Click when :func:`parse` is sure of the
    line (the process then exits with its status); False: Click is to run it."""
    if tuple(argv[:2]) != COMMAND or COMPLETE_VAR in os.environ:
        return False
    params = parse(argv[2:])
    if params is None:
        return False
    from lingxi.cli.plain import guarded

    guarded(argv, lambda: _run(params), _clicks_own)


def _run(params: dict[str, Any]) -> None:
    """The command, once the runtime it imports first (``lingxi.session``) is imported
    with the cyclic collector still paused (it would walk the runtime's long-lived
    objects while they are made); then the collector runs again, as in Click's path."""
    import lingxi.session  # noqa: F401  # what run_test imports first
    from lingxi.cli import selfplay
    from lingxi.cli.plain import resume_gc

    resume_gc()  # start-up is over
    selfplay.run_test(**params)


def _clicks_own(error: Exception, as_json: bool) -> None:
    """An exception of Click's (a group spec's seat may prompt through Click): reported as
    Click's path reports it; Click is imported already when one is raised."""
    if type(error).__module__.partition(".")[0] == "click":
        from lingxi.cli.common import click_error

        click_error(error, as_json)
