"""Shared fixtures: published data read in place from ../shared, and an isolated LINGXI_HOME.

The repository stands on its own: every test runs on data the project owns,
except the few that check Lingxi against data published by others (the
protocol-id and envelope vectors, the seed schema, third-party games). Those
read ``../shared`` beside the clone through :func:`require_shared`, the one
place that decides what happens when it is missing: skip with one clear
reason, or fail when ``CI=true`` (a CI run must never pass without them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = ROOT / "tests" / "contract" / "corpus"
BUILTINS = ROOT / "src" / "lingxi" / "protocols"


def in_ci() -> bool:
    """True when the CI environment variable says so (``CI=true``, ``1`` or ``yes``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_shared(*parts: str) -> Path:
    """``../shared/<parts>``; skip the calling test when it is absent (fail when CI=true).

    Usable in tests, fixtures and at module level (it passes
    ``allow_module_level``), so a module of vector tests can guard itself once.
    """
    path = SHARED.joinpath(*parts)
    if path.exists():
        return path
    where = "/".join(("..", "shared", *parts))
    reason = (f"published data not found: {where} (clone the shared folder beside the "
              "repository to run this test)")
    if in_ci():
        pytest.fail(f"{reason}; CI=true requires it", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
    raise AssertionError("unreachable")  # pragma: no cover


@pytest.fixture(scope="session")
def shared():
    """The :func:`require_shared` helper as a fixture: ``shared("games", "x")``."""
    return require_shared


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    return require_shared("vectors")


@pytest.fixture(scope="session")
def protocol_vectors() -> dict[str, tuple[Path, str]]:
    """``file name -> (spec path, published protocol_id)`` for every published spec."""
    base = require_shared("vectors", "protocol_ids")
    expected = json.loads((base / "expected.json").read_text(encoding="utf-8"))
    return {name: (base / name, pid) for name, pid in expected.items()}


def corpus_paths() -> list[Path]:
    """The project's own spec corpus (tests/contract/corpus/*.json), sorted."""
    return sorted(CORPUS.glob("*.json"))


@pytest.fixture(scope="session")
def corpus() -> dict[str, Path]:
    """``file stem -> path`` for every spec in the project's own corpus."""
    return {path.stem: path for path in corpus_paths()}


def builtin_spec_path(name: str) -> Path:
    """The spec.json of a built-in protocol (shipped in the package)."""
    return BUILTINS / name / "spec.json"


@pytest.fixture(autouse=True)
def lingxi_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "lingxi-home"
    monkeypatch.setenv("LINGXI_HOME", str(home))
    return home
