"""``lingxi session compare A B``: two sides' records of one session, side by side."""

from __future__ import annotations

import click

from lingxi.cli.common import handle_errors, json_option, print_json, safe_line
from lingxi.errors import EXIT_FAILED


@click.command("compare")
@click.argument("record_a", type=click.Path(exists=True))
@click.argument("record_b", type=click.Path(exists=True))
@json_option
@handle_errors
def compare_cmd(record_a: str, record_b: str, as_json: bool) -> None:
    """Compare two records of one session (state folders, or their transcript.jsonl).

    Reports whether they agree, where they fork, and which claim one record
    disproves (a forfeit claim falls when the other record holds a later
    message signed by the claimant), with the verdict naming the culprit's
    identity key. Exit 0 when they agree, 1 when they do not, 2 when a path
    is not a record.

    Example: lingxi session compare ~/.lingxi/sessions/<id>-host ./peer-folder
    """
    from lingxi.session.api import compare_records

    out = compare_records(record_a, record_b)
    if as_json:
        print_json(out)
    else:
        from lingxi.session.record.compare import lines

        for line in lines(out):
            click.echo(safe_line(line, 600))
    if not out["agree"]:
        raise SystemExit(EXIT_FAILED)
