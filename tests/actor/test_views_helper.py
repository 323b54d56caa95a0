"""The test views themselves must be valid ActorView/4, or the actor tests prove nothing."""

from lingxi.actor.contracts import validate_view

from .views import make_view


def test_test_views_are_valid_actor_views():
    validate_view(make_view(b"png"))
    validate_view(make_view(b"png", rows=None, columns=None))
    validate_view(make_view(b"png", rows=5, columns=9, types=["tap", "wait"], with_candidates=False))
    assert len(make_view(b"x")["interactionCandidates"]["match3Swaps"]["candidates"]) == 112
