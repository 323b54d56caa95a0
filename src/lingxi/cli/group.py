"""``lingxi group test | verify``: group protocols (A2N) in memory, and their records checked.

``protocol test`` of a group spec (flow mode ``group``) runs here too. Heavy
imports happen inside each command so ``lingxi --help`` stays fast.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import handle_errors, json_option, print_json, read_json_file, safe_line
from lingxi.cli.group_seat import (
    finish_outcome,
    group_spec,
    seat_count,
    seat_keys,
    tcp_endpoint,
    terminal_seat,
    write_record,
)
from lingxi.cli.group_seat import group_spec_or_none as group_spec_or_none  # re-exported
from lingxi.errors import EXIT_FAILED, InputError

HEX_KEY = re.compile(r"[0-9a-f]{64}")


@click.group("group")
def group() -> None:
    """Group sessions (A2N): N members on one signed, ordered log."""


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

    count = seat_count(spec, seats)
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
        write_record(record_path, record)
    if as_json:
        print_json(data)
    else:
        _print_summary(data)
    if not data["ok"]:
        raise SystemExit(EXIT_FAILED)


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
    run_group_test(group_spec(protocol), seats=seats, seed=seed, adversarial=adversarial,
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
    check_group_records([read_json_file(path, what="group record", expect="object")
                         for path in records], protocol, as_json)


def is_group_record(data: Any) -> bool:
    """A JSON object shaped as a group record (its format, or a group with entries)."""
    from lingxi.group.verify import RECORD_FORMAT

    return isinstance(data, dict) and (data.get("format") == RECORD_FORMAT or (
        "group" in data and "entries" in data and "receipts" in data))


def check_group_records(loaded: list[Any], protocol: str | None, as_json: bool) -> None:
    """The group verifier's verdict on loaded records, printed; exit 1 when it fails.

    `lingxi group verify` and `lingxi session verify RECORD` both end here.
    """
    from lingxi.group import verify_records
    from lingxi.group.adversarial import game_of
    from lingxi.group.holdem import HoldemHand
    from lingxi.group.memory import spec_validator
    from lingxi.group.vote import Tally

    spec = group_spec(protocol) if protocol else _spec_from_log(loaded[0])
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


def _via_options(command: Any) -> Any:
    """--via direct|relay and --relay-credential FILE, shared by group host and join."""
    command = click.option(
        "--relay-credential", "relay_credentials", multiple=True, metavar="FILE",
        help="With --via relay: a relay credential file (`lingxi group relay-credentials` "
             "writes a table's set); the host takes one per member seat.")(command)
    return click.option(
        "--via", type=click.Choice(["direct", "relay", "auto"]), default=None,
        help="The path between the host and each member: direct TCP, or the NATS relay "
             "(one sealed link per member; the relay sees sizes and timing only); with "
             "--post also auto, both (the default then; otherwise direct).")(command)


def _post_options(command: Any) -> Any:
    """--post and what goes with it: the registry, the advertised endpoint, the TTL and
    how long the seats may stay empty."""
    import os

    for option in (
        click.option("--accept-timeout", type=click.FloatRange(min=1.0), default=None,
                     help="With --post: seconds the table may wait for its seats to fill "
                          "(default 600)."),
        click.option("--ttl", type=click.IntRange(60, 72 * 3600), default=None,
                     metavar="SECONDS", help="With --post: how long the seats stay open "
                     "(default 2 h)."),
        click.option("--advertise", metavar="tcp://HOST:PORT", default=None,
                     help="With --post: the endpoint members are told (default: the bound "
                          "one)."),
        click.option("--server", default=lambda: os.environ.get("LINGXI_REGISTRY", "embedded"),
                     show_default="embedded (or $LINGXI_REGISTRY)", metavar="URL",
                     help="With --post: the registry (URL, or 'embedded')."),
        click.option("--post", is_flag=True,
                     help="Post the table to the registry: one invitation per open seat; "
                          "members take them with `lingxi join INVITATION`."),
    ):
        command = option(command)
    return command


def _plain_via(via: str | None) -> str:
    """--via without --post: direct (the default) or relay with credential files."""
    if via == "auto":
        raise InputError("usage.bad_option", "--via auto needs a registry: lingxi group host "
                         "--post (members: lingxi join INVITATION)")
    return via or "direct"


@group.command("host")
@click.argument("protocol")
@click.option("--seats", type=click.IntRange(min=2, max=16), required=True,
              help="How many members, this one included (within the spec's seats).")
@click.option("--listen", "listen", default="tcp://127.0.0.1:0", show_default=True,
              help="Where members connect (port 0: any free port, printed on stderr).")
@click.option("--group-id", default=None, help="The group id (default: a fresh one).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds a member that owes the next step may stay silent (then it "
                   "forfeits).")
@click.option("--control-mode", type=click.Choice(["autonomous", "human"]), default="autonomous",
              show_default=True, help="human: you choose seat 0's Hold'em moves at the "
              "terminal.")
@click.option("--record", "record_path", metavar="FILE", help="Write this seat's record.")
@click.option("--ephemeral", is_flag=True, help="Use a fresh key instead of this agent's "
              "identity.")
@click.option("--options", "options_text", metavar="JSON", default=None,
              help="With --post: the game's options (or @file), checked against the spec "
                   "and carried in every seat's invitation, so every member plays them.")
@click.option("--strict", "strict_options", is_flag=True,
              help="With --options: refuse an option the spec does not declare.")
@_via_options
@_post_options
@json_option
@handle_errors
def host_cmd(protocol: str, seats: int, listen: str, group_id: str | None, timeout: float,
             control_mode: str, record_path: str | None, ephemeral: bool, via: str | None,
             relay_credentials: tuple[str, ...], post: bool, server: str,
             advertise: str | None, ttl: int | None, accept_timeout: float | None,
             options_text: str | None, strict_options: bool, as_json: bool) -> None:
    """Host a group PROTOCOL over TCP or the relay: sequence its log and play seat 0.

    Prints `group host on tcp://HOST:PORT` (with --via relay: `group host on
    relay nats://…`, no TCP port opened) on stderr once members can join
    (`lingxi group join`); ends when the game is over and every member
    signed the final head. Exit 0 with a verified record, 1 otherwise.

    With --post the table goes to the registry: one invitation per open
    seat, each printed with the `lingxi join INVITATION` a member runs; only
    members with that seat's ticket are seated, and the registry issues each
    link's relay credentials (--via relay|auto).
    """
    import asyncio
    import os

    from lingxi.group.agents import agent_for
    from lingxi.groupnet.runtime import GroupHost

    if post:
        if relay_credentials or group_id or ephemeral:
            raise InputError("usage.bad_option", "--relay-credential, --group-id and "
                             "--ephemeral do not go with --post (the registry issues the "
                             "credentials, the table is this agent's)")
        from lingxi.cli.group_seat import options_arg
        from lingxi.cli.table import host_table

        host_table(protocol, seats, server=server, listen=listen, advertise=advertise, ttl=ttl,
                   via=via or "auto", timeout=timeout,
                   accept_timeout=accept_timeout or 600.0, control_mode=control_mode,
                   record_path=record_path, as_json=as_json,
                   options=options_arg(options_text), strict_options=strict_options)
        return
    if advertise or ttl or accept_timeout or options_text is not None:
        raise InputError("input.needs_post", "--advertise, --ttl, --accept-timeout and "
                         "--options go with --post (members of a table without a registry "
                         "cannot learn its options)")
    via = _plain_via(via)
    spec = group_spec(protocol)
    count = seat_count(spec, seats)
    address, port = tcp_endpoint(listen)
    credentials = _relay_credentials(via, relay_credentials, "host", count - 1)
    gid = group_id or f"group-{os.urandom(6).hex()}"
    if group_id is not None:
        from lingxi.group.log import GROUP_ID

        if GROUP_ID.fullmatch(group_id) is None:
            raise InputError("group.bad_group_id", "a group id is [A-Za-z0-9_.:-]{1,128}")
    agent = agent_for(spec, 0, os.urandom)
    if control_mode == "human":
        terminal_seat(agent, 0)
    signer, identity = seat_keys(ephemeral)
    host = GroupHost(spec, count, signer, agent, group_id=gid, timeout=timeout)

    def ready(endpoint: str) -> None:
        where = f"relay {endpoint}" if credentials else endpoint
        click.echo(f"group host on {where} (group {gid}, {count} seats)", err=True)
    if credentials:
        from lingxi.groupnet.relay import host_over_relay

        outcome = asyncio.run(host_over_relay(host, credentials, identity, ready))
    else:
        outcome = asyncio.run(host.run(address, port, ready))
    finish_outcome(outcome, record_path, as_json)


def _relay_credentials(via: str, paths: tuple[str, ...], role: str, count: int) -> list[Any]:
    """The relay credentials --via relay needs (``count`` of ``role``), checked; [] for TCP."""
    if via != "relay":
        if paths:
            raise InputError("usage.bad_option", "--relay-credential goes with --via relay")
        return []
    if len(paths) != count:
        what = "one per member seat" if role == "host" else "one"
        raise InputError("group.bad_credential", f"--via relay needs {what}: {count} "
                         f"--relay-credential file{'s' if count != 1 else ''}, not {len(paths)}")
    from lingxi.groupnet.relay import load_credential

    return [load_credential(path, role) for path in paths]


def _decider_seat(agent: Any, seat: int, spec: Any, options: tuple[str, ...]) -> None:
    """A decider (``llm``) plays the seat's bets from a projection: own cards, board, pot."""
    from lingxi.deciders import make_decider
    from lingxi.group.agents import HoldemAgent
    from lingxi.session import DeciderContext, Decline, RequestDecision

    if not isinstance(agent, HoldemAgent):
        raise InputError("group.no_decider", "a decider plays Hold'em seats only")
    pairs = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError("decider.bad_option", f"--decider-option is KEY=VALUE, not {item!r}")
        pairs[key] = value
    decider = make_decider("llm", pairs)
    decider.bind(DeciderContext(spec, f"seat {seat}", lambda event: None))
    player = agent.player

    async def decide(hand: Any, me: int, legal: list[str]) -> str:
        view = {"seat": me, "street": hand.stage, "your_cards": player.cards(hand, me),
                "board": hand.board(), "pot": hand.pot(), "to_call": hand.to_call(me),
                "stacks": list(hand.stacks), "folded": sorted(hand.folded),
                "moves": [{"seat": s, "move": m, "paid": p} for s, m, p in hand.moves]}
        request = RequestDecision(point_id=f"bet-{len(hand.moves)}", legal=legal, view=view,
                                  timeout_seconds=30.0, message="hp_bet")
        try:
            return await decider(request)
        except Decline:
            return "check" if "check" in legal else "fold"
    agent.decide = decide


