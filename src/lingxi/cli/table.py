"""A group table posted through the registry: ``lingxi group host --post`` and ``lingxi join``.

The registry learns nothing new: a table of N seats is N - 1 ordinary
invitations of the host, one per open seat, each naming the table in its
options under the reserved key ``lingxi.table`` (``{"table": GROUP_ID,
"seat": K, "seats": N}``). Each is a signed request and a leaf of the
transparency log like every invitation, so a member proves the seat, the
host's key and its endpoint from the log before it acts (``client.invitation``),
and a claim gives it a single-use ticket bound to its key, as for two
parties. The host's :class:`SeatGate` admits a join only with the ticket of
that seat's invitation for the join's signer; the registry issues the relay
credentials of each seat's link from that seat's claim (its session), so
``--via relay|auto`` needs no hand-minted files. Heartbeats keep the seats
present while the host waits; the open ones are withdrawn when it exits.
The contract ignores undeclared options, so the key never reaches the rules; the host's
own ``--options`` (checked as a two-party host's) ride next to it and every member plays
the proven invitation's. A seat vacated mid-game, when the game takes a newcomer then, is
offered again as a new invitation for that seat (:meth:`SeatGate.reopen`). When the log
closes, the host and each member post its close entry and every receipt to the registry
(:func:`post_group_receipt`): it settles every seat's session and counts the table.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import safe_line
from lingxi.errors import EXIT_FAILED, InputError, LingxiError

TABLE_KEY = "lingxi.table"
_GROUP_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


@dataclass(frozen=True)
class SeatOffer:
    """One open seat of a posted table, as its (proven) invitation names it."""

    table: str
    seat: int
    seats: int


def table_options(table: str, seat: int, seats: int) -> dict[str, Any]:
    return {TABLE_KEY: {"table": table, "seat": seat, "seats": seats}}


def seat_offer(invitation: Any) -> SeatOffer | None:
    """The seat an invitation offers, None for a two-party invitation; a malformed table
    key is refused (``group.bad_table``): registry text is data, checked like any."""
    options = invitation.get("options") if isinstance(invitation, dict) else None
    if not isinstance(options, dict) or TABLE_KEY not in options:
        return None
    value = options[TABLE_KEY]
    ok = isinstance(value, dict) and set(value) == {"table", "seat", "seats"} \
        and isinstance(value["table"], str) and _GROUP_ID.fullmatch(value["table"]) \
        and type(value["seat"]) is int and type(value["seats"]) is int \
        and 2 <= value["seats"] <= 16 and 1 <= value["seat"] < value["seats"]
    if not ok:
        raise LingxiError("group.bad_table", f"the invitation's {TABLE_KEY} option is not "
                          "{table, seat 1..seats-1, seats 2..16}", exit_code=EXIT_FAILED)
    return SeatOffer(value["table"], value["seat"], value["seats"])


class SeatGate:
    """The host's admission of members: the registry ticket of the seat's invitation,
    issued to the key that signed the join, once (``groupnet.runtime.Gate``)."""

    def __init__(self, client: Any, host_agent_id: str, server_key: str,
                 echo: Any = None, clock: Any = time.time) -> None:
        self.client, self.host_agent_id, self.server_key = client, host_agent_id, server_key
        self.echo = echo or (lambda line: None)
        self.clock = clock
        self.seats: dict[int, str] = {}  # seat -> its invitation id
        self.spent: dict[str, int] = {}  # ticket nonce -> its expiry
        self.confirmed: dict[int, str] = {}  # seat -> the registry session admitted
        self.tasks: set[asyncio.Task[None]] = set()
        self.offer: Any = None  # async (seat) -> None: post a seat's invitation (post_table)

    def reopen(self, seat: int) -> None:
        """A seat vacated after the start is offered again: a new invitation for the same
        seat (its claim gives the newcomer a ticket bound to its own key, checked by this
        gate like any); the departed member's ticket no longer names the seat's invitation."""
        self.confirmed.pop(seat, None)
        if self.offer is None:
            return
        task = asyncio.ensure_future(self._offer(seat))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _offer(self, seat: int) -> None:
        try:
            await self.offer(seat)
        except LingxiError as error:
            self.echo(f"warning: seat {seat} could not be offered again: {error}")

    def _verify(self, ticket: Any, seat: int, key: str) -> Any:
        from lingxi.registry.errors import TicketRefused
        from lingxi.registry.models.ticket import verify_ticket

        if seat not in self.seats:
            raise TicketRefused(f"seat {seat} is not one this table posted")
        return verify_ticket(ticket, server_public_key=self.server_key,
                             invitation_id=self.seats[seat], host_agent_id=self.host_agent_id,
                             guest_public_key=key, now=self.clock())

    def check(self, seat: int, key: str, ticket: Any) -> Any:
        from lingxi.group.errors import GroupError
        from lingxi.registry.errors import TicketRefused

        if ticket is None:
            raise GroupError("group.ticket_missing", "this table seats members through its "
                             "registry invitations only: lingxi join INVITATION")
        try:
            claims = self._verify(ticket, seat, key)
        except TicketRefused as error:
            for other in self.seats:
                if other != seat:
                    try:
                        self._verify(ticket, other, key)
                    except TicketRefused:
                        continue
                    raise GroupError("group.ticket_wrong_seat", f"the ticket is for seat "
                                     f"{other}, the join is for seat {seat}") from None
            raise GroupError("group.ticket_refused", f"ticket refused: {error.reason}") from None
        now = self.clock()
        self.spent = {n: exp for n, exp in self.spent.items() if exp > now}
        if claims.nonce in self.spent:
            raise GroupError("group.ticket_replayed", "this ticket was already used")
        return seat, claims

    def admitted(self, grant: Any) -> None:
        seat, claims = grant
        self.spent[claims.nonce] = claims.expires_at
        self.confirmed[seat] = claims.session_id
        task = asyncio.ensure_future(self._confirm(seat, claims.session_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _confirm(self, seat: int, session_id: str) -> None:
        try:
            await self.client.confirm(self.seats[seat], session_id)
        except LingxiError as error:  # the member is seated by the log; the registry lags
            self.echo(f"warning: the registry did not confirm seat {seat}: {error}")

    async def settle(self) -> None:
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)


async def post_group_receipt(client: Any, table: str, record: dict[str, Any]) -> None:
    """The table's final head (its close entry) and every receipt the record holds, posted
    to the registry: each seat's session settles and the table counts for each member.
    Best effort: the record is the evidence either way, so a refusal is one warning."""
    entries, receipts = record.get("entries") or [], record.get("receipts") or []
    if not entries or entries[-1].get("kind") != "close":
        _echo("warning: the log did not close; no group receipt posted")
        return
    seated = {s.get("member") for s in (entries[-1].get("body") or {}).get("seats") or []
              if isinstance(s, dict) and s.get("status") == "seated"}
    receipts = [r for r in receipts if isinstance(r, dict) and r.get("member") in seated]
    try:
        facts = await client.post_group_receipt(table, entries[-1], receipts)
    except LingxiError as error:
        _echo(f"warning: the registry did not log the group receipt: {error.code}: "
              f"{error.message}")
        return
    _echo(f"group receipt at the registry: head {str(facts.get('head'))[:16]}…, "
          f"{len(facts.get('seats') or [])} seats settled")


def default_record(table: str, seat: int) -> Path:
    from lingxi.home import lingxi_home

    return lingxi_home() / "groups" / f"{table}-seat{seat}.json"


def _echo(line: str) -> None:
    click.echo(safe_line(line, 600), err=True)


async def _withdraw(client: Any, gate: SeatGate) -> None:
    """Cancel every seat nobody was admitted to (best effort: expiry ends it otherwise)."""
    for seat, invitation_id in gate.seats.items():
        if seat in gate.confirmed:
            continue
        try:
            await client.cancel(invitation_id)
        except LingxiError:
            pass


async def _until_stopped(play: Any) -> Any:
    """``play``'s result, unless SIGINT or SIGTERM comes first: then the table ends (the
    caller's cleanup withdraws its open seats) with ``group.host_stopped``."""
    import contextlib
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    task, stopper = asyncio.ensure_future(play), asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise LingxiError("group.host_stopped", "the host was stopped before the table "
                          "ended; its open seats are withdrawn", exit_code=EXIT_FAILED)
    return task.result()


