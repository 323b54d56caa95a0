"""A session's state folder: events.jsonl, snapshot.json, transcript.jsonl, receipts.json.

``Recorder(None, …)`` keeps everything in memory (benchmarks, the adversarial
library); with a folder every line is appended as it happens, so a crashed
session still leaves its evidence behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lingxi.session.record.transcript import Transcript

EVENTS = "events.jsonl"
SNAPSHOT = "snapshot.json"
TRANSCRIPT = "transcript.jsonl"
RECEIPTS = "receipts.json"
INBOX = "inbox"


def _line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


class Recorder:
    def __init__(self, state_dir: str | Path | None, role: str, *,
                 clock: Callable[[], float], keep_events: bool = True) -> None:
        self.role = role
        self.clock = clock
        self.transcript = Transcript()
        self.keep_events = keep_events
        self.events: list[dict[str, Any]] = []
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self._events_file = self._transcript_file = None
        if self.state_dir is not None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            (self.state_dir / INBOX).mkdir(exist_ok=True)
            for name in (EVENTS, TRANSCRIPT, RECEIPTS, SNAPSHOT):
                (self.state_dir / name).unlink(missing_ok=True)
            self._events_file = open(self.state_dir / EVENTS, "a", encoding="utf-8")  # noqa: SIM115
            self._transcript_file = open(self.state_dir / TRANSCRIPT, "a", encoding="utf-8")  # noqa: SIM115

    def event(self, event: dict[str, Any]) -> None:
        record = {"t": round(self.clock(), 6), **event}
        if self.keep_events:
            self.events.append(record)
        if self._events_file is not None:
            self._events_file.write(_line(record))

    def envelope(self, direction: str, envelope: dict[str, Any], local: str) -> None:
        entry = self.transcript.add(direction, envelope, local)
        if self._transcript_file is not None:
            self._transcript_file.write(_line(entry))

    def flush(self) -> None:
        for handle in (self._events_file, self._transcript_file):
            if handle is not None:
                handle.flush()

    def snapshot(self, data: dict[str, Any]) -> None:
        if self.state_dir is not None:
            self.flush()
            write_json_atomic(self.state_dir / SNAPSHOT, {"updated": round(self.clock(), 6),
                                                          **data})

    def receipts(self, data: dict[str, Any]) -> None:
        if self.state_dir is not None:
            write_json_atomic(self.state_dir / RECEIPTS, data)

    def close(self) -> None:
        for handle in (self._events_file, self._transcript_file):
            if handle is not None:
                handle.close()
        self._events_file = self._transcript_file = None
