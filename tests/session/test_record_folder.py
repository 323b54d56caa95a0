"""The session folder model (lingxi.session.record.folder): states from the snapshot and
the process's lock, the listing, the newest folder, typed refusals, torn event lines."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lingxi.errors import InputError
from lingxi.session.errors import SessionFailed
from lingxi.session.record.folder import (
    FolderState,
    SessionFolder,
    event_records,
    folder_at,
    listing,
    newest,
)


def _folder(root: Path, name: str, snapshot: dict | None, events: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if snapshot is not None:
        (folder / "snapshot.json").write_text(json.dumps(snapshot))
    if events:
        (folder / "events.jsonl").write_text(events)
    return folder


@contextmanager
def _held(folder: Path) -> Iterator[None]:
    """The lock a running session's process holds."""
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)


def test_states_come_from_the_snapshot_and_the_lock(tmp_path: Path) -> None:
    done = SessionFolder(_folder(tmp_path, "a-host", {"state": "finished"}))
    gone = SessionFolder(_folder(tmp_path, "b-host", {"state": "running"}))
    waiting = SessionFolder(_folder(tmp_path, "c-guest", {"state": "running",
                                                          "pending_decision": {"point_id": "p"}}))
    assert done.state() is FolderState.FINISHED
    assert gone.state() is FolderState.GONE  # a dead process's snapshot still says running
    with _held(waiting.path):
        assert waiting.state() is FolderState.WAITING
        assert waiting.live_snapshot()["pending_decision"] == {"point_id": "p"}
    with pytest.raises(SessionFailed) as ended:
        done.live_snapshot()
    assert ended.value.code == "session.finished" and ended.value.exit_code == 1
    with pytest.raises(SessionFailed) as dead:
        gone.live_snapshot()
    assert dead.value.code == "session.not_running"


def test_a_listing_never_fails_on_a_bad_folder_and_lies_are_not_taken(tmp_path: Path) -> None:
    bad = _folder(tmp_path, "x-host", None)
    (bad / "snapshot.json").write_text("{not json")
    odd = _folder(tmp_path / "protocol-test" / "run", "guest",
                  {"state": "finished", "role": 7, "peer_public_key": ["k"], "outcome": "won"})
    rows = {Path(r["state_dir"]).name: r for r in listing(tmp_path)}
    assert set(rows) == {"x-host", "guest"}
    assert rows["x-host"]["state"] == "gone: process ended" and rows["x-host"]["role"] == "host"
    assert rows["guest"]["role"] == "guest" and rows["guest"]["peer"] is None
    assert rows["guest"]["outcome"] is None and Path(rows["guest"]["state_dir"]) == odd


def test_newest_and_folder_at_refuse_with_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError) as none:
        newest(tmp_path)
    assert none.value.code == "session.not_found"
    _folder(tmp_path, "a-host", {"state": "finished"})
    assert newest(tmp_path).path.name == "a-host"
    with pytest.raises(InputError) as waiting:
        newest(tmp_path, "waiting")
    assert waiting.value.code == "session.no_pending_decision"
    with pytest.raises(SessionFailed):
        newest(tmp_path, "running")
    with pytest.raises(InputError):
        folder_at(tmp_path / "nowhere", tmp_path)
    assert folder_at(None, tmp_path).path.name == "a-host"


def test_torn_and_foreign_event_lines_are_skipped() -> None:
    data = b'{"event":"a"}\n{"event":\n[1]\n{"event":3}\n\xff\xfe\n{"event":"b","t":1}\n'
    assert [r["event"] for r in event_records(data)] == ["a", "b"]
