"""lingxi.actor stays below playtest and stays cheap to import."""

import subprocess
import sys
from pathlib import Path

import lingxi.actor

ACTOR_DIR = Path(lingxi.actor.__file__).parent


def test_actor_never_imports_playtest_or_cli():
    for path in ACTOR_DIR.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "lingxi.playtest" not in text and "lingxi.cli" not in text, path


def test_registry_import_is_light():
    code = ("import sys, lingxi.actor.actors as a; a.ACTOR_NAMES; "
            "print(sorted(m for m in ('numpy', 'scipy', 'PIL', 'httpx', 'playwright') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
