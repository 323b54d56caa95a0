"""`lingxi` starts up with the cyclic GC paused and runs every command with it on again
(a plain Click group's commands too: a relay or a group host runs for hours)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import atexit, gc, sys
from lingxi.cli import main
atexit.register(lambda: print("gc", gc.isenabled(), "frozen", gc.get_freeze_count() > 0))
def spy():
    from lingxi.cli import lazy
    real = lazy.resume_gc
    def resume():
        print("paused before the command", not gc.isenabled())
        real()
    lazy.resume_gc = resume
sys.argv = ["lingxi", *sys.argv[1:]]
import lingxi.cli.lazy
spy()
main()
"""


@pytest.mark.parametrize("argv", [["protocol", "path", "rock-paper-scissors"],
                                  ["protocol", "list", "--json"],
                                  ["envelope", "--help"], ["group", "--help"]])
def test_the_command_runs_with_the_collector_on(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert "paused before the command True" in lines
    assert lines[-1] == "gc True frozen True"


def test_an_in_process_caller_keeps_its_collector() -> None:
    """Only lingxi.cli.main pauses the collector: a group built for a test leaves it alone."""
    import gc

    from click.testing import CliRunner

    from lingxi.cli import cli

    assert gc.isenabled()
    result = CliRunner().invoke(cli, ["protocol", "path", "rock-paper-scissors"])
    assert result.exit_code == 0
    assert gc.isenabled()
