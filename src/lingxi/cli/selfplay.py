"""``lingxi protocol test`` itself, without Click: what the command does once its
arguments are parsed.

Click's command (:data:`lingxi.cli.protocol_runtime.test_cmd`) and the start-up
that parses a plain ``protocol test`` without Click (:mod:`lingxi.cli.fast`)
both call :func:`run_test`; nothing here imports Click (the person-at-a-terminal
and group paths import the modules they need, Click among them, when taken).
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lingxi.cli.plain import echo, handle_errors, print_json, read_json_source, safe_line
from lingxi.errors import EXIT_FAILED, InputError
from lingxi.home import sessions_dir

if TYPE_CHECKING:
    from lingxi.session.adversarial import AdversarialReport


def parse_json_arg(text: str | None, what: str) -> Any:
    """A JSON argument given inline, as @file, or None (typed errors for any bad input)."""
    if text is None:
        return None
    return read_json_source(text, what=what)


def parse_options(text: str | None) -> dict[str, Any]:
    value = parse_json_arg(text, "--options")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("input.bad_options", "--options must be a JSON object")
    return value


def check_local_options(spec: Any, options: dict[str, Any], strict: bool) -> None:
    """This side's own --options against the spec before anything runs: errors raise; an
    undeclared (misspelt) option is a warning on stderr, or with ``strict`` a refusal."""
    checked = spec.check_options(options)
    undeclared = [w for w in checked.warnings if w.code == "options.undeclared"]
    if strict and undeclared:
        raise InputError("options.undeclared", f"{safe_line(undeclared[0].message, 300)} "
                         f"(declared: {', '.join(sorted(spec.raw.get('parameters') or {}))})")
    for warning in checked.warnings:
        echo(f"warning: {warning.code}: {safe_line(warning.message, 300)}", err=True)


@handle_errors
def run_test(protocol: str, options_text: str | None, seed: int, adversarial: bool,
             peer_timeout: float, control_mode: str, no_input: bool, person_role: str,
             interactive: bool, inputs_file: str | None,
             state_dir: str | None, max_messages: int | None, max_bytes: int | None,
             max_state_bytes: int | None, allow_skeleton_hooks: bool, strict_options: bool,
             as_json: bool) -> None:
    """``lingxi protocol test`` with its parsed arguments (the parameters of
    :data:`lingxi.cli.protocol_runtime.test_cmd`, by name)."""
    from lingxi.session import SessionConfig, load_protocol

    options = parse_options(options_text)
    folder_spec = _folder_and_spec(protocol)
    if folder_spec is not None and _is_group(folder_spec[1]):  # A2N: every seat in memory
        from lingxi.cli.group import run_group_test

        run_group_test(folder_spec[1], seats=None, seed=seed, adversarial=adversarial,
                       as_json=as_json, options=options)
        return
    if folder_spec is None:  # not found or not a spec: load_protocol says why
        loaded = load_protocol(protocol, allow_skeleton=allow_skeleton_hooks)
    else:
        loaded = load_protocol(folder_spec[0], allow_skeleton=allow_skeleton_hooks,
                               spec=folder_spec[1])
    check_local_options(loaded.spec, options, strict_options)
    inputs = _inputs_file(inputs_file)
    if peer_timeout <= 0:
        raise InputError("input.bad_timeout", "--timeout must be positive")
    config = SessionConfig(peer_timeout=peer_timeout, control_mode=control_mode,
                           max_messages=max_messages, max_bytes=max_bytes,
                           max_state_bytes=max_state_bytes)
    if no_input and interactive:
        raise InputError("usage.conflicting_options", "--no-input and --interactive exclude "
                         "each other")
    # a folder of its own per run, so concurrent tests of one protocol never share one
    run_name = f"{loaded.folder.name}-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
    folder = Path(state_dir) if state_dir else sessions_dir() / "protocol-test" / run_name
    if control_mode != "autonomous" and not no_input and (interactive or _stdin_is_terminal()):
        data = _played_by_a_person(loaded, options=options, seed=seed, config=config,
                                   folder=folder, inputs=inputs, as_json=as_json,
                                   role=person_role)
        if adversarial:  # the cheats are played by the machines alone, as without a person
            cheats = _cheats(loaded, options, seed, config)
            data["adversarial"] = cheats.to_dict()
            data["ok"] = data["ok"] and cheats.ok
        _finish_test(data, as_json)
        return
    _finish_test(_self_play(loaded, options, seed, config, folder, inputs, adversarial), as_json)


def _folder_and_spec(protocol: str) -> tuple[Path, Any] | None:
    """The folder of ``protocol`` and its spec, read once for the group check and the
    run; None when either fails (``load_protocol`` then raises the error itself)."""
    from lingxi.contract import load_spec
    from lingxi.protocols.catalogue import ProtocolError, resolve_folder

    try:
        folder = resolve_folder(protocol)
        return folder, load_spec(folder)
    except (ProtocolError, InputError):
        return None


def _is_group(spec: Any) -> bool:
    from lingxi.contract import GROUP_MODE

    return bool(spec.flow.mode == GROUP_MODE)


def _inputs_file(inputs_file: str | None) -> dict[str, list[str | None]] | None:
    """--inputs FILE: each side's scripted lines (a JSON object of two arrays)."""
    if not inputs_file:
        return None
    data = parse_json_arg("@" + inputs_file, "--inputs")
    if not isinstance(data, dict):
        raise InputError("input.bad_inputs", "--inputs must hold a JSON object")
    return {r: [str(x) for x in data.get(r, [])] for r in ("host", "guest")}


