"""playtest sits on actor (never the reverse), and the play CLI goes through playtest."""

from __future__ import annotations

from pathlib import Path

import lingxi.playtest

PLAYTEST_DIR = Path(lingxi.playtest.__file__).parent
CLI_PLAY = PLAYTEST_DIR.parent / "cli" / "play.py"


def test_playtest_imports_no_higher_layer():
    for path in PLAYTEST_DIR.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for higher in ("lingxi.cli", "lingxi.session", "lingxi.registry", "lingxi.wire"):
            assert higher not in text, (path, higher)


def test_play_cli_uses_the_playtest_layer_only():
    text = CLI_PLAY.read_text(encoding="utf-8")
    assert "lingxi.playtest" in text
    assert "lingxi.actor" not in text