async def post_table(spec: Any, seats: int, *, server: str, listen: str, advertise: str | None,
                     ttl: int | None, via: str, timeout: float, accept_timeout: float,
                     agent: Any, options: dict[str, Any] | None = None) -> tuple[Any, str]:
    """Host a table of ``seats`` for whoever claims its seats at ``server``; the outcome
    and the group id."""
    from lingxi.cli.group_seat import seat_keys, tcp_endpoint
    from lingxi.cli.meet import ensure_registered
    from lingxi.cli.reach import RelayHost, concrete_endpoint
    from lingxi.cli.registry_common import make_client
    from lingxi.groupnet.relay import RelayDoor
    from lingxi.groupnet.runtime import GroupHost
    from lingxi.registry.client.presence import Heartbeat, heartbeat_interval

    if TABLE_KEY in (spec.raw.get("parameters") or {}):
        raise InputError("group.bad_table", f"{spec.name} declares a parameter named "
                         f"{TABLE_KEY}, the key a posted table uses")
    address, port = tcp_endpoint(listen)
    if via == "relay" and advertise is None and port == 0:
        raise InputError("input.relay_needs_endpoint", "with --via relay nothing listens on "
                         "TCP, but an invitation names an endpoint: give --listen with a "
                         "port, or --advertise")
    signer, identity = seat_keys(False)
    gid = f"group-{os.urandom(6).hex()}"
    client = make_client(server, identity="create")
    async with client:
        await ensure_registered(client, spec)
        gate = SeatGate(client, identity.agent_id, await client.server_key(), _echo)
        host = GroupHost(spec, seats, signer, agent, group_id=gid, timeout=timeout, gate=gate,
                         seat_timeout=accept_timeout)
        door = RelayDoor(host, identity) if via != "direct" else None
        watchers: list[Any] = []
        beats: list[Any] = []
        tcp = None
        try:
            where = advertise
            if via != "relay":
                tcp, bound = await host.listen(address, port)
                where = advertise or concrete_endpoint(bound, server)
                _echo(f"group host on {bound} (group {gid}, {seats} seats)")
            else:  # nothing listens: the invitation names the endpoint it was given
                where = advertise or concrete_endpoint(listen, server)
                _echo(f"group host on the relay (group {gid}, {seats} seats)")
            interval = await heartbeat_interval(client)

            async def offer(seat: int, again: bool = False) -> None:
                invitation = await client.post_invitation(
                    spec.protocol_id, endpoint=where,
                    options={**(options or {}), **table_options(gid, seat, seats)},
                    ttl_seconds=ttl, note=f"{spec.name} table {gid}: seat {seat} of {seats}")
                gate.seats[seat] = invitation["invitation_id"]
                beats.append(Heartbeat(client, invitation["invitation_id"], interval))
                beats[-1].start()
                if door is not None:
                    watcher = RelayHost(client, _echo)
                    watcher.attach(door)
                    watcher.watch(invitation["invitation_id"])
                    watchers.append(watcher)
                join = "lingxi join " + invitation["invitation_id"] + (
                    f" --server {server}" if server != "embedded" else "")
                what = "posted again (its member left)" if again else "posted"
                _echo(f"seat {seat}: invitation {invitation['invitation_id']} {what}; a member "
                      f"joins with: {join}")

            for seat in range(1, seats):
                await offer(seat)
            gate.offer = lambda seat: offer(seat, again=True)
            outcome = await _until_stopped(host.play())
            await gate.settle()
            await post_group_receipt(client, gid, outcome.record)
            return outcome, gid
        finally:
            for beat in beats:
                await beat.stop()
            for watcher in watchers:
                await watcher.close()
            if door is not None:
                door.close()
            if tcp is not None:
                tcp.close()
            await _withdraw(client, gate)


