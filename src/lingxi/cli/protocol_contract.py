"""``lingxi protocol validate | hash | create``: the contract commands.

Heavy imports happen inside each command so ``lingxi --help`` stays fast.
"""

from __future__ import annotations

import click

from lingxi.cli.common import handle_errors, json_option, print_json, safe_line
from lingxi.contract.model import DEFAULT_MODE
from lingxi.errors import Finding, InputError, WriteFailed


def _echo_findings(findings, *, err: bool = False) -> None:
    for finding in findings:
        click.echo(safe_line(finding), err=err)


def _runtime_findings(mode: object, findings: list) -> list:
    """Whether the runtime runs the mode: asked of the session layer, not the contract."""
    from lingxi.session import runnable_modes

    if not isinstance(mode, str) or any(f.code == "spec.mode_not_supported" for f in findings):
        return []
    if mode in runnable_modes() or mode == "group":  # group specs run with `lingxi group`
        return []
    return [Finding("session.mode_not_supported",
                    f"flow mode {mode!r} validates, but this runtime does not run it yet "
                    f"(it runs: {', '.join(runnable_modes())}); `protocol test`, host and guest "
                    "refuse it", "$.flow.mode", "warning")]


@click.command("validate")
@click.argument("spec", metavar="SPEC_OR_DIR")
@click.option("--strict", is_flag=True, help="Treat warnings (including an unsupported "
              "flow mode) as failures.")
@json_option
@handle_errors
def validate_cmd(spec: str, strict: bool, as_json: bool) -> None:
    """Check a spec.json (or DIR/spec.json) and list every problem.

    One line per finding: severity, JSON path, text and stable code. Exit 0
    when valid (warnings allowed unless --strict), 1 when invalid, 2 when the
    file cannot be read or is not JSON.
    """
    from lingxi.contract import inspect_spec, protocol_id

    doc, origin, findings = inspect_spec(spec)
    mode = doc.get("flow", {}).get("mode", DEFAULT_MODE) if isinstance(
        doc.get("flow"), dict) else None
    findings = findings + _runtime_findings(mode, findings)
    errors = [f for f in findings if f.is_error]
    warnings = [f for f in findings if not f.is_error]
    ok = not errors and not (strict and warnings)
    pid = _safe_id(doc, protocol_id)
    if as_json:
        print_json({"ok": ok, "file": origin, "name": doc.get("name"), "protocol_id": pid,
                    "flow_mode": mode, "errors": len(errors), "warnings": len(warnings),
                    "findings": [f.to_dict() for f in findings]})
    else:
        _echo_findings(findings)
        if ok:
            click.echo(safe_line(f"ok: {origin}: {doc.get('name')!s} ({mode}) protocol_id "
                                 f"{pid}"))
        else:
            click.echo(safe_line(f"invalid: {origin}: {len(errors)} error(s), "
                                 f"{len(warnings)} warning(s)"))
    raise SystemExit(0 if ok else 1)


def _safe_id(doc, protocol_id):
    try:
        return protocol_id(doc)
    except (TypeError, ValueError, RecursionError):  # pragma: no cover - documents come from JSON
        return None


@click.command("hash")
@click.argument("spec", metavar="SPEC_OR_DIR")
@json_option
@handle_errors
def hash_cmd(spec: str, as_json: bool) -> None:
    """Print the protocol_id of a spec.json (or DIR/spec.json).

    The id is the SHA-256 of the canonical JSON of the contract subset
    (messages, flow, rules, choices, commit_reveal, parameters without
    defaults, timing). An unknown spec_version or other problems are reported
    as warnings on stderr; the id is still printed. Exit 2 when the file
    cannot be read or is not a JSON object.
    """
    from lingxi.contract import inspect_spec, protocol_id

    doc, origin, findings = inspect_spec(spec, allow_unknown_version=True)
    pid = protocol_id(doc)
    errors = [f for f in findings if f.is_error]
    notes = [f for f in findings if f.code in ("spec.unknown_version",
                                                "spec.mode_not_supported")] + errors
    if as_json:
        print_json({"ok": True, "file": origin, "protocol_id": pid, "valid": not errors,
                    "spec_version": doc.get("spec_version", "1.0"),
                    "warnings": [f.to_dict() for f in notes]})
        return
    for finding in notes:  # errors are only warnings here: hashing needs no valid contract
        click.echo(safe_line(f"warning: {finding.path}: {finding.message} [{finding.code}]"),
                   err=True)
    if errors:
        click.echo(safe_line(f"warning: {origin} does not validate ({len(errors)} error(s)); "
                             "the id is of the document as given"), err=True)
    click.echo(pid)


@click.command("create")
@click.option("--template", "-t", "template", metavar="NAME",
              help="Template to start from (see --list).")
@click.option("--output", "-o", "output", metavar="FILE", type=click.Path(),
              help="Where to write the spec (a directory means DIR/spec.json).")
@click.option("--name", "title", metavar="TEXT", help="Protocol name to put in the spec.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option("--list", "list_only", is_flag=True, help="List the templates and exit.")
@json_option
@handle_errors
def create_cmd(template: str | None, output: str | None, title: str | None, force: bool,
               list_only: bool, as_json: bool) -> None:
    """Write a new spec.json from a template.

    Templates: turn-based-game, simultaneous-choice, request-response,
    free-chat, card-game. Refuses to overwrite a file unless --force.
    """
    import json
    from pathlib import Path

    from lingxi.contract import load_spec
    from lingxi.contract.catalog import TEMPLATES, template_document

    if list_only:
        if as_json:
            print_json({"templates": [{"name": n, "description": d}
                                      for n, d in TEMPLATES.items()]})
        else:
            for name, text in TEMPLATES.items():
                click.echo(f"{name:22} {text}")
        return
    if not template:
        raise InputError("template.missing", "--template is required; choose one of: "
                         f"{', '.join(TEMPLATES)}")
    if not output:
        raise InputError("template.no_output", "--output FILE is required")
    if title is not None:
        try:
            title.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError("template.bad_name", "--name is not valid UTF-8 text") from None
    doc = template_document(template, title=title)
    spec = load_spec(doc)  # a template that does not load is a bug; fail loudly
    target = Path(output)
    if target.is_dir():
        target = target / "spec.json"
    if target.exists() and not force:
        raise InputError("template.output_exists",
                         f"{target} already exists; use --force to overwrite")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n",
                          encoding="utf-8")
    except OSError as error:
        raise WriteFailed(f"cannot write {target}: {error.strerror or error}") from None
    if as_json:
        print_json({"ok": True, "file": str(target), "template": template,
                    "protocol_id": spec.protocol_id})
    else:
        click.echo(safe_line(f"wrote {target} from template {template} "
                             f"(protocol_id {spec.protocol_id})"))
