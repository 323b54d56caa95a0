"""What a person sees of a running session, one line per event (stderr), and the
options that let them take part (``--control-mode``, ``--decider``, ``--ui``, ``--quiet``).

:func:`event_lines` is the one formatter: the live console of ``lingxi host``,
``guest``, ``join`` and ``protocol test`` prints with it, and so does ``lingxi
session events``. It shows the engine's events and the hooks' projection only:
a message by the hooks' description (``proto_describe``) or else by its name,
never a raw payload; the peer's words are escaped and marked ``«…»``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import key_values, peer_text, print_json, safe_line
from lingxi.deciders import make_decider
from lingxi.deciders.terminal import Terminal, plain, shown, view_lines
from lingxi.errors import InputError, LingxiError
from lingxi.protocols.catalogue import folder_for_id
from lingxi.session.net import LiveSession

SETTLES = ("decision.made", "decision.timeout_fallback", "decision.declined_fallback",
           "session.finished")
QUIET_EVENTS = ("session.waiting_offer", "session.offered", "peer.deciding_ignored",
                "mp.seated", "shadow_judge.enabled", "shadow_judge.checked")


def _words(data: Any, skip: tuple[str, ...] = ()) -> str:
    """Scalar entries of an engine/hooks dict as ``k=v`` words (not yet escaped)."""
    if not isinstance(data, dict):
        return plain(data)
    return " ".join(f"{k}={plain(v)}" for k, v in data.items()
                    if k not in skip and not isinstance(v, dict | list))


def _compact(data: Any, limit: int = 240, skip: tuple[str, ...] = ()) -> str:
    """:func:`_words`, escaped and bounded."""
    return safe_line(_words(data, skip), limit)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _key(key: Any) -> str:
    return f"{str(key)[:16]}…" if isinstance(key, str) and key else "?"


def peer_name(info: dict[str, Any]) -> str:
    """Who the peer is, for a person: its registry nickname when known, else its key's
    first characters (a peer's nickname is its own words: marked)."""
    nickname = info.get("peer_nickname")
    key = _key(info.get("peer_key") or info.get("peer_public_key"))
    if isinstance(nickname, str) and nickname:
        return f"{peer_text(nickname, 60)} (key {safe_line(key)})"
    return f"the peer with key {safe_line(key)}"


def _who(side: Any, role: Any) -> str:
    """``host``/``guest`` as this side reads it: "you" or "the peer"."""
    if side == role:
        return "you"
    if side in ("host", "guest"):
        return "the peer"
    return safe_line(side, 40)


def outcome_words(outcome: dict[str, Any], role: Any) -> str:
    """The end in terms of this side: "you won 2–1", "you lost", "a draw", or what stopped
    the session (its code and reason, the peer's own words marked)."""
    status = outcome.get("status")
    summary = _dict(outcome.get("summary"))
    if status != "completed":
        code, by = outcome.get("code"), outcome.get("by")
        if by == "peer":
            return (f"the session was {safe_line(status, 20)}: the peer stopped it (code "
                    f"{peer_text(code, 80)}, reason {peer_text(outcome.get('reason'), 300)})")
        return (f"the session was {safe_line(status, 20)}: {safe_line(code, 80)} "
                f"({safe_line(by, 20)}): {safe_line(outcome.get('reason'), 300)}")
    peer = "guest" if role == "host" else "host"
    score = summary.get("score")
    tally = ""
    if isinstance(score, dict) and isinstance(score.get(role), int) \
            and isinstance(score.get(peer), int):
        tally = f" {score[role]}–{score[peer]}"
    winner = summary.get("winner")
    if winner == role:
        return "you won" + tally
    if winner == peer:
        return "you lost" + tally
    if winner == "draw":
        return "a draw" + tally
    return "the session completed" + tally


def decision_hint(record: dict[str, Any], state_dir: str | None) -> list[str]:
    """How to answer a decision nobody at this terminal is asked (``lingxi session decide``)."""
    legal = record.get("legal") or []
    bounds = record.get("bounds")
    point = safe_line(record.get("point_id"), 40)
    if legal:
        what = "choose one of: " + ", ".join(shown(v, 60) for v in legal[:30])
    elif isinstance(bounds, list) and len(bounds) == 2:
        what = f"a whole number from {bounds[0]} to {bounds[1]}"
    else:
        what = "any value"
    seconds = record.get("timeout_seconds")
    within = f"{seconds:g}" if isinstance(seconds, int | float) else "?"
    about = f": {safe_line(record.get('message'), 200)}" if record.get("message") else ""
    lines = [f"your move{about} (needed within {within} s): {what}"]
    for line in view_lines(record.get("view")):
        lines.append(f"  {line}")
    where = f" --state-dir {safe_line(state_dir, 400)}" if state_dir else ""
    lines.append(f"  answer with: lingxi session decide <value> --point {point}{where}")
    return lines


def _move(record: dict[str, Any], role: Any) -> str:
    """A card game's public move: "you play 3S", "the peer draws a card"."""
    who = _who(record.get("by"), role)
    action = record.get("action")
    third = who != "you"
    card = safe_line(record.get("card"), 20) if record.get("card") else ""
    if action == "draw":
        return f"{who} draw{'s' if third else ''} a card"
    if action == "pass":
        return f"{who} pass{'es' if third else ''}"
    line = f"{who} play{'s' if third else ''} {card}".rstrip()
    if record.get("note") is not None:
        line += f" and name{'s' if third else ''} {safe_line(record.get('note'), 20)}"
    return line


@dataclass(frozen=True)
class _Seen:
    """What an event's line depends on besides the event: the session and this terminal."""

    info: dict[str, Any]
    role: Any
    asks_here: bool

    @property
    def cards(self) -> bool:  # every move of a card game is told by its mp.move event
        return self.info.get("mode") == "mental_poker"


def _started(record: dict[str, Any], seen: _Seen) -> list[str]:
    side = safe_line(seen.role or "?", 20)
    protocol = safe_line(seen.info.get("protocol") or "?", 120)
    options = record.get("options")
    extra = ""
    if isinstance(options, dict) and options:  # a guest's options are the host's words
        extra = ", options " + (peer_text(_words(options), 200) if side == "guest"
                                else _compact(options, 200))
    return [f"session started: {protocol}, you are the {side}, playing "
            f"{peer_name(seen.info)}{extra}"]


def _message(record: dict[str, Any], seen: _Seen) -> list[str]:
    text = record.get("text")
    if record.get("shown_as") == "round" or seen.cards or not (isinstance(text, str) and text):
        return []
    if record.get("event") == "message.sent":
        return [f"you: {safe_line(text, 600)}"]
    return [f"the peer: {peer_text(text, 600)}"]


def _round(record: dict[str, Any], seen: _Seen) -> list[str]:
    text = record.get("text")
    if isinstance(text, str) and text:
        return [safe_line(text, 600)]
    peer = "guest" if seen.role == "host" else "host"
    return [f"round {safe_line(record.get('round'), 12)}: you "
            f"{shown(record.get(str(seen.role)), 80)}, the peer {shown(record.get(peer), 80)}"]


def _rejected(record: dict[str, Any], seen: _Seen) -> list[str]:
    legal = ", ".join(shown(v, 60) for v in (record.get("legal") or [])[:30])
    return [f"{shown(record.get('value'), 80)} is not allowed"
            + (f" (choose one of: {legal})" if legal else "")]


def _deciding(record: dict[str, Any], seen: _Seen) -> list[str]:
    seconds = record.get("seconds")
    up_to = f"{seconds:g}" if isinstance(seconds, int | float) else "?"
    return [f"the peer decides by hand (up to {up_to} s a move)"]


def _table(record: dict[str, Any], seen: _Seen) -> list[str]:
    up = " ".join(safe_line(c, 8) for c in record.get("cards") or [])
    hand = " ".join(safe_line(c, 8) for c in record.get("hand") or [])
    return [f"face up: {up or '-'}; your hand: {hand or '-'}"]


def _mp_receipt(record: dict[str, Any], seen: _Seen) -> list[str]:
    audit = _dict(_dict(record.get("receipt")).get("audit"))
    return ["every shuffle, card and play checks out" if audit.get("ok")
            else f"the card audit failed: {safe_line(audit.get('code'), 80)}"]


def _receipts(record: dict[str, Any], seen: _Seen) -> list[str]:
    if record.get("verified"):
        return ["receipts: both signed, the peer's verified"]
    return ["receipts: the peer's is NOT verified: "
            + safe_line("; ".join(map(str, record.get("problems") or [])), 300)]


def _reason(record: dict[str, Any], limit: int = 300) -> str:
    return safe_line(record.get("reason"), limit)


_Lines = Callable[[dict[str, Any], _Seen], list[str]]

# event name -> its lines; an event not here is bookkeeping (or a decider's own record)
_LINES: dict[str, _Lines] = {
    "session.started": _started,
    "message.sent": _message,
    "message.received": _message,
    "round": _round,
    "decision.requested": lambda r, seen: [] if seen.asks_here
    else decision_hint(r, seen.info.get("state_dir")),
    "decision.made": lambda r, seen: [] if seen.cards else [f"you chose {shown(r.get('value'))}"],
    "decision.timeout_fallback": lambda r, _: [
        f"time is up: {shown(r.get('value'))} was played for you"],
    "decision.declined": lambda r, _: [f"the decider gave up: {_reason(r)}"],
    "decision.declined_fallback": lambda r, _: [f"{shown(r.get('value'))} was played instead"],
    "decision.rejected": _rejected,
    "decision.ignored": lambda r, _: [f"an answer came too late: {_reason(r, 200)}"],
    "peer.deciding": _deciding,
    "mp.table": _table,
    "mp.move": lambda r, seen: [_move(r, seen.role)],
    "mp.game_over": lambda r, _: [
        "game over: both sides now open the deck, and every card is checked"],
    "mp.receipt": _mp_receipt,
    "mp.forfeit": lambda r, seen: [
        f"a forfeit is recorded against {_who(r.get('against'), seen.role)}"],
    "violation": lambda r, _: [
        f"the session stops: {safe_line(r.get('code'), 80)}: {_reason(r, 400)}"],
    "peer.aborted": lambda r, _: [f"the peer aborted: code {peer_text(r.get('code'), 80)}, "
                                  f"reason {peer_text(r.get('reason'), 300)}"],
    "peer.closed": lambda r, _: [
        f"the peer closed the session: {peer_text(r.get('reason'), 300)}"],
    "session.abort_requested": lambda r, _: [f"aborting: {_reason(r)}"],
    "session.finished": lambda r, seen: [f"outcome: {outcome_words(r, seen.role)}"],
    "transport.send_failed": lambda r, _: [f"could not send: {_reason(r)}"],
    "receipts.exchanged": _receipts,
}


def _decider_lines(name: str, record: dict[str, Any]) -> list[str] | None:
    """A model decider's own records (prompts, answers); None for one not told."""
    who = safe_line(record.get("model") or record.get("decider") or "the decider", 60)
    point = safe_line(record.get("point_id"), 40)
    told = {
        "decider.prompt": f"asking {who} for {point} "
                          f"(attempt {safe_line(record.get('attempt'), 8)})",
        "decider.answer": f"{who} answered {point}: {safe_line(record.get('text'), 200)}",
        "decider.refused": f"{who}'s answer refused: {_reason(record)}",
        "decider.error": f"{who} failed: {safe_line(record.get('code'), 80)}",
    }.get(name)
    return None if told is None else [told]


def event_lines(record: dict[str, Any], info: dict[str, Any] | None = None, *,
                asks_here: bool = False, unknown: bool = False) -> list[str]:
    """The lines an event prints as (none for bookkeeping events): one line per event, in
    the game's words where the hooks gave them, "you" and "the peer" for the sides.

    ``info``: the session's protocol, role, peer key, state folder (a LiveSession's
    ``info`` or a snapshot). ``asks_here``: a decider at this terminal prints its own
    prompt, so a ``decision.requested`` needs no hint. ``unknown``: events this
    formatter does not know (a decider's own records, bookkeeping) print as their name.
    A message the hooks did not describe is the protocol's bookkeeping (a commitment, a
    card share): it prints nothing, never its message name.
    """
    info = info or {}
    name = record.get("event")
    if not isinstance(name, str):
        return []
    lines = _LINES.get(name)
    if lines is not None:
        return lines(record, _Seen(info, record.get("role") or info.get("role"), asks_here))
    told = _decider_lines(name, record) if name.startswith("decider.") else None
    if told is not None:
        return told
    if name in QUIET_EVENTS or not unknown:
        return []
    return [safe_line(name, 80)]


class Console:
    """A LiveSession listener printing :func:`event_lines` through the shared terminal."""

    def __init__(self, live: Any, terminal: Terminal, *,
                 asks_here: Callable[[], bool] = lambda: False) -> None:
        self.live, self.terminal, self.asks_here = live, terminal, asks_here
        self._told_deciding = False

    def __call__(self, record: dict[str, Any]) -> None:
        name = record.get("event")
        if name == "peer.deciding":  # said once: the peer decides by hand, every move
            if self._told_deciding:
                return
            self._told_deciding = True
        for index, line in enumerate(event_lines(record, self.live.info,
                                                 asks_here=self.asks_here())):
            self.terminal.say(line, settles=name in SETTLES and index == 0)


# ------------------------------------------------------------------- taking part

def _decider_options(pairs: tuple[str, ...]) -> dict[str, str]:
    return key_values(pairs, "--decider-option", "usage.bad_decider_option")


class Participation:
    """Who takes part from this terminal in one run: the console, the decider, the UI."""

    def __init__(self, *, quiet: bool, decider: str | None, decider_options: tuple[str, ...],
                 ui: bool, open_ui: bool) -> None:
        self.quiet, self.kind = quiet, decider
        self.options = _decider_options(decider_options)
        self.ui = ui or open_ui
        self.open_ui = open_ui
        self.terminal = Terminal()
        self.decider: Any = None
        self.live: Any = None

    def prepare(self, control_mode: str | None, input_source: str | None) -> Any:
        """Build the decider and the LiveSession (typed usage errors for clashing options)."""
        kind, follows_spec = self._decider_kind(control_mode, input_source)
        if kind is not None:
            self._make_decider(kind, follows_spec, input_source)
        if self.ui:
            _ui_server()  # refuse before listening or connecting when there is no UI
        self.live = LiveSession()
        if not self.quiet:
            reader = getattr(self.decider, "reader", None) if kind == "terminal" else None
            self.live.listen(Console(  # once the terminal's input ended, say how to answer
                self.live, self.terminal,
                asks_here=lambda: reader is not None and not reader.ended))
        return self.live

    def _decider_kind(self, control_mode: str | None,
                      input_source: str | None) -> tuple[str | None, bool]:
        """Which decider this terminal runs (None: the hooks decide), and whether it only
        follows the spec's decision.mode."""
        kind = self.kind
        if kind is None and control_mode in ("human", "hybrid"):
            kind = "terminal"
        # A spec whose decision.mode is manual asks the person at this terminal, when one
        # is here (and stdin is not the free-mode input); an auto spec never asks it.
        follows_spec = kind is None and control_mode is None and not self.options \
            and input_source != "-" and _a_person_is_here()
        if follows_spec:
            kind = "terminal"
        if kind is None and self.options:
            raise InputError("usage.decider_option_alone",
                             "--decider-option needs --decider (or --control-mode human)")
        if kind is not None and control_mode == "autonomous":
            raise InputError("usage.decider_unused",
                             f"--decider {safe_line(kind, 40)} is never asked with "
                             "--control-mode autonomous")
        return kind, follows_spec

    def _make_decider(self, kind: str, follows_spec: bool, input_source: str | None) -> None:
        extra = {"terminal": self.terminal} if kind == "terminal" else {}
        try:
            self.decider = make_decider(kind, self.options, **extra)
            if follows_spec:
                self.decider.follows_spec = True  # with_decider keeps the spec's mode
        except ImportError:
            raise LingxiError("decider.unavailable", f"the {safe_line(kind, 40)} decider "
                              "is not installed in this build", exit_code=2) from None
        if input_source == "-" and getattr(self.decider, "reads_stdin", False):
            raise InputError("usage.stdin_conflict",
                             "--input - and a person deciding at this terminal cannot both "
                             "read stdin: give --input FILE, or --decider-option "
                             "input=/dev/tty")

    def driver_kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {"live": self.live}
        if self.decider is not None:
            out["decider"] = self.decider
        return out

    async def run(self, session: Callable[[], Any], ui_dir: Path | None) -> Any:
        """Run ``session()`` (a coroutine factory) with the browser UI beside it when asked."""
        if not self.ui:
            return await session()
        server = await _ui_server()(self.live, ui_dir)
        if ui_dir is None:  # a guest learns its protocol from the offer: then its page
            def learned(record: dict[str, Any]) -> None:
                if record.get("event") == "session.started":
                    found = _protocol_ui(self.live.info.get("protocol_id"))
                    if found is not None and hasattr(server, "use_ui_dir"):
                        server.use_ui_dir(found)

            self.live.listen(learned)
        url = safe_line(getattr(server, "url", ""), 400)
        click.echo(f"ui: {url}", err=True)
        if self.open_ui:  # a one-time launch address: the token never reaches argv (/proc)
            import webbrowser

            launch = server.launch_url() if hasattr(server, "launch_url") else url
            await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, launch)
        try:
            return await session()
        finally:
            await server.close()

    def interrupted(self, as_json: bool) -> None:
        """Ctrl-C: the driver told the peer; one line (or JSON), exit 1."""

        state_dir = (self.live.info.get("state_dir") if self.live is not None else "") or ""
        if as_json:
            print_json({"ok": False, "status": "aborted", "code": "session.aborted_locally",
                        "reason": "interrupted", "state_dir": state_dir})
        self.terminal.say("session aborted: interrupted", settles=True)
        raise SystemExit(1)


