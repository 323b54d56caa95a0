"""The command line as a whole: every command answers --help, startup stays light, demo runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from lingxi.cli import COMMANDS, cli
from lingxi.cli.protocol import SUBCOMMANDS

HEAVY = ("jsonschema", "cryptography", "nacl", "playwright", "numpy", "PIL", "rich",
         "lingxi.contract", "lingxi.wire", "lingxi.session", "lingxi.playtest")


def test_top_level_help_lists_every_group_with_its_line():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name, (_, line) in COMMANDS.items():
        assert name in result.output
        assert line[:30] in result.output


@pytest.mark.parametrize("path", [[name] for name in COMMANDS]
                         + [["protocol", name] for name in SUBCOMMANDS])
def test_every_command_resolves_and_has_help(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert len(result.output.strip().splitlines()) > 3


def test_help_imports_no_heavy_module():
    code = ("import sys, json; from lingxi.cli import cli\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY
                or any(m.startswith(h + ".") for h in HEAVY)]


def test_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(cli, ["no-such-command"])
    assert result.exit_code == 2


def test_demo_runs_end_to_end(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "lingxi", "demo", "--keep", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "demo ok" in proc.stdout
    assert (tmp_path / "tcp" / "host").is_dir() and (tmp_path / "tcp" / "guest").is_dir()
    assert (tmp_path / "registry.db").is_file()  # the agents met through the registry
    assert "registry session" in proc.stdout and "finished, receipts both verified" in proc.stdout
    assert "registry log verified" in proc.stdout
    # every step of the journey is printed, the guest's join (its claim) included
    steps = [line.strip() for line in proc.stdout.splitlines()]
    browse = next(i for i, line in enumerate(steps) if line.startswith("bob browses:"))
    assert steps[browse + 1].startswith("bob joins: lingxi join inv-")
    assert "claims it at the registry" in steps[browse + 1]
    assert steps[browse + 2].startswith("bob: session started: Rock-Paper-Scissors")
    assert any(line.startswith("bob: outcome: ") for line in steps)