def table_game_options(spec: Any, options: dict[str, Any] | None, strict: bool = False
                       ) -> dict[str, Any]:
    """The host's ``--options`` for a posted table, checked against the spec as for two
    parties (the same codes; an undeclared one warns, or with ``strict`` is refused); the
    table's own key is not the host's to give (``group.bad_table``)."""
    from lingxi.cli.group_seat import check_game_options

    options = dict(options or {})
    if TABLE_KEY in options:
        raise InputError("group.bad_table", f"{TABLE_KEY} is the key a posted table sets "
                         "itself; it is not an option to give")
    check_game_options(spec, options, strict)
    return options


def game_options(invitation: dict[str, Any]) -> dict[str, Any]:
    """The game's options a table's (proven) invitation carries, without the table key."""
    return {k: v for k, v in (invitation.get("options") or {}).items() if k != TABLE_KEY}


def host_table(protocol: str, seats: int | None, *, server: str, listen: str,
               advertise: str | None, ttl: int | None, via: str, timeout: float,
               accept_timeout: float, control_mode: str, record_path: str | None,
               as_json: bool, options: dict[str, Any] | None = None,
               strict_options: bool = False) -> None:
    """``lingxi group host PROTOCOL --post`` (and ``lingxi host --seats N --post``)."""
    from lingxi.cli.group_seat import finish_outcome, group_spec, seat_count, terminal_seat
    from lingxi.group.agents import agent_for

    spec = group_spec(protocol)
    count = seat_count(spec, seats)
    options = table_game_options(spec, options, strict_options)
    agent = agent_for(spec, 0, os.urandom, options)
    if control_mode == "human":
        terminal_seat(agent, 0)
    outcome, gid = asyncio.run(post_table(
        spec, count, server=server, listen=listen, advertise=advertise, ttl=ttl, via=via,
        timeout=timeout, accept_timeout=accept_timeout, agent=agent, options=options))
    path = record_path or str(_ensure_parent(default_record(gid, 0)))
    _echo(f"record: {path} (check: lingxi session verify {path})")
    finish_outcome(outcome, path, as_json)


