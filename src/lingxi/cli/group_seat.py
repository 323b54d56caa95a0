"""What a group seat needs on the command line: its spec, its keys, its terminal, its end.

Shared by ``lingxi group host|join`` (:mod:`lingxi.cli.group`) and the tables posted
through a registry (:mod:`lingxi.cli.table`), so neither imports the other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import print_json, safe_line
from lingxi.errors import EXIT_FAILED, InputError


def group_spec_or_none(protocol: str) -> Any:
    """The spec of ``protocol`` when it is a group spec, else None (not found: None too)."""
    from lingxi.contract import GROUP_MODE, load_spec
    from lingxi.protocols.catalogue import ProtocolError, resolve_folder

    try:
        spec = load_spec(resolve_folder(protocol))
    except (ProtocolError, InputError):
        return None
    return spec if spec.flow.mode == GROUP_MODE else None


def group_spec(protocol: str) -> Any:
    from lingxi.contract import GROUP_MODE, load_spec
    from lingxi.protocols.catalogue import resolve_folder

    spec = load_spec(resolve_folder(protocol))
    if spec.flow.mode != GROUP_MODE or spec.seats is None:
        raise InputError("group.not_group_spec", f"{spec.name} is not a group spec (it runs in "
                         f"flow mode {spec.flow.mode}); use `lingxi protocol test`")
    return spec


def seat_count(spec: Any, seats: int | None) -> int:
    count = seats if seats is not None else max(spec.seats.min, min(4, spec.seats.max))
    if not spec.seats.admits(count):
        raise InputError("group.bad_seats", f"{spec.name} seats {spec.seats.min} to "
                         f"{spec.seats.max}, not {count}")
    return count


def options_arg(text: str | None) -> dict[str, Any]:
    """``--options JSON`` (inline, ``@FILE`` or ``-``) of a group host: an object, or {}."""
    from lingxi.cli.common import read_json_source

    if text is None:
        return {}
    value = read_json_source(text, what="--options")
    if not isinstance(value, dict):
        raise InputError("input.bad_options", "--options must be a JSON object")
    return value


def check_game_options(spec: Any, options: dict[str, Any], strict: bool) -> None:
    """The options against the spec, as a two-party host checks its own: an error raises
    (``options.*``, the same exit status); an undeclared option warns, or with ``strict``
    is refused."""
    checked = spec.check_options(options)
    undeclared = [w for w in checked.warnings if w.code == "options.undeclared"]
    if strict and undeclared:
        raise InputError("options.undeclared", safe_line(undeclared[0].message, 300))
    for warning in checked.warnings:
        click.echo(f"warning: {warning.code}: {safe_line(warning.message, 300)}", err=True)


def write_record(path: str, record: dict) -> None:
    from lingxi.errors import WriteFailed

    try:
        Path(path).write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        raise WriteFailed(f"cannot write {path}: {error.strerror or error}") from None


def seat_keys(ephemeral: bool) -> tuple[Any, Any]:
    """This agent's identity as a group signer and as the wire's Identity (one key; a fresh
    one with --ephemeral): the log's signatures and the relay handshake name the same key."""
    import os

    from lingxi.group import Signer
    from lingxi.wire.identity import Identity

    if ephemeral:
        seed = os.urandom(32)
        return Signer(seed), Identity.from_seed(seed)
    identity, _ = Identity.load_or_create()

    class IdentitySigner(Signer):
        def __init__(self) -> None:  # the key stays in the Identity
            self.key = identity.public_hex

        def sign(self, data: bytes) -> str:
            return identity.sign(data).hex()
    return IdentitySigner(), identity


def tcp_endpoint(text: str) -> tuple[str, int]:
    import re

    match = re.fullmatch(r"tcp://([A-Za-z0-9.:-]+):([0-9]{1,5})", text)
    if match is None or int(match.group(2)) > 65535:
        raise InputError("group.bad_endpoint", f"an endpoint is tcp://HOST:PORT, not {text!r}")
    return match.group(1), int(match.group(2))


def finish_outcome(outcome: Any, record_path: str | None, as_json: bool) -> None:
    from lingxi.group import verify_records

    if record_path:
        write_record(record_path, outcome.record)
    verdict = verify_records([outcome.record], require_receipts=True)
    data = {"ok": verdict.ok and outcome.problem is None, "result": outcome.result,
            "problem": outcome.problem, "entries": len(outcome.record["entries"]),
            "head": verdict.head, "record_verified": verdict.ok}
    if as_json:
        print_json(data)
    else:
        click.echo(safe_line(f"group over: {data['entries']} entries, head {data['head'][:16]}…, "
                             f"record {'verified' if verdict.ok else 'FAILED'}"))
        if outcome.problem:
            click.echo(safe_line(f"problem: {outcome.problem['code']}: "
                                 f"{outcome.problem['message']}"))
        click.echo(safe_line(f"result: {json.dumps(outcome.result, ensure_ascii=False)}",
                             limit=600))
    if not data["ok"]:
        raise SystemExit(EXIT_FAILED)


def terminal_seat(agent: Any, seat: int) -> None:
    """A person plays the seat at this terminal: its own cards, the board, the pot, whose turn."""
    from lingxi.group.agents import HoldemAgent, VoteAgent

    if isinstance(agent, VoteAgent):  # a person casts this seat's vote when it commits
        def vote() -> str:
            motion = agent.tally.motion or "-"
            click.echo(safe_line(f"seat {seat} (you): the motion is {motion!r}"), err=True)
            return str(click.prompt("your vote", type=click.Choice(["yes", "no", "abstain"]),
                                    err=True))
        agent.choose = vote
        return
    if not isinstance(agent, HoldemAgent):
        raise InputError("group.no_console", "a person can play Hold'em and group-vote seats "
                         "only")
    player = agent.player

    def ask(hand: Any, me: int, legal: list[str]) -> str:
        cards = " ".join(c or "?" for c in player.cards(hand, me))
        board = " ".join(hand.board()) or "-"
        stacks = ", ".join(f"seat {s}: {n}" for s, n in enumerate(hand.stacks))
        click.echo(safe_line(f"[{hand.stage}] seat {me} (you): {cards} | board {board} | pot "
                             f"{hand.pot()} | to call {hand.to_call(me)} | {stacks}"), err=True)
        return click.prompt("your move", type=click.Choice(legal), err=True)
    player.strategy = ask
