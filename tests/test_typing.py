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
    """mypy over the real tree, each case module read from an injected copy (mypy's
    --shadow-file), with a copy of the project's own cache when `make test` left one (its
    mypy step runs first): only what the injections touch is checked again, not all 295
    modules (a cold run took 150 s of a worker under load)."""
    root = tmp_path_factory.mktemp("typing")
    cache = root / "cache"
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", cache)
    shadows: list[str] = []
    for relative, (text, _) in CASES.items():
        source = ROOT / "src" / "lingxi" / relative
        shadow = root / relative.replace("/", "__")
        shadow.write_text(source.read_text() + text)
        shadows += ["--shadow-file", f"src/lingxi/{relative}", str(shadow)]
    done = subprocess.run([str(MYPY), "--cache-dir", str(cache), *shadows], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    return done.stdout + done.stderr


@pytest.mark.parametrize("relative", sorted(CASES))
def test_an_injected_gap_is_reported_where_the_rule_applies(report: str, relative: str) -> None:
    _, expected = CASES[relative]
    found = re.search(rf"^src/lingxi/{re.escape(relative)}:\d+: error", report, re.M)
    assert bool(found) is expected, report
