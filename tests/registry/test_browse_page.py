"""Browse's page: the database's rendering of the JSON (PostgreSQL's and SQLite's) is byte
for byte the Python one, and the statement's filter is ``invitations.status`` exactly,
boundaries included.

The rows are generated and written straight into the tables (past the API's checks),
so every text field carries what JSON must escape or keep as itself: quotes,
backslashes, every control character, U+2028/U+2029, U+FEFF, non-BMP code points;
with nulls where a column allows them, big numbers, every stored status, and times
whose fractions sit on the rounding edges of ``records.iso``."""

from __future__ import annotations

import json
import math
import random

import pytest
from sqlalchemy import create_engine, insert, text

from lingxi.canonical import canonical_json
from lingxi.registry.models.records import encode_cursor, iso
from lingxi.registry.server.http import JSONAnswer
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.browsing import ITEM, invitation_insert, iso_sql, item_sql
from lingxi.registry.storage.invitations import status
from lingxi.registry.storage.store import Store
from lingxi.wire.identity import Identity

from .conftest import rps_spec

NOW = 1_764_806_400.123456  # a fixed clock: both renderings see the same instant
PRESENCE = 90.0
NASTY = ['"', "\\", "\\u0000", "/", "</script>", "\u2028", "\u2029", "\ufeff", "\x7f",
         "é", "e\u0301", "灵隙", "😀", "\U0010ffff", "\ud7ff", "\ue000", " ", "'", "%", "%(n)s",
         "$1", "null", *(chr(c) for c in range(1, 32))]


def nasty(pick: random.Random, length: int = 12) -> str:
    return "".join(pick.choice(NASTY + ["a", "Z", "0"]) for _ in range(length))


def edge_time(pick: random.Random, base: float, spread: int = 5000) -> float:
    """A time near ``base`` whose fraction is random bits or a rounding edge of ``iso``
    (a millisecond's last microsecond, half a microsecond, just under a whole second)."""
    second = float(int(base) + pick.randint(-spread, spread))
    fraction = pick.choice([pick.random(), 0.0, 0.0005, 0.000999, 0.0009995, 0.9995,
                            0.9999994, 0.9999995, 0.9999996, 0.999999999, 1 / 128, 3 / 128,
                            0.1, 0.123456, 0.5])
    return second + fraction


def options(pick: random.Random) -> str:
    values = [None, True, False, 0, -1, 10 ** 30, -(2 ** 63), 2 ** 64, 1e16, 0.1, -0.0,
              1.5e-300, 123456789.123, nasty(pick), [nasty(pick, 3), 7, [None]],
              {nasty(pick, 4): nasty(pick, 4), "nested": {"ä": [1, 2.5]}}]
    return canonical_json({nasty(pick, 5): pick.choice(values) for _ in range(pick.randint(0, 4))})


def fill(store: Store, pick: random.Random) -> tuple[list[dict], list[dict]]:
    """Protocols, hosts (some with no agent row, rating or table counts) and 400
    invitations in every stored status; the protocol and invitation rows as written."""
    protocols = [{"protocol_id": f"{i:064x}", "name": nasty(pick) + f" Game {i}",
                  "type": None if i == 2 else nasty(pick, 4), "spec_version": "1",
                  "description": "", "search": "", "fingerprint": "0" * 64, "spec": "{}",
                  "registered_by": "lx-0", "created_at": NOW, "seq": 10 ** 15 + i}
                 for i in range(3)]
    hosts = [f"lx-{nasty(pick, 6)}{i}" for i in range(12)]
    agents = [{"agent_id": h, "nickname": f"{nasty(pick, 8)}{i}", "public_key": f"{i:064x}",
               "created_at": NOW, "seq": 10 ** 16 + i}
              for i, h in enumerate(hosts) if i % 4]  # every fourth host has no agent row
    ratings = [{"agent_id": h, "protocol_id": p["protocol_id"], "rating": pick.choice(
                   [0, -5, 1500, 2 ** 31 - 1]), "games": pick.randint(0, 2 ** 31 - 1),
                "seq": 1} for h in hosts[::2] for p in protocols[:2]]
    tables = [{"agent_id": h, "protocol_id": p["protocol_id"], "completed": pick.randint(0, 9),
               "left": 2 ** 31 - 1, "timed_out": 0, "seq": 1}
              for h in hosts[::3] for p in protocols[1:]]
    rows = [invitation(pick, i, pick.choice(hosts), pick.choice(protocols)["protocol_id"])
            for i in range(400)]
    with store.writer.begin() as conn:
        for table, values in ((t.protocols, protocols), (t.agents, agents),
                              (t.ratings, ratings), (t.table_standings, tables)):
            conn.execute(insert(table), values)
        # the post's own statement, which renders each row's item from its parameters
        conn.exec_driver_sql(invitation_insert(store.postgres), list(rows))
    return protocols, rows