def host_table_command(protocol: str, seats: int | None, *, post: bool, server: str,
                       endpoint: str, advertise: str | None, ttl: int | None, via: str,
                       timeout: float | None, accept_timeout: float | None,
                       control_mode: str | None, as_json: bool,
                       options: dict[str, Any] | None = None,
                       strict_options: bool = False) -> None:
    """``lingxi host --protocol holdem --seats 4 --post``: the alias of ``lingxi group host
    holdem --seats 4 --post``; without --post it says which command hosts over TCP."""
    if not post:
        raise InputError("input.needs_post", "a group table without a registry is `lingxi "
                         "group host PROTOCOL --seats N` (members: lingxi group join); "
                         "`lingxi host --seats N` posts one: add --post")
    if control_mode not in (None, "autonomous", "human"):
        raise InputError("usage.bad_option", "a table seat is played autonomous or human")
    host_table(protocol, seats, server=server, listen=endpoint, advertise=advertise, ttl=ttl,
               via=via, timeout=timeout or 60.0, accept_timeout=accept_timeout or 600.0,
               control_mode=control_mode or "autonomous", record_path=None, as_json=as_json,
               options=options, strict_options=strict_options)


def _ensure_parent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


async def _seat_pipe(client: Any, invitation: dict[str, Any], claim: Any, identity: Any,
                     reach: Any, timeout: float) -> Any:
    """The member's pipe to the host: direct first (``--via auto|direct``), then the relay
    link whose credential the registry issues for this seat's claim."""
    from lingxi.groupnet.runtime import connect_tcp

    failure: Exception | None = None
    endpoint = invitation["endpoint"]
    if reach.via in ("auto", "direct"):
        try:
            pipe = await connect_tcp(endpoint, reach.direct_timeout if reach.via == "auto"
                                     else timeout)
            _echo(f"path: direct, {endpoint}")
            return pipe
        except (OSError, TimeoutError) as error:
            failure = error
            if reach.via == "direct":
                raise InputError("group.unreachable", f"cannot reach {endpoint}: "
                                 f"{getattr(error, 'strerror', None) or error or 'timeout'}",
                                 exit_code=EXIT_FAILED) from None
        _echo(f"direct path failed ({failure or 'timeout'}); trying the relay")
    return await _relay_pipe(client, invitation, claim, identity, timeout)


