"""``lingxi group test | verify``: group protocols (A2N) in memory, and their records checked.

``protocol test`` of a group spec (flow mode ``group``) runs here too. Heavy
imports happen inside each command so ``lingxi --help`` stays fast.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import handle_errors, json_option, print_json, read_json_file, safe_line
from lingxi.errors import EXIT_FAILED, InputError


@click.group("group")
def group() -> None:
    """Group sessions (A2N): N members on one signed, ordered log."""


def group_spec_or_none(protocol: str) -> Any:
    """The spec of ``protocol`` when it is a group spec, else None (not found: None too)."""
    from lingxi.contract import GROUP_MODE, load_spec
    from lingxi.protocols.catalogue import ProtocolError, resolve_folder

    try:
        spec = load_spec(resolve_folder(protocol))
    except (ProtocolError, InputError):
        return None
    return spec if spec.flow.mode == GROUP_MODE else None


def _group_spec(protocol: str) -> Any:
    from lingxi.contract import GROUP_MODE, load_spec
    from lingxi.protocols.catalogue import resolve_folder

    spec = load_spec(resolve_folder(protocol))
    if spec.flow.mode != GROUP_MODE or spec.seats is None:
        raise InputError("group.not_group_spec", f"{spec.name} is not a group spec (it runs in "
                         f"flow mode {spec.flow.mode}); use `lingxi protocol test`")
    return spec


def _seats(spec: Any, seats: int | None) -> int:
    count = seats if seats is not None else max(spec.seats.min, min(4, spec.seats.max))
    if not spec.seats.admits(count):
        raise InputError("group.bad_seats", f"{spec.name} seats {spec.seats.min} to "
                         f"{spec.seats.max}, not {count}")
    return count


def _play(spec: Any, seats: int, seed: int, options: dict[str, Any]) -> tuple[dict, dict]:
    """One honest run: the summary and seat 0's record."""
    from lingxi.group.adversarial import game_of
    from lingxi.group.vote import Ballot, Tally

    rng = random.Random(seed)
    entropy = rng.randbytes
    if game_of(spec) == "holdem":
        from lingxi.group.holdem import Rules, mixed
        from lingxi.group.holdem_play import HoldemTable

        table = HoldemTable(spec, seats, entropy, rules=Rules.from_options(options),
                            strategies=[mixed(random.Random(seed * 16 + i))
                                        for i in range(seats)])
        result = table.play()
        receipts = table.group.close()
        return {"game": "holdem", "result": result}, table.group.record(0, receipts)
    from lingxi.group.memory import InMemoryGroup

    tally = Tally()
    members = InMemoryGroup(spec, seats, entropy, observers=lambda i: [tally.apply] if i == 0
                            else [])
    members.send(0, {"action": "motion", "text": "adopt the proposal"})
    for seat in range(seats):
        members.send(seat, {"action": "say", "text": f"seat {seat} has its say"})
    ballots = [Ballot.draw(rng.choice(["yes", "no", "abstain"]), entropy) for _ in range(seats)]
    for seat, ballot in enumerate(ballots):
        members.send(seat, ballot.commit_payload())
    for seat, ballot in enumerate(ballots):
        members.send(seat, ballot.reveal_payload())
    receipts = members.close()
    log = members.views[0].log
    return {"game": "vote", "result": tally.to_dict(log)}, members.record(0, receipts)


def run_group_test(spec: Any, *, seats: int | None, seed: int, adversarial: bool,
                   as_json: bool, options: dict[str, Any] | None = None,
                   record_path: str | None = None) -> None:
    """Play the group protocol in memory, verify the record as a third party, run the cheats."""
    from lingxi.group import verify_records
    from lingxi.group.adversarial import adversarial as cases_of
    from lingxi.group.memory import spec_validator

    count = _seats(spec, seats)
    values = spec.check_options(options or {}).values
    summary, record = _play(spec, count, seed, values)
    verdict = verify_records([record], spec_validator(spec))
    data: dict[str, Any] = {"protocol": spec.name, "protocol_id": spec.protocol_id,
                            "seats": count, "seed": seed, **summary,
                            "entries": len(record["entries"]), "head": verdict.head,
                            "record_verified": verdict.ok}
    cases = cases_of(spec, count, seed) if adversarial else []
    if adversarial:
        data["adversarial"] = [c.to_dict() for c in cases]
    data["ok"] = verdict.ok and all(c.caught for c in cases)
    if record_path:
        _write(record_path, record)
    if as_json:
        print_json(data)
    else:
        _print_summary(data)
    if not data["ok"]:
        raise SystemExit(EXIT_FAILED)


def _write(path: str, record: dict) -> None:
    from lingxi.errors import WriteFailed

    try:
        Path(path).write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        raise WriteFailed(f"cannot write {path}: {error.strerror or error}") from None