def _a_person_is_here() -> bool:
    """A terminal on stdin: someone can answer a prompt."""
    import sys

    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def _protocol_ui(protocol_id: Any) -> Path | None:
    """The ``ui/`` folder of a locally known protocol (built-in or cached), if it has one."""

    try:
        folder = folder_for_id(str(protocol_id)) / "ui"
    except LingxiError:
        return None
    return folder if folder.is_dir() else None


def _ui_server() -> Any:
    try:
        from lingxi.ui.server import start_ui
    except ImportError:
        raise LingxiError("ui.unavailable", "the browser UI is not installed in this build "
                          "(lingxi.ui.server is missing)", exit_code=2) from None
    return start_ui


def participation_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--quiet, --decider, --decider-option, --ui, --open-ui → one ``part`` argument."""

    @functools.wraps(command)
    def wrapper(*args: Any, quiet: bool, decider: str | None,
                decider_options: tuple[str, ...], ui: bool, open_ui: bool,
                **kwargs: Any) -> Any:
        part = Participation(quiet=quiet, decider=decider, decider_options=decider_options,
                             ui=ui, open_ui=open_ui)
        return command(*args, part=part, **kwargs)

    for option in (
        click.option("--open-ui", is_flag=True,
                     help="Like --ui, and open the page in the web browser (through a "
                          "one-time launch address: the token is never on its command line)."),
        click.option("--ui", is_flag=True,
                     help="Serve the protocol's UI on a loopback port (the URL is printed): "
                          "watch the session and answer its decisions in a browser."),
        click.option("--decider-option", "decider_options", multiple=True, metavar="KEY=VALUE",
                     help="An option for the decider (repeatable), e.g. input=/dev/tty for "
                          "terminal, url=… model=… for llm."),
        click.option("--decider", type=str, default=None, metavar="terminal|llm",
                     help="Who makes this side's decisions: terminal (a person here), llm (a "
                          "model). Default with --control-mode human/hybrid: terminal."),
        click.option("--quiet", "-q", is_flag=True,
                     help="No live console (events, rounds, the peer's messages) on stderr."),
    ):
        wrapper = option(wrapper)
    return wrapper