async def _relay_pipe(client: Any, invitation: dict[str, Any], claim: Any, identity: Any,
                      timeout: float) -> Any:
    from lingxi.groupnet.relay import pipe_through_link
    from lingxi.natsauth import NKey
    from lingxi.registry.client.relay import relay_credential
    from lingxi.wire.relay_link import RelayCredential, RelayLink

    user = NKey.generate("user")

    async def renew() -> RelayCredential:
        answer = await relay_credential(client, claim.session_id, user.public)
        return RelayCredential.from_answer(answer, user)

    link = await RelayLink(await renew(), renew=renew, on_event=_echo).open()
    try:
        pipe = await pipe_through_link(link, identity, timeout=timeout,
                                       host_key=invitation["host_public_key"],
                                       answer_timeout=min(timeout, 15.0))
    except BaseException:
        await link.close()
        raise

    closing = pipe.close

    async def close() -> None:
        await closing()
        await link.close()
    pipe.close = close  # type: ignore[method-assign]
    _echo(f"path: relay, {link.connected_url or link.credential.servers[0]} (sealed)")
    return pipe


async def join_seat(client: Any, invitation: dict[str, Any], offer: SeatOffer, *, reach: Any,
                    timeout: float, agent_setup: Any) -> Any:
    """Claim the seat, reach the host, play the seat to the end; the outcome."""
    from lingxi.cli.group_seat import seat_keys
    from lingxi.contract import load_spec
    from lingxi.group.agents import agent_for
    from lingxi.groupnet.runtime import play_seat
    from lingxi.protocols.catalogue import folder_for_id

    spec = load_spec(folder_for_id(invitation["protocol_id"]))
    options = game_options(invitation)  # proven: the host's signed invitation
    agent = agent_for(spec, offer.seat, os.urandom, options)
    if options:
        _echo(f"table options: {json.dumps(options, ensure_ascii=False, sort_keys=True)}")
    agent_setup(agent, offer.seat, spec)
    signer, identity = seat_keys(False)
    claim = await client.claim(invitation["invitation_id"])
    try:
        pipe = await _seat_pipe(client, invitation, claim, identity, reach, timeout)
    except LingxiError as error:
        if error.code.startswith(("transport.", "handshake.", "group.unreachable")):
            try:  # never reached the host: give the seat back at once
                await client.release(invitation["invitation_id"], claim.session_id)
            except LingxiError:
                pass
        raise

    def joined(gid: str) -> None:
        _echo(f"joined table {gid} as seat {offer.seat} of {offer.seats}")
    return await play_seat(pipe, spec, offer.seat, signer, agent, timeout=timeout,
                           host_key=invitation["host_public_key"], joined=joined,
                           ticket=claim.ticket, group_id=offer.table)