def _print_summary(data: dict) -> None:
    click.echo(safe_line(f"{data['protocol']}: {data['seats']} seats, {data['entries']} log "
                         f"entries, head {data['head'][:16]}…"))
    result = data["result"]
    if data["game"] == "holdem":
        click.echo(safe_line(f"board {' '.join(result['board']) or '-'}; pot {result['pot']}; "
                             f"ended by {result['kind']}"))
        for seat, delta in enumerate(result["delta"]):
            shown = " ".join(result["shown"].get(str(seat), [])) or "hidden"
            click.echo(safe_line(f"  seat {seat}: {delta:+d} chips ({shown})"))
    else:
        click.echo(safe_line(f"motion: {result['motion']}; {result['counts']} -> "
                             f"{result['result']}"))
    click.echo("record verified by a third party" if data["record_verified"]
               else "record FAILED verification")
    for case in data.get("adversarial", []):
        mark = "caught" if case["caught"] else "MISSED"
        click.echo(safe_line(f"  cheat: {case['case']}: {mark} ({case['code']})"))
    click.echo("PASS" if data["ok"] else "FAIL")


@group.command("test")
@click.argument("protocol")
@click.option("--seats", type=click.IntRange(min=2, max=16), default=None,
              help="How many members (default: 4, within the spec's seats).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for keys, shuffles and choices: same seed, same run.")
@click.option("--adversarial", is_flag=True,
              help="Also play every cheat class: hostile members and a hostile sequencer.")
@click.option("--record", "record_path", metavar="FILE",
              help="Write seat 0's group record (for `lingxi group verify`).")
@json_option
@handle_errors
def test_cmd(protocol: str, seats: int | None, seed: int, adversarial: bool,
             record_path: str | None, as_json: bool) -> None:
    """Play a group PROTOCOL (holdem, group-vote, or a folder) with every seat in memory.

    Exit 0 when the run's record verifies (and, with --adversarial, every cheat
    is caught and named), 1 otherwise, 2 for bad input.
    """
    run_group_test(_group_spec(protocol), seats=seats, seed=seed, adversarial=adversarial,
                   as_json=as_json, record_path=record_path)


@group.command("verify")
@click.argument("records", nargs=-1, required=True, metavar="RECORD...")
@click.option("--protocol-dir", "protocol", metavar="DIR|NAME",
              help="The group's protocol (default: the built-in whose id the log opens with).")
@json_option
@handle_errors
def verify_cmd(records: tuple[str, ...], protocol: str | None, as_json: bool) -> None:
    """Check group records as any member or a third party: signatures, chain, seats,
    receipts, forks between records, and the game's or vote's own rules.

    Exit 0 when everything checks, 1 with the problems (each with its code and
    the identity it blames), 2 when a record cannot be read.
    """
    from lingxi.group import verify_records
    from lingxi.group.adversarial import game_of
    from lingxi.group.holdem import HoldemHand
    from lingxi.group.memory import spec_validator
    from lingxi.group.vote import Tally

    loaded = [read_json_file(path, what="group record", expect="object") for path in records]
    spec = _group_spec(protocol) if protocol else _spec_from_log(loaded[0])
    game = game_of(spec)
    states: list[Any] = []

    def observers() -> list:
        if game == "holdem":
            hand = HoldemHand()
            states.append(hand)
            return [hand]
        tally = Tally()
        states.append(tally)
        return [tally.apply]
    verdict = verify_records(loaded, spec_validator(spec), observers=observers)
    data = verdict.to_dict()
    data["protocol"] = spec.name
    if states and game == "holdem":
        data["result"] = states[0].result
    elif states and verdict.logs:
        data["result"] = states[0].to_dict(verdict.logs[0])
    if as_json:
        print_json(data)
    else:
        click.echo(safe_line(f"group {data['group']} ({spec.name}): {data['seq']} entries, head "
                             f"{data['head'][:16]}…"))
        for member in data["members"]:
            click.echo(safe_line(f"  seat {member['seat']} {member['key'][:16]}… "
                                 f"{member['status']}, receipt "
                                 f"{'signed' if member['receipt'] else 'missing'}"))
        for problem in data["problems"]:
            who = f" (blames {problem['culprit'][:16]}…)" if problem["culprit"] else ""
            click.echo(safe_line(f"problem: {problem['code']}: {problem['message']}{who}"))
        if data.get("result") is not None:
            click.echo(safe_line(f"result: {json.dumps(data['result'], ensure_ascii=False)}",
                                 limit=600))
        click.echo("ok" if data["ok"] else "FAILED")
    if not data["ok"]:
        raise SystemExit(EXIT_FAILED)


def _spec_from_log(record: Any) -> Any:
    """The built-in spec whose protocol_id the record's open entry names."""
    from lingxi.contract import load_spec
    from lingxi.protocols.catalogue import folder_for_id

    try:
        pid = record["entries"][0]["body"]["protocol_id"]
    except (KeyError, IndexError, TypeError):
        raise InputError("group.malformed", "the record does not start with an open entry "
                         "naming its protocol_id; pass --protocol-dir") from None
    return load_spec(folder_for_id(pid))
