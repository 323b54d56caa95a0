"""The pure Elo module: conserved sums, determinism, order, the agreed result, replay."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lingxi.registry.models import rating as elo

ratings = st.integers(min_value=100, max_value=3000)
results = st.sampled_from(elo.RESULTS)


@given(ratings, ratings, results)
def test_one_game_conserves_the_sum_and_moves_the_winner_up(a, b, result):
    host, guest = elo.update(elo.Standing(a, 3), elo.Standing(b, 5), result)
    assert host.rating + guest.rating == a + b
    assert (host.games, guest.games) == (4, 6)
    if result == "host":
        assert host.rating >= a
    if result == "guest":
        assert guest.rating >= b


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd"), results), max_size=30))
def test_replay_conserves_the_total_and_is_deterministic(games):
    facts, table = [], {}
    for n, (h, g, result) in enumerate(games):
        if h == g:
            continue
        before = table.get(h, elo.Standing()), table.get(g, elo.Standing())
        fact = elo.rating_record(
            session_id=f"s{n}",
            protocol_id="p",
            result=result,
            host_agent_id=h,
            guest_agent_id=g,
            before=before,
            receipts={},
        )
        table[h], table[g] = elo.update(*before, result)
        facts.append(fact)
    replayed, problems = elo.replay_ratings(facts)
    assert problems == []
    assert {a: s for (a, _), s in replayed.items()} == table
    assert sum(s.rating for s in replayed.values()) == elo.INITIAL * len(replayed)
    assert elo.replay_ratings(facts) == (replayed, [])


def test_known_values_and_order_matters():
    assert elo.update(elo.Standing(), elo.Standing(), "host") == (
        elo.Standing(1516, 1),
        elo.Standing(1484, 1),
    )
    assert elo.update(elo.Standing(), elo.Standing(), "draw")[0].rating == 1500
    one = elo.update(*elo.update(elo.Standing(), elo.Standing(), "host"), "guest")
    other = elo.update(*elo.update(elo.Standing(), elo.Standing(), "guest"), "host")
    assert one[0].rating != other[0].rating  # Elo is path-dependent: log order is the truth


def test_the_result_counts_only_when_both_receipts_agree():
    done = {"status": "completed", "result": "host"}
    assert elo.agreed_result(done, done) == ("host", None)
    assert elo.agreed_result(done, {**done, "result": "guest"})[0] is None
    assert elo.agreed_result(done, {"status": "completed"})[0] is None
    assert elo.agreed_result({**done, "status": "aborted"}, done)[0] is None


def test_replay_flags_an_edited_or_doubled_record():
    fact = elo.rating_record(
        session_id="s",
        protocol_id="p",
        result="host",
        host_agent_id="a",
        guest_agent_id="b",
        before=(elo.Standing(), elo.Standing()),
        receipts={},
    )
    edited = {**fact, "host": {**fact["host"], "after": 1600}}
    assert "Elo formula" in elo.replay_ratings([edited])[1][0]
    assert "already counted" in elo.replay_ratings([fact, fact])[1][0]
    assert "malformed" in elo.replay_ratings([{"session_id": "s"}])[1][0]