async def _free_seat(client: Any, table: str) -> str:
    """The invitation of the lowest free seat of ``table`` (``lingxi join group-…``); its
    record is then fetched with its proof like any invitation's."""
    cursor = None
    for _ in range(20):  # at most 2000 open invitations looked through
        page = await client.browse(cursor=cursor, limit=100)
        for row in table_rows(page.get("items") or [])[1]:
            if row["table"] == table and row["free"]:
                return str(row["free"][0]["invitation_id"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    raise LingxiError("group.no_free_seat", f"table {table} has no free seat at this registry "
                      "(full, over, or never posted here)", exit_code=EXIT_FAILED)


@dataclass
class SeatRun:
    """A table seat played by ``lingxi join``: its outcome and where its record goes."""

    outcome: Any
    offer: SeatOffer


async def play_if_seat(client: Any, invitation_id: str, *, reach: Any, timeout: float | None,
                       control_mode: str | None) -> SeatRun | None:
    """``lingxi join`` on a table's seat (an invitation id, or ``group-…`` for the table's
    lowest free seat): play it; None for a two-party invitation (the caller goes on with
    the same client)."""
    from lingxi.cli.group_seat import terminal_seat

    def setup(agent: Any, seat: int, spec: Any) -> None:
        if control_mode == "human":
            terminal_seat(agent, seat)
        elif control_mode not in (None, "autonomous"):
            raise InputError("usage.bad_option", "a table seat is played autonomous or human")

    if _GROUP_ID.fullmatch(invitation_id) and invitation_id.startswith("group-"):
        invitation_id = await _free_seat(client, invitation_id)
    invitation = await client.invitation(invitation_id)  # proven from the log
    offer = seat_offer(invitation)
    if offer is None:
        return None
    outcome = await join_seat(client, invitation, offer, reach=reach, timeout=timeout or 60.0,
                              agent_setup=setup)
    # a member posts the final head too: the registry logs it once (the host's, or this
    # one's when the host vanished after handing out the receipts)
    await post_group_receipt(client, offer.table, outcome.record)
    return SeatRun(outcome, offer)


def finish_seat(run: SeatRun, as_json: bool) -> None:
    """The seat's record written and checked, its verdict printed; exit 1 unless it holds."""
    from lingxi.cli.group_seat import finish_outcome

    path = str(_ensure_parent(default_record(run.offer.table, run.offer.seat)))
    _echo(f"record: {path} (check: lingxi session verify {path})")
    finish_outcome(run.outcome, path, as_json)


def table_rows(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Browse items split into two-party invitations and tables (their open seats
    together, one row per table)."""
    plain: list[dict[str, Any]] = []
    tables: dict[str, dict[str, Any]] = {}
    for item in items:
        try:
            offer = seat_offer(item)
        except LingxiError:
            offer = None
        if offer is None:
            plain.append(item)
            continue
        key = f"{item.get('host_agent_id')}/{offer.table}"
        row = tables.setdefault(key, {
            "table": offer.table, "seats": offer.seats, "protocol_id": item["protocol_id"],
            "protocol_name": item.get("protocol_name"), "host_agent_id": item["host_agent_id"],
            "host_nickname": item.get("host_nickname"), "endpoint": item["endpoint"],
            "host_tables": item.get("host_tables"), "options": game_options(item),
            "free": []})
        row["free"].append({"seat": offer.seat, "invitation_id": item["invitation_id"]})
    for row in tables.values():
        row["free"].sort(key=lambda s: s["seat"])
    return plain, list(tables.values())


def tables_text(counts: dict[str, Any] | None) -> str:
    """``3 tables (2 completed, 1 left, 0 timed out)``, or ``no table played``."""
    if not counts:
        return "no table played"
    total = sum(counts.get(k) or 0 for k in ("completed", "left", "timed_out"))
    return (f"{total} table{'' if total == 1 else 's'} ({counts.get('completed')} completed, "
            f"{counts.get('left')} left, {counts.get('timed_out')} timed out)")


def table_line(row: dict[str, Any]) -> str:
    host = row["host_agent_id"]
    who = f"{row['host_nickname']} ({host})" if row.get("host_nickname") else host
    free = ", ".join(f"seat {s['seat']} {s['invitation_id']}" for s in row["free"])
    name = row.get("protocol_name") or row["protocol_id"][:12]
    options = json.dumps(row.get("options") or {}, ensure_ascii=False, sort_keys=True)
    return (f"table {row['table']}  {name}  host {who} [{tables_text(row.get('host_tables'))}]"
            f"  {len(row['free'])} of {row['seats'] - 1} seats free: {free}  {options}  "
            f"{row['endpoint']}")


__all__ = ["SeatGate", "SeatOffer", "SeatRun", "TABLE_KEY", "finish_seat", "host_table",
           "play_if_seat",
           "seat_offer", "table_line", "table_options", "table_rows"]
