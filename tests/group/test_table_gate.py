"""Issue 23.7: a table posted through the registry seats a member only with its seat's ticket.

The gate is the host's (``lingxi.cli.table.SeatGate``): real registry tickets, signed by a
registry key, checked against the seat's invitation and the key that signed the join. The
runtime test runs a real host and real members over loopback TCP in one event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os

import pytest

from lingxi.cli.table import SeatGate, seat_offer, table_options, table_rows
from lingxi.contract import load_spec
from lingxi.errors import LingxiError
from lingxi.group import Signer, verify_records
from lingxi.group.agents import agent_for
from lingxi.group.errors import GroupError
from lingxi.groupnet.runtime import GroupHost, connect_tcp, play_seat
from lingxi.protocols import builtin_dir
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.ticket import issue_ticket

REGISTRY = ServerKey.generate()
HOST_ID = "lx-00112233445566aa"
NOW = 1_800_000_000.0


def _signer(name: str) -> Signer:
    return Signer(hashlib.sha256(name.encode()).digest())


def _ticket(seat: int, key: str, *, registry: ServerKey = REGISTRY, expires: float = NOW + 60,
            host: str = HOST_ID) -> str:
    return issue_ticket(registry, invitation_id=f"inv-seat{seat}",
                        session_id=f"ses-{seat}-{key[:6]}", host_agent_id=host,
                        guest_public_key=key, expires_at=int(expires))


class Registry:
    """The host's registry client, as far as the gate uses it: confirm a seat."""

    def __init__(self) -> None:
        self.confirmed: list[tuple[str, str]] = []

    async def confirm(self, invitation_id: str, session_id: str) -> dict:
        self.confirmed.append((invitation_id, session_id))
        return {}


def _gate(seats: int, registry: Registry | None = None, clock=lambda: NOW) -> SeatGate:
    gate = SeatGate(registry or Registry(), HOST_ID, REGISTRY.public_hex, clock=clock)
    gate.seats = {seat: f"inv-seat{seat}" for seat in range(1, seats)}
    return gate


def _code(call) -> str:
    with pytest.raises(GroupError) as caught:
        call()
    return caught.value.code


def test_the_gate_admits_the_seats_ticket_for_the_joins_signer_and_refuses_the_rest() -> None:
    alice, bob = _signer("alice").key, _signer("bob").key
    gate = _gate(4)
    assert _code(lambda: gate.check(1, alice, None)) == "group.ticket_missing"
    # bob's ticket for seat 2, presented for seat 3: the ticket of another seat
    assert _code(lambda: gate.check(3, bob, _ticket(2, bob))) == "group.ticket_wrong_seat"
    # alice's ticket, presented by a join bob signed: issued to another key
    assert _code(lambda: gate.check(1, bob, _ticket(1, alice))) == "group.ticket_refused"
    forged = _ticket(1, alice, registry=ServerKey.generate())
    assert _code(lambda: gate.check(1, alice, forged)) == "group.ticket_refused"
    another_host = _ticket(1, alice, host="lx-ffeeddccbbaa9988")
    assert _code(lambda: gate.check(1, alice, another_host)) == "group.ticket_refused"
    expired = _ticket(1, alice, expires=NOW - 1)
    assert _code(lambda: gate.check(1, alice, expired)) == "group.ticket_refused"
    assert _code(lambda: gate.check(7, alice, _ticket(7, alice))) == "group.ticket_refused"
    for junk in ("", "x" * 3000, "a.b", 42, {"ticket": 1}):
        assert _code(lambda junk=junk: gate.check(1, alice, junk)) == "group.ticket_refused"
    assert gate.spent == {}


def test_a_ticket_works_once_but_a_lost_race_may_sign_again_with_it() -> None:
    alice = _signer("alice").key
    registry = Registry()
    gate = _gate(3, registry)
    ticket = _ticket(1, alice)

    async def run() -> None:
        first = gate.check(1, alice, ticket)
        again = gate.check(1, alice, ticket)  # refused as stale by the log: not spent yet
        assert first[1] == again[1]
        gate.admitted(again)
        await gate.settle()

    asyncio.run(run())
    assert _code(lambda: gate.check(1, alice, ticket)) == "group.ticket_replayed"
    assert registry.confirmed == [("inv-seat1", f"ses-1-{alice[:6]}")]
    assert gate.confirmed == {1: f"ses-1-{alice[:6]}"}


