"""N-party mental poker: a deck no seat controls, cards only the right seats see.

Every seat ``i`` has a masking secret ``x_i`` (published key ``Y_i = x_i·G``
with a proof of knowledge). The deck starts as the public card points; each
seat in turn raises every entry to its secret and permutes the deck, with a
proof of a shuffle (:mod:`lingxi.cards.shuffle`), so the final deck entry at
position ``j`` is ``(Π x_i)·P_π(j)`` and no coalition short of every seat knows
``π``. To open a position, seats remove their layers one by one: a share is
``Z' = x_t^-1·Z`` with a Chaum–Pedersen proof that ``log_G Y_t = log_Z' Z``
(:mod:`lingxi.cards.proofs`). A hole card is unmasked by every seat but its
owner, who removes the last layer privately; a board card by every seat;
at showdown the owner publishes its own share. A seat that leaves hands its
secret over (checked against its key) so the others can finish the hand.

This module adds to the two-party construction (:mod:`lingxi.cards.table`)
without changing it; culprits are seat numbers, which the group layer maps to
identity keys. Pure: entropy is injected.
"""

from __future__ import annotations

from lingxi.cards import group as g
from lingxi.cards import proofs, shuffle
from lingxi.cards.errors import CardsError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
CARD_DOMAIN = b"lingxi/cards/nparty/card/v1"
CTX_DOMAIN = b"lingxi/cards/nparty/context/v1"


def universe() -> tuple[str, ...]:
    """The 52 labels, ``2c`` … ``As``."""
    return tuple(r + s for r in RANKS for s in SUITS)


def context(hand: bytes, seat: int, step: str, position: int = -1) -> bytes:
    """Fiat–Shamir context: the hand, the prover's seat, the step, the position."""
    return g.digest(CTX_DOMAIN, hand, seat.to_bytes(2, "big"), step.encode(),
                    (position + 1).to_bytes(4, "big"))


def _fail(code: str, text: str, seat: int) -> CardsError:
    return CardsError(code, f"seat {seat}: {text}", culprit=str(seat))


