"""A session's state folder: events.jsonl, snapshot.json, transcript.jsonl, receipts.json.

``Recorder(None, …)`` writes nothing (benchmarks, the adversarial library);
with a folder every line is appended as it happens, so a crashed session
still leaves its evidence behind. Only chain heads and counts stay in memory,
plus the events when ``keep_events`` asks for them (a short self-play's
summary), so a session that runs for days does not grow. The folder is private
to the user (0700, files 0600), like the keys.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lingxi.errors import LingxiError
from lingxi.files import private_dir, write_private_json
from lingxi.session.record.transcript import Transcript, entry_line
from lingxi.wire.envelope import Envelope

EVENTS = "events.jsonl"
SNAPSHOT = "snapshot.json"
TRANSCRIPT = "transcript.jsonl"
RECEIPTS = "receipts.json"
INBOX = "inbox"
LOCK = ".lock"  # held (flock) by the process running the session: liveness for watchers


def _line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def _append(path: Path, binary: bool = False) -> Any:
    """A private (0600) file opened for appending."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return os.fdopen(fd, "ab") if binary else os.fdopen(fd, "a", encoding="utf-8")


class Recorder:
    def __init__(self, state_dir: str | Path | None, role: str, *,
                 clock: Callable[[], float], keep_events: bool = True) -> None:
        self.role = role
        self.clock = clock
        self.transcript = Transcript()
        self.keep_events = keep_events
        self.events: list[dict[str, Any]] = []
        self.written = 0  # bytes of events and transcript so far (the state-size limit)
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self._events_file = self._transcript_file = None
        self._lock: int | None = None
        if self.state_dir is not None:
            private_dir(self.state_dir / INBOX)
            os.chmod(self.state_dir, 0o700)
            self._lock = _hold(self.state_dir / LOCK)
            try:
                for name in (EVENTS, TRANSCRIPT, RECEIPTS, SNAPSHOT):
                    (self.state_dir / name).unlink(missing_ok=True)
                self._events_file = _append(self.state_dir / EVENTS)
                self._transcript_file = _append(self.state_dir / TRANSCRIPT, binary=True)
            except OSError as error:
                raise LingxiError("io.write_failed", f"cannot write into {self.state_dir}: "
                                  f"{error.strerror or error}") from None

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        record = {"t": round(self.clock(), 6), **event}
        if self.keep_events:
            self.events.append(record)
        if self._events_file is not None:
            line = _line(record)
            self.written += len(line)
            self._events_file.write(line)
        return record

    def envelope(self, direction: str, envelope: dict[str, Any] | Envelope, local: str) -> int:
        """Chain and append one envelope; return its size in bytes (for the byte limits).

        Given an :class:`~lingxi.wire.envelope.Envelope`, its canonical bytes are
        encoded once and serve the link's hash and the line alike.
        """
        if isinstance(envelope, Envelope):
            encoded: bytes | None = envelope.to_bytes()
            envelope = envelope.to_dict()
        else:
            encoded = None
        entry = self.transcript.add(direction, envelope, local, encoded)
        if self._transcript_file is not None:
            line = entry_line(entry, self.transcript.last_encoded)
            self.written += len(line)
            self._transcript_file.write(line)
        else:
            self.written += self.transcript.last_size
        return self.transcript.last_size

    def flush(self) -> None:
        for handle in (self._events_file, self._transcript_file):
            if handle is not None:
                handle.flush()

    def snapshot(self, data: dict[str, Any]) -> None:
        if self.state_dir is not None:
            self.flush()
            write_private_json(self.state_dir / SNAPSHOT, {"updated": round(self.clock(), 6),
                                                          **data})

    def receipts(self, data: dict[str, Any]) -> None:
        if self.state_dir is not None:
            write_private_json(self.state_dir / RECEIPTS, data)

    def close(self) -> None:
        for handle in (self._events_file, self._transcript_file):
            if handle is not None:
                handle.close()
        self._events_file = self._transcript_file = None
        if self._lock is not None:
            os.close(self._lock)  # releases the flock: watchers now see no live process
            self._lock = None


def write_inbox(state_dir: str | Path, request: dict[str, Any]) -> Path:
    """Queue a request for the running session: ``{"point_id", "value"}`` (a decision) or
    ``{"abort": reason}``; the network driver polls the folder's inbox/ and reads it."""
    import time

    folder = Path(state_dir) / INBOX
    folder.mkdir(exist_ok=True)
    path = folder / f"{time.time_ns()}.json"
    write_private_json(path, request)
    return path


def _hold(path: Path) -> int:
    """Hold ``path``'s exclusive lock for this process; a second runner is refused."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise LingxiError("session.busy", f"another process is running the session in "
                          f"{path.parent}") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def is_running(state_dir: str | Path) -> bool:
    """Whether a live process holds the session folder (its lock), now."""
    path = Path(state_dir) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock we may have taken
    return False
