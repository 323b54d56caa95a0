"""N-party mental poker (cards.nparty): every seat's check, each refusal naming its seat."""

from __future__ import annotations

import random

import pytest

from lingxi.cards import CardsError
from lingxi.cards import group as g
from lingxi.cards.nparty import NPartyDeck, NPartySeat, universe


def _entropy(seed: int):
    rng = random.Random(seed)
    return lambda n: rng.randbytes(n)


def _setup(n: int = 3, seed: int = 1, shuffle: bool = True):
    entropy = _entropy(seed)
    deck = NPartyDeck(b"hand", n)
    seats = [NPartySeat(b"hand", i, entropy) for i in range(n)]
    for seat in seats:
        deck.add_key(seat.seat, seat.key, seat.key_proof())
    if shuffle:
        for seat in seats:
            out, proof = seat.shuffle(deck.decks[-1])
            deck.add_shuffle(seat.seat, out, proof)
    return deck, seats


def _code(call) -> tuple[str, str | None]:
    with pytest.raises(CardsError) as caught:
        call()
    return caught.value.code, caught.value.culprit


def test_hole_cards_are_seen_by_their_owner_only_and_the_board_by_all() -> None:
    deck, seats = _setup(4)
    for seat in seats:
        positions = [p for o in range(4) if o != seat.seat for p in deck.hole(o)]
        deck.add_shares(seat.seat, positions, *seat.shares(deck, positions))
    hands = [[seat.peek(deck, p) for p in deck.hole(seat.seat)] for seat in seats]
    assert all(all(card in universe() for card in hand) for hand in hands)
    assert seats[0].peek(deck, deck.hole(1)[0]) is None  # not its card: it cannot see it
    for seat in seats:
        positions = deck.board("flop")
        deck.add_shares(seat.seat, positions, *seat.shares(deck, positions))
    flop = [deck.opened[p] for p in deck.board("flop")]
    dealt = [c for hand in hands for c in hand] + flop
    assert len(set(dealt)) == len(dealt) == 11


def test_setup_refusals_name_the_seat() -> None:
    deck, seats = _setup(3, shuffle=False)
    stranger = NPartySeat(b"hand", 0, _entropy(9))
    fresh = NPartyDeck(b"hand", 3)
    assert _code(lambda: fresh.add_key(1, seats[1].key, seats[1].key_proof())) == (
        "cards.bad_sequence", "1")
    assert _code(lambda: fresh.add_key(0, stranger.key, seats[0].key_proof())) == (
        "cards.rogue_key", "0")
    fresh.add_key(0, seats[0].key, seats[0].key_proof())
    assert _code(lambda: fresh.add_key(1, seats[0].key, seats[0].key_proof()))[0] == (
        "cards.rogue_key")  # a copied key
    out, proof = seats[0].shuffle(deck.decks[-1])
    assert _code(lambda: deck.add_shuffle(1, out, proof)) == ("cards.bad_sequence", "1")
    assert _code(lambda: deck.add_shuffle(0, out[:-1], proof))[0] == "cards.deck_missing"
    assert _code(lambda: deck.add_shuffle(0, [b"\x01" * 32] + out[1:], proof))[0] in (
        "cards.deck_corrupt", "cards.bad_shuffle")
    assert _code(lambda: deck.add_shuffle(0, [out[1]] + out[1:], proof))[0] == (
        "cards.deck_duplicate")
    stacked = list(out)
    stacked[0], stacked[1] = stacked[1], stacked[0]
    assert _code(lambda: deck.add_shuffle(0, stacked, proof)) == ("cards.bad_shuffle", "0")
    assert _code(lambda: deck.current(0))[0] == "cards.state"
    with pytest.raises(CardsError):
        NPartyDeck(b"hand", 1)


def test_share_refusals_name_the_seat() -> None:
    deck, seats = _setup(3)
    pos = deck.hole(0)
    shares, proofs = seats[1].shares(deck, pos)
    assert _code(lambda: deck.add_shares(1, pos, shares[:1], proofs))[0] == "cards.malformed"
    wrong = [g.base(g.sc_from_int(5))] + shares[1:]
    assert _code(lambda: deck.add_shares(1, pos, wrong, proofs))[0] in (
        "cards.bad_share", "cards.bad_share_proof")
    assert _code(lambda: deck.add_shares(1, pos, [b"\x00" * 32] + shares[1:], proofs)) == (
        "cards.bad_share", "1")
    swapped = [proofs[1], proofs[0]]
    assert _code(lambda: deck.add_shares(1, pos, shares, swapped))[0] in (
        "cards.bad_share", "cards.bad_share_proof")
    deck.add_shares(1, pos, shares, proofs)
    assert _code(lambda: deck.add_shares(1, pos, shares, proofs)) == (
        "cards.forged_response", "1")


def test_a_leaving_seat_hands_over_its_secret_and_a_false_one_is_refused() -> None:
    deck, seats = _setup(3)
    assert _code(lambda: deck.add_secret(2, seats[1].secret)) == ("cards.bad_opening", "2")
    assert _code(lambda: deck.add_secret(2, g.SCALAR_ZERO))[0] == "cards.bad_opening"
    deck.add_secret(2, seats[2].secret)
    for seat in seats[:2]:
        positions = deck.board("flop")
        deck.add_shares(seat.seat, positions, *seat.shares(deck, positions))
    assert len([p for p in deck.board("flop") if p in deck.opened]) == 3
    early, early_seats = _setup(3, shuffle=False)
    early.add_secret(0, early_seats[0].secret)  # before the shuffle: nothing to strip
    assert not early.partial
