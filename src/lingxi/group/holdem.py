"""Fixed-limit Texas Hold'em for 2–6 seats on a group log (issue 23.4).

:class:`HoldemHand` is an observer of a :class:`~lingxi.group.log.GroupLog`:
every member (and any third party replaying a record) runs one and reaches
the same state, the same pot and the same blame. The cards are N-party
mental poker (:mod:`lingxi.cards.nparty`): keys with proofs, a proven
shuffle by every seat, a proven share from every other seat for each hole
card, from every seat for each board card; at showdown only the seats still
in the hand open their own cards.

Order of a hand (seat 0 is the button)::

    keys (seat order) · shuffles (seat order) · hole shares (seat order)
    preflop bets · flop shares · bets · turn shares · bets · river shares · bets
    showdown (seats still in, seat order)

Blame: a step that fails its proof or rule ends the hand naming its sender
(``cards.*`` / ``holdem.*``), and that seat pays its stake to the others; a
forfeit (the sequencer's timeout or a member's ``hp_forfeit``) blames only
the seat that owed the next step, else the claimant (``holdem.false_forfeit``);
a seat that leaves mid-hand hands its masking secret over (``hp_leave``),
folds, and the table finishes the hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lingxi.cards import group as g
from lingxi.cards.errors import CardsError
from lingxi.cards.nparty import NPartyDeck, NPartySeat
from lingxi.group.errors import GroupError
from lingxi.group.hands import best_hand, describe
from lingxi.group.keys import digest
from lingxi.group.log import GroupLog

HAND_DOMAIN = b"lingxi/group/holdem/hand/v1"
BETTING = ("preflop", "flop", "turn", "river")
# share stages (deal_<payload stage>) and the betting street each one leads to
SHARES = {"deal_hole": "preflop", "deal_flop": "flop", "deal_turn": "turn",
          "deal_river": "river"}
NEXT_SHARES = {"preflop": "deal_flop", "flop": "deal_turn", "turn": "deal_river"}
MOVES = ("fold", "check", "call", "raise")


@dataclass(frozen=True)
class Rules:
    """The hand's parameters (the spec's stack, small_blind, big_blind) and the bet cap."""

    stack: int = 200
    small_blind: int = 1
    big_blind: int = 2
    cap: int = 4

    @classmethod
    def from_options(cls, values: dict[str, Any]) -> Rules:
        return cls(values.get("stack", 200), values.get("small_blind", 1),
                   values.get("big_blind", 2))


def share_stage(stage: str) -> str:
    """The ``stage`` an hp_shares payload names during hand stage ``stage``."""
    return stage[5:] if stage in SHARES else stage


def _points(items: Any, what: str) -> list[bytes]:
    try:
        return [bytes.fromhex(x) for x in items]
    except (TypeError, ValueError):
        raise CardsError("cards.malformed", f"{what} are hex") from None


def _items(blob: str, size: int = 32) -> list[bytes]:
    raw = bytes.fromhex(blob)
    return [raw[i:i + size] for i in range(0, len(raw), size)]


@dataclass
class HoldemHand:
    """One hand's public state, advanced by the group log's entries."""

    rules: Rules = field(default_factory=Rules)
    seats: list[str] = field(default_factory=list)  # identity keys, hand-seat order
    sequencer: str | None = None
    deck: NPartyDeck | None = None
    stage: str = "waiting"
    stacks: list[int] = field(default_factory=list)
    contrib: list[int] = field(default_factory=list)
    street: list[int] = field(default_factory=list)
    folded: set[int] = field(default_factory=set)
    gone: set[int] = field(default_factory=set)
    shown: set[int] = field(default_factory=set)
    acted: set[int] = field(default_factory=set)
    bets: int = 0
    to_act: int | None = None
    result: dict[str, Any] | None = None
    moves: list[tuple[int, str, int]] = field(default_factory=list)

    # -- the observer -----------------------------------------------------------------

    def __call__(self, log: GroupLog, entry: dict[str, Any]) -> None:
        kind = entry["kind"]
        if kind == "start":
            self._begin(log, entry)
        elif self.stage in ("waiting", "over"):
            if kind == "message" and self.stage == "over" and entry["sender"] in self.seats:
                raise GroupError("holdem.over", "the hand is over", culprit=entry["sender"],
                                 evidence={"entry": entry})
        elif kind in ("leave", "timeout"):
            self._membership(kind, entry)
        elif kind == "message" and entry["sender"] in self.seats:
            try:
                self._message(self.seats.index(entry["sender"]), entry["body"]["payload"])
            except CardsError as error:
                culprit = self.seats[int(error.culprit)] if error.culprit else entry["sender"]
                self._cheat(error.code, error.message, culprit, entry)
            except GroupError as error:
                self._cheat(error.code, error.message, error.culprit or entry["sender"], entry)

    def _begin(self, log: GroupLog, entry: dict[str, Any]) -> None:
        self.seats = [m.key for m in log.seated()]
        self.sequencer = log.sequencer
        n = len(self.seats)
        hand = digest(HAND_DOMAIN, {"group": log.group_id, "head": log.head})
        self.deck = NPartyDeck(hand, n)
        self.stacks = [self.rules.stack] * n
        self.contrib = [0] * n
        self.street = [0] * n
        self.stage = "keys"

    @property
    def n(self) -> int:
        return len(self.seats)

    # -- who owes what ----------------------------------------------------------------

    def due(self) -> int | None:
        """The hand seat that owes the next step (None once the hand is over)."""
        deck = self.deck
        if deck is None or self.stage in ("waiting", "over"):
            return None
        if self.stage == "keys":
            return len(deck.keys)
        if self.stage == "shuffle":
            return len(deck.decks) - 1
        if self.stage in SHARES:
            return next((s for s in range(self.n) if self.share_positions(s)), None)
        if self.stage == "showdown":
            return next((s for s in self.in_hand() if s not in self.shown), None)
        return self.to_act

    def share_positions(self, seat: int) -> list[int]:
        """Positions ``seat`` still has to unmask in the current share stage."""
        deck = self.deck
        assert deck is not None
        if self.stage == "deal_hole":
            wanted = [p for o in range(self.n) if o != seat for p in deck.hole(o)]
        elif self.stage in SHARES:
            wanted = deck.board(self.stage[5:])
        elif self.stage == "showdown":
            wanted = deck.hole(seat)
        else:
            return []
        return [p for p in wanted if seat in deck.missing(p)]

    def in_hand(self) -> list[int]:
        return [s for s in range(self.n) if s not in self.folded]

    def to_call(self, seat: int) -> int:
        return max(self.street) - self.street[seat]

    def legal_moves(self, seat: int) -> list[str]:
        if self.stage not in BETTING or self.to_act != seat:
            return []
        owe = self.to_call(seat)
        moves = ["fold", "call" if owe else "check"]
        if self.bets < self.rules.cap and self.stacks[seat] > owe:
            moves.append("raise")
        return moves

    def pot(self) -> int:
        return sum(self.contrib)

    def board(self) -> list[str]:
        deck = self.deck
        if deck is None:
            return []
        return [deck.opened[p] for p in range(2 * self.n, 2 * self.n + 5) if p in deck.opened]

    # -- steps ------------------------------------------------------------------------

    def _message(self, seat: int, payload: dict[str, Any]) -> None:
        action = payload["action"]
        if action == "hp_forfeit":
            self._forfeit(payload["seat"], claimant=self.seats[seat])
            return
        if action == "hp_leave":
            self._leave_with_secret(seat, payload)
            return
        if action == "error":
            return
        due = self.due()
        expected = {"keys": "hp_key", "shuffle": "hp_shuffle", "showdown": "hp_shares"}.get(
            self.stage, "hp_shares" if self.stage in SHARES else "hp_bet")
        if seat != due or action != expected:
            raise GroupError("holdem.out_of_turn", f"seat {seat} sent {action} in {self.stage}; "
                             f"seat {due} owes {expected}", culprit=self.seats[seat])
        deck = self.deck
        assert deck is not None
        if action == "hp_key":
            deck.add_key(seat, bytes.fromhex(payload["key"]), bytes.fromhex(payload["proof"]))
            if len(deck.keys) == self.n:
                self.stage = "shuffle"
        elif action == "hp_shuffle":
            deck.add_shuffle(seat, _points(payload["deck"], "deck entries"),
                             _items(payload["proof"]))
            if deck.ready:
                self.stage = "deal_hole"
        elif action == "hp_shares":
            self._shares(seat, payload)
        else:
            self._bet(seat, payload["move"])

    def _shares(self, seat: int, payload: dict[str, Any]) -> None:
        deck = self.deck
        assert deck is not None
        if payload["stage"] != share_stage(self.stage):
            raise GroupError("holdem.out_of_turn", f"shares for {payload['stage']} during "
                             f"{self.stage}", culprit=self.seats[seat])
        positions = self.share_positions(seat)
        deck.add_shares(seat, positions, _points(payload["shares"], "shares"),
                        _points(payload["proofs"], "proofs"))
        if self.stage == "showdown":
            self.shown.add(seat)
            if self.due() is None:
                self._settle()
        elif self.due() is None:
            self._street(SHARES[self.stage])

    def _street(self, name: str) -> None:
        self.stage = name
        self.street = [0] * self.n
        self.acted = set()
        self.bets = 0
        if name == "preflop":
            small, big = (0, 1) if self.n == 2 else (1, 2)
            self._pay(small, self.rules.small_blind)
            self._pay(big, self.rules.big_blind)
            self.bets = 1
            first = 0 if self.n == 2 else 3 % self.n
        else:
            first = 1 if self.n == 2 else 1
        self.to_act = self._next_actor(first - 1)
        if self.to_act is None:
            self._street_done()

    def _pay(self, seat: int, amount: int) -> int:
        paid = min(amount, self.stacks[seat])
        self.stacks[seat] -= paid
        self.street[seat] += paid
        self.contrib[seat] += paid
        return paid

    def _can_act(self, seat: int) -> bool:
        return seat not in self.folded and self.stacks[seat] > 0

    def _next_actor(self, after: int) -> int | None:
        """The next seat after ``after`` that still has to act this street."""
        if sum(1 for s in range(self.n) if self._can_act(s)) < 2 and all(
                self.to_call(s) == 0 for s in range(self.n) if self._can_act(s)):
            return None
        top = max(self.street)
        for step in range(1, self.n + 1):
            seat = (after + step) % self.n
            if self._can_act(seat) and (seat not in self.acted or self.street[seat] < top):
                return seat
        return None

    def _bet(self, seat: int, move: str) -> None:
        legal = self.legal_moves(seat)
        if move not in legal:
            raise GroupError("holdem.illegal_move", f"seat {seat} cannot {move} now "
                             f"(legal: {', '.join(legal)})", culprit=self.seats[seat])
        size = self.rules.big_blind * (2 if self.stage in ("turn", "river") else 1)
        paid = 0
        if move == "fold":
            self.folded.add(seat)
        elif move == "call":
            paid = self._pay(seat, self.to_call(seat))
        elif move == "raise":
            paid = self._pay(seat, self.to_call(seat) + size)
            self.bets += 1
            self.acted = set()
        self.acted.add(seat)
        self.moves.append((seat, move, paid))
        self._after_action(seat)

    def _after_action(self, seat: int) -> None:
        if len(self.in_hand()) == 1:
            self._settle()
            return
        self.to_act = self._next_actor(seat)
        if self.to_act is None:
            self._street_done()

    def _street_done(self) -> None:
        self.to_act = None
        if self.stage == "river":
            self.stage = "showdown"
            return
        self.stage = NEXT_SHARES[self.stage]

    # -- leaving, forfeits, cheats ----------------------------------------------------

    def _leave_with_secret(self, seat: int, payload: dict[str, Any]) -> None:
        deck = self.deck
        assert deck is not None
        if not deck.ready:
            self._end("void", None, "a seat left before the deck was shuffled")
            return
        deck.add_secret(seat, bytes.fromhex(payload["secret"]))
        self.gone.add(seat)
        was_due = self.to_act == seat
        self.folded.add(seat)
        self.moves.append((seat, "fold", 0))
        if len(self.in_hand()) == 1:
            self._settle()
        elif self.stage in SHARES and self.due() is None:
            self._street(SHARES[self.stage])
        elif self.stage == "showdown" and self.due() is None:
            self._settle()
        elif was_due:
            self._after_action(seat)

    def _membership(self, kind: str, entry: dict[str, Any]) -> None:
        target = entry["sender"] if kind == "leave" else entry["body"]["member"]
        if target not in self.seats:
            return
        seat = self.seats.index(target)
        if seat in self.gone:
            return
        if kind == "leave" and not self._owes_more(seat):
            self.gone.add(seat)  # folded, every layer it had to remove removed: nothing owed
        elif kind == "leave" or self.due() == seat:
            self._forfeit(seat, claimant=None)
        else:
            self._cheat("holdem.false_forfeit", f"the sequencer timed out seat {seat}, which "
                        f"owed nothing (seat {self.due()} did)", entry["sender"], entry)

    def _owes_more(self, seat: int) -> bool:
        """Whether ``seat`` still has a step to take in this hand (a bet, a share, a showing)."""
        deck = self.deck
        if deck is None or not deck.ready or seat not in self.folded:
            return True
        dealt = [p for o in range(self.n) if o != seat for p in deck.hole(o)] + [
            p for street in ("flop", "turn", "river") for p in deck.board(street)]
        return any(seat in deck.missing(p) for p in dealt)

    def _forfeit(self, seat: Any, claimant: str | None) -> None:
        if claimant is not None and (type(seat) is not int or seat != self.due()
                                     or self.seats.index(claimant) == seat):
            raise GroupError("holdem.false_forfeit", f"a forfeit claim against seat {seat}, "
                             f"which did not owe the next step (seat {self.due()} did)",
                             culprit=claimant)
        self._end("forfeit", self.seats[seat], f"seat {seat} owed the next step and stopped",
                  code="holdem.forfeit")

    def _cheat(self, code: str, text: str, culprit: str, entry: dict[str, Any]) -> None:
        self._end("cheat", culprit, text, code=code)
        raise GroupError(code, text, culprit=culprit, evidence={"entry": entry})

    def _end(self, kind: str, culprit: str | None, text: str, code: str | None = None) -> None:
        """End without a showdown: stakes back; a culprit's stake shared by the others."""
        back = list(self.contrib)
        if culprit is not None and culprit in self.seats:
            bad = self.seats.index(culprit)
            others = [s for s in range(self.n) if s != bad]
            share, rest = divmod(back[bad], len(others))
            back[bad] = 0
            for i, s in enumerate(others):
                back[s] += share + (1 if i < rest else 0)
        self._finish(kind, back, culprit=culprit, code=code, reason=text)

    def _settle(self) -> None:
        contenders = self.in_hand()
        deck = self.deck
        assert deck is not None
        won = [0] * self.n
        ranks: dict[int, tuple[int, ...]] = {}
        if len(contenders) == 1:
            won[contenders[0]] = self.pot()
            self._finish("fold", won)
            return
        board = self.board()
        for s in contenders:
            ranks[s] = best_hand([deck.opened[p] for p in deck.hole(s)] + board)
        levels = sorted({self.contrib[s] for s in range(self.n) if self.contrib[s] > 0})
        floor = 0
        for level in levels:
            slice_ = sum(min(c, level) - min(c, floor) for c in self.contrib)
            eligible = [s for s in contenders if self.contrib[s] >= level]
            floor = level
            if not eligible:
                continue
            top = max(ranks[s] for s in eligible)
            winners = [s for s in eligible if ranks[s] == top]
            share, rest = divmod(slice_, len(winners))
            for i, s in enumerate(winners):
                won[s] += share + (1 if i < rest else 0)
        self._finish("showdown", won, ranks={s: describe(r) for s, r in ranks.items()})

    def _finish(self, kind: str, won: list[int], **extra: Any) -> None:
        deck = self.deck
        assert deck is not None
        final = [self.stacks[s] + won[s] for s in range(self.n)]
        shown = {str(s): [deck.opened[p] for p in deck.hole(s)] for s in range(self.n)
                 if all(p in deck.opened for p in deck.hole(s)) and s in self.shown}
        self.result = {"kind": kind, "pot": self.pot(), "won": won, "stacks": final,
                       "delta": [final[s] - self.rules.stack for s in range(self.n)],
                       "board": self.board(), "shown": shown,
                       "seats": list(self.seats), **extra}
        if extra.get("culprit") is not None:
            self.result["culprit_seat"] = self.seats.index(extra["culprit"])
        self.stage = "over"
        self.to_act = None