class NPartyDeck:
    """The public state of one hand's deck: keys, shuffles, shares, opened cards."""

    def __init__(self, hand: bytes, seats: int, labels: tuple[str, ...] | None = None) -> None:
        if not 2 <= seats <= 16:
            raise CardsError("cards.malformed", "a hand has 2..16 seats")
        self.hand = hand
        self.n = seats
        self.labels = labels or universe()
        self.points = [g.hash_point(CARD_DOMAIN, label.encode()) for label in self.labels]
        self.label_of = dict(zip(self.points, self.labels, strict=True))
        self.keys: list[bytes] = []
        self.decks: list[list[bytes]] = [self.points]
        self.partial: dict[int, bytes] = {}
        self.stripped: dict[int, set[int]] = {}
        self.opened: dict[int, str] = {}

    # -- setup ------------------------------------------------------------------------

    def add_key(self, seat: int, key: bytes, proof: bytes) -> None:
        if seat != len(self.keys):
            raise _fail("cards.bad_sequence", f"key out of turn (seat {len(self.keys)} is due)",
                        seat)
        if (not g.is_point(key) or key in self.keys
                or not proofs.verify_key(context(self.hand, seat, "key"), key, proof)):
            raise _fail("cards.rogue_key", "a masking key without a valid proof of knowledge "
                        "(or a copy of another seat's)", seat)
        self.keys.append(key)

    def add_shuffle(self, seat: int, deck: list[bytes], proof: list[bytes]) -> None:
        if len(self.keys) != self.n or seat != len(self.decks) - 1:
            raise _fail("cards.bad_sequence", "shuffle out of turn", seat)
        if len(deck) != len(self.points):
            raise _fail("cards.deck_missing", f"a deck has {len(self.points)} entries", seat)
        if not all(g.is_point(p) for p in deck):
            raise _fail("cards.deck_corrupt", "a deck entry is not a subgroup point", seat)
        if len(set(deck)) != len(deck):
            raise _fail("cards.deck_duplicate", "the same entry twice", seat)
        if not shuffle.verify_shuffle(context(self.hand, seat, "shuffle"), self.keys[seat],
                                      self.decks[-1], deck, proof):
            raise _fail("cards.bad_shuffle", "the shuffle proof does not verify (a stacked or "
                        "non-permutation shuffle)", seat)
        self.decks.append(list(deck))

    @property
    def ready(self) -> bool:
        return len(self.decks) == self.n + 1

    # -- positions --------------------------------------------------------------------

    def hole(self, seat: int) -> list[int]:
        return [2 * seat, 2 * seat + 1]

    def board(self, stage: str) -> list[int]:
        base = 2 * self.n
        return {"flop": [base, base + 1, base + 2], "turn": [base + 3],
                "river": [base + 4]}[stage]

    def current(self, position: int) -> bytes:
        if not self.ready:
            raise CardsError("cards.state", "the deck is not shuffled yet")
        return self.partial.get(position, self.decks[-1][position])

    def missing(self, position: int) -> set[int]:
        """Seats whose layer is still on ``position``."""
        return set(range(self.n)) - self.stripped.get(position, set())

    # -- shares -----------------------------------------------------------------------

    def add_shares(self, seat: int, positions: list[int], shares: list[bytes],
                   share_proofs: list[bytes]) -> None:
        """Seat ``seat`` removes its layer from ``positions`` (each share proven)."""
        if len(shares) != len(positions) or len(share_proofs) != len(positions):
            raise _fail("cards.malformed", f"{len(positions)} shares and proofs are due", seat)
        for position, share, proof in zip(positions, shares, share_proofs, strict=True):
            if seat not in self.missing(position):
                raise _fail("cards.forged_response", f"position {position} has its layer "
                            "removed already", seat)
            z = self.current(position)
            verdict = proofs.verify_dleq(context(self.hand, seat, "share", position),
                                         self.keys[seat], share, z, proof) if g.is_point(
                share) else proofs.Dleq.MISMATCH
            if verdict is proofs.Dleq.BAD_PROOF:
                raise _fail("cards.bad_share_proof", f"the share for position {position} is "
                            "not proven under the seat's key", seat)
            if verdict is not proofs.Dleq.OK:
                raise _fail("cards.bad_share", f"the share for position {position} does not "
                            "remove the seat's layer", seat)
            self._strip(seat, position, share)

    def _strip(self, seat: int, position: int, value: bytes) -> None:
        self.partial[position] = value
        self.stripped.setdefault(position, set()).add(seat)
        if not self.missing(position):
            label = self.label_of.get(value)
            if label is None:
                raise _fail("cards.audit_mismatch", f"position {position} opens to no card",
                            seat)
            self.opened[position] = label

    def add_secret(self, seat: int, secret: bytes) -> None:
        """A leaving seat's secret: checked against its key, its layer removed everywhere."""
        if not g.is_scalar(secret) or secret == g.SCALAR_ZERO or (
                g.base(secret) != self.keys[seat]):
            raise _fail("cards.bad_opening", "the handed-over secret is not the seat's key",
                        seat)
        if not self.ready:
            return
        inverse = g.sc_inv(secret)
        for position in range(min(len(self.points), 2 * self.n + 5)):  # the dealt ones
            if seat in self.missing(position):
                self._strip(seat, position, g.mul(inverse, self.current(position)))


class NPartySeat:
    """One seat's secret side: its key, its shuffle, its shares, its own cards."""

    def __init__(self, hand: bytes, seat: int, entropy: g.Entropy) -> None:
        self.hand = hand
        self.seat = seat
        self.entropy = entropy
        self.secret = g.random_scalar(entropy)
        self.key = g.base(self.secret)
        self._inverse = g.sc_inv(self.secret)

    def key_proof(self) -> bytes:
        return proofs.prove_key(context(self.hand, self.seat, "key"), self.secret, self.key,
                                self.entropy)

    def shuffle(self, deck_in: list[bytes]) -> tuple[list[bytes], list[bytes]]:
        perm = shuffle.sample_permutation(self.entropy, len(deck_in))
        return shuffle.prove_shuffle(context(self.hand, self.seat, "shuffle"), self.secret,
                                     self.key, deck_in, perm, self.entropy)

    def shares(self, deck: NPartyDeck, positions: list[int]) -> tuple[list[bytes], list[bytes]]:
        out, made = [], []
        for position in positions:
            z = deck.current(position)
            share = g.mul(self._inverse, z)
            out.append(share)
            made.append(proofs.prove_dleq(context(self.hand, self.seat, "share", position),
                                          self.secret, self.key, share, z, self.entropy))
        return out, made

    def peek(self, deck: NPartyDeck, position: int) -> str | None:
        """The card at ``position`` once every other seat removed its layer (else None)."""
        if deck.missing(position) != {self.seat}:
            return deck.opened.get(position)
        return deck.label_of.get(g.mul(self._inverse, deck.current(position)))