@group.command("join")
@click.argument("endpoint", required=False)
@click.option("--protocol", "protocol", required=True, metavar="DIR|NAME",
              help="The group's protocol (its protocol_id must be the one the host opened).")
@click.option("--seat", type=click.IntRange(min=1, max=15), required=True,
              help="The seat to take (seat 0 is the host's).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds to wait for the host.")
@click.option("--control-mode", type=click.Choice(["autonomous", "human"]), default="autonomous",
              show_default=True, help="human: you choose this seat's Hold'em moves at the "
              "terminal (your cards, the board, the pot and whose turn are shown).")
@click.option("--decider", type=click.Choice(["llm"]), default=None,
              help="A model plays this seat's Hold'em bets (see --decider-option).")
@click.option("--decider-option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Options of the decider, e.g. url=http://127.0.0.1:8000/v1 model=m.")
@click.option("--ui", "ui_address", metavar="HOST:PORT", default=None,
              help="Play this Hold'em seat in the browser: serve its page there (port 0: any).")
@click.option("--record", "record_path", metavar="FILE", help="Write this seat's record.")
@click.option("--ephemeral", is_flag=True, help="Use a fresh key instead of this agent's "
              "identity.")
@click.option("--host-key", metavar="HEX", default=None,
              help="Refuse the group unless the host (its sequencer) is this identity key "
                   "(64 hex); over the relay the handshake checks it too.")
