"""A library of cheating peers: each builds one signed, well-linked bad message.

Used by the tests and meant for ``lingxi protocol test --adversarial``: a
cheat names the protocol point where it acts, the role that cheats, and the
code the honest side must raise at once. :func:`run_cheat` plays an honest
game up to that point in memory, sends the cheater's message, and returns the
honest side's error and its transcript (with the rejected message kept as
evidence) so the offline audit can be asked to reach the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lingxi.cards import group as g
from lingxi.cards import proofs, shuffle
from lingxi.cards.audit import AuditReport, audit
from lingxi.cards.driver import Wire, make_pair
from lingxi.cards.errors import CardsError
from lingxi.cards.games import GAMES, turns
from lingxi.cards.party import MentalPokerParty
from lingxi.cards.table import context

Make = Callable[[MentalPokerParty, MentalPokerParty], dict[str, Any]]


@dataclass(frozen=True)
class Cheat:
    name: str
    point: str  # "hello" | "shuffle" | "draw" | "play" | "open" | "silent"
    cheater: str  # role
    code: str
    make: Make  # (cheater, honest) -> the bad message
    text: str


def _ctx(p: MentalPokerParty, kind: str, pos: int = -1) -> bytes:
    return context(p.table.head, p.role, kind, pos)


def _shuffle_msg(p: MentalPokerParty, deck: list[bytes], proof: list[bytes]) -> dict[str, Any]:
    return p.sign("shuffle", {"deck": [d.hex() for d in deck], "proof": [x.hex() for x in proof]})


def _honest_shuffle(p: MentalPokerParty) -> tuple[list[bytes], list[bytes]]:
    prep = p.prepare_shuffle()
    return list(prep.deck), list(prep.proof)


def rogue_key(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    # a key whose secret the cheater does not know (here: a hash point), proof borrowed
    key = g.hash_point(b"rogue", b"key")
    pok = proofs.prove_key(_ctx(c, "hello"), c._secret, c.key, c._entropy)
    return c.sign("hello", {"key": key.hex(), "pok": pok.hex()})


def copied_key(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    first = h.table.messages[0]
    return c.sign("hello", {"key": first["key"], "pok": first["pok"]})


def corrupt_entry(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    deck, proof = _honest_shuffle(c)
    deck[5] = bytes(range(32))  # not a point of the subgroup
    return _shuffle_msg(c, deck, proof)


def duplicate_entry(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    deck, proof = _honest_shuffle(c)
    deck[1] = deck[0]
    return _shuffle_msg(c, deck, proof)


def missing_card(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    deck, proof = _honest_shuffle(c)
    return _shuffle_msg(c, deck[:-1], proof)


def stacked_shuffle(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    # replace one incoming card by a card of the cheater's choosing, prove over that deck
    deck_in = list(c.table.decks[-1])
    joker = g.hash_point(b"lingxi/cards/cheat", b"a 53rd card")
    deck_in[3] = joker if c.role == "host" else g.mul(g.sc_from_int(7), c.table.decks[0][0])
    perm = shuffle.sample_permutation(c._entropy, len(deck_in))
    deck, proof = shuffle.prove_shuffle(_ctx(c, "shuffle"), c._secret, c.key, deck_in, perm,
                                        c._entropy)
    return _shuffle_msg(c, deck, proof)


def non_permutation(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    # a different secret on one card: no longer x times a permutation of the input
    deck, proof = _honest_shuffle(c)
    deck[0] = g.mul(g.sc_from_int(2), deck[0])
    return _shuffle_msg(c, deck, proof)


def replayed_shuffle(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    # send back the host's own deck and proof as if it were the guest's shuffle
    first = h.table.messages[2]
    return c.sign("shuffle", {"deck": first["deck"], "proof": first["proof"]})


def _requested(c: MentalPokerParty) -> int:
    assert c.table.pending is not None
    return c.table.pending[1]


def wrong_share(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos = _requested(c)
    other = c.table.decks[-1][pos + 1]
    share = g.mul(c._inverse, other)  # a real share, of another position
    proof = proofs.prove_dleq(_ctx(c, "share", pos), c._secret, c.key, share,
                              c.table.decks[-1][pos], c._entropy)
    return c.sign("share", {"position": pos, "share": share.hex(), "proof": proof.hex()})


def bad_share_proof(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos = _requested(c)
    entry = c.table.decks[-1][pos]
    share = g.mul(c._inverse, entry)
    proof = proofs.prove_dleq(_ctx(c, "share", pos + 1), c._secret, c.key, share, entry,
                              c._entropy)  # a proof for another statement
    return c.sign("share", {"position": pos, "share": share.hex(), "proof": proof.hex()})


def forged_response(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos = _requested(c) + 1
    entry = c.table.decks[-1][pos]
    share = g.mul(c._inverse, entry)
    proof = proofs.prove_dleq(_ctx(c, "share", pos), c._secret, c.key, share, entry, c._entropy)
    return c.sign("share", {"position": pos, "share": share.hex(), "proof": proof.hex()})


def _play_msg(c: MentalPokerParty, pos: int, face: str) -> dict[str, Any]:
    point = c.table.decks[0][c.params.universe.index(face)]
    share = c.table.shares.get(pos, point)
    proof = proofs.prove_dleq(_ctx(c, "play", pos), c._secret, c.key, point, share, c._entropy)
    return c.sign("play", {"position": pos, "card": face, "nullifier": c.table.nullifier(pos),
                           "proof": proof.hex()})


def wrong_face(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos, face = next(iter(c.hand().items()))
    unseen = [f for f in c.params.universe if f not in c.cards.values()
              and f not in c.table.played.values()]
    assert face not in unseen
    return _play_msg(c, pos, unseen[0])


def not_in_hand(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos = next(p for p, o in c.table.owner.items() if o != c.role and p not in c.table.played)
    return _play_msg(c, pos, c.params.universe[0])


def double_play(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos = next(p for p, o in c.table.owner.items() if o == c.role and p in c.table.played)
    return _play_msg(c, pos, c.table.played[pos])


def peek(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    return c.sign("draw", {"position": c.table.cursor + 3})


def peek_dealt(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    pos = next(p for p, o in c.table.owner.items() if o != c.role and p not in c.table.played)
    return c.sign("draw", {"position": pos})


def false_opening(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    return c.sign("open", {"secret": g.random_scalar(c._entropy).hex()})


def skipped_opening(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    return c.sign("draw", {"position": c.table.cursor})


def false_forfeit(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    # the side that owes the share claims the drawer stopped
    return c.sign("forfeit", {"against": c.peer, "reason": "no answer (made up)"})


def forged_signature(c: MentalPokerParty, h: MentalPokerParty) -> dict[str, Any]:
    msg = c.sign("draw", {"position": c.table.cursor})
    msg["sig"] = h.sign("draw", {"position": c.table.cursor})["sig"]
    return msg


CHEATS: dict[str, Cheat] = {c.name: c for c in [
    Cheat("rogue_key", "hello", "guest", "cards.rogue_key", rogue_key,
          "a masking key without a proof of knowledge of its secret"),
    Cheat("copied_key", "hello", "guest", "cards.rogue_key", copied_key,
          "the peer's own key and proof sent back"),
    Cheat("corrupt_entry", "shuffle", "guest", "cards.deck_corrupt", corrupt_entry,
          "a deck entry that is not a subgroup point"),
    Cheat("duplicate_entry", "shuffle", "guest", "cards.deck_duplicate", duplicate_entry,
          "one deck entry repeated"),
    Cheat("missing_card", "shuffle", "guest", "cards.deck_missing", missing_card,
          "a deck one card short"),
    Cheat("stacked_shuffle", "shuffle", "guest", "cards.bad_shuffle", stacked_shuffle,
          "a card of the cheater's choosing swapped in before a proven shuffle"),
    Cheat("stacked_shuffle_host", "shuffle", "host", "cards.bad_shuffle", stacked_shuffle,
          "the first shuffler slips a card outside the universe into its deck"),
    Cheat("non_permutation", "shuffle", "guest", "cards.bad_shuffle", non_permutation,
          "one card masked with a different secret"),
    Cheat("replayed_shuffle", "shuffle", "guest", "cards.bad_shuffle", replayed_shuffle,
          "the first shuffle's deck and proof sent back"),
    Cheat("wrong_share", "draw", "host", "cards.bad_share", wrong_share,
          "the draw answered with the share of another position"),
    Cheat("bad_share_proof", "draw", "host", "cards.bad_share_proof", bad_share_proof,
          "a draw share whose proof is for another statement"),
    Cheat("forged_response", "draw", "host", "cards.forged_response", forged_response,
          "a draw answered for a position that was not asked for"),
    Cheat("wrong_face", "play", "guest", "cards.wrong_face", wrong_face,
          "a play declaring a face the position does not hold"),
    Cheat("not_in_hand", "play", "guest", "cards.not_in_hand", not_in_hand,
          "a play of a position dealt to the peer"),
    Cheat("double_play", "play_again", "host", "cards.double_play", double_play,
          "a card played a second time"),
    Cheat("peek", "play", "guest", "cards.peek", peek,
          "a share asked for below the top of the stock"),
    Cheat("peek_dealt", "play", "guest", "cards.peek", peek_dealt,
          "a share asked for a card dealt to the peer"),
    Cheat("false_opening", "open", "guest", "cards.bad_opening", false_opening,
          "an opened secret that is not the published key's"),
    Cheat("skipped_opening", "open", "guest", "cards.no_opening", skipped_opening,
          "play goes on when the opening is due"),
    Cheat("forged_signature", "play", "guest", "cards.bad_signature", forged_signature,
          "a message signed with the wrong key"),
    Cheat("false_forfeit", "draw", "host", "cards.false_forfeit", false_forfeit,
          "the side that owes the share claims the drawer forfeited"),
]}


@dataclass
class CheatOutcome:
    error: CardsError
    transcript: dict[str, Any]
    report: AuditReport


def _advance(cheat: Cheat, host: MentalPokerParty, guest: MentalPokerParty,
             wire: Wire) -> tuple[MentalPokerParty, MentalPokerParty]:
    """Play honestly up to the cheat's point; return (cheater, honest).

    The honest side's last message is put on the cheater's table directly, so
    the cheater does not answer it honestly first.
    """
    c, h = (host, guest) if cheat.cheater == "host" else (guest, host)
    if cheat.point == "hello":
        c.table.apply(h.hello())
        return c, h
    wire.send(host.hello())
    if cheat.point == "shuffle":
        if c.role == "guest":
            wire.send(host.shuffle())
        return c, h
    wire.send(host.shuffle())
    wire.send(guest.shuffle())
    for pos in host.params.deal.table_positions():
        wire.send(host.play(pos))
    if cheat.point == "draw":
        c.table.apply(h.draw())
    elif cheat.point == "play_again":
        wire.send(c.play(next(iter(c.hand()))))
    elif cheat.point == "open":
        c.table.apply(h.open())
    return c, h


def run_cheat(name: str, seed: int | str = 0, game: str = "crazy_eights") -> CheatOutcome:
    """Run one cheat; the honest side must raise its code on the bad message."""
    cheat = CHEATS[name]
    host, guest = make_pair(game, seed)
    wire = Wire(host, guest)
    c, h = _advance(cheat, host, guest, wire)
    bad = cheat.make(c, h)
    try:
        h.receive(bad, h.check(bad))
    except CardsError as exc:
        transcript = h.transcript()
        return CheatOutcome(exc, transcript, audit(transcript))
    raise AssertionError(f"cheat {name} went undetected")


def run_abort_after_draw(seed: int | str = 0, game: str = "crazy_eights") -> CheatOutcome:
    """The guest draws, sees its card and goes silent: the host records a forfeit.

    The audit is given the game's rules (whose move it is), so it can tell the
    guest owed the next move: the claim names the side that really owed.
    """
    host, guest = make_pair(game, seed)
    wire = Wire(host, guest)
    wire.send(host.hello())
    wire.send(host.shuffle())
    wire.send(guest.shuffle())
    for pos in host.params.deal.table_positions():
        wire.send(host.play(pos))
    wire.send(guest.draw())  # the host's share comes back; the guest now sees its card
    claim = host.forfeit("no move within the turn timeout after a draw")
    transcript = host.transcript()
    return CheatOutcome(CardsError("cards.forfeit", claim["reason"], culprit="guest"),
                        transcript, audit(transcript, game_due=turns.game_due(GAMES[game])))
