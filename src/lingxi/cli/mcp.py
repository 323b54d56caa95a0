"""``lingxi mcp`` (the MCP server on stdio) and ``lingxi skill install`` (the skill file)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from lingxi.cli.common import handle_errors, json_option, print_json, safe_line
from lingxi.errors import InputError, LingxiError
from lingxi.files import write_private_text

SKILL_NAME = "lingxi"


@click.command("mcp")
@handle_errors
def mcp() -> None:
    """Serve Lingxi to an MCP-capable assistant over stdio (Model Context Protocol).

    The assistant starts this command itself; stdout carries the protocol, so
    nothing else is printed there. Tools: list_protocols, read_protocol, browse,
    host, join, guest, list_sessions, session_state, decide, abort, verify.
    Sessions run in the background as lingxi processes of their own, and their
    peers' words come back marked as data (peer_text). See docs/agents.md.
    """
    try:
        from lingxi.mcp.server import serve_stdio
    except ImportError:
        raise LingxiError("mcp.unavailable", "the MCP server needs the mcp package: pip "
                          "install 'lingxi[mcp]'", exit_code=2) from None
    asyncio.run(serve_stdio())


@click.group("skill")
def skill() -> None:
    """The Lingxi skill for assistants that read skill files."""


def skill_text() -> str:
    return (Path(__file__).resolve().parent.parent / "mcp" / "SKILL.md").read_text(
        encoding="utf-8")


@skill.command("install")
@click.option("--target", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The assistant's skills folder; the skill goes into TARGET/lingxi/SKILL.md.")
@click.option("--force", is_flag=True, help="Replace a SKILL.md that differs from this one.")
@json_option
@handle_errors
def install(target: Path, force: bool, as_json: bool) -> None:
    """Write the Lingxi skill (what Lingxi is, its commands, the safety rules) for an
    assistant that reads skills.
    """

    folder = target.expanduser() / SKILL_NAME
    path = folder / "SKILL.md"
    text = skill_text()
    if path.is_symlink():
        raise InputError("skill.refused", f"{path} is a symbolic link; not writing through it")
    if path.exists():
        try:
            same = path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same and not force:
            raise InputError("skill.exists", f"{path} exists and differs; pass --force to "
                             "replace it")
    folder.mkdir(parents=True, exist_ok=True)
    write_private_text(path, text)
    if as_json:
        print_json({"ok": True, "skill": str(path)})
    else:
        click.echo(f"wrote {safe_line(path, 600)}")
