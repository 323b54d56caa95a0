"""Crazy Eights for two players, 52 cards.

Rules (Lingxi's text):

1. A standard 52-card deck; labels are rank then suit: ``A 2 … 9 T J Q K`` and
   ``S H D C`` (``"TD"`` is the ten of diamonds).
2. Each player is dealt 7 cards; one card is turned face up to start the
   discard pile; the rest is the stock. The host turns the starter, the guest
   moves first. An 8 as starter names its own suit.
3. On your turn you play one card that matches the top card's rank or the
   suit in force, or any 8. Playing an 8 names the suit in force (S, H, D or C);
   any other card makes its own suit the suit in force.
4. If you do not play, you draw one card from the stock; after drawing you
   may play (any legal card) or pass. With the stock empty you may pass
   without drawing.
5. The first player to empty their hand wins. If both players pass in a row
   with the stock empty, the game is blocked: fewer cards in hand wins, equal
   counts are a draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lingxi.cards.table import Deal
from lingxi.roles import peer_name

RANKS = "A23456789TJQK"
SUITS = "SHDC"
DEAL = Deal(host=7, guest=7, table=1)
FIRST = "guest"


def universe() -> list[str]:
    return [r + s for s in SUITS for r in RANKS]


@dataclass(frozen=True)
class State:
    top: str
    suit: str
    turn: str = FIRST
    drew: bool = False
    passes: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {"host": 7, "guest": 7})
    stock: int = 52 - DEAL.total()
    result: str | None = None  # "host" | "guest" | "draw"


def start(starter: str) -> State:
    return State(top=starter, suit=starter[1])


def _playable(state: State, card: str) -> bool:
    return card[0] == "8" or card[1] == state.suit or card[0] == state.top[0]


def legal_actions(state: State, role: str, hand: list[str]) -> list[dict[str, Any]]:
    """Every action ``role`` may take now: plays (8s once per suit), draw, pass."""
    if state.result is not None or state.turn != role:
        return []
    out: list[dict[str, Any]] = []
    for card in sorted(hand):
        if not _playable(state, card):
            continue
        if card[0] == "8":
            out.extend({"action": "play", "card": card, "suit": s} for s in SUITS)
        else:
            out.append({"action": "play", "card": card})
    if not state.drew and state.stock > 0:
        out.append({"action": "draw"})
    if state.drew or state.stock == 0:
        out.append({"action": "pass"})
    return out


def validate_play(state: State, role: str, card: str, suit: str | None) -> str | None:
    """Why ``role`` may not play ``card`` now (None when legal)."""
    if state.result is not None:
        return "the game is over"
    if state.turn != role:
        return "not your turn"
    if card not in universe():
        return "not a card"
    if not _playable(state, card):
        return f"{card} matches neither {state.top[0]} nor suit {state.suit}"
    if card[0] == "8" and suit not in tuple(SUITS):
        return "an 8 must name a suit"
    if card[0] != "8" and suit is not None:
        return "only an 8 names a suit"
    return None


def apply(state: State, role: str, action: dict[str, Any]) -> State:
    """The next public state (the action must be legal)."""
    kind = action["action"]
    counts = dict(state.counts)
    if kind == "draw":
        counts[role] += 1
        return replace(state, drew=True, counts=counts, stock=state.stock - 1)
    if kind == "pass":
        passes = state.passes + 1
        result = None
        if passes >= 2 and state.stock == 0:
            a, b = counts["host"], counts["guest"]
            result = "draw" if a == b else ("host" if a < b else "guest")
        return replace(state, turn=peer_name(role), drew=False, passes=passes, result=result)
    card = action["card"]
    counts[role] -= 1
    suit: Any = action.get("suit") if card[0] == "8" else card[1]
    return replace(state, top=card, suit=suit, turn=peer_name(role), drew=False, passes=0,
                   counts=counts, result=role if counts[role] == 0 else None)


def winner(state: State) -> str | None:
    return state.result
