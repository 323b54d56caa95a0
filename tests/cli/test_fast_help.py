"""``lingxi --help`` is printed without loading Click, and says what Click would say."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from lingxi.cli import cli, root_help_text

PROBE = ("import sys\nfrom lingxi.cli import main\nsys.argv = ['lingxi'] + sys.argv[1:]\ntry:\n"
         "    main()\nfinally:\n"
         "    print('click loaded' if 'click' in sys.modules else 'no click', file=sys.stderr)")


def _run(*args: str, columns: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=columns, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, encoding="utf-8", env=env, check=True)


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("columns", ["80", "132", "400"])
def test_help_skips_click_and_matches_its_text(flag, columns):
    done = _run(flag, columns=columns)
    assert done.stderr.strip() == "no click"
    env = dict(os.environ, COLUMNS=columns, PYTHONIOENCODING="utf-8")
    clicked = subprocess.run([sys.executable, "-c", "from lingxi.cli import cli; "
                              f"cli([{flag!r}], prog_name='lingxi')"], capture_output=True,
                             text=True, encoding="utf-8", env=env)
    assert clicked.returncode == 0
    assert done.stdout == clicked.stdout == root_help_text()


def test_the_same_text_as_clicks_own_rendering_in_process():
    clicked = CliRunner().invoke(cli, ["--help"], prog_name="lingxi", terminal_width=80)
    assert clicked.exit_code == 0 and clicked.output == root_help_text()


def test_a_narrow_terminal_gets_clicks_wrapped_help():
    done = _run("--help", columns="60")
    assert done.stderr.strip() == "click loaded"
    assert done.stdout != root_help_text()
    assert "Commands:" in done.stdout and "  it peer-to-peer." in done.stdout


def test_anything_else_goes_through_click():
    done = subprocess.run([sys.executable, "-c", PROBE, "--version"], capture_output=True,
                          text=True, check=True)
    assert done.stdout.startswith("lingxi, version ")
    assert done.stderr.strip() == "click loaded"