@_via_options
@json_option
@handle_errors
def join_cmd(endpoint: str | None, protocol: str, seat: int, timeout: float,
             control_mode: str, decider: str | None, decider_options: tuple[str, ...],
             ui_address: str | None, record_path: str | None, ephemeral: bool,
             host_key: str | None, via: str | None, relay_credentials: tuple[str, ...],
             as_json: bool) -> None:
    """Join the group hosted at ENDPOINT (tcp://HOST:PORT), or through the relay with
    --via relay (no ENDPOINT), and play one seat to the end.

    Checks every entry of the log itself; ends with this seat's record and the
    game's result. Exit 0 with a verified record, 1 otherwise.
    """
    import asyncio
    import os

    from lingxi.group.agents import agent_for
    from lingxi.groupnet.runtime import join_group

    via = _plain_via(via)
    spec = group_spec(protocol)
    credentials = _relay_credentials(via, relay_credentials, "guest", 1)
    if credentials and endpoint is not None:
        raise InputError("usage.bad_argument", "--via relay takes no ENDPOINT (the relay "
                         "credential names where to go)")
    if not credentials:
        if endpoint is None:
            raise InputError("usage.missing_parameter", "give the host's ENDPOINT "
                             "(tcp://HOST:PORT), or --via relay --relay-credential FILE")
        tcp_endpoint(endpoint)
    if host_key is not None and HEX_KEY.fullmatch(host_key) is None:
        raise InputError("usage.bad_option", "--host-key is 64 lowercase hex characters")
    agent = agent_for(spec, seat, os.urandom)
    if control_mode == "human":
        terminal_seat(agent, seat)
    elif decider is not None:
        _decider_seat(agent, seat, spec, decider_options)
    signer, identity = seat_keys(ephemeral)

    async def play() -> Any:
        task = None
        if ui_address is not None:
            from lingxi.group.agents import HoldemAgent
            from lingxi.groupnet.page import SeatPage

            if not isinstance(agent, HoldemAgent):
                raise InputError("group.no_console", "the seat page plays Hold'em seats only")
            address, _, port = ui_address.rpartition(":")
            if not port.isdigit():
                raise InputError("group.bad_endpoint", f"--ui is HOST:PORT, not {ui_address!r}")
            url, task = await SeatPage(agent, seat).start(address or "127.0.0.1", int(port))
            click.echo(f"seat page on {url}", err=True)
        def joined(gid: str) -> None:
            click.echo(f"joined group {gid} as seat {seat}", err=True)
        try:
            if credentials:
                from lingxi.groupnet.relay import join_over_relay

                return await join_over_relay(spec, credentials[0], seat, signer, identity,
                                             agent, timeout=timeout, host_key=host_key,
                                             joined=joined)
            assert endpoint is not None
            return await join_group(spec, endpoint, seat, signer, agent, timeout=timeout,
                                    host_key=host_key, joined=joined)
        finally:
            if task is not None:
                task.cancel()
    try:
        outcome = asyncio.run(play())
    except OSError as error:
        raise InputError("group.unreachable", f"cannot reach {endpoint or 'the relay'}: "
                         f"{error.strerror or error}") from None
    finish_outcome(outcome, record_path, as_json)


