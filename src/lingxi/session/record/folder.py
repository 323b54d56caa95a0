"""A session state folder as its readers see it: what it is, what state it is in.

The recorder writes the folder (events.jsonl, snapshot.json, the liveness lock, the
inbox); this is the one reader of those names for everyone who watches from outside:
``lingxi session list|events|abort|decide|show|ui``. A listing never fails on one bad
folder; a request to steer a session that has ended or whose process is gone is a
typed refusal (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from lingxi.errors import InputError, LingxiError
from lingxi.records import FrozenRecord
from lingxi.session.errors import SessionFailed
from lingxi.session.record.recorder import EVENTS, LOCK, SNAPSHOT, is_running
from lingxi.session.record.snapshot import read_object

# how deep under the sessions root a folder may sit: <id>-<role>/ and
# protocol-test/<run>/<role>/
MAX_DEPTH = 2


class FolderState(StrEnum):
    """Where a session stands, from its snapshot and its process's liveness."""

    RUNNING = "running"
    WAITING = "waiting for decision"
    FINISHED = "finished"
    GONE = "gone: process ended"


# the states `newest` can ask for; None is any folder
WANTED: dict[str, tuple[FolderState, ...] | None] = {
    "waiting": (FolderState.WAITING,),
    "running": (FolderState.RUNNING, FolderState.WAITING),
    "any": None,
}


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, repr=False, eq=False)
class SessionFolder(FrozenRecord):
    """One session's state folder (read-only: the recorder is its only writer)."""

    path: Path

    @property
    def events(self) -> Path:
        return self.path / EVENTS

    @property
    def snapshot_file(self) -> Path:
        return self.path / SNAPSHOT

    def exists(self) -> bool:
        """It holds a snapshot or an event log (a folder the recorder has written)."""
        return self.snapshot_file.is_file() or self.events.is_file()

    def snapshot(self) -> dict[str, Any]:
        """snapshot.json, or {} when it is missing or unreadable."""
        try:
            return read_object(self.snapshot_file)
        except LingxiError:
            return {}

    def state(self, snapshot: dict[str, Any] | None = None) -> FolderState:
        """Liveness, not the snapshot alone: a process that died leaves a snapshot that
        still says running."""
        snap = self.snapshot() if snapshot is None else snapshot
        if snap.get("state") == "finished":
            return FolderState.FINISHED
        if not is_running(self.path):
            return FolderState.GONE
        return FolderState.WAITING if snap.get("pending_decision") else FolderState.RUNNING

    def live_snapshot(self) -> dict[str, Any]:
        """The snapshot of a session that can still be steered; typed refusals otherwise."""
        if not self.snapshot_file.is_file():
            raise InputError("session.not_found", f"{self.path} is not a session state folder")
        snap = read_object(self.snapshot_file)
        if snap.get("state") == "finished":
            raise SessionFailed("session.finished", f"the session in {self.path} has ended")
        if not is_running(self.path):
            raise SessionFailed("session.not_running", f"the session's process is gone "
                                f"({self.path}); nothing would read the request")
        return snap

    def first_event_time(self) -> float | None:
        try:
            with open(self.events, "rb") as handle:
                first = json.loads(handle.readline(65536) or b"null")
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            return None
        stamp = first.get("t") if isinstance(first, dict) else None
        return float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) \
            else None

    def row(self) -> dict[str, Any]:
        """The listing's facts of this folder (every value checked for type)."""
        snap = self.snapshot()
        outcome = snap.get("outcome") if isinstance(snap.get("outcome"), dict) else None
        state = self.state(snap)
        pending = snap.get("pending_decision") if state is FolderState.WAITING else None
        peer = _text(snap.get("peer_public_key"))
        return {
            "state_dir": str(self.path), "state": str(state),
            "role": _text(snap.get("role")) or self.path.name.rsplit("-", 1)[-1],
            "pending_decision": {k: pending.get(k) for k in ("point_id", "legal", "deadline")}
            if isinstance(pending, dict) else None,
            "protocol": _text(snap.get("protocol")), "session_id": _text(snap.get("session_id")),
            "peer": peer[:16] if peer else None,
            "peer_nickname": _text(snap.get("peer_nickname")),
            "started": _mtime(self.path / LOCK) or self.first_event_time(),
            "updated": _mtime(self.snapshot_file) or _mtime(self.path),
            "outcome": None if outcome is None else {
                k: outcome.get(k) for k in ("status", "code", "by", "reason", "summary")}}


def event_records(data: bytes) -> list[dict[str, Any]]:
    """The event records in complete lines of events.jsonl (a torn or foreign line is
    skipped: the log is read while it is written)."""
    out = []
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("event"), str):
            out.append(record)
    return out


def _walk(folder: Path, depth: int) -> Iterator[SessionFolder]:
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        if any((child / name).exists() for name in (SNAPSHOT, EVENTS, LOCK)):
            yield SessionFolder(child)
        elif depth < MAX_DEPTH:
            yield from _walk(child, depth + 1)


def session_folders(root: Path) -> list[SessionFolder]:
    """Every session folder under ``root`` (``$LINGXI_HOME/sessions``)."""
    return list(_walk(root, 0))


def listing(root: Path) -> list[dict[str, Any]]:
    """The rows of every session folder under ``root``, most recently updated first."""
    return sorted((f.row() for f in session_folders(root)), key=lambda r: -(r["updated"] or 0))


def newest(root: Path, which: str = "any") -> SessionFolder:
    """The most recently updated folder under ``root`` in state ``which`` (waiting,
    running, any); typed errors when there is none."""
    wanted = WANTED[which]
    for row in listing(root):
        if wanted is None or row["state"] in wanted:
            return SessionFolder(Path(row["state_dir"]))
    if which == "waiting":
        raise InputError("session.no_pending_decision",
                         f"no session under {root} is waiting for a decision")
    if which == "running":
        raise SessionFailed("session.not_running", f"no session under {root} is running")
    raise InputError("session.not_found", f"no session folder under {root}")


def folder_at(state_dir: str | Path | None, root: Path, which: str = "any") -> SessionFolder:
    """``state_dir`` when given (it must be a state folder), else the newest ``which``."""
    folder = SessionFolder(Path(state_dir)) if state_dir else newest(root, which)
    if not folder.exists():
        raise InputError("session.not_found", f"{folder.path} is not a session state folder")
    return folder
