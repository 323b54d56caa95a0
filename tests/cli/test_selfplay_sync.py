"""`protocol test`'s self-play folders are written atomically but not fsynced
(lingxi.files.unsynced); every other write, in the same process and at the same time in
another thread, is fsynced as before."""

from __future__ import annotations

import json
import os
import threading

from click.testing import CliRunner

from lingxi import files
from lingxi.cli import cli


def _count_fsyncs(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def test_a_write_is_fsynced_with_its_folder_unless_unsynced(tmp_path, monkeypatch):
    calls = _count_fsyncs(monkeypatch)
    files.write_private_json(tmp_path / "a.json", {"a": 1})
    assert len(calls) == 2  # the file, then its folder
    with files.unsynced():
        files.write_private_json(tmp_path / "b.json", {"b": 2})
        files.write_private(tmp_path / "c.bin", b"c", exclusive=True)
    assert len(calls) == 2
    files.write_private_text(tmp_path / "d.txt", "d")
    assert len(calls) == 4  # synced again after the block
    assert json.loads((tmp_path / "b.json").read_text()) == {"b": 2}
    assert (tmp_path / "c.bin").read_bytes() == b"c"
    assert (tmp_path / "b.json").stat().st_mode & 0o777 == files.FILE_MODE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "c.bin", "d.txt"]


def test_another_thread_stays_synced_during_the_block(tmp_path, monkeypatch):
    calls = _count_fsyncs(monkeypatch)
    with files.unsynced():
        worker = threading.Thread(target=files.write_private_json,
                                  args=(tmp_path / "other.json", [1]))
        worker.start()
        worker.join()
    assert len(calls) == 2


def test_a_self_play_skips_the_fsyncs_and_keeps_its_folder_whole(tmp_path, monkeypatch):
    calls = _count_fsyncs(monkeypatch)
    state = tmp_path / "state"
    result = CliRunner().invoke(cli, ["protocol", "test", "rock-paper-scissors", "--json",
                                      "--state-dir", str(state)],
                                env={"LINGXI_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    assert calls == []
    for side in ("host", "guest"):
        assert json.loads((state / side / "receipts.json").read_text())
        assert json.loads((state / side / "snapshot.json").read_text())
        assert not [p for p in (state / side).iterdir() if p.name.endswith(".tmp")]
    verified = CliRunner().invoke(cli, ["session", "verify", str(state / "host"), "--json"],
                                  env={"LINGXI_HOME": str(tmp_path / "home")})
    assert verified.exit_code == 0, verified.output
    # and a write of its own after the command is synced again
    files.write_private_text(tmp_path / "after.txt", "x")
    assert len(calls) == 2


def test_the_temporary_name_is_new_each_time_and_never_an_existing_file(tmp_path, monkeypatch):
    """files._temporary is tempfile.mkstemp's contract: a fresh 0600 file, opened
    exclusively, a taken name drawn again (and after 100 taken names, FileExistsError)."""
    draws = iter([b"\x00" * 8, b"\x00" * 8, b"\x01" * 8])
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    fd, first = files._temporary(tmp_path, ".t.", ".tmp")
    os.close(fd)
    fd, second = files._temporary(tmp_path, ".t.", ".tmp")  # the first name is taken
    os.close(fd)
    assert os.path.basename(first) == ".t.aaaaaaaa.tmp"
    assert os.path.basename(second) == ".t.bbbbbbbb.tmp"
    assert os.stat(second).st_mode & 0o777 == files.FILE_MODE
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)
    try:
        files._temporary(tmp_path, ".t.", ".tmp")
    except FileExistsError as error:
        assert str(tmp_path) in str(error)
    else:
        raise AssertionError("a taken name was opened")
