"""The command line's plumbing that needs no Click: output, typed errors, safe input.

Everything here is imported by :mod:`lingxi.cli.common` (which adds the Click
pieces: ``--json``, parameter types, usage errors) and, without Click at all, by
the one hot command that starts without it, ``lingxi protocol test``
(:mod:`lingxi.cli.fast`; docs/benchmarks.md, issue 22.7):

- :func:`echo` writes a line the way ``click.echo`` does (and hands the rare
  stream it would treat differently to Click itself);
- :func:`handle_errors` turns a :class:`~lingxi.errors.LingxiError` (and an
  OSError) raised by a command into one line with its code and exit status;
  :func:`guarded` does the same around a whole invocation, for whatever a
  command let through (Click's usage errors included), so no traceback ever
  reaches a user;
- :func:`read_json_source` / :func:`read_json_file` read JSON a user or a peer
  supplied (text, ``-``, ``@FILE``) and turn non-UTF-8, NaN, repeated keys,
  nesting too deep and a wrong shape into one typed error (exit 2).
"""

from __future__ import annotations

import codecs
import functools
import gc
import json
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from lingxi.errors import EXIT_FAILED, EXIT_USAGE, InputError, LingxiError
from lingxi.textsafe import peer_words, terminal_safe

LINE_LIMIT = 2000  # one printed line of our own output (error lines, findings)
MAX_JSON_DEPTH = 200  # deeper input is refused before any recursive code sees it

# Characters json.dumps(ensure_ascii=False) leaves raw although a terminal may act
# on them: C1 controls, bidi and other format characters, line/paragraph separators.
_JSON_UNSAFE = re.compile("[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200c\u200e-\u200f"
                          "\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")


def _plain_stream(stream: Any) -> bool:
    """True when ``click.echo`` would write to ``stream`` as it is: it has an encoding
    and an error handler, and the encoding is not ASCII (Click re-wraps such a stream)."""
    encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
    if encoding is None or errors is None:
        return False
    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:
        return True


def echo(text: str, err: bool = False) -> None:
    """``click.echo(text, err=err)`` for a line of text, without importing Click.

    The line and its newline are written and flushed. Where Click would do more
    (strip an ANSI escape on a stream that is not a terminal, re-wrap an ASCII
    stream), Click itself writes it: our own lines carry no raw escape (foreign
    text goes through :func:`safe_line`), so that is the rare case.
    """
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    if "\x1b" in text or not _plain_stream(stream):
        import click

        click.echo(text, err=err)
        return
    stream.write(text + "\n")
    stream.flush()


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
    echo(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def fail(error: LingxiError, as_json: bool = False) -> NoReturn:
    """Report ``error`` as one line (or JSON) and exit with its status."""
    if as_json:
        print_json({"ok": False, "error": error.to_dict()})
    else:
        echo(f"error: {safe_line(error)}", err=True)
        for finding in error.findings[:50]:
            echo(f"  {safe_line(finding)}", err=True)
        if len(error.findings) > 50:
            echo(f"  … and {len(error.findings) - 50} more", err=True)
    sys.exit(error.exit_code)


def _quiet_broken_pipe() -> NoReturn:
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


def seconds_problem(value: Any, *, allow_zero: bool = True) -> tuple[float, str | None]:
    """``value`` as a finite number of seconds, and what is wrong with it (None: nothing).

    The one rule behind ``--timeout``, ``--window``… (``lingxi.cli.common.Seconds``):
    refuses ``nan``, ``inf`` and negative values, which ``float`` accepts and which would
    make a timer never fire or fire at once; ``allow_zero=False`` also refuses 0.
    """
    if isinstance(value, bool):
        return 0.0, f"{value!r} is not a number of seconds"
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0, f"{terminal_safe(value, 40)!r} is not a number of seconds"
    if not math.isfinite(seconds):
        return 0.0, f"{terminal_safe(value, 40)!r} is not a finite number of seconds"
    if seconds < 0 or (seconds == 0 and not allow_zero):
        bound = "0 or more" if allow_zero else "more than 0"
        return 0.0, f"{seconds:g} seconds: must be {bound}"
    return seconds, None


# --------------------------------------------------------------------------- start-up

gc_paused = False  # set by lingxi.cli.main, which starts up with the cyclic collector off


def resume_gc() -> None:
    """End the start-up ``lingxi.cli.main`` ran without the cyclic collector (the command
    is imported): what exists now is frozen out of its walks, and it runs again."""
    global gc_paused
    if gc_paused:
        gc_paused = False
        gc.freeze()
        gc.enable()


def guarded(argv: list[str], run: Callable[[], Any],
            clicks_own: Callable[[Exception, bool], None] | None = None) -> NoReturn:
    """Run one whole ``lingxi`` invocation and exit with its status, never a traceback.

    What a command let through becomes one line (``--json`` anywhere on the line: the
    usual ``{"ok": false, "error": …}``): Ctrl-C ``error: usage.aborted`` (exit 1); a
    Click usage error, through ``clicks_own`` (:func:`lingxi.cli.common.click_error`,
    which exits), ``error: usage.<kind>: …`` (exit 2); any other exception
    ``error: internal.error: …`` (exit 2; ``LINGXI_DEBUG=1`` shows the traceback).
    ``run`` returns the exit status (None: 0).
    """
    as_json = "--json" in argv
    try:
        result = run()
    except (EOFError, KeyboardInterrupt):  # what Click turns into Abort, after a newline
        sys.stderr.write("\n")
        sys.stderr.flush()
        fail(InputError("usage.aborted", "aborted", exit_code=EXIT_FAILED), as_json)
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
    except Exception as error:
        if clicks_own is not None:
            clicks_own(error, as_json)
        if os.environ.get("LINGXI_DEBUG"):
            raise
        where = " ".join(argv[:2]) or "lingxi"
        fail(LingxiError("internal.error", f"unexpected {type(error).__name__} in "
                         f"'{where}': {error} (a bug; LINGXI_DEBUG=1 shows the "
                         "traceback)", exit_code=EXIT_USAGE), as_json)
    code = result if type(result) is int else 0
    sys.exit(code if code in (0, 1, 2) else EXIT_USAGE)
