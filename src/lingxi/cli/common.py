"""Shared CLI plumbing: typed errors to one line and an exit code, JSON output, safe input.

Every command reaches the user through three things here:

- :func:`handle_errors` turns a :class:`~lingxi.errors.LingxiError` (and an
  OSError) raised by a command into one line with its code and exit status;
- :class:`LingxiGroup` (the root ``lingxi`` group) does the same for Click's own
  usage errors (unknown option, missing argument, bad value) and, as a last
  resort, for any unexpected exception, so no traceback ever reaches a user;
- :func:`read_json_source` / :func:`read_json_file` read JSON a user or a peer
  supplied (text, ``-``, ``@FILE``) and turn non-UTF-8, NaN, repeated keys,
  nesting too deep and a wrong shape into one typed error (exit 2).

Text that came from elsewhere (a peer, a spec, a payload) goes through
:func:`peer_text` / :func:`safe_line` before it is printed.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import click

from lingxi.errors import EXIT_FAILED, EXIT_USAGE, InputError, LingxiError
from lingxi.textsafe import peer_words, terminal_safe

json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print machine-readable JSON instead of text.")

LINE_LIMIT = 2000  # one printed line of our own output (error lines, findings)
MAX_JSON_DEPTH = 200  # deeper input is refused before any recursive code sees it

# Characters json.dumps(ensure_ascii=False) leaves raw although a terminal may act
# on them: C1 controls, bidi and other format characters, line/paragraph separators.
_JSON_UNSAFE = re.compile("[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200c\u200e-\u200f"
                          "\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")


def safe_line(text: Any, limit: int = LINE_LIMIT) -> str:
    """Our own output line with any foreign text in it made terminal-safe (one line)."""
    return terminal_safe(text, limit)


def peer_text(text: Any, limit: int = 200) -> str:
    """Text a peer chose (an abort reason, a message), marked as the peer's words: ``«…»``.

    One line, bounded, every control/escape/bidi character shown escaped. Use
    it for everything a peer sent before printing it (``peer said: «…»``).
    """
    return peer_words(text, limit)


def print_json(data: Any) -> None:
    """JSON on stdout; characters a terminal would act on are written as \\u escapes."""
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    click.echo(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def fail(error: LingxiError, as_json: bool = False) -> None:
    """Report ``error`` as one line (or JSON) and exit with its status."""
    if as_json:
        print_json({"ok": False, "error": error.to_dict()})
    else:
        click.echo(f"error: {safe_line(error)}", err=True)
        for finding in error.findings[:50]:
            click.echo(f"  {safe_line(finding)}", err=True)
        if len(error.findings) > 50:
            click.echo(f"  … and {len(error.findings) - 50} more", err=True)
    sys.exit(error.exit_code)


def _quiet_broken_pipe() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


def os_error(error: OSError) -> LingxiError:
    """The typed error for an OSError a command did not expect (``input.unreadable``)."""
    target = f" {error.filename}" if getattr(error, "filename", None) else ""
    if isinstance(error, IsADirectoryError):
        return InputError("input.unreadable", f"{target.strip() or 'path'} is a folder, "
                          "not a file")
    return InputError("input.unreadable", f"cannot read{target}: {error.strerror or error}")


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
            _quiet_broken_pipe()
        except OSError as error:
            fail(os_error(error), as_json)

    return wrapper


# --------------------------------------------------------------------------- reading JSON

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {terminal_safe(key, 60)!r} appears twice in one object")
            seen.add(key)
    return out


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``value`` nests arrays/objects more than ``limit`` levels (iterative)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Any
        if type(item) is dict:
            children = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children
                     if type(child) is dict or type(child) is list)
    return False


_KINDS = {"object": dict, "array": list}


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
             float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def parse_json_bytes(data: bytes, origin: str, *, code: str = "input.bad_json",
                     expect: str | None = None, shape_code: str | None = None,
                     unique_keys: bool = True) -> Any:
    """Decode and parse ``data``; every problem is one InputError (exit 2) naming ``origin``.

    Refused: bytes that are not UTF-8, JSON syntax errors (``origin:line:col``),
    NaN/Infinity, a key repeated within one object, nesting deeper than
    :data:`MAX_JSON_DEPTH`, and (with ``expect`` "object" or "array") any other
    top-level shape, reported with ``shape_code`` (default: ``code``).
    ``unique_keys=False`` leaves repeated keys to a later, more specific check
    (an envelope's ``envelope.malformed``).
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(code, f"{origin}: not UTF-8 (byte {error.start})") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant,
                           object_pairs_hook=_unique_pairs if unique_keys else None)
    except json.JSONDecodeError as error:
        where = f"{origin}:{error.lineno}:{error.colno}"
        raise InputError(code, f"{where}: {error.msg}", path=where) from None
    except RecursionError:
        raise InputError(code, f"{origin}: nested too deeply") from None
    except ValueError as error:
        raise InputError(code, f"{origin}: {error}") from None
    if json_depth_exceeds(value):
        raise InputError(code, f"{origin}: nested more than {MAX_JSON_DEPTH} levels deep")
    if expect is not None and type(value) is not _KINDS[expect]:
        raise InputError(shape_code or code,
                         f"{origin}: expected a JSON {expect}, got {_kind(value)}")
    return value


