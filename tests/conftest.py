"""Shared fixtures: the shared vectors (read in place) and an isolated LINGXI_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT.parent / "shared" / "vectors"


def _require_vectors() -> Path:
    if not VECTORS.is_dir():
        raise RuntimeError(f"shared vectors not found at {VECTORS}; they must sit beside the clone")
    return VECTORS


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    return _require_vectors()


@pytest.fixture(scope="session")
def protocol_vectors() -> dict[str, tuple[Path, str]]:
    """``file name -> (spec path, published protocol_id)`` for every shared spec."""
    base = _require_vectors() / "protocol_ids"
    expected = json.loads((base / "expected.json").read_text(encoding="utf-8"))
    return {name: (base / name, pid) for name, pid in expected.items()}


@pytest.fixture(autouse=True)
def lingxi_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "lingxi-home"
    monkeypatch.setenv("LINGXI_HOME", str(home))
    return home
