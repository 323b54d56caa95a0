"""Shared CLI plumbing: typed errors to one line and an exit code, JSON output, safe input.

Every command reaches the user through three things, written in
:mod:`lingxi.cli.plain` (which needs no Click) and offered here with the Click
pieces beside them:

- :func:`handle_errors` turns a :class:`~lingxi.errors.LingxiError` (and an
  OSError) raised by a command into one line with its code and exit status;
- :class:`LingxiGroup` (the root ``lingxi`` group) does the same for Click's own
  usage errors (unknown option, missing argument, bad value; :func:`usage_error`
  gives each its ``usage.*`` code) and, as a last resort, for any unexpected
  exception, so no traceback ever reaches a user (:func:`lingxi.cli.plain.guarded`);
- :func:`read_json_source` / :func:`read_json_file` read JSON a user or a peer
  supplied (text, ``-``, ``@FILE``) and turn non-UTF-8, NaN, repeated keys,
  nesting too deep and a wrong shape into one typed error (exit 2).

Text that came from elsewhere (a peer, a spec, a payload) goes through
:func:`peer_text` / :func:`safe_line` before it is printed.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from lingxi.cli.plain import (
    _JSON_UNSAFE,
    LINE_LIMIT,
    MAX_JSON_DEPTH,
    _quiet_broken_pipe,
    echo,
    fail,
    guarded,
    handle_errors,
    json_depth_exceeds,
    key_values,
    os_error,
    parse_json_bytes,
    peer_text,
    print_json,
    read_bytes,
    read_json_file,
    read_json_source,
    read_text_file,
    safe_line,
    seconds_problem,
)
from lingxi.errors import EXIT_FAILED, InputError, LingxiError

__all__ = ["LINE_LIMIT", "MAX_JSON_DEPTH", "POSITIVE_SECONDS", "SECONDS", "LingxiGroup",
           "Seconds", "_JSON_UNSAFE", "_quiet_broken_pipe", "click_error", "echo", "fail", "handle_errors",
           "json_depth_exceeds", "json_option", "key_values", "os_error", "parse_json_bytes",
           "peer_text", "print_json", "read_bytes", "read_json_file", "read_json_source",
           "read_text_file", "safe_line", "usage_error"]

json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print machine-readable JSON instead of text.")

# --------------------------------------------------------------------------- parameter types

class Seconds(click.ParamType):
    """A finite, non-negative number of seconds (``--timeout``, ``--window``…).

    Refuses ``nan``, ``inf`` and negative values, which ``float`` accepts and
    which would make a timer never fire or fire at once. ``allow_zero=False``
    also refuses 0.
    """

    name = "seconds"

    def __init__(self, *, allow_zero: bool = True) -> None:
        self.allow_zero = allow_zero

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        seconds, problem = seconds_problem(value, allow_zero=self.allow_zero)
        if problem is not None:
            self.fail(problem, param, ctx)
        return seconds


SECONDS = Seconds()
POSITIVE_SECONDS = Seconds(allow_zero=False)


# --------------------------------------------------------------------------- the root group

_USAGE_CODES: tuple[tuple[type[click.ClickException], str], ...] = (
    (click.exceptions.NoSuchOption, "usage.no_such_option"),
    (click.exceptions.MissingParameter, "usage.missing_parameter"),
    (click.exceptions.BadOptionUsage, "usage.bad_option"),
    (click.exceptions.BadArgumentUsage, "usage.bad_argument"),
    (click.exceptions.BadParameter, "usage.bad_parameter"),
)


def usage_error(error: click.ClickException) -> LingxiError:
    """Click's own error as a LingxiError with a stable ``usage.*`` code (exit 2)."""
    message = error.format_message()
    if isinstance(error, click.exceptions.FileError):
        return InputError("input.unreadable", message)
    code = next((c for kind, c in _USAGE_CODES if isinstance(error, kind)), None)
    if code is None:
        if not isinstance(error, click.UsageError):
            code = "usage.error"
        elif message.startswith("No such command"):
            code = "usage.no_such_command"
        else:
            code = "usage.error"
    ctx = getattr(error, "ctx", None)
    if ctx is not None:
        message = f"{message} (see '{ctx.command_path} --help')"
    return InputError(code, message)


class LingxiGroup:
    """Mixin for the root group: Click's usage errors and stray exceptions as one line.

    ``lingxi`` runs Click in non-standalone mode and reports what comes back
    itself: a usage error becomes ``error: usage.<kind>: …`` (exit 2), with
    ``--json`` anywhere on the line the usual ``{"ok": false, "error": …}``;
    Ctrl-C is ``error: usage.aborted`` (exit 1); any other exception that
    escaped a command is ``error: internal.error: …`` (exit 2) instead of a
    traceback (set ``LINGXI_DEBUG=1`` to see the traceback).
    """

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)  # type: ignore[misc]
        argv = list(sys.argv[1:] if args is None else args)
        guarded(argv, lambda: super(LingxiGroup, self).main(  # type: ignore[misc]
            argv, prog_name, complete_var, False, **extra), click_error)


def click_error(error: Exception, as_json: bool) -> None:
    """Click's Abort (Ctrl-C) or usage error that reached :func:`lingxi.cli.plain.guarded`:
    one line and its exit status (anything else returns, for the caller to report)."""
    if isinstance(error, click.exceptions.Abort):
        fail(InputError("usage.aborted", "aborted", exit_code=EXIT_FAILED), as_json)
    if isinstance(error, click.ClickException):
        fail(usage_error(error), as_json)