def read_bytes(path: str, what: str = "file") -> bytes:
    """The bytes of ``path``; ``input.unreadable`` (exit 2) naming it when that fails."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        raise InputError("input.unreadable", f"{what} {path} is a folder, not a file") from None
    except OSError as error:
        raise InputError("input.unreadable",
                         f"cannot read {what} {path}: {error.strerror or error}") from None


def read_json_file(path: str, *, what: str = "file", code: str = "input.bad_json",
                   expect: str | None = None, shape_code: str | None = None) -> Any:
    """:func:`parse_json_bytes` of the file at ``path`` (for ``--inputs F``, state files…)."""
    return parse_json_bytes(read_bytes(path, what), path, code=code, expect=expect,
                            shape_code=shape_code)


def read_json_source(value: str, *, what: str = "argument", code: str = "input.bad_json",
                     expect: str | None = None, shape_code: str | None = None,
                     allow_text: bool = True) -> Any:
    """JSON given as text, ``-`` (stdin) or ``@FILE`` (for ``--options @F``, MESSAGE…)."""
    if value == "-":
        return parse_json_bytes(sys.stdin.buffer.read(), "<stdin>", code=code,
                                expect=expect, shape_code=shape_code)
    if value.startswith("@"):
        return read_json_file(value[1:], what=what, code=code, expect=expect,
                              shape_code=shape_code)
    if not allow_text:
        raise InputError(code, f"{what} must be '-' or @FILE")
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a non-UTF-8 command line
        raise InputError(code, f"{what}: not valid UTF-8 text") from None
    return parse_json_bytes(data, f"<{what}>", code=code, expect=expect,
                            shape_code=shape_code)


def read_text_file(path: str, *, what: str = "file", code: str = "input.not_utf8") -> str:
    """The UTF-8 text of ``path`` (for ``--input F``, ``--brief F``); one typed error otherwise."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(code, f"{path}: not UTF-8 (byte {error.start})") from None


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
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        try:
            seconds = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{terminal_safe(value, 40)!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{terminal_safe(value, 40)!r} is not a finite number of seconds",
                      param, ctx)
        if seconds < 0 or (seconds == 0 and not self.allow_zero):
            bound = "0 or more" if self.allow_zero else "more than 0"
            self.fail(f"{seconds:g} seconds: must be {bound}", param, ctx)
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
        as_json = "--json" in argv
        try:
            result = super().main(argv, prog_name, complete_var, False,  # type: ignore[misc]
                                  **extra)
        except click.exceptions.Abort:
            fail(InputError("usage.aborted", "aborted", exit_code=EXIT_FAILED), as_json)
        except click.ClickException as error:
            fail(usage_error(error), as_json)
        except LingxiError as error:  # a command without handle_errors
            fail(error, as_json)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except OSError as error:
            fail(os_error(error), as_json)
        except UnicodeEncodeError as error:  # text no encoding can carry (a lone surrogate in
            # a path or option reaching the file system): the input's fault, not a bug
            fail(InputError("input.not_encodable", "an argument holds text that cannot be "
                            f"encoded ({error.reason} at position {error.start})"), as_json)
        except Exception as error:  # a bug: still one line, never a traceback
            if os.environ.get("LINGXI_DEBUG"):
                raise
            where = " ".join(argv[:2]) or "lingxi"
            fail(LingxiError("internal.error", f"unexpected {type(error).__name__} in "
                             f"'{where}': {error} (a bug; LINGXI_DEBUG=1 shows the "
                             "traceback)", exit_code=EXIT_USAGE), as_json)
        code = result if type(result) is int else 0
        sys.exit(code if code in (0, 1, 2) else EXIT_USAGE)


def key_values(pairs: tuple[str, ...], option: str, code: str) -> dict[str, str]:
    """Repeated ``OPTION KEY=VALUE`` pairs as a dict; a malformed or repeated key is a
    usage error with ``code`` (exit 2)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(code, f"{option} expects KEY=VALUE, got {safe_line(pair, 60)!r}")
        if key in out:
            raise InputError(code, f"{option} {safe_line(key, 40)} given twice")
        out[key] = value
    return out
