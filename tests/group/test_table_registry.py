"""Issue 23.7: a group table posted through the registry and joined with `lingxi join`.

Every seat is its own process and its own LINGXI_HOME; the registry is the embedded one on
one shared database (SQLite, and PostgreSQL when it is there), or a `lingxi server` process
tied to a nats-server for the relay. The seats are ordinary invitations in the log, so
`lingxi registry verify` checks them like any other.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import pytest

from lingxi.group import verify_records
from net.relayhelpers import (  # noqa: F401  (processes: a fixture)
    NatsServer,
    free_port,
    fresh_postgres_database,
    lingxi,
    processes,
)

SEAT = re.compile(r"seat (\d+): invitation (inv-[0-9a-f]+) posted")
ENDPOINT = re.compile(r"group host on (tcp://[0-9.]+:[0-9]+)")
HANG = 300


def _register(root: Path, names, env: dict, *server: str) -> None:
    for name in names:
        done = lingxi(root / name, "register", "--nickname", name, *server, env=env)
        assert done.returncode == 0, done.stdout + done.stderr


def _seats(host, count: int) -> dict[int, str]:
    text = host.wait_for(f"seat {count - 1}: invitation", 60)
    seats = {int(s): inv for s, inv in SEAT.findall(text)}
    assert sorted(seats) == list(range(1, count)), text
    return seats


def _record(home: Path) -> Path:
    (path,) = list((home / "groups").glob("group-*-seat*.json"))
    return path


def _check_records(root: Path, homes: list[str], env: dict) -> None:
    """Every member's record verifies alone (`session verify`) and all together (no fork)."""
    records = []
    for name in homes:
        path = _record(root / name)
        alone = lingxi(root / "auditor", "session", "verify", str(path), "--json", env=env)
        assert alone.returncode == 0, alone.stdout + alone.stderr
        records.append(json.loads(path.read_text()))
    verdict = verify_records(records, require_receipts=True)
    assert verdict.ok, verdict.to_dict()["problems"]
    assert len({m["key"] for m in verdict.members}) == len(homes)


def _embedded(tmp_path: Path, url: str | None = None) -> dict:
    return {"LINGXI_DATABASE_URL": url or f"sqlite:///{tmp_path / 'registry.db'}",
            "LINGXI_REGISTRY_KEY_FILE": str(tmp_path / "server.key")}