def _cheats(loaded: Any, options: dict[str, Any], seed: int, config: Any) -> AdversarialReport:
    from lingxi.session.adversarial import run_adversarial

    return run_adversarial(loaded, options=options, seed=seed, config=dataclasses.replace(config))


def _self_play(loaded: Any, options: dict[str, Any], seed: int, config: Any, folder: Path,
               inputs: dict[str, list[str | None]] | None, adversarial: bool) -> dict[str, Any]:
    """The machines play both sides (and, with --adversarial, against every cheat)."""
    from lingxi.files import unsynced
    from lingxi.session import flow_mode, run_pair

    # Both sides are ours and the run is made again by the same seed: its folders are
    # written atomically as always but not fsynced (16 fsyncs, a sixteenth of the run's CPU)
    with unsynced():
        result = run_pair(loaded, options=options, seed=seed, state_dir=folder, config=config,
                          inputs=inputs, keep_events=False)  # events stream to the folder
    lines = flow_mode(loaded.spec.flow.mode).summary(result.iter_events("host"),
                                                     result.machines["host"].hooks)
    ok = result.host.ok and result.guest.ok and result.receipts_verified
    report = _cheats(loaded, options, seed, config) if adversarial else None
    if report is not None:
        ok = ok and report.ok
    data = {"ok": ok, "protocol": loaded.spec.name, "protocol_id": loaded.spec.protocol_id,
            "folder": str(loaded.folder), "mode": loaded.spec.flow.mode, "seed": seed,
            "options": result.machines["host"].options, "rounds": lines,
            "host": result.host.to_dict(), "guest": result.guest.to_dict(),
            "transcript_head": result.heads["host"], "receipt_hash": result.receipt_hash,
            "receipts_verified": result.receipts_verified,
            "receipt_problems": result.receipt_problems, "state_dir": str(folder)}
    if report is not None:
        data["adversarial"] = report.to_dict()
    return data