def invitation(pick: random.Random, i: int, host: str, protocol: str) -> dict:
    stored = pick.choice(["open"] * 6 + ["claimed"] * 2 + ["in_session", "finished",
                                                           "cancelled"])
    expires = pick.choice([NOW + 3600 * pick.random(), NOW, NOW - 1, edge_time(pick, NOW + 60, 30)])
    seen = pick.choice([NOW - PRESENCE * pick.random(), NOW - PRESENCE,
                        NOW - PRESENCE - 1e-6, edge_time(pick, NOW - PRESENCE / 2, 30)])
    claimed = stored != "open"
    return {"invitation_id": f"inv-{i}-{nasty(pick, 5)}", "protocol_id": protocol,
            "host_agent_id": host, "host_public_key": nasty(pick, 8),
            "endpoint": nasty(pick, 10), "options": options(pick), "note": nasty(pick, 30),
            "status": stored, "created_at": edge_time(pick, NOW - 600), "expires_at": expires,
            "seq": 2 ** 53 + 7 * i, "session_id": nasty(pick, 6) if claimed else None,
            "guest_agent_id": nasty(pick, 6) if claimed else None,
            "claim_deadline": pick.choice([NOW, NOW - 1, NOW + 30]) if claimed else None,
            "host_seen_at": seen}


@pytest.fixture
def store(database_url):
    s = Store(database_url, clock=lambda: NOW, presence_timeout=PRESENCE)
    try:
        yield s
    finally:
        s.close()


def stored_items(store: Store) -> dict[str, str]:
    with store.writer.begin() as conn:
        return dict(conn.execute(text(f"SELECT invitation_id, {ITEM} FROM invitations")).all())


def rendered_items(store: Store) -> dict[str, str]:
    """Each row's fixed part as migration 0011 renders it from the stored rows."""
    with store.writer.begin() as conn:
        return dict(conn.execute(text(
            f"SELECT invitation_id, {item_sql(store.postgres)} FROM invitations")).all())


