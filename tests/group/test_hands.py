"""Hand ranking and the pot rules that decide who wins the chips."""

from __future__ import annotations

import random

import pytest

from lingxi.contract import load_spec
from lingxi.contract.catalog import template_document
from lingxi.group.hands import best_hand, describe
from lingxi.group.holdem import Rules
from lingxi.group.holdem_play import HoldemTable


@pytest.mark.parametrize(("cards", "category"), [
    ("Ah Kh Qh Jh Th 2c 3d", "straight flush"), ("9c 9d 9h 9s 2c 3d 4h", "four of a kind"),
    ("9c 9d 9h 2s 2c 3d 4h", "full house"), ("2h 5h 9h Jh Kh Ac Ad", "flush"),
    ("Ah 2d 3c 4s 5h 9c Kd", "straight"), ("9c 9d 9h 2s 5c 3d Kh", "three of a kind"),
    ("Ah Ad Kc Ks 5h 5c 2d", "two pair"), ("Ah Ad 7c 8s 5h 3c 2d", "pair"),
    ("Ah Jd 7c 8s 5h 3c 2d", "high card")])
def test_every_category_is_recognised(cards, category) -> None:
    assert describe(best_hand(cards.split())) == category


def test_ranks_order_hands_and_the_wheel_is_the_lowest_straight() -> None:
    wheel = best_hand("Ah 2d 3c 4s 5h".split())
    six_high = best_hand("2d 3c 4s 5h 6h".split())
    assert six_high > wheel
    assert best_hand("Ah Ad Kc Qs Jh".split()) > best_hand("Ah Ad Kc Qs Th".split())  # kicker
    assert best_hand("Kh Kd 2c 2s 9h".split()) > best_hand("Qh Qd Jc Js Ah".split())


def test_short_stacks_go_all_in_and_side_pots_keep_the_chips_whole() -> None:
    spec = load_spec(template_document("group-poker"))
    raiser = lambda hand, seat, legal: "raise" if "raise" in legal else "call"  # noqa: E731
    for seed in range(3):
        table = HoldemTable(spec, 3, random.Random(seed).randbytes, strategies=[raiser] * 3,
                            rules=Rules(stack=10, small_blind=1, big_blind=2))
        result = table.play()
        assert sum(result["delta"]) == 0 and all(s >= 0 for s in result["stacks"])
        assert result["pot"] == 30  # every seat all in
        assert sum(result["won"]) == result["pot"]
