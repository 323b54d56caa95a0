"""A person at the terminal answers the session's decisions (``--control-mode human``).

:class:`TerminalDecider` prints what the decision point lets a decider see — the
hooks' prompt, their state summary (``key: value`` lines, the hybrid
suggestion marked), the peer's words the hooks chose to show (marked as
such), the legal values as a numbered list of plain words, the bounds of an
integer and the time left — and reads one line: a number from the list, the
value's word itself, or an integer within the bounds. Bad input is asked
again with a one-line reason. The session's own timer settles a point nobody
answered; the prompt is then cancelled and the console says what the
fallback was.

Lines come from one reader thread for the whole run (stdin, or the file named
by the ``input`` option, e.g. ``/dev/tty``), fed into an asyncio queue, so a
prompt never blocks the event loop and a session that ends while the person
is typing does not wait for Enter. Stdin need not be a terminal: tests drive
it through a pipe or a pseudo-terminal. Once the input ends (Ctrl-D, a closed
pipe) the terminal answers nothing more: ``lingxi session decide``, a browser
or the spec's timeout action settles each later point.

:class:`Terminal` is the one writer both the prompts and the CLI console use,
so a line printed while a prompt waits does not run into it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from lingxi.errors import InputError
from lingxi.lines import LineReader
from lingxi.session.core.decisions import legal_value
from lingxi.session.core.events import RequestDecision
from lingxi.textsafe import peer_words, terminal_safe

VIEW_LINES = 40  # state summary lines shown at most
VALUE_LIMIT = 160  # characters of one value or one view line
OPTIONS = ("input",)


def plain(value: Any) -> str:
    """A legal value as plain words, as a person types it: ``rock``, ``7``, ``play 8H S``
    (an object is its action, then its other values), never JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "nothing"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        head = [plain(value["action"])] if isinstance(value.get("action"), str) else []
        rest = [plain(v) for k, v in value.items() if (k != "action" or not head)
                and v is not None]
        return " ".join(head + rest)
    if isinstance(value, list):
        return " ".join(plain(v) for v in value) if all(
            not isinstance(v, dict | list) for v in value) else \
            "[" + ", ".join(plain(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False, default=str)


def shown(value: Any, limit: int = VALUE_LIMIT) -> str:
    """``plain(value)`` made terminal-safe and bounded."""
    return terminal_safe(plain(value), limit)


def view_lines(view: Any, limit: int = VIEW_LINES) -> list[str]:
    """The hooks' view as a player reads it: ``top card: 8H``, ``hand: 3S 4D 9C``.

    Only what reads as a fact: scalars and lists of scalars (a hand, a score). Nested
    records (a move history, per-side tables) are there for a page or a model; the
    console has already printed each move as it happened. ``suggested`` is shown apart.
    """
    if not isinstance(view, dict):
        return []
    out: list[str] = []
    for key, value in view.items():
        if key in ("suggested", "role") or isinstance(value, dict) or (
                isinstance(value, list) and any(isinstance(v, dict | list) for v in value)):
            continue
        if len(out) == limit:
            out.append("…")
            break
        words = plain(value) if not (isinstance(value, list) and not value) else "none"
        out.append(f"{terminal_safe(str(key).replace('_', ' '), 40)}: "
                   f"{terminal_safe(words, VALUE_LIMIT)}")
    return out


class Terminal:
    """Where prompts and console lines go (stderr by default): whole lines only.

    ``say(line)`` prints one line; when a prompt is waiting for input it ends
    the prompt's line first and shows the prompt again below, so the person
    always sees what is being asked.
    """

    def __init__(self, stream: Callable[[], IO[str]] | None = None) -> None:
        self._stream = stream or (lambda: sys.stderr)
        self._prompt: str | None = None

    def _write(self, text: str) -> None:
        stream = self._stream()
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # the terminal went away: nothing left to tell
            pass

    def say(self, line: str, *, settles: bool = False) -> None:
        """Print ``line``; ``settles``: it closes the open prompt (its point was settled)."""
        if self._prompt is None:
            self._write(line + "\n")
        elif settles:
            self._prompt = None
            self._write("\n" + line + "\n")
        else:
            self._write("\n" + line + "\n" + self._prompt)

    def prompt(self, text: str) -> None:
        """Show ``text`` and leave the cursor after it (the person types there)."""
        self._prompt = text
        self._write(text)

    def answered(self, echo: bool = False) -> None:
        """The prompt got its line (``echo`` ends it when the input did not, e.g. a pipe)."""
        if self._prompt is not None and echo:
            self._write("\n")
        self._prompt = None


def _matches(answer: str, words: list[str]) -> list[int]:
    """Which choices ``answer`` names: the whole word (any case), else the words after the
    action (``3S`` for ``play 3S``, ``8H S`` for ``play 8H S``), else the choices that start
    with it (``8H`` names every ``play 8H …``)."""
    folded = answer.casefold()
    exact = [i for i, w in enumerate(words) if w == answer]
    if exact:
        return exact
    whole = [i for i, w in enumerate(words) if w.casefold() == folded]
    if whole:
        return whole
    tail = [i for i, w in enumerate(words)
            if " " in w and w.split(" ", 1)[1].casefold() == folded]
    if tail or not folded:
        return tail
    # the first words of a choice (``8H`` of ``play 8H S``): taken when only one fits
    return [i for i, w in enumerate(words)
            if any(part.casefold().startswith(folded + " ")
                   for part in (w, w.split(" ", 1)[-1]))]


def parse_answer(text: str, request: RequestDecision) -> tuple[bool, Any]:
    """``(True, value)`` for an acceptable answer, else ``(False, one-line reason)``.

    A choice is typed as it is shown: its number, its words, or its words without the
    action (``3S`` picks ``play 3S``); a bounded integer as digits.
    """
    legal, bounds = list(request.legal or []), request.bounds
    answer = " ".join(text.split())
    suggested = (request.view or {}).get("suggested")
    if not answer and "suggested" in (request.view or {}) \
            and legal_value(suggested, legal, bounds):
        return True, suggested
    if legal:
        return _choice(answer, legal)
    if bounds is not None:
        return _number(answer, bounds)
    if not text.strip():
        return False, "type something (an empty line is not an answer)"
    return True, text  # a free decision: the text as typed


def _choice(answer: str, legal: list[Any]) -> tuple[bool, Any]:
    """One of the shown choices, by its number or its words."""
    words = [" ".join(plain(v).split()) for v in legal]
    if answer.isdigit() and 1 <= int(answer) <= len(legal) and answer not in words:
        return True, legal[int(answer) - 1]
    found = _matches(answer, words)
    if len(found) == 1:
        return True, legal[found[0]]
    if len(found) > 1:
        return False, (f"{terminal_safe(answer, 40)} fits {len(found)} choices ("
                       + ", ".join(terminal_safe(words[i], 40) for i in found[:6])
                       + "): type the whole choice or its number")
    return False, (f"{terminal_safe(answer, 40) or 'nothing'} is not one of the choices: "
                   f"type a number from 1 to {len(legal)} or the word")


def _number(answer: str, bounds: tuple[Any, Any]) -> tuple[bool, Any]:
    """A whole number inside the bounds."""
    try:
        number = int(answer)
    except ValueError:
        return False, f"{terminal_safe(answer, 40) or 'nothing'} is not a whole number"
    if not legal_value(number, [], bounds):
        return False, f"{number} is out of range: {_range(bounds)}"
    return True, number


def _range(bounds: tuple[Any, Any]) -> str:
    low, high = bounds
    if low is not None and high is not None:
        return f"a whole number from {low} to {high}"
    if low is not None:
        return f"a whole number of at least {low}"
    return f"a whole number of at most {high}"


def _short_range(bounds: tuple[Any, Any]) -> str:
    low, high = bounds
    return f"{'' if low is None else low}..{'' if high is None else high}"


class TerminalDecider:
    """Asks the person at this terminal; see the module docstring.

    Options (``--decider-option``): ``input=PATH`` reads the answers from PATH
    (say ``/dev/tty`` while stdin carries a chat's lines) instead of stdin.
    """

    def __init__(self, *, terminal: Terminal | None = None, input: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.terminal = terminal or Terminal()
        self.reader = LineReader(input)
        self.clock = clock
        self.role = ""
        self.reads_stdin = input is None
        self.follows_spec = False  # True: asked only where the spec's decision.mode is manual
        self._told_eof = False

    @classmethod
    def from_options(cls, options: dict[str, str], **extra: Any) -> TerminalDecider:
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise InputError("decider.bad_option",
                             f"the terminal decider has no option {terminal_safe(unknown[0], 40)!r}"
                             f"; its options: {', '.join(OPTIONS)}")
        source = options.get("input")
        if source is not None:
            if not source or not os.access(source, os.R_OK) or os.path.isdir(source):
                raise InputError("decider.bad_option",
                                 f"input={terminal_safe(source, 80)}: not a readable file")
        return cls(input=source, **extra)

    def bind(self, context: Any) -> None:
        self.role = getattr(context, "role", "") or ""

    def _lines(self, request: RequestDecision, started: float) -> list[str]:
        view = dict(request.view or {})
        suggested = view.get("suggested")
        hybrid = "suggested" in view
        left = max(0, round(request.timeout_seconds - (self.clock() - started)))
        about = terminal_safe(request.message, 200) if request.message else "your move"
        out = [f"-- {about} ({left} s to answer) --"]
        out += [f"  {line}" for line in view_lines(view)]
        for key, words in list((getattr(request, "peer_text", None) or {}).items())[:16]:
            out.append(f"  {terminal_safe(key, 40)} (the peer's words): {peer_words(words, 300)}")
        legal = list(request.legal or [])
        for number, value in enumerate(legal, 1):
            mark = "   <- suggested (Enter takes it)" if hybrid and value == suggested else ""
            out.append(f"  {number}) {shown(value)}{mark}")
        if request.bounds is not None:
            out.append(f"  choose {_range(request.bounds)}")
        if hybrid and not any(value == suggested for value in legal):
            out.append(f"  suggested: {shown(suggested)} (Enter takes it)")
        if not legal and request.bounds is None:
            out.append("  type your answer")
        return out

    def _no_input(self, request: RequestDecision) -> None:
        """Input ended: nobody answers here any more; the inbox, a browser or the timer will."""
        if not self._told_eof:
            self._told_eof = True
            self.terminal.say("no more input at this terminal: answer with `lingxi session "
                              "decide VALUE`, or the spec's timeout action applies")
        return None

    async def __call__(self, request: RequestDecision) -> Any:
        started = self.clock()
        if self.reader.ended:
            return self._no_input(request)
        self.reader.start()
        self.reader.discard_typed_ahead()
        for line in self._lines(request, started):
            self.terminal.say(line)
        try:
            while True:
                left = max(0, round(request.timeout_seconds - (self.clock() - started)))
                hint = f"1-{len(request.legal)}" if request.legal else \
                    _short_range(request.bounds) if request.bounds is not None else "answer"
                self.terminal.prompt(f"{hint} ({left} s left)> ")
                text = await self.reader.line()
                self.terminal.answered(echo=not self.reader.interactive)
                if text is None:
                    return self._no_input(request)
                ok, result = parse_answer(text, request)
                if ok:
                    return result
                self.terminal.say(f"  {result}")
        except asyncio.CancelledError:  # the timer (or another watcher) settled the point
            self.terminal.answered(echo=True)
            raise
