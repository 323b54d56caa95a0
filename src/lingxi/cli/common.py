"""Shared CLI plumbing: typed errors to one line and an exit code, JSON output."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from lingxi.errors import EXIT_USAGE, LingxiError

json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print machine-readable JSON instead of text.")


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True))


def fail(error: LingxiError, as_json: bool = False) -> None:
    """Report ``error`` as one line (or JSON) and exit with its status."""
    if as_json:
        print_json({"ok": False, "error": error.to_dict()})
    else:
        click.echo(f"error: {error}", err=True)
        for finding in error.findings:
            click.echo(f"  {finding}", err=True)
    sys.exit(error.exit_code)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn any LingxiError raised by a command into one line and its exit code.

    Also catches OSError (a missing or unreadable file) as a usage error, so a
    bad path never shows a traceback, and ends quietly when the reader of our
    output goes away (``lingxi … | head``).
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            return func(*args, **kwargs)
        except LingxiError as error:
            fail(error, as_json)
        except BrokenPipeError:  # the reader of our output left (`| head`): not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(0)
        except OSError as error:
            target = f" {error.filename}" if getattr(error, "filename", None) else ""
            fail(LingxiError("input.unreadable", f"cannot read{target}: {error.strerror or error}",
                             exit_code=EXIT_USAGE), as_json)

    return wrapper
