"""Typed failures of group logs: one stable code per broken rule.

``culprit`` is the identity key (hex) of the member or sequencer a piece of
evidence blames, when the evidence is signed by it; ``evidence`` is what a
third party needs to check the blame (signed entries, checkpoints, receipts).
"""

from __future__ import annotations

from typing import Any

from lingxi.cards.errors import CODES as CARDS_CODES
from lingxi.errors import EXIT_FAILED, LingxiError

CODES: dict[str, str] = {
    "group.malformed": "an entry, checkpoint or receipt is not the expected shape",
    "group.bad_signature": "a member's or the sequencer's Ed25519 signature does not verify",
    "group.wrong_group": "an entry of another group",
    "group.broken_chain": "an entry does not name the head before it (a reordered or spliced log)",
    "group.stale": "an entry on a head that is no longer the head (a lost race: sign it again)",
    "group.bad_seq": "an entry's sequence number is not the next one",
    "group.forked": "the sequencer signed two different entries for one position",
    "group.dropped": "a member's signed entry, acknowledged by the sequencer, is missing",
    "group.not_member": "an entry from an identity that holds no active seat",
    "group.seat_taken": "a join or replacement for a seat that is occupied",
    "group.full": "a join beyond the spec's seats.max",
    "group.too_few": "the group starts with fewer members than seats.min",
    "group.bad_rule": "an entry the group's rules do not allow now (start twice, after close…)",
    "group.bad_message": "a message payload the spec does not accept for to_group",
    "group.bad_receipt": "a receipt for another head than the final one",
    "group.missing_receipt": "a member that ended the session seated has not signed the final head",
    "group.closed": "an entry after the log was closed",
    "group.stalled": "no member made progress within the timeout and nobody owed the step",
    "group.wrong_protocol": "the group opens with another protocol_id than the member's spec",
    "group.wrong_host": "the group was opened by another sequencer than the member expects",
    "group.ticket_missing": "a join at a table posted through a registry carries no ticket",
    "group.ticket_refused": "a join's registry ticket does not verify for this table, seat and "
                            "signer (forged, expired, another host's or another key's)",
    "group.ticket_replayed": "a join with a registry ticket this table already admitted",
    "group.ticket_wrong_seat": "a join with a ticket the registry issued for another seat of "
                               "the table",
    "vote.no_motion": "a vote before any motion was put",
    "vote.second_motion": "a second motion while one is open",
    "vote.double_commit": "a member committed twice",
    "vote.early_reveal": "a reveal before every seated member committed",
    "vote.no_commit": "a reveal from a member that never committed",
    "vote.double_reveal": "a member revealed twice",
    "vote.bad_reveal": "a reveal that does not open the member's commitment",
    "vote.bad_nonce": "a nonce that is not the spec's length of lowercase hex",
    "escalate.bad_envelope": "an inter_group envelope that does not parse, is not "
                             "inter_group:escalate, or fails its HMAC",
    "escalate.bad_signature": "an escalation statement without the source sequencer's or a "
                              "named member's valid Ed25519 signature",
    "escalate.unknown_head": "an escalation naming a head that is not in the source group's log",
    "holdem.out_of_turn": "a Hold'em step from a seat that does not owe the next step",
    "holdem.illegal_move": "a bet move the rules do not allow now (check facing a bet, a raise "
                           "over the cap)",
    "holdem.false_forfeit": "a forfeit claim (or timeout) against a seat that owed nothing",
    "holdem.forfeit": "the seat that owed the next step stopped (timed out or left without "
                      "its secret); the hand ends and that seat pays",
    "holdem.over": "a Hold'em step after the hand ended",
}


class GroupError(LingxiError):
    """A failed group-log check; ``culprit`` names an identity key when one is to blame."""

    exit_code = EXIT_FAILED

    def __init__(self, code: str, message: str, *, culprit: str | None = None,
                 evidence: dict[str, Any] | None = None, path: str | None = None) -> None:
        if code not in CODES and code not in CARDS_CODES:
            raise ValueError(f"unknown group error code {code!r}")
        details: dict[str, Any] = {}
        if culprit:
            details["culprit"] = culprit
        if evidence:
            details["evidence"] = evidence
        super().__init__(code, message, path=path, details=details)
        self.culprit = culprit
        self.evidence = evidence or {}
