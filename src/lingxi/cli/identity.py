"""``lingxi identity init|show``: this agent's Ed25519 identity key."""

from __future__ import annotations

import click

from lingxi.cli.common import handle_errors, json_option, print_json, safe_line


@click.group("identity")
def identity() -> None:
    """Create or show this agent's Ed25519 identity key.

    The key lives in $LINGXI_HOME/identity (default ~/.lingxi/identity),
    readable only by you (mode 0600). Peers pin its public key.
    """


def _describe(ident, created: bool | None, as_json: bool) -> None:
    data = ident.to_dict()
    if created is not None:
        data["new"] = created
    if as_json:
        print_json(data)
        return
    if created is not None:
        click.echo("created a new identity" if created else "identity already exists")
    click.echo(f"agent_id:   {data['agent_id']}")
    click.echo(f"public_key: {data['public_key']}")
    click.echo(f"created:    {safe_line(data['created'] or 'unknown', 80)}")  # from a local file
    click.echo(f"path:       {safe_line(data['path'])}")


@identity.command("init")
@json_option
@handle_errors
def init(as_json: bool) -> None:
    """Create the identity key if there is none (an existing key is never replaced).

    Exit 0 whether it was created now or already existed; 2 when the existing
    key is unreadable or readable by others, or the key cannot be written
    (io.write_failed; nothing half-written is left). A 0-byte key, left by a
    write that never finished, counts as none and is replaced.
    """
    from lingxi.wire.identity import Identity

    ident, created = Identity.load_or_create()
    _describe(ident, created, as_json)


@identity.command("show")
@json_option
@handle_errors
def show(as_json: bool) -> None:
    """Print the agent id and public key. Exit 2 if there is no identity yet."""
    from lingxi.wire.identity import Identity

    _describe(Identity.load(), None, as_json)
