"""random: a seeded baseline that plays any legal selection uniformly."""

from __future__ import annotations

import random
from typing import Any

from .base import Actor, check_options, random_selection


class RandomActor(Actor):
    """Uniform over the legal selection types, then a uniform legal parameter."""

    name = "random"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None) -> None:
        check_options(self.name, dict(options or {}), set())
        self._rng = random.Random(seed)

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        return random_selection(view, self._rng)
