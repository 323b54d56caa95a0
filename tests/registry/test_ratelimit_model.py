"""The token buckets behind registry.rate_limited: burst, refill, wait, bounded memory."""

from __future__ import annotations

import pytest

from lingxi.registry.models.ratelimit import TokenBuckets


def test_a_key_bursts_its_count_then_waits_for_the_refill():
    buckets = TokenBuckets(3, 60.0)
    assert [buckets.take("a", 100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a", 100.0) == pytest.approx(20.0)  # one token every 20 s
    assert buckets.take("b", 100.0) == 0.0  # another key has its own bucket
    assert buckets.take("a", 110.0) == pytest.approx(10.0)  # half a token back, none spent
    assert buckets.take("a", 120.0) == 0.0
    assert buckets.take("a", 120.0) > 0
    assert [buckets.take("a", 1000.0) for _ in range(4)][:3] == [0.0, 0.0, 0.0]  # capped


def test_a_refused_request_spends_nothing_and_a_clock_going_back_gives_nothing():
    buckets = TokenBuckets(1, 10.0)
    assert buckets.take("a", 50.0) == 0.0
    for _ in range(5):  # hammering while empty does not push the refill further away
        assert buckets.take("a", 55.0) == pytest.approx(5.0)
    assert buckets.take("a", 40.0) == pytest.approx(5.0)  # back in time: no tokens minted
    assert buckets.take("a", 60.0) == 0.0


def test_the_table_is_bounded_and_drops_full_buckets_first():
    buckets = TokenBuckets(2, 60.0, max_keys=10)
    buckets.take("busy", 0.0)
    buckets.take("busy", 0.0)
    for i in range(9):
        buckets.take(f"idle-{i}", 0.0)
    assert len(buckets) == 10
    for i in range(5):  # later: the idle ones are full again and go, the busy one stays
        buckets.take(f"new-{i}", 30.0)
    assert len(buckets) == 6
    assert buckets.take("busy", 30.0) == 0.0  # one token back after 30 s, not two
    assert buckets.take("busy", 30.0) > 0
    for i in range(100):  # more live keys than the table holds: still bounded
        buckets.take(f"flood-{i}", 30.0)
    assert len(buckets) <= 10


@pytest.mark.parametrize("count,window,keys", [(0, 60.0, 10), (5, 0.0, 10), (5, 60.0, 0)])
def test_nonsense_limits_are_refused(count, window, keys):
    with pytest.raises(ValueError):
        TokenBuckets(count, window, max_keys=keys)
