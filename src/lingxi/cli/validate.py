"""``lingxi validate SPEC MESSAGE``: check one message payload against a spec."""

from __future__ import annotations

from pathlib import Path

import click

from lingxi.cli.common import (
    handle_errors,
    json_option,
    print_json,
    read_json_source,
    safe_line,
)
from lingxi.errors import LingxiError


def _read_message(text: str):
    """MESSAGE is JSON text, ``-`` for stdin, or ``@FILE``; InputError when unreadable."""
    return read_json_source(text, what="MESSAGE", code="message.bad_json")


@click.command("validate")
@click.argument("spec", metavar="SPEC|DIR|NAME")
@click.argument("message", metavar="MESSAGE")
@click.option("--direction", "-d", type=click.Choice(["host_to_guest", "guest_to_host"]),
              help="Direction the message travels (default: either).")
@click.option("--message", "-m", "message_name", metavar="NAME",
              help="Check against this message schema instead of choosing by action.")
@json_option
@handle_errors
def validate(spec: str, message: str, direction: str | None, message_name: str | None,
             as_json: bool) -> None:
    """Check one message payload against a spec (a spec.json, a protocol folder or a
    built-in protocol's name).

    MESSAGE is JSON text, '-' to read stdin, or @FILE. The schema is chosen by
    the payload's action and --direction. Every problem is reported at once,
    one line each with its field path and code. Exit 0 valid, 1 invalid, 2
    unreadable input (bad JSON, missing file, invalid spec).
    """
    from lingxi.contract import SpecError, load_spec
    from lingxi.protocols.catalogue import resolve_folder

    source: str | Path = spec
    try:  # a folder, a spec.json, or a built-in name — as `host` and `protocol test` take
        source = resolve_folder(spec)
    except LingxiError:
        pass  # not a protocol we know: reading it as a file says what is wrong
    try:
        contract = load_spec(source)
    except SpecError as error:
        error.exit_code = 2  # the spec is input here; only the message is being checked
        raise
    payload = _read_message(message)
    findings = contract.validate_message(payload, direction, message_name)
    schema = None
    if not findings:
        schema = (contract.messages[message_name] if message_name else
                  contract.message_for(payload["action"], direction))  # type: ignore[arg-type]
    if as_json:
        print_json({"ok": not findings, "message": schema.name if schema else None,
                    "direction": direction, "protocol_id": contract.protocol_id,
                    "findings": [f.to_dict() for f in findings]})
    else:
        for finding in findings:
            click.echo(safe_line(finding))
        if findings:
            click.echo(f"invalid: {len(findings)} problem(s)")
        else:
            assert schema is not None  # a valid payload matched one schema
            click.echo(safe_line(f"valid: {schema.name} ({schema.direction})"))
    raise SystemExit(1 if findings else 0)
