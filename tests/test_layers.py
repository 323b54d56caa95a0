"""The layer contracts (pyproject [tool.importlinter]) hold, and each one bites.

For every contract, a copy of the package gets one forbidden import; that
contract must then be reported broken. This keeps a contract from silently
checking nothing (a typo in a module name, a rule that can never fire).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")

# contract id -> (module file under src/lingxi, an import that contract forbids)
VIOLATIONS = {
    "no-cli": ("session/runner.py", "import lingxi.cli"),
    "contract": ("contract/model.py", "import lingxi.wire"),
    "wire": ("wire/replay.py", "import lingxi.contract"),
    "session-core": ("session/core/machine.py", "import asyncio"),
    "session-edges": ("session/drivers/memory.py", "import lingxi.protocols.catalogue"),
    "hooks": ("hooks/result.py", "import lingxi.session"),
    "protocols": ("protocols/catalogue.py", "import lingxi.wire.identity"),
    "actor": ("actor/contracts.py", "import lingxi.playtest"),
    "playtest": ("playtest/geometry.py", "import lingxi.hooks"),
    "cards": ("cards/group.py", "import time"),
    "group": ("group/log.py", "import lingxi.session"),
    "groupnet": ("groupnet/runtime.py", "import lingxi.session.runner"),
    "registry-server": ("registry/server/app.py", "import lingxi.session"),
    "registry-client": ("registry/client/api.py", "import lingxi.session.runner"),
    "deciders": ("deciders/__init__.py", "import lingxi.wire.channel"),
    "ui": ("ui/server.py", "import lingxi.session.drivers.network"),
    "llm": ("llm.py", "import lingxi.session.core.decisions"),
    "nats": ("wire/channel.py", "import nats"),
    "mcp": ("mcp/runs.py", "import lingxi.session.drivers.network"),
    "serve": ("serve/service.py", "import lingxi.registry.client"),
    "serve-edge": ("session/runner.py", "import lingxi.serve"),
}


def _lint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(cwd / "src"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_contract_has_a_violation_case() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert {c["id"] for c in config["contracts"]} == set(VIOLATIONS)


def test_the_repository_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "src" / "lingxi", root / "src" / "lingxi",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize("contract", sorted(VIOLATIONS))
def test_a_forbidden_import_breaks_the_contract(copy: Path, contract: str) -> None:
    relative, line = VIOLATIONS[contract]
    module = copy / "src" / "lingxi" / relative
    original = module.read_text()
    module.write_text(original + f"\n{line}  # injected by tests/test_layers.py\n")
    try:
        result = _lint(copy, "--contract", contract)
    finally:
        module.write_text(original)
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout + result.stderr