@group.command("relay-credentials")
@click.option("--relay-seeds", required=True, metavar="FILE",
              help="The relay's keys: the registry's `<key file>.relay.json` (keep it 0600).")
@click.option("--relay", "servers", multiple=True, required=True, metavar="nats://HOST:PORT",
              help="The relay's servers (repeat for each node of a cluster, nearest first).")
@click.option("--seats", type=click.IntRange(min=2, max=16), required=True,
              help="The table's seats, the host's included (one link per member seat).")
@click.option("--out", "out_dir", required=True, metavar="DIR",
              help="Where the files go: host-seatK.json (the host's) and seatK.json (seat "
                   "K's), K = 1 … seats - 1; each holds a user seed (written 0600).")
@click.option("--group-id", default=None, help="Names the links' relay sessions (default: "
              "fresh).")
@click.option("--ttl", type=click.IntRange(min=30, max=3600), default=3600, show_default=True,
              help="Seconds the credentials live (they are not renewed: a table must end "
                   "before).")
@json_option
@handle_errors
def relay_credentials_cmd(relay_seeds: str, servers: tuple[str, ...], seats: int,
                          out_dir: str, group_id: str | None, ttl: int,
                          as_json: bool) -> None:
    """Write a table's relay credentials from the relay's keys: for each member seat one
    link, a credential for the host's side and one for the member's.

    The relay admits users its account key signed, for one link's two subjects
    each; whoever holds the relay's keys (the registry's operator) mints them,
    and hands each member its own file.
    """
    import os
    import time

    from lingxi.cli.relay import check_relay_urls
    from lingxi.groupnet.relay import credential_document, link_session_id
    from lingxi.natsauth import NKey
    from lingxi.registry.models.relay import RelayKeys

    urls = check_relay_urls(servers)
    seeds = read_json_file(relay_seeds, what="relay seeds", expect="object")
    try:
        keys = RelayKeys.from_seeds(seeds)
    except (KeyError, TypeError, ValueError):
        raise InputError("group.bad_credential", f"{safe_line(relay_seeds, 200)} does not "
                         "hold the relay's operator, system and account seeds") from None
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    gid = group_id or f"group-{os.urandom(6).hex()}"
    written = []
    for seat in range(1, seats):
        session = link_session_id(gid, seat)
        for role, name in (("host", f"host-seat{seat}.json"), ("guest", f"seat{seat}.json")):
            user = NKey.generate("user")
            answer = keys.credential(user_key=user.public, role=role, session_id=session,
                                     now=int(time.time()), ttl=ttl)
            doc = credential_document({**answer, "servers": list(urls)}, user)
            path = folder / name
            _write_private(path, json.dumps(doc, sort_keys=True) + "\n")
            written.append(str(path))
    if as_json:
        print_json({"ok": True, "group_id": gid, "files": written})
    else:
        for name in written:
            click.echo(safe_line(name, 400))


def _write_private(path: Path, text: str) -> None:
    """A 0600 file (it holds a user seed), replacing one that was there."""
    import os

    from lingxi.errors import WriteFailed

    try:
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise WriteFailed(f"cannot write {path}: {error.strerror or error}") from None
