"""A Click group whose subcommands are imported only when used.

``lingxi --help`` must start fast, so each command lives in its own module and
the group knows only its import path and one-line help until it is invoked.
"""

from __future__ import annotations

import importlib

import click

from lingxi.cli.plain import resume_gc  # the start-up's end, once a command is imported


class LazyGroup(click.Group):
    """Group resolving ``name -> "module:attr"`` on first use."""

    def __init__(self, *args, lazy: dict[str, tuple[str, str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from lingxi.cli.examples import with_example

        prefix = ctx.command_path.split(" ", 1)[1] + " " if " " in ctx.command_path else ""
        if name in self._lazy:
            target, _ = self._lazy[name]
            module_name, attr = target.split(":")
            command = getattr(importlib.import_module(module_name), attr)
        else:
            command = super().get_command(ctx, name)
        if command is None:
            return None
        if not isinstance(command, LazyGroup):  # a command, or a group with its commands
            resume_gc()  # imported already: start-up is over
        return with_example(command, f"{prefix}{name}")

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands with their one-line help without importing them."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self._lazy:
                rows.append((name, self._lazy[name][1]))
            else:
                cmd = super().get_command(ctx, name)
                if cmd is not None and not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(limit=formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def build_root(commands: dict[str, tuple[str, str]], help_text: str,
               epilog: str | None = None) -> click.Group:
    """The ``lingxi`` group: lazy subcommands; every error is one line with a code."""
    from lingxi import __version__
    from lingxi.cli.common import LingxiGroup

    class RootGroup(LingxiGroup, LazyGroup):
        """The ``lingxi`` group: lazy subcommands; every error is one line with a code."""

    @click.group(cls=RootGroup, lazy=commands, help=help_text, epilog=epilog,
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="lingxi")
    def cli() -> None:
        pass

    return cli
