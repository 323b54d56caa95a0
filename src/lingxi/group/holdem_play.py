"""A Hold'em hand with every seat in one process: for tests, `group test` and benchmarks.

Every member view runs its own :class:`HoldemHand`; each seat's payload comes
from its own :class:`HoldemPlayer` (its secret never leaves it). ``tamper``
lets an adversarial case replace one seat's payload before it is signed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lingxi.contract import Spec
from lingxi.group.errors import GroupError
from lingxi.group.holdem import HoldemHand, HoldemPlayer, Rules, Strategy, passive
from lingxi.group.memory import Entropy, InMemoryGroup

Tamper = Callable[[int, HoldemHand, dict[str, Any]], dict[str, Any] | None]
MAX_STEPS = 2000


class HoldemTable:
    """``n`` seats on one in-memory group, one hand state per member."""

    def __init__(self, spec: Spec, n: int, entropy: Entropy, *, rules: Rules | None = None,
                 strategies: list[Strategy] | None = None, group_id: str = "table-1") -> None:
        self.rules = rules or Rules()
        self.hands = [HoldemHand(self.rules) for _ in range(n)]
        self.players = [HoldemPlayer(entropy, (strategies or [passive] * n)[i])
                        for i in range(n)]
        self.group = InMemoryGroup(spec, n, entropy, group_id=group_id,
                                   observers=lambda i: [self.hands[i]])

    def step(self, tamper: Tamper | None = None) -> bool:
        """The due seat sends its next payload; False when the hand is over."""
        view = self.hands[0]
        due = view.due()
        if due is None:
            return False
        payload = self.players[due].next_payload(self.hands[due], due)
        assert payload is not None
        if tamper is not None:
            payload = tamper(due, self.hands[due], payload) or payload
        self.group.send(due, payload)
        return True

    def play(self, tamper: Tamper | None = None) -> dict[str, Any]:
        """Play to the end; a cheat ends the hand with its GroupError raised."""
        for _ in range(MAX_STEPS):
            if not self.step(tamper):
                break
        result = self.hands[0].result
        assert result is not None
        return result

    def play_catching(self, tamper: Tamper | None = None) -> tuple[dict[str, Any] | None,
                                                                   GroupError | None]:
        try:
            return self.play(tamper), None
        except GroupError as error:
            return self.hands[0].result, error
