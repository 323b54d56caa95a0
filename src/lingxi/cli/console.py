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
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import key_values, peer_text, safe_line
from lingxi.deciders.terminal import Terminal, plain, shown
from lingxi.errors import InputError, LingxiError

SETTLES = ("decision.made", "decision.timeout_fallback", "decision.declined_fallback",
           "session.finished")
QUIET_EVENTS = ("session.waiting_offer", "session.offered", "peer.deciding_ignored")


def _words(data: Any, skip: tuple[str, ...] = ()) -> str:
    """Scalar entries of an engine/hooks dict as ``k=v`` words (not yet escaped)."""
    if not isinstance(data, dict):
        return plain(data)
    return " ".join(f"{k}={plain(v)}" for k, v in data.items()
                    if k not in skip and not isinstance(v, dict | list))


def _compact(data: Any, limit: int = 240, skip: tuple[str, ...] = ()) -> str:
    """:func:`_words`, escaped and bounded."""
    return safe_line(_words(data, skip), limit)


def _key(key: Any) -> str:
    return f"{str(key)[:16]}…" if isinstance(key, str) and key else "?"


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
    lines = [f"decision {point} needed within {within} s: {what}"]
    view = record.get("view")
    if isinstance(view, dict) and view:
        lines.append(f"  state: {_compact(view, 400)}")
    where = f" --state-dir {safe_line(state_dir, 400)}" if state_dir else ""
    lines.append(f"  answer with: lingxi session decide <value> --point {point}{where}")
    return lines


def event_lines(record: dict[str, Any], info: dict[str, Any] | None = None, *,
                asks_here: bool = False, unknown: bool = False) -> list[str]:
    """The lines an event prints as (none for bookkeeping events).

    ``info``: the session's protocol, role, peer key, state folder (a LiveSession's
    ``info`` or a snapshot). ``asks_here``: a decider at this terminal prints its own
    prompt, so a ``decision.requested`` needs no hint. ``unknown``: events this
    formatter does not know (a decider's own records, bookkeeping) print as their name.
    """
    info = info or {}
    name = record.get("event")
    if not isinstance(name, str):
        return []
    point = safe_line(record.get("point_id"), 40)
    if name == "session.started":
        role = safe_line(record.get("role") or info.get("role") or "?", 20)
        protocol = safe_line(info.get("protocol") or "?", 120)
        options = record.get("options")
        extra = ""
        if isinstance(options, dict) and options:  # a guest's options are the host's words
            extra = " options " + (peer_text(_words(options), 200) if role == "guest"
                                   else _compact(options, 200))
        return [f"session started: {protocol} as {role}, peer "
                f"{safe_line(_key(info.get('peer_key') or info.get('peer_public_key')))}"
                f"{extra}"]
    if name in ("message.sent", "message.received"):
        message = safe_line(record.get("message") or "?", 60)
        text = record.get("text")
        if name == "message.sent":
            return [f"you: {safe_line(text, 600)}" if isinstance(text, str) and text
                    else f"you sent {message}"]
        return [f"peer: {peer_text(text, 600)}" if isinstance(text, str) and text
                else f"peer sent {message}"]
    if name == "round":
        host, guest = record.get("host"), record.get("guest")
        result = record.get("result")
        same = tuple(k for k, v in result.items() if v in (host, guest)) \
            if isinstance(result, dict) else ()
        rest = _compact(result, 240, ("action", "round", *same)) if result is not None else ""
        return [f"round {safe_line(record.get('round'), 12)}: host {shown(host, 80)}, "
                f"guest {shown(guest, 80)}" + (f" -> {rest}" if rest else "")]
    if name == "decision.requested":
        return [] if asks_here else decision_hint(record, info.get("state_dir"))
    if name == "decision.made":
        return [f"decision {point}: {shown(record.get('value'))}"]
    if name == "decision.timeout_fallback":
        return [f"time is up: fallback {shown(record.get('value'))}"]
    if name == "decision.declined":
        return [f"decision {point} declined: {safe_line(record.get('reason'), 300)}"]
    if name == "decision.declined_fallback":
        return [f"fallback for {point}: {shown(record.get('value'))}"]
    if name == "decision.rejected":
        legal = ", ".join(shown(v, 60) for v in (record.get("legal") or [])[:30])
        return [f"decision {point}: {shown(record.get('value'), 80)} is not allowed"
                + (f" (choose one of: {legal})" if legal else "")]
    if name == "decision.ignored":
        return [f"answer for {point} ignored: {safe_line(record.get('reason'), 200)}"]
    if name == "peer.deciding":
        seconds = record.get("seconds")
        up_to = f"{seconds:g}" if isinstance(seconds, int | float) else "?"
        return [f"the peer is deciding (up to {up_to} s)"]
    if name == "violation":
        return [f"violation: {safe_line(record.get('code'), 80)}: "
                f"{safe_line(record.get('reason'), 400)}"]
    if name == "peer.aborted":
        return [f"the peer aborted: code {peer_text(record.get('code'), 80)}, "
                f"reason {peer_text(record.get('reason'), 300)}"]
    if name == "peer.closed":
        return [f"the peer closed the session: {peer_text(record.get('reason'), 300)}"]
    if name == "session.abort_requested":
        return [f"aborting: {safe_line(record.get('reason'), 300)}"]
    if name == "session.finished":
        line = f"outcome: {safe_line(record.get('status'), 40)}"
        if record.get("code"):
            line += (f" ({safe_line(record.get('code'), 80)} by "
                     f"{safe_line(record.get('by'), 20)}: {safe_line(record.get('reason'), 300)})")
        summary = record.get("summary")
        if isinstance(summary, dict) and summary:
            line += " " + safe_line(json.dumps(summary, ensure_ascii=False, sort_keys=True,
                                               default=str), 400)
        return [line]
    if name.startswith("decider."):  # a model decider's own records (prompts, answers)
        who = safe_line(record.get("model") or record.get("decider") or "the decider", 60)
        attempt = safe_line(record.get("attempt"), 8)
        if name == "decider.prompt":
            return [f"asking {who} for {point} (attempt {attempt})"]
        if name == "decider.answer":
            return [f"{who} answered {point}: {safe_line(record.get('text'), 200)}"]
        if name == "decider.refused":
            return [f"{who}'s answer refused: {safe_line(record.get('reason'), 300)}"]
        if name == "decider.error":
            return [f"{who} failed: {safe_line(record.get('code'), 80)}"]
    if name == "transport.send_failed":
        return [f"could not send: {safe_line(record.get('reason'), 300)}"]
    if name == "receipts.exchanged":
        return ["receipts exchanged: " + ("verified" if record.get("verified")
                                          else "NOT verified")]
    if name in QUIET_EVENTS or not unknown:
        return []
    return [safe_line(name, 80)]


