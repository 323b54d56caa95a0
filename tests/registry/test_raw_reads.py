"""The driver-level async read of PostgreSQL (``rawreads``): values go in and come back
as their text exactly, a statement is prepared per parameter types, a failure raises
psycopg's own error and leaves no broken connection behind."""

from __future__ import annotations

import asyncio
import math

import psycopg
import pytest

from lingxi.registry.storage.rawreads import RawReads, _positional
from lingxi.registry.storage.store import Store

pytestmark = pytest.mark.postgres


@pytest.fixture
def raw(database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL's async read")
    store = Store(database_url)
    try:
        yield store.uow.raw
    finally:
        store.close()


def test_parameters_are_numbered_by_first_use():
    assert _positional("SELECT %(a)s, %(b)s, %(a)s || %(c)s") == (
        b"SELECT $1, $2, $1 || $3",
        ("a", "b", "c"),
    )


async def test_values_come_back_as_their_text(raw: RawReads):
    sql = (
        "SELECT %(f)s::float8::text, %(i)s + 1, %(t)s || '!', %(n)s::text IS NULL, "
        "to_json(%(t)s)::text"
    )
    for f in (0.1, 1e16, 1796414689.8228877, -0.0, 2.5e-300, 2.0**60 + 2.0**8):
        rows = await raw.fetch_async(sql, {"f": f, "i": 2**62, "t": '灵隙 "😀"\u2028', "n": None})
        ((back, *rest),) = rows
        assert float(back) == f and math.copysign(1, float(back)) == math.copysign(1, f)
        assert rest == [
            str(2**62 + 1).encode(),
            '灵隙 "😀"\u2028!'.encode(),
            b"t",
            '"灵隙 \\"😀\\"\u2028"'.encode(),
        ]


async def test_a_value_of_another_type_gets_its_own_statement(raw: RawReads):
    sql = "SELECT %(x)s + 0.5"
    assert await raw.fetch_async(sql, {"x": 2}) == [(b"2.5",)]
    assert await raw.fetch_async(sql, {"x": 2.25}) == [(b"2.75",)]
    assert await raw.fetch_async(sql, {"x": 3}) == [(b"3.5",)]
    assert await raw.fetch_async("SELECT 1 WHERE false", {}) == []


async def test_a_failed_read_raises_psycopgs_error_and_the_next_one_works(raw: RawReads):
    with pytest.raises(psycopg.errors.UndefinedTable):
        await raw.fetch_async("SELECT * FROM no_such_table WHERE x = %(x)s", {"x": 1})
    with pytest.raises(psycopg.errors.DivisionByZero):
        await raw.fetch_async("SELECT 1 / %(x)s", {"x": 0})
    assert await raw.fetch_async("SELECT 1 / %(x)s", {"x": 1}) == [(b"1",)]
    with pytest.raises(psycopg.DataError):  # libpq would end the value there
        await raw.fetch_async("SELECT %(t)s", {"t": "a\x00b"})
    reads = [raw.fetch_async("SELECT pg_sleep(0.01), %(i)s", {"i": i}) for i in range(20)]
    assert [rows[0][1] for rows in await asyncio.gather(*reads)] == [
        str(i).encode() for i in range(20)
    ]


async def test_a_cancelled_read_is_not_reused(raw: RawReads):
    slow = asyncio.ensure_future(raw.fetch_async("SELECT pg_sleep(5)", {}))
    await asyncio.sleep(0.2)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    assert await raw.fetch_async("SELECT %(t)s", {"t": "after"}) == [(b"after",)]
