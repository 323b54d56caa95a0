"""The repository stands on its own: ../shared is read only through one helper."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def test_missing_published_data_skips_and_fails_under_ci(shared, monkeypatch, tmp_path):
    monkeypatch.setitem(shared.__globals__, "SHARED", tmp_path / "absent")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        shared("vectors", "protocol_ids")
    assert "published data not found: ../shared/vectors/protocol_ids" in str(info.value)
    for value in ("true", "1", "TRUE"):
        monkeypatch.setenv("CI", value)
        with pytest.raises(pytest.fail.Exception) as failed:
            shared("vectors")
        assert "CI=true requires it" in str(failed.value)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        shared("vectors")
    (tmp_path / "absent" / "vectors").mkdir(parents=True)
    assert shared("vectors") == tmp_path / "absent" / "vectors"


def test_no_test_builds_a_path_to_shared_by_itself():
    pattern = re.compile(r"""["']\.\./shared|/\s*["']shared["']""")
    offenders = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
                 if path.name != "conftest.py" or path.parent != TESTS
                 if pattern.search(path.read_text(encoding="utf-8"))]
    assert offenders == []