def _finish_test(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(data)
    else:
        _print_test(data)
    if not data["ok"]:
        raise SystemExit(EXIT_FAILED)


def _stdin_is_terminal() -> bool:
    import sys

    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


async def _script(lines: list[Any]) -> Any:
    for line in lines:
        if line is None:
            break
        yield str(line)
    yield None


def _played_by_a_person(loaded: Any, *, options: dict[str, Any], seed: int, config: Any,
                        folder: Path, inputs: dict[str, list[Any]] | None,
                        as_json: bool, role: str = "host") -> dict[str, Any]:
    """``protocol test --control-mode human`` at a terminal: the person decides for
    ``role`` (the host by default), in real time, over the in-memory wire pair; the other
    side's hooks decide."""
    import asyncio
    from dataclasses import replace

    from lingxi.cli.console import Participation
    from lingxi.session import flow_mode
    from lingxi.session.net import memory_session

    part = Participation(quiet=False, decider="terminal", decider_options=(), ui=False,
                         open_ui=False)
    part.prepare(config.control_mode, None)
    if inputs is None:
        inputs = loaded.default_inputs() or {}
    kwargs: dict[str, dict[str, Any]] = {"host": {}, "guest": {}}
    kwargs[role] = part.driver_kwargs()
    if flow_mode(loaded.spec.flow.mode).takes_input:
        for side in ("host", "guest"):
            kwargs[side]["inputs"] = _script(list(inputs.get(side) or []))
    autonomous = replace(config, control_mode="autonomous")
    try:
        host, guest = asyncio.run(memory_session(
            loaded, options=options, state_dir=folder, seed=seed,
            config=config if role == "host" else autonomous,
            guest_config=config if role == "guest" else autonomous,
            host_kwargs=kwargs["host"], guest_kwargs=kwargs["guest"]))
    except KeyboardInterrupt:
        part.interrupted(as_json)
    events = list(part.live.events)
    started: dict[str, Any] = next((e for e in events if e.get("event") == "session.started"), {})
    lines = flow_mode(loaded.spec.flow.mode).summary(events, loaded.hooks(role, seed))
    verified = host.receipts_verified and guest.receipts_verified
    return {"ok": host.outcome.ok and guest.outcome.ok and verified, "interactive": role,
            "protocol": loaded.spec.name, "protocol_id": loaded.spec.protocol_id,
            "folder": str(loaded.folder), "mode": loaded.spec.flow.mode, "seed": seed,
            "options": started.get("options") or options, "rounds": lines,
            "host": host.outcome.to_dict(), "guest": guest.outcome.to_dict(),
            "transcript_head": host.head, "receipt_hash": host.to_dict()["receipt_hash"],
            "receipts_verified": verified,
            "receipt_problems": host.peer_problems + guest.peer_problems,
            "state_dir": str(folder)}


def _print_test(data: dict[str, Any]) -> None:
    def line_out(line: str) -> None:  # the spec's name and texts are someone else's:
        echo(safe_line(line))  # one safe line

    line_out(f"protocol {data['protocol']} ({data['mode']}) id {data['protocol_id'][:16]}… "
         f"seed {data['seed']}")
    for line in data["rounds"]:
        line_out(f"  {line}")
    host, guest = data["host"], data["guest"]
    summary = ", ".join(f"{k}={v}" for k, v in host["summary"].items()) or "-"
    line_out(f"outcome: host {host['status']}, guest {guest['status']}; {summary}")
    for side in (host, guest):
        if side["status"] != "completed":
            line_out(f"  {side['role']}: {side['code']} ({side['by']}): {side['reason']}")
    verified = "both receipts verified" if data["receipts_verified"] else \
        f"receipts NOT verified: {data['receipt_problems']}"
    line_out(f"transcript head {data['transcript_head']}")
    line_out(f"receipt {data['receipt_hash']} ({verified})")
    line_out(f"state: {data['state_dir']}/host, {data['state_dir']}/guest")
    report = data.get("adversarial")
    if report:
        line_out(f"adversarial: {report['detected']}/{report['applicable']} cheats detected "
             f"({report['cases']} cases)")
        for case in report["results"]:
            if not case["applicable"]:
                mark, what = "-", case["detail"]
            else:
                mark = "ok" if case["ok"] else "MISSED"
                what = f"-> {case['detected'] or 'nothing'}"
                if case["case"].startswith("silent"):
                    what += f" ({case['detail']})"
            line_out(f"  [{mark}] {case['case']} (cheater: {case['cheater']}) {what}")
        if report.get("rules"):
            line_out("rules (the hooks' duty; probes of schema-valid dishonest moves, not counted "
                 "above):")
            for probe in report["rules"]:
                code = f" {probe['code']}" if probe["code"] else ""
                line_out(f"  [{probe['reaction']}{code}] {probe['probe']} (from the "
                     f"{probe['sender']}) {probe['detail']}")
    line_out("PASS" if data["ok"] else "FAIL")