class Console:
    """A LiveSession listener printing :func:`event_lines` through the shared terminal."""

    def __init__(self, live: Any, terminal: Terminal, *,
                 asks_here: Callable[[], bool] = lambda: False) -> None:
        self.live, self.terminal, self.asks_here = live, terminal, asks_here

    def __call__(self, record: dict[str, Any]) -> None:
        name = record.get("event")
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
        kind = self.kind
        if kind is None and control_mode in ("human", "hybrid"):
            kind = "terminal"
        if kind is None and self.options:
            raise InputError("usage.decider_option_alone",
                             "--decider-option needs --decider (or --control-mode human)")
        if kind is not None and control_mode == "autonomous":
            raise InputError("usage.decider_unused",
                             f"--decider {safe_line(kind, 40)} is never asked with "
                             "--control-mode autonomous")
        if kind is not None:
            from lingxi.deciders import make_decider

            extra = {"terminal": self.terminal} if kind == "terminal" else {}
            try:
                self.decider = make_decider(kind, self.options, **extra)
            except ImportError:
                raise LingxiError("decider.unavailable", f"the {safe_line(kind, 40)} decider "
                                  "is not installed in this build", exit_code=2) from None
            if input_source == "-" and getattr(self.decider, "reads_stdin", False):
                raise InputError("usage.stdin_conflict",
                                 "--input - and a person deciding at this terminal cannot both "
                                 "read stdin: give --input FILE, or --decider-option "
                                 "input=/dev/tty")
        if self.ui:
            _ui_server()  # refuse before listening or connecting when there is no UI
        from lingxi.session.drivers.live import LiveSession

        self.live = LiveSession()
        if not self.quiet:
            reader = getattr(self.decider, "reader", None) if kind == "terminal" else None
            self.live.listen(Console(  # once the terminal's input ended, say how to answer
                self.live, self.terminal,
                asks_here=lambda: reader is not None and not reader.ended))
        return self.live

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
        if self.open_ui:
            import webbrowser

            await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)
        try:
            return await session()
        finally:
            await server.close()

    def interrupted(self, as_json: bool) -> None:
        """Ctrl-C: the driver told the peer; one line (or JSON), exit 1."""
        from lingxi.cli.common import print_json

        state_dir = (self.live.info.get("state_dir") if self.live is not None else "") or ""
        if as_json:
            print_json({"ok": False, "status": "aborted", "code": "session.aborted_locally",
                        "reason": "interrupted", "state_dir": state_dir})
        self.terminal.say("session aborted: interrupted", settles=True)
        raise SystemExit(1)


def _protocol_ui(protocol_id: Any) -> Path | None:
    """The ``ui/`` folder of a locally known protocol (built-in or cached), if it has one."""
    from lingxi.protocols.catalogue import folder_for_id

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
                     help="Like --ui, and open the page in the web browser."),
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
