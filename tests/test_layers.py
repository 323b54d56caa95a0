"""The layer contracts (pyproject [tool.importlinter]) hold, and each one bites.

DESIGN.md "Layers" forbids the imports listed in FORBIDDEN below. For each, a copy
of the package gets that one import; the lint must then report the named contract
broken. The same goes for an upward import, an indirect one (through a module that
may import it) and a new module cycle. This keeps a contract from silently checking
nothing (a typo in a module name, a rule that can never fire, an allowed detour).
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

# What DESIGN.md forbids, one edge each: (why, module file under src/lingxi, the injected
# import, the contract that must then break). The layers contract is the order of the
# diagram; the forbidden ones say what an order cannot (the pure layers' bans, "never").
FORBIDDEN: list[tuple[str, str, str, str]] = [
    ("nothing imports cli", "session/runner.py", "import lingxi.cli", "layers"),
    ("registry.server never hooks", "registry/server/app.py", "import lingxi.hooks.loader",
     "registry-server"),
    ("registry.server never session", "registry/server/app.py", "import lingxi.session",
     "registry-server"),
    ("registry.server never protocols", "registry/server/app.py",
     "import lingxi.protocols.catalogue", "registry-server"),
    ("registry.client never session", "registry/client/api.py", "import lingxi.session.runner",
     "registry-client"),
    ("ui takes the session surface only", "ui/server.py",
     "import lingxi.session.drivers.network", "ui-surface"),
    ("deciders take decision projections only", "deciders/__init__.py",
     "import lingxi.session.drivers.memory", "deciders"),
    ("protocols stand on contract, hooks, home: never session", "protocols/catalogue.py",
     "import lingxi.session.core.machine", "protocols"),
    ("protocols never wire", "protocols/catalogue.py", "import lingxi.wire.identity",
     "protocols"),
    ("session.drivers never the catalogue", "session/drivers/memory.py",
     "import lingxi.protocols.catalogue", "layers"),
    ("session.core pure: no asyncio", "session/core/machine.py", "import asyncio", "core-pure"),
    ("session.core pure: no socket", "session/core/flow.py", "import socket", "core-pure"),
    ("session.core pure: no time", "session/core/events.py", "import time", "core-pure"),
    ("session.core pure: no os", "session/core/registry.py", "import os", "core-pure"),
    ("session.core pure: no pathlib", "session/core/modes/loop.py", "import pathlib",
     "core-pure"),
    ("session.core pure: no httpx", "session/core/decisions.py", "import httpx", "core-pure"),
    ("session.core pure: no subprocess", "session/core/shadow.py", "import subprocess",
     "core-pure"),
    ("session.core pure: no files", "session/core/verdicts.py", "import lingxi.files",
     "core-pure"),
    ("session.core pure: no home", "session/core/machine.py", "import lingxi.home", "core-pure"),
    ("session.core pure: no ui", "session/core/machine.py", "import lingxi.ui", "core-pure"),
    ("session.core: hooks base types only", "session/core/machine.py",
     "import lingxi.hooks.loader", "core-pure"),
    ("session.core never wire (the drivers do)", "session/core/machine.py",
     "import lingxi.wire.envelope", "layers"),
    ("cards pure: no files", "cards/table.py", "import lingxi.files", "cards-pure"),
    ("cards pure: no OS entropy", "cards/group.py", "import os", "cards-pure"),
    ("cards: PyNaCl only, never the contract", "cards/party.py", "import lingxi.contract.model",
     "layers"),
    ("playtest -> actor -> contract: never session", "playtest/geometry.py",
     "import lingxi.session", "playtest"),
    ("actor never wire", "actor/contracts.py", "import lingxi.wire.envelope", "actor"),
    ("wire never registry.client", "wire/replay.py", "import lingxi.registry.client.api",
     "layers"),
    ("wire never cards", "wire/envelope.py", "import lingxi.cards.table", "wire"),
    ("wire never deciders", "wire/builder.py", "import lingxi.deciders", "layers"),
    ("wire never contract", "wire/pipeline.py", "import lingxi.contract.model", "wire"),
    ("nats-py only in the relay link", "wire/channel.py", "import nats", "nats"),
    ("wire models: no event loop", "wire/envelope.py", "import asyncio", "wire-models"),
    ("contract: stdlib and jsonschema only, never wire", "contract/model.py",
     "import lingxi.wire.envelope", "layers"),
    ("contract: no crypto", "contract/protocol_id.py", "import cryptography", "contract-pure"),
    ("registry.models never sqlalchemy", "registry/models/__init__.py", "import sqlalchemy",
     "registry-models"),
]

# Beyond DESIGN's list: the shapes of a bypass.
BYPASSES: list[tuple[str, str, str, str]] = [
    ("an upward import (core up to a driver)", "session/core/machine.py",
     "import lingxi.session.drivers.memory", "layers"),
    ("an indirect ban (core -> hooks.base -> subprocess)", "hooks/base.py",
     "import subprocess", "core-pure"),
    ("a new module cycle (contract.errors <-> contract.spec)", "contract/errors.py",
     "import lingxi.contract.spec", "acyclic"),
    ("a new cycle between rooms (session.record <-> drivers)", "session/record/snapshot.py",
     "import lingxi.session.drivers.memory", "layers"),
    ("serve never the registry", "serve/service.py", "import lingxi.registry.client",
     "serve"),
    ("serve takes the session surface", "serve/service.py", "import lingxi.session.record",
     "serve-surface"),
    ("mcp never machines directly", "mcp/runs.py", "import lingxi.session.core.machine",
     "mcp-surface"),
    ("ui and mcp never the registry", "mcp/runs.py", "import lingxi.registry.client",
     "never-beside"),
    ("drivers and records never load hooks code", "session/record/verify.py",
     "import lingxi.hooks.loader", "session-edges"),
    ("the conductor is sans-IO: no event loop", "session/conductor/conductor.py",
     "import asyncio", "session-conductor"),
    ("the conductor stands below the drivers", "session/conductor/actions.py",
     "import lingxi.session.drivers.memory", "layers"),
    ("group is pure: never the session", "group/log.py", "import lingxi.session",
     "group-pure"),
    ("group is pure: no clock", "group/vote.py", "import time", "group-pure"),
    ("group is pure: no event loop", "group/log.py", "import asyncio", "group-pure"),
    ("the group runtime never sessions", "groupnet/runtime.py", "import lingxi.session.runner",
     "groupnet"),
    ("group never its TCP edge", "group/verify.py", "import lingxi.groupnet.runtime", "layers"),
]

CASES = FORBIDDEN + BYPASSES


def _lint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(cwd / "src"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_contract_has_a_case_that_breaks_it() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert {c["id"] for c in config["contracts"]} == {case[3] for case in CASES}


def test_there_is_one_ordered_layers_contract_and_only_surfaces_allow_detours() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    assert [c["id"] for c in contracts if c["type"] == "layers"] == ["layers"]
    detours = {c["id"] for c in contracts if c.get("allow_indirect_imports") == "True"}
    assert detours == {c for c in detours if c.endswith("-surface")}


def test_design_lists_thirty_six_forbidden_edges_each_distinct() -> None:
    assert len(FORBIDDEN) == 36
    assert len({(f, line) for _, f, line, _ in CASES}) == len(CASES)


def test_the_repository_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "src" / "lingxi", root / "src" / "lingxi",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize(("why", "relative", "line", "contract"), CASES,
                         ids=[case[0] for case in CASES])
def test_a_forbidden_import_breaks_its_contract(copy: Path, why: str, relative: str, line: str,
                                                contract: str) -> None:
    module = copy / "src" / "lingxi" / relative
    original = module.read_text()
    module.write_text(original + f"\n{line}  # injected by tests/test_layers.py\n")
    try:
        result = _lint(copy, "--contract", contract)
    finally:
        module.write_text(original)
    assert result.returncode != 0 and "BROKEN" in result.stdout, (
        f"{why}: {line} in {relative} passed\n{result.stdout}{result.stderr}")