def test_a_seat_offer_is_read_from_the_invitation_and_a_malformed_one_refused() -> None:
    good = {"options": table_options("group-abc", 2, 4)}
    offer = seat_offer(good)
    assert (offer.table, offer.seat, offer.seats) == ("group-abc", 2, 4)
    assert seat_offer({"options": {"best_of": 3}}) is None
    for bad in ({"table": "group-abc", "seat": 0, "seats": 4},
                {"table": "group-abc", "seat": 4, "seats": 4},
                {"table": "group abc", "seat": 1, "seats": 4},
                {"table": "group-abc", "seat": True, "seats": 4},
                {"table": "group-abc", "seat": 1, "seats": 40},
                {"table": "group-abc", "seat": 1, "seats": 4, "extra": 1}, "group-abc"):
        with pytest.raises(LingxiError) as caught:
            seat_offer({"options": {"lingxi.table": bad}})
        assert caught.value.code == "group.bad_table"


def test_browse_shows_a_table_as_one_row_with_its_free_seats() -> None:
    def item(iid: str, options: dict, host: str = HOST_ID) -> dict:
        return {"invitation_id": iid, "protocol_id": "ab" * 32, "protocol_name": "holdem",
                "host_agent_id": host, "endpoint": "tcp://127.0.0.1:9", "options": options}

    items = [item("inv-3", table_options("group-t", 3, 4)), item("inv-x", {"best_of": 3}),
             item("inv-1", table_options("group-t", 1, 4)),
             item("inv-bad", {"lingxi.table": "nonsense"})]
    plain, tables = table_rows(items)
    assert [i["invitation_id"] for i in plain] == ["inv-x", "inv-bad"]
    (table,) = tables
    assert table["table"] == "group-t" and table["seats"] == 4
    assert table["free"] == [{"seat": 1, "invitation_id": "inv-1"},
                             {"seat": 3, "invitation_id": "inv-3"}]


def test_a_gated_table_over_tcp_seats_only_ticketed_members_and_ends_verified() -> None:
    spec = load_spec(builtin_dir("group-vote"))
    registry = Registry()
    gate = _gate(3, registry, clock=lambda: NOW)
    seats = [_signer(f"seat{i}") for i in range(3)]
    tickets = {i: _ticket(i, seats[i].key) for i in (1, 2)}

    async def run() -> tuple:
        host = GroupHost(spec, 3, seats[0], agent_for(spec, 0, os.urandom), group_id="group-g",
                         timeout=20, gate=gate)
        server, where = await host.listen("127.0.0.1", 0)
        play = asyncio.ensure_future(host.play())

        async def member(seat: int, signer: Signer, ticket: str | None):
            return await play_seat(await connect_tcp(where), spec, seat, signer,
                                   agent_for(spec, seat, os.urandom), timeout=20,
                                   host_key=seats[0].key, ticket=ticket)

        refusals = []
        for seat, signer, ticket in ((2, seats[2], None),            # no ticket
                                     (2, seats[1], tickets[1])):     # seat 1's, for seat 2
            with pytest.raises(GroupError) as caught:
                await member(seat, signer, ticket)
            refusals.append(caught.value.code)
        first = asyncio.ensure_future(member(1, seats[1], tickets[1]))
        while 1 not in gate.confirmed:
            await asyncio.sleep(0.01)
        second = await member(2, seats[2], tickets[2])
        outcomes = [await play, await first, second]
        server.close()
        await gate.settle()
        return refusals, outcomes

    refusals, outcomes = asyncio.run(run())
    assert refusals == ["group.ticket_missing", "group.ticket_wrong_seat"]
    assert all(o.problem is None for o in outcomes)
    verdict = verify_records([o.record for o in outcomes], require_receipts=True)
    assert verdict.ok, verdict.to_dict()["problems"]
    assert {m["key"] for m in verdict.members} == {s.key for s in seats}
    assert sorted(registry.confirmed) == [("inv-seat1", f"ses-1-{seats[1].key[:6]}"),
                                          ("inv-seat2", f"ses-2-{seats[2].key[:6]}")]
