"""random actor and the actor registry."""

from collections import Counter

import pytest

from lingxi.actor.actors import ACTOR_NAMES, ActorError, create_actor
from lingxi.actor.actors.base import legality_problem
from lingxi.actor.contracts import validate_selection

from .views import make_view


def test_names_are_the_contract():
    assert ACTOR_NAMES == ("random", "greedy-match3", "explorer", "scripted", "human", "llm")


def test_unknown_actor_and_bad_options_are_typed_errors():
    with pytest.raises(ActorError) as err:
        create_actor("chess-master", seed=1, options={})
    assert err.value.code == "actor.unknown" and err.value.exit_code == 2
    with pytest.raises(ActorError) as err:
        create_actor("random", seed=1, options={"speed": "fast"})
    assert err.value.code == "actor.bad_option"
    with pytest.raises(ActorError) as err:
        create_actor("llm", seed=1, options={"url": "http://127.0.0.1:1"})
    assert err.value.code == "actor.bad_option" and "model" in err.value.message


def test_random_plays_only_legal_valid_selections_and_covers_every_type():
    view = make_view(b"frame")
    actor = create_actor("random", seed=7, options={})
    seen = Counter()
    for _ in range(500):
        sel = actor.select(view, b"frame")
        validate_selection(sel)
        assert legality_problem(view, sel) is None
        seen[sel["type"]] += 1
    assert set(seen) == {"tap", "drag", "key", "wait", "swap_pair"}
    assert min(seen.values()) > 60        # uniform over five types: ~100 each


def test_random_is_seeded():
    view = make_view(b"frame")
    a = create_actor("random", seed=3, options={})
    b = create_actor("random", seed=3, options={})
    c = create_actor("random", seed=4, options={})
    run_a = [a.select(view, b"") for _ in range(30)]
    assert run_a == [b.select(view, b"") for _ in range(30)]
    assert run_a != [c.select(view, b"") for _ in range(30)]


def test_random_respects_a_narrow_legal_set():
    view = make_view(b"f", types=["key"], keys=["Enter"], with_candidates=False)
    actor = create_actor("random", seed=1, options={})
    assert {actor.select(view, b"")["key"] for _ in range(20)} == {"Enter"}
    # Legal types with nothing to act on (no safe keys) fall back to wait, never an illegal key.
    view = make_view(b"f", types=["key", "wait"], keys=[], with_candidates=False)
    assert {actor.select(view, b"")["type"] for _ in range(20)} == {"wait"}