@pytest.mark.slow
def test_a_four_seat_holdem_table_posted_browsed_and_joined_by_three_members(
        tmp_path, processes) -> None:  # noqa: F811
    env = _embedded(tmp_path)
    _register(tmp_path, ["host", "ann", "bob", "cid", "dan"], env)
    host = processes(tmp_path / "host", "host", "--protocol", "holdem", "--seats", "4",
                     "--post", "--endpoint", "tcp://127.0.0.1:0", "--json", env=env)
    seats = _seats(host, 4)
    endpoint = ENDPOINT.search(host.text()).group(1)

    listed = lingxi(tmp_path / "ann", "browse", "--json", env=env)
    (table,) = json.loads(listed.stdout)["tables"]
    assert [s["seat"] for s in table["free"]] == [1, 2, 3] and table["seats"] == 4
    shown = lingxi(tmp_path / "ann", "browse", env=env).stdout
    assert f"table {table['table']}  holdem  host host (" in shown
    assert "3 of 3 seats free: seat 1 " + seats[1] in shown

    # a member who skips the registry: seated only with a ticket, so refused with its code
    bare = lingxi(tmp_path / "dan", "group", "join", endpoint, "--protocol", "holdem",
                  "--seat", "1", "--timeout", "20", env=env)
    assert bare.returncode == 1 and "group.ticket_missing" in bare.stderr, bare.stderr
    assert "Traceback" not in bare.stderr

    # seat 1 claimed twice at once: exactly one of the two plays it
    racers = [processes(tmp_path / who, "join", seats[1], "--json", env=env)
              for who in ("ann", "dan")]
    members = [processes(tmp_path / "bob", "join", seats[2], "--json", env=env),
               processes(tmp_path / "cid", "join", seats[3], "--json", env=env)]
    codes = [racer.wait(HANG) for racer in racers]
    assert sorted(codes) == [0, 1], [r.text()[-800:] for r in racers]
    loser = racers[codes.index(1)]
    assert "registry.invitation_taken" in loser.text()
    winner = ("ann", "dan")[codes.index(0)]
    for member in members:
        assert member.wait(HANG) == 0, member.text()[-2000:]
    assert host.wait(HANG) == 0, host.text()[-2000:]
    assert "joined table " + table["table"] + " as seat 2 of 4" in members[0].text()
    assert "path: direct" in members[0].text()
    _check_records(tmp_path, ["host", winner, "bob", "cid"], env)
    # the seats are invitations in the signed log: the client's copy checks against it
    verified = lingxi(tmp_path / "bob", "registry", "verify", env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert json.loads(lingxi(tmp_path / "ann", "browse", "--json", env=env).stdout) \
        ["tables"] == []


@pytest.mark.slow
def test_a_table_on_postgresql_and_its_open_seats_withdrawn_when_the_host_exits(
        tmp_path, processes) -> None:  # noqa: F811
    url, drop = fresh_postgres_database()
    try:
        env = _embedded(tmp_path, url)
        _register(tmp_path, ["host", "ann", "bob"], env)
        host = processes(tmp_path / "host", "group", "host", "group-vote", "--seats", "3",
                         "--post", "--via", "direct", "--json", env=env)
        seats = _seats(host, 3)
        table = re.search(r"\(group (group-[0-9a-f]+), 3 seats\)", host.text()).group(1)
        # bob takes seat 2 by its invitation, ann the table's lowest free seat by its id
        members = [processes(tmp_path / "bob", "join", seats[2], "--json", env=env),
                   processes(tmp_path / "ann", "join", table, "--json", env=env)]
        for member in members:
            assert member.wait(HANG) == 0, member.text()[-2000:]
        assert host.wait(HANG) == 0, host.text()[-2000:]
        assert f"joined table {table} as seat 1 of 3" in members[1].text()
        full = lingxi(tmp_path / "ann", "join", table, env=env)
        assert full.returncode == 1 and "group.no_free_seat" in full.stderr, full.stderr
        _check_records(tmp_path, ["host", "ann", "bob"], env)
        # a table nobody joins: its seats leave browse when the host ends
        lonely = processes(tmp_path / "host", "group", "host", "group-vote", "--seats", "3",
                           "--post", "--via", "direct", env=env)
        _seats(lonely, 3)
        listed = json.loads(lingxi(tmp_path / "ann", "browse", "--json", env=env).stdout)
        assert len(listed["tables"]) == 1
        lonely.stop()  # SIGTERM: the finally withdraws the open seats
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = json.loads(lingxi(tmp_path / "ann", "browse", "--json", env=env).stdout)
            if not listed["tables"]:
                break
            time.sleep(0.5)
        assert listed["tables"] == [], "the host's open seats were not withdrawn"
    finally:
        drop()


class RelayWorld:
    """A registry process tied to a nats-server that trusts the registry's relay keys."""

    def __init__(self, root: Path, processes) -> None:  # noqa: F811
        self.root = root
        nats_port, port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.registry = processes(root / "registry", "server", "--port", str(port),
                                  "--relay", f"nats://127.0.0.1:{nats_port}")
        self.registry.wait_for("registry on", 30)
        trust = httpx.get(f"{self.url}/v1/relay", timeout=10).json()["trust"]
        self.nats = NatsServer(root / "nats", trust, port=nats_port)


@pytest.mark.slow
def test_a_table_over_the_relay_with_registry_credentials_and_auto_falling_back(
        tmp_path, processes) -> None:  # noqa: F811
    world = RelayWorld(tmp_path, processes)
    try:
        server = ("--server", world.url)
        _register(tmp_path, ["host", "ann", "bob"], {}, *server)
        dead = free_port()  # the invitation names it, nothing listens: direct fails
        host = processes(tmp_path / "host", "group", "host", "holdem", "--seats", "3",
                         "--post", *server, "--via", "relay", "--listen",
                         f"tcp://127.0.0.1:{dead}", "--json")
        seats = _seats(host, 3)
        assert "group host on the relay" in host.text()
        relayed = processes(tmp_path / "ann", "join", seats[1], *server, "--via", "relay",
                            "--json")
        auto = processes(tmp_path / "bob", "join", seats[2], *server, "--json")  # auto
        for member in (relayed, auto):
            assert member.wait(HANG) == 0, member.text()[-2000:]
        assert host.wait(HANG) == 0, host.text()[-2000:]
        assert "path: relay" in relayed.text() and "direct path failed" not in relayed.text()
        assert "direct path failed" in auto.text() and "path: relay" in auto.text()
        assert "no credential" not in host.text()
        _check_records(tmp_path, ["host", "ann", "bob"], {})
    finally:
        world.nats.kill()


def test_group_host_post_refuses_what_does_not_go_with_it(tmp_path) -> None:
    env = _embedded(tmp_path)
    cases = [
        (("group", "host", "holdem", "--seats", "3", "--post", "--relay-credential", "x.json"),
         "usage.bad_option"),
        (("group", "host", "holdem", "--seats", "3", "--via", "auto"), "usage.bad_option"),
        (("group", "host", "holdem", "--seats", "3", "--ttl", "600"), "input.needs_post"),
        (("host", "--protocol", "holdem", "--seats", "3"), "input.needs_post"),
        (("group", "host", "holdem", "--seats", "9", "--post"), "group.bad_seats"),
        (("group", "host", "holdem", "--seats", "3", "--post", "--via", "relay", "--listen",
          "tcp://127.0.0.1:0"), "input.relay_needs_endpoint"),
    ]
    for args, code in cases:
        done = lingxi(tmp_path / "host", *args, env=env)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert code in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