# -- a seat's secret side ---------------------------------------------------------------

Strategy = Callable[[HoldemHand, int, list[str]], str]


def passive(hand: HoldemHand, seat: int, legal: list[str]) -> str:
    """Check when possible, else call: every hand reaches the showdown."""
    return "check" if "check" in legal else "call"


def mixed(rng: Any) -> Strategy:
    """A seeded player (``rng`` a random.Random): raises a third of the time, folds rarely."""
    def strategy(hand: HoldemHand, seat: int, legal: list[str]) -> str:
        roll = rng.random()
        if "raise" in legal and roll < 0.3:
            return "raise"
        if "call" in legal and roll > 0.93:
            return "fold"
        return "check" if "check" in legal else "call"
    return strategy


class HoldemPlayer:
    """A seat: its N-party secret, its strategy, and the payload it owes next."""

    def __init__(self, entropy: g.Entropy, strategy: Strategy = passive) -> None:
        self.entropy = entropy
        self.strategy = strategy
        self.seat: NPartySeat | None = None

    def cards(self, hand: HoldemHand, me: int) -> list[str | None]:
        if self.seat is None or hand.deck is None or not hand.deck.ready:
            return []
        return [self.seat.peek(hand.deck, p) for p in hand.deck.hole(me)]

    def next_payload(self, hand: HoldemHand, me: int) -> dict[str, Any] | None:
        """What this seat sends now, or None when another seat owes the next step."""
        if hand.due() != me or hand.deck is None:
            return None
        if self.seat is None or self.seat.hand != hand.deck.hand:
            self.seat = NPartySeat(hand.deck.hand, me, self.entropy)
        seat = self.seat
        if hand.stage == "keys":
            return {"action": "hp_key", "key": seat.key.hex(), "proof": seat.key_proof().hex()}
        if hand.stage == "shuffle":
            deck, proof = seat.shuffle(hand.deck.decks[-1])
            return {"action": "hp_shuffle", "deck": [p.hex() for p in deck],
                    "proof": b"".join(proof).hex()}
        if hand.stage in SHARES or hand.stage == "showdown":
            shares, made = seat.shares(hand.deck, hand.share_positions(me))
            return {"action": "hp_shares", "stage": share_stage(hand.stage),
                    "shares": [s.hex() for s in shares], "proofs": [p.hex() for p in made]}
        return {"action": "hp_bet", "move": self.strategy(hand, me, hand.legal_moves(me))}

    def leave_payload(self) -> dict[str, Any]:
        assert self.seat is not None
        return {"action": "hp_leave", "secret": self.seat.secret.hex()}
