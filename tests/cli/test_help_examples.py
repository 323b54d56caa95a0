"""Every command's --help ends with a working example (issue 21, item 5): the last thing it
prints is `Example: lingxi <that command> …`; the examples that need no server, peer or
browser are run as written, in a fresh home, and succeed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.cli.examples import EXAMPLES

BIN = str(Path(sys.executable).parent)


def _context(command: click.Command, name: str, **extra) -> click.Context:
    """A context as Click makes it for ``command`` (with its own settings): Click caches a
    command's help option from the first context that asks, so a bare one would leave the
    root group without ``-h`` for every later test in the process."""
    return click.Context(command, info_name=name, **{**command.context_settings, **extra})


def _paths() -> list[str]:
    out: list[str] = [""]

    def walk(group: click.Group, prefix: str) -> None:
        ctx = _context(group, prefix.split(" ")[-1] if prefix else "lingxi")
        for name in group.list_commands(ctx):
            path = f"{prefix} {name}".strip()
            command = group.get_command(_context(group, "lingxi"), name) \
                if not prefix else None
            out.append(path)
            if command is None:
                command = _resolve(path)
            if isinstance(command, click.Group):
                walk(command, path)

    walk(cli, "")
    return out


def _resolve(path: str) -> click.Command:
    command: click.Command = cli
    ctx = _context(cli, "lingxi")
    for name in path.split():
        assert isinstance(command, click.Group)
        found = command.get_command(ctx, name)
        assert found is not None, path
        ctx = _context(found, name, parent=ctx)
        command = found
    return command


PATHS = _paths()


def test_every_command_is_walked() -> None:
    assert {"host", "join", "session decide", "protocol test", "mcp", "skill install",
            "session ui"} <= set(PATHS)


@pytest.mark.parametrize("path", PATHS)
def test_help_ends_with_an_example_of_that_command(path) -> None:
    result = CliRunner().invoke(cli, [*path.split(), "--help"], terminal_width=400)
    assert result.exit_code == 0, result.output
    paragraphs = [p.strip() for p in result.output.strip().split("\n\n") if p.strip()]
    last = " ".join(paragraphs[-1].split())
    assert last.startswith("Example: "), (path, last)
    example = last[len("Example: "):]
    command = f"lingxi {path}".strip()
    assert command in example, (path, example)


# the examples that stand alone, run in order in one fresh home and folder
RUNNABLE = ["", "protocol", "protocol list", "protocol path", "protocol hash",
            "protocol validate", "validate", "identity init", "identity show", "identity",
            "session list", "session", "protocol create", "protocol preflight",
            "protocol skeleton", "skill", "skill install", "group test", "group verify"]


def test_the_standalone_examples_work_as_written(tmp_path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "LINGXI_HOME": str(tmp_path / ".lingxi"),
           "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    env.pop("LINGXI_DATABASE_URL", None)
    env.pop("LINGXI_REGISTRY", None)
    for path in RUNNABLE:
        done = subprocess.run(["bash", "-c", EXAMPLES[path]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (path, EXAMPLES[path], done.stdout, done.stderr)
    (tmp_path / "k.txt").write_text("0" * 64)
    for path in ("envelope sign", "envelope verify", "envelope"):
        done = subprocess.run(["bash", "-c", EXAMPLES[path]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (path, done.stderr)
