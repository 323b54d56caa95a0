"""``lingxi session ui [STATE_DIR]``: the browser page for a session that is already running
in another process (started without ``--ui``, or by ``lingxi mcp``).

:class:`FolderSession` gives the UI server the surface of a
:class:`~lingxi.session.drivers.live.LiveSession` over the session's state folder:
events as ``events.jsonl`` grows, the open decision and the outcome from
``snapshot.json``, an answer or an abort written to the folder's inbox (the running
driver reads it, as it does for ``lingxi session decide``). Free-mode lines are typed
where the session runs; this page cannot send them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import handle_errors, json_option, safe_line
from lingxi.cli.console import _protocol_ui, _ui_server
from lingxi.errors import LingxiError
from lingxi.home import sessions_dir
from lingxi.session.core.decisions import legal_value
from lingxi.session.core.events import RequestDecision
from lingxi.session.errors import SessionFailed
from lingxi.session.record.folder import SessionFolder, event_records, newest
from lingxi.session.record.recorder import is_running, write_inbox
from lingxi.session.record.snapshot import pending_decision
from lingxi.wire.timefmt import parse_rfc3339

POLL = 0.2  # seconds between reads of the folder
HISTORY = 2000


def _deadline(stamp: Any) -> float | None:
    """A pending decision's RFC 3339 deadline as a Unix time (None: none or unreadable)."""
    try:
        return parse_rfc3339(stamp) if stamp else None
    except LingxiError:
        return None


