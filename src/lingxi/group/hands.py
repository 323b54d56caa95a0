"""Poker hand ranking: the best five of seven cards as a comparable tuple."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

RANKS = "23456789TJQKA"
CATEGORIES = ("high card", "pair", "two pair", "three of a kind", "straight", "flush",
              "full house", "four of a kind", "straight flush")


def _five(cards: tuple[str, ...]) -> tuple[int, ...]:
    values = sorted((RANKS.index(c[0]) for c in cards), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    distinct = sorted(set(values), reverse=True)
    straight_high = None
    if len(distinct) == 5 and distinct[0] - distinct[4] == 4:
        straight_high = distinct[0]
    elif distinct == [12, 3, 2, 1, 0]:  # the wheel: A-2-3-4-5
        straight_high = 3
    counts = Counter(values)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    ordered = tuple(v for v, _ in groups)
    shape = tuple(n for _, n in groups)
    if straight_high is not None and flush:
        return (8, straight_high)
    if shape == (4, 1):
        return (7, *ordered)
    if shape == (3, 2):
        return (6, *ordered)
    if flush:
        return (5, *values)
    if straight_high is not None:
        return (4, straight_high)
    if shape == (3, 1, 1):
        return (3, *ordered)
    if shape == (2, 2, 1):
        return (2, *ordered)
    if shape == (2, 1, 1, 1):
        return (1, *ordered)
    return (0, *values)


def best_hand(cards: list[str]) -> tuple[int, ...]:
    """The rank of the best five-card hand among ``cards`` (5 to 7 labels like ``Ah``)."""
    return max(_five(combo) for combo in combinations(cards, 5))


def describe(rank: tuple[int, ...]) -> str:
    return CATEGORIES[rank[0]]
