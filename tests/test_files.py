"""lingxi.files: atomic private writes (0600 files, 0700 folders), io.write_failed, locks."""

from __future__ import annotations

import json
import os
import stat

import pytest

from lingxi.errors import WriteFailed
from lingxi.files import (
    folder_lock,
    is_empty_or_absent,
    private_dir,
    write_private,
    write_private_json,
    write_private_text,
)


def test_files_are_0600_and_folders_0700(tmp_path):
    target = tmp_path / "a" / "b" / "state.json"
    write_private_json(target, {"n": 1})
    assert json.loads(target.read_text(encoding="utf-8")) == {"n": 1}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700


def test_replace_is_atomic_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "f.txt"
    write_private_text(target, "one")
    write_private_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_exclusive_never_replaces(tmp_path):
    target = tmp_path / "key"
    write_private(target, b"first", exclusive=True)
    with pytest.raises(FileExistsError):
        write_private(target, b"second", exclusive=True)
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["key"]


def test_failures_are_write_failed_and_keep_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    write_private_text(target, "old")

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(WriteFailed) as info:
        write_private_text(target, "new")
    monkeypatch.undo()
    assert info.value.code == "io.write_failed" and info.value.exit_code == 2
    assert "No space left" in info.value.message
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_a_file_where_a_folder_should_be_is_write_failed(tmp_path):
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(WriteFailed):
        private_dir(tmp_path / "blocker" / "inner")
    with pytest.raises(WriteFailed):
        write_private_text(tmp_path / "blocker" / "f", "x")


def test_empty_or_absent(tmp_path):
    assert is_empty_or_absent(tmp_path / "none")
    (tmp_path / "zero").write_bytes(b"")
    assert is_empty_or_absent(tmp_path / "zero")
    (tmp_path / "one").write_bytes(b"1")
    assert not is_empty_or_absent(tmp_path / "one")


def test_folder_lock_is_reentrant_across_blocks(tmp_path):
    with folder_lock(tmp_path / "home"):
        pass
    with folder_lock(tmp_path / "home"):
        assert stat.S_IMODE((tmp_path / "home" / ".lock").stat().st_mode) == 0o600


def test_identity_init_where_a_file_blocks_the_folder_is_write_failed(lingxi_home):
    from click.testing import CliRunner

    from lingxi.cli import cli

    lingxi_home.mkdir(parents=True)
    (lingxi_home / "identity").write_text("not a folder")
    result = CliRunner().invoke(cli, ["identity", "init"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: io.write_failed: cannot create folder")