async def test_the_database_renders_every_page_as_python_does(store):
    """Rows written with the post's INSERT (its item rendered from its parameters)."""
    pick = random.Random(18_9)
    protocols, rows = fill(store, pick)
    assert stored_items(store) == rendered_items(store)  # as 0011 renders them
    browsable = sorted((r for r in rows if status(store.invitations.rules, r, NOW) == "open"),
                       key=lambda r: -r["seq"])
    assert 60 < len(browsable) < 300  # boundaries on both sides of the filter are there
    protocol = rows[0]["protocol_id"]
    seen_ids: list[str] = []
    cursor = None
    while True:  # every page of the whole list, newest first
        python = bytes(JSONAnswer(store.browse(cursor=cursor, limit=7)).body)
        encoded = await store.browse_encoded(cursor=cursor, limit=7)
        assert encoded == python
        page = json.loads(encoded)
        seen_ids += [item["invitation_id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen_ids == [r["invitation_id"] for r in browsable]
    filters = [{"protocol_id": protocol}, {"host": rows[1]["host_agent_id"]},
               {"type": protocols[0]["type"]}, {"type": "none such"}, {"name": "game 1"},
               {"name": protocols[1]["name"][:3]}, {"limit": 100},
               {"limit": 1, "cursor": encode_cursor(2 ** 53 + 7 * 200)},
               {"protocol_id": protocol, "host": rows[2]["host_agent_id"], "name": "GAME"}]
    for f in filters:
        assert await store.browse_encoded(**f) == bytes(JSONAnswer(store.browse(**f)).body), f


async def test_an_empty_page_and_the_last_page(store):
    """No rows: no items and no cursor; a page that is exactly the rest: no cursor."""
    assert await store.browse_encoded() == b'{"items":[],"next_cursor":null}'
    pick = random.Random(1)
    _, rows = fill(store, pick)
    last = min(r["seq"] for r in rows if status(store.invitations.rules, r, NOW) == "open")
    encoded = await store.browse_encoded(cursor=encode_cursor(last + 1), limit=1)
    assert encoded == bytes(JSONAnswer(store.browse(cursor=encode_cursor(last + 1),
                                                    limit=1)).body)
    assert json.loads(encoded)["next_cursor"] is None


def test_the_sql_iso_is_records_iso_at_every_edge(database_url):
    """``browsing``'s time text against ``records.iso`` over many times: random bits, and
    each fraction within a few ulps of a millisecond's end, a half microsecond, a second."""
    pick = random.Random(22)
    times = [pick.uniform(0, 4e9) for _ in range(3000)]
    for _ in range(500):
        edge = int(pick.uniform(1e9, 2e9)) + pick.choice(
            [0.0, 1.0, 0.0005, 0.0015, 0.9995, 0.9999995, 0.0000005, 0.001, 0.999, 1 / 128])
        for _ in range(pick.randint(0, 4)):
            edge = math.nextafter(edge, pick.choice([0.0, math.inf]))
        times.append(edge)
    engine = create_engine(database_url)
    postgres = engine.dialect.name == "postgresql"
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TEMPORARY TABLE times (n integer, t double precision)"))
            conn.execute(text("INSERT INTO times VALUES (:n, :t)"),
                         [{"n": n, "t": x} for n, x in enumerate(times)])
            got = conn.execute(text(f"SELECT {iso_sql('t', postgres)} FROM times ORDER BY n"))
            assert [row[0] for row in got] == [iso(x) for x in times]
    finally:
        engine.dispose()


async def test_a_posted_invitation_stores_its_item_as_the_page_renders_it(api, store):
    """The post's INSERT renders the fixed part from its parameters, the protocol's row
    and the host's nickname: the same text the page (and migration 0011) renders from
    the stored row, and pages of posted invitations are Python's bytes."""
    pick = random.Random(11)
    spec = {**rps_spec(), "name": "Rock \"Paper\" \\ Scissors 灵隙 😀 \u2028", "type": "game\t"}
    hosts = [Identity.from_seed(bytes([65 + i]) * 32) for i in range(3)]
    for i, host in enumerate(hosts):
        assert (await api.register(host, f"host.{i}-x_")).status_code == 201
    answer = await api.signed(hosts[0], "POST", "/v1/protocols", {"spec": spec})
    assert answer.status_code == 201, answer.text
    pid = answer.json()["protocol_id"]
    for i in range(30):
        body = {"protocol_id": pid, "endpoint": f"tcp://127.0.0.1:{7000 + i}",
                "options": {"best_of": pick.choice([1, 3, 5])}, "note": nasty(pick, 40),
                "ttl_seconds": pick.randint(60, 7200)}
        posted = await api.signed(hosts[i % 3], "POST", "/v1/invitations", body)
        assert posted.status_code == 201, posted.text
    items = stored_items(store)
    assert len(items) == 30 and None not in items.values()
    cursor, seen = None, 0
    while True:
        python = bytes(JSONAnswer(store.browse(cursor=cursor, limit=7)).body)
        assert await store.browse_encoded(cursor=cursor, limit=7) == python
        page = json.loads(python)
        seen += len(page["items"])
        assert all(item["note"] and item["protocol_name"] == spec["name"][:200]
                   for item in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == 30
    assert rendered_items(store) == items
