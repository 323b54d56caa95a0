"""Typed failures of the mental-poker library, one stable code per cheat.

Every check that a peer can fail raises :class:`CardsError` the moment the
offending message arrives, with a code from :data:`CODES`, so a session machine
can turn it into an abort with evidence and a test can name the cheat it caught.
"""

from __future__ import annotations

from lingxi.errors import EXIT_FAILED, LingxiError

CODES: dict[str, str] = {
    "cards.malformed": "a message is not the expected shape (fields, types, hex, sizes)",
    "cards.bad_universe": "the deck universe is empty, too large or has repeated labels",
    "cards.bad_point": "a group element is not a canonical point of the prime-order subgroup",
    "cards.bad_signature": "a message's Ed25519 signature does not verify",
    "cards.bad_sequence": "a message is out of turn, out of order, or not linked to the transcript",
    "cards.rogue_key": "a masking key without a valid proof of knowledge, or a copied key",
    "cards.deck_corrupt": "a deck entry is not a valid point, or the deck has extra entries",
    "cards.deck_duplicate": "the same deck entry appears twice",
    "cards.deck_missing": "the deck has fewer entries than the universe",
    "cards.bad_shuffle": "a shuffle proof does not verify (stacked or non-permutation shuffle)",
    "cards.bad_share": "a decryption share does not match its deck entry",
    "cards.bad_share_proof": "a decryption share's proof is not a proof under the sender's key",
    "cards.forged_response": "a share answers a position that was not requested",
    "cards.peek": "a share was requested for a position the requester may not draw",
    "cards.wrong_face": "a played card's declared face does not match its position",
    "cards.bad_play_proof": "a play's proof is not a proof under the player's key",
    "cards.bad_nullifier": "a play's nullifier is not the one bound to its position",
    "cards.not_in_hand": "a play of a position the player does not hold",
    "cards.double_play": "a second play of the same card (nullifier already spent)",
    "cards.bad_opening": "an opened key does not match the key published at setup",
    "cards.no_opening": "a party went on without opening its key when the opening was due",
    "cards.audit_mismatch": "the final opening contradicts the deck, a share or a play",
    "cards.forfeit": "a party stopped answering; the transcript up to that point is evidence",
    "cards.false_forfeit": "a forfeit claim by the side that itself owed the next step",
    "cards.incomplete": "the transcript ends before both keys were opened, with no forfeit claim",
    "cards.state": "a local call was made in the wrong protocol state",
}


class CardsError(LingxiError):
    """A failed mental-poker check; ``culprit`` names the role that failed it."""

    exit_code = EXIT_FAILED

    def __init__(self, code: str, message: str, *, culprit: str | None = None,
                 path: str | None = None) -> None:
        if code not in CODES:  # a typo in a code is a bug, not a cheat
            raise ValueError(f"unknown cards error code {code!r}")
        details = {"culprit": culprit} if culprit else None
        super().__init__(code, message, path=path, details=details)
        self.culprit = culprit
