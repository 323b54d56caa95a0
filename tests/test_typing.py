"""mypy holds the pure layers (wire, cards, contract, session.core) to --strict and every module to
check_untyped_defs (pyproject [tool.mypy]): an injected gap in a copy of the package
must be reported where the rule applies, and only there."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MYPY = Path(sys.executable).with_name("mypy")

UNTYPED = "\n\ndef _injected_untyped(value):\n    return value\n"
BAD_BODY = "\n\ndef _injected_body():\n    count: int = 'not a number'\n    return count\n"

# module file under src/lingxi -> (what is injected, whether mypy must report it)
CASES = {
    "wire/replay.py": (UNTYPED, True),  # strict: an untyped def is an error
    "cards/audit.py": (UNTYPED, True),
    "contract/model.py": (UNTYPED, True),
    "session/core/machine.py": (UNTYPED, True),
    "session/runner.py": (UNTYPED, False),  # not strict: untyped defs are allowed ...
    "cli/demo.py": (BAD_BODY, True),  # ... but their bodies are checked everywhere
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("typing")
    shutil.copytree(ROOT / "src" / "lingxi", root / "src" / "lingxi",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    for relative, (text, _) in CASES.items():
        module = root / "src" / "lingxi" / relative
        module.write_text(module.read_text() + text)
    files = [f"src/lingxi/{relative}" for relative in CASES]
    done = subprocess.run([str(MYPY), "--no-incremental", "--cache-dir", str(root / "cache"),
                           *files], cwd=root, capture_output=True, text=True, timeout=300)
    return done.stdout + done.stderr


@pytest.mark.parametrize("relative", sorted(CASES))
def test_an_injected_gap_is_reported_where_the_rule_applies(report: str, relative: str) -> None:
    _, expected = CASES[relative]
    found = re.search(rf"^src/lingxi/{re.escape(relative)}:\d+: error", report, re.M)
    assert bool(found) is expected, report
