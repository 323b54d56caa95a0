"""Short Whist for two players: a trick-taking game with a different deal.

Rules (Lingxi's text):

1. A 32-card deck (7 to A in four suits; ``T`` is the ten), ranked
   ``7 8 9 T J Q K A`` low to high.
2. Each player is dealt 8 cards and one card is turned up: its suit is trump
   for the whole game. The rest is not used. The host turns the trump card.
3. The guest leads the first trick. The other player must follow suit if
   able; otherwise any card. The higher card of the suit led wins the trick
   unless a trump was played, in which case the higher trump wins. The winner
   of a trick leads the next.
4. After 8 tricks the player with more tricks wins; 4–4 is a draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lingxi.cards.table import Deal
from lingxi.roles import peer_name

RANKS = "789TJQKA"
SUITS = "SHDC"
DEAL = Deal(host=8, guest=8, table=1)
FIRST = "guest"
TRICKS = 8


def universe() -> list[str]:
    return [r + s for s in SUITS for r in RANKS]


@dataclass(frozen=True)
class State:
    trump: str
    turn: str = FIRST
    led: str | None = None  # the card led in the current trick
    tricks: dict[str, int] = field(default_factory=lambda: {"host": 0, "guest": 0})
    result: str | None = None


def start(starter: str) -> State:
    return State(trump=starter[1])


def legal_actions(state: State, role: str, hand: list[str]) -> list[dict[str, Any]]:
    if state.result is not None or state.turn != role:
        return []
    cards = sorted(hand)
    if state.led is not None:
        follow = [c for c in cards if c[1] == state.led[1]]
        cards = follow or cards
    return [{"action": "play", "card": c} for c in cards]


def validate_play(state: State, role: str, card: str, suit: str | None = None) -> str | None:
    """Why the play is illegal, as far as the public state shows.

    Whether a player who did not follow suit held the suit is hidden; the
    cards layer's final opening shows every hand, so a revoke is checked at
    the end by :func:`revokes`.
    """
    if state.result is not None:
        return "the game is over"
    if state.turn != role:
        return "not your turn"
    if card not in universe():
        return "not a card"
    if suit is not None:
        return "no suit is named in this game"
    return None


def _beats(state: State, a: str, b: str) -> bool:
    """Does ``b`` (played second) beat ``a`` (led)?"""
    if b[1] == a[1]:
        return RANKS.index(b[0]) > RANKS.index(a[0])
    return b[1] == state.trump


def apply(state: State, role: str, action: dict[str, Any]) -> State:
    card = action["card"]
    if state.led is None:
        return replace(state, led=card, turn=peer_name(role))
    leader = peer_name(role)
    taker = role if _beats(state, state.led, card) else leader
    tricks = dict(state.tricks)
    tricks[taker] += 1
    result = None
    if sum(tricks.values()) == TRICKS:
        a, b = tricks["host"], tricks["guest"]
        result = "draw" if a == b else ("host" if a > b else "guest")
    return replace(state, led=None, turn=taker, tricks=tricks, result=result)


def winner(state: State) -> str | None:
    return state.result


def shown_revoke(plays: list[tuple[str, str, str | None]], role: str, card: str) -> int | None:
    """The earlier play by ``role`` that playing ``card`` now proves to be a revoke.

    Nothing is drawn in this game, so a card played now was in the hand since
    the deal: if ``role`` once failed to follow the suit of ``card``, it held
    that suit then. ``plays`` is the list of (role, card, led card or None) so
    far. Every revoke is shown this way before the game ends, since every card
    is played.
    """
    for index, (who, played, led) in enumerate(plays):
        if who == role and led is not None and played[1] != led[1] and led[1] == card[1]:
            return index
    return None


def revokes(plays: list[tuple[str, str, str | None]], hands: dict[str, list[str]]) -> list[int]:
    """Indices of plays that failed to follow suit while holding it.

    ``plays`` is the list of (role, card, led card or None); ``hands`` the
    initial hands from the final opening.
    """
    held = {r: set(h) for r, h in hands.items()}
    bad = []
    for i, (role, card, led) in enumerate(plays):
        if led is not None and card[1] != led[1] and any(c[1] == led[1] for c in held[role]):
            bad.append(i)
        held[role].discard(card)
    return bad