class FolderSession:
    """What a page needs of a running session, read from (and written to) its folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder_model = SessionFolder(folder)
        self.events: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.pending: Any = None
        self.deadline: float | None = None
        self.outcome: dict[str, Any] | None = None
        self.info: dict[str, Any] = {"state_dir": str(folder)}
        self._listeners: list[Any] = []
        self._position = 0
        self._partial = b""
        self._finished = False
        self.refresh()

    # ------------------------------------------------------------- the surface
    @property
    def finished(self) -> bool:
        return self._finished

    def listen(self, callback: Any) -> None:
        self._listeners.append(callback)

    def pending_dict(self) -> dict[str, Any] | None:
        request = self.pending
        if request is None:
            return None
        left = None if self.deadline is None else max(0.0, self.deadline - time.time())
        return {"point_id": request.point_id, "legal": request.legal, "view": request.view,
                "bounds": list(request.bounds) if request.bounds else None,
                "message": request.message, "peer_text": request.peer_text,
                "timeout_seconds": request.timeout_seconds,
                "seconds_left": None if left is None else round(left, 1)}

    def state(self) -> dict[str, Any]:
        return {**self.info, "pending_decision": self.pending_dict(),
                "finished": self.finished, "outcome": self.outcome}

    def answer(self, value: Any, point_id: str | None = None) -> str:
        request = self.pending
        if self.finished:
            raise SessionFailed("session.finished", "the session has ended")
        if request is None:
            raise SessionFailed("session.no_pending_decision",
                                "the session is not waiting for a decision")
        if point_id not in (None, request.point_id):
            raise SessionFailed("decision.stale", f"decision {point_id} is no longer open "
                                f"(open: {request.point_id})")
        if not legal_value(value, request.legal, request.bounds):
            raise SessionFailed("decision.illegal", f"{value!r} is not allowed")
        write_inbox(self.folder, {"point_id": request.point_id, "value": value})
        return str(request.point_id)

    def abort(self, reason: str = "aborted in the browser") -> None:
        if self.finished:
            raise SessionFailed("session.finished", "the session has ended")
        write_inbox(self.folder, {"abort": reason[:500] or "aborted"})

    def send_input(self, line: str) -> None:
        raise SessionFailed("session.no_input", "lines of a chat are typed where the session "
                            "runs; this page only watches and decides")

    # ------------------------------------------------------------- reading
    def refresh(self) -> None:
        """Take in what the folder says now: new events (each told to the listeners), the
        open decision, the outcome; finished once the process is gone or the receipts are
        in."""
        receipts = self._read_events()
        snapshot = self.folder_model.snapshot()  # {} while not written yet or being replaced
        for key in ("protocol", "protocol_id", "mode", "role", "session_id"):
            if snapshot.get(key) is not None:
                self.info[key] = snapshot[key]
        self._take_pending(snapshot)
        self._check_end(snapshot, receipts)

    def _read_events(self) -> bool:
        """Tell the listeners the new complete lines; True when the receipts came."""
        try:
            with open(self.folder_model.events, "rb") as handle:
                handle.seek(self._position)
                chunk = handle.read()
        except OSError:
            chunk = b""
        self._position += len(chunk)
        complete, _, self._partial = (self._partial + chunk).rpartition(b"\n")
        receipts = False
        for record in event_records(complete):
            receipts = receipts or record["event"] == "receipts.exchanged"
            self.events.append(record)
            for callback in self._listeners:
                callback(record)
        return receipts

    def _take_pending(self, snapshot: dict[str, Any]) -> None:
        try:
            pending = pending_decision(snapshot)
        except LingxiError:
            pending = None
        if pending is None or snapshot.get("state") == "finished":
            self.pending, self.deadline = None, None
        elif self.pending is None or self.pending.point_id != pending["point_id"]:
            bounds = pending.get("bounds")
            self.pending = RequestDecision(
                pending["point_id"], list(pending.get("legal") or []),
                dict(pending.get("view") or {}), float(pending.get("timeout_seconds") or 0),
                tuple(bounds) if bounds else None, pending.get("message"),
                dict(pending.get("peer_text") or {}))
            self.deadline = _deadline(pending.get("deadline"))

    def _check_end(self, snapshot: dict[str, Any], receipts: bool) -> None:
        if snapshot.get("state") == "finished" and isinstance(snapshot.get("outcome"), dict):
            self.outcome = snapshot["outcome"]
            if receipts or any(e["event"] == "receipts.exchanged" for e in self.events) \
                    or not is_running(self.folder):
                self._finished = True
        elif not is_running(self.folder) and snapshot:
            self._finished = True  # the process is gone: nothing more will come

    async def follow(self) -> None:
        """Read the folder until the session is over."""
        while not self.finished:
            await asyncio.sleep(POLL)
            self.refresh()


@click.command("ui")
@click.argument("state_dir", required=False, type=click.Path(file_okay=False))
@click.option("--open", "open_browser", is_flag=True,
              help="Also open the page in the web browser (with a one-time launch code, "
                   "never the token, on its command line).")
@json_option
@handle_errors
def ui_cmd(state_dir: str | None, open_browser: bool, as_json: bool) -> None:
    """Serve the browser page of a session that is already running (default: the most
    recently updated running one): watch it, answer its decisions, leave it.

    The page is the protocol's own (a registry's page isolated, as with --ui); it
    stops once the session has ended and the page has its end.
    """
    found = SessionFolder(Path(state_dir)) if state_dir else newest(sessions_dir(), "running")
    found.live_snapshot()
    folder = found.path
    live = FolderSession(folder)
    start_ui = _ui_server()

    async def serve() -> None:
        ui_dir = _protocol_ui(live.info.get("protocol_id")) \
            if live.info.get("protocol_id") else None
        server = await start_ui(live, ui_dir)
        if as_json:  # one line, at once: the command runs on while the session does
            click.echo(json.dumps({"ok": True, "url": server.url, "state_dir": str(folder)},
                                  sort_keys=True))
        else:
            click.echo(f"ui: {safe_line(server.url, 400)}")
            click.echo(f"  for {safe_line(live.info.get('protocol') or '?', 120)} in "
                       f"{safe_line(folder, 400)}; Ctrl-C stops the page, not the session")
        if open_browser:
            await _open_browser(server)
        try:
            await live.follow()
        finally:
            await server.close()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        click.echo("the page stopped; the session goes on", err=True)


async def _open_browser(server: Any) -> None:
    import webbrowser

    url = server.launch_url()
    await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)
