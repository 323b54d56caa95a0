"""Offline audit: re-run every check of a game from its recorded transcript.

A third party holding only the transcript (the two identity keys, the
universe, the deal, and the signed messages) replays it through a fresh
:class:`~lingxi.cards.table.Table` with every proof verified again, then
checks the final opening. The verdict names the culprit when a signed
message breaks a rule (its signature makes it evidence), reports a forfeit
claim as such, and refuses a transcript that was altered (a signature or a
link fails, so nobody can be blamed from it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from lingxi.canonical import canonical_bytes
from lingxi.cards import group as g
from lingxi.cards.errors import CardsError
from lingxi.cards.messages import HEX64
from lingxi.cards.party import RECEIPT_DOMAIN, RECEIPT_FORMAT, TRANSCRIPT_FORMAT
from lingxi.cards.table import Deal, Params, Phase, Table
from lingxi.roles import ROLES


@dataclass
class AuditReport:
    ok: bool
    code: str | None = None
    culprit: str | None = None
    message: str = ""
    messages: int = 0
    transcript_hash: str = ""
    faces: list[str] = field(default_factory=list)
    played: dict[int, str] = field(default_factory=dict)
    forfeit: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "code": self.code, "culprit": self.culprit,
                "message": self.message, "messages": self.messages,
                "transcript_hash": self.transcript_hash, "faces": self.faces,
                "played": {str(k): v for k, v in sorted(self.played.items())},
                "forfeit": self.forfeit}


def _params(transcript: Any) -> Params:
    if not isinstance(transcript, dict) or transcript.get("format") != TRANSCRIPT_FORMAT:
        raise CardsError("cards.malformed", f"not a {TRANSCRIPT_FORMAT} transcript")
    ids = transcript.get("identities")
    deal = transcript.get("deal")
    universe = transcript.get("universe")
    if (not isinstance(ids, dict) or set(ids) != set(ROLES)
            or not all(isinstance(v, str) and HEX64.fullmatch(v) for v in ids.values())):
        raise CardsError("cards.malformed", "identities are two 64-hex Ed25519 keys")
    if (not isinstance(deal, list) or len(deal) != 3
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in deal)):
        raise CardsError("cards.malformed", "deal is [host, guest, table]")
    if not isinstance(universe, list) or not isinstance(transcript.get("session_id"), str):
        raise CardsError("cards.malformed", "universe and session_id are required")
    if not isinstance(transcript.get("messages"), list):
        raise CardsError("cards.malformed", "messages is a list")
    return Params(transcript["session_id"], tuple(universe), Deal(*deal),
                  {r: bytes.fromhex(v) for r, v in ids.items()})


GameDue = Callable[[Table], tuple[str, str] | None]


def audit(transcript: Any, game_due: GameDue | None = None) -> AuditReport:
    """Replay and verify a whole game; never raises on bad input.

    ``game_due`` says who owes the next step during play (whose move it is,
    or the host's opening once the game is decided), from the game's rules;
    without it a forfeit claimed during play names nobody, since the cards
    alone cannot tell whose move it was.
    """
    try:
        table = Table(_params(transcript), game_due=game_due)
    except CardsError as exc:
        return AuditReport(False, exc.code, None, exc.message)
    report = AuditReport(False)
    try:
        for msg in transcript["messages"]:
            table.apply(msg)
    except CardsError as exc:
        return _done(report, table, exc.code, exc.culprit, exc.message)
    rejected = transcript.get("rejected")
    if rejected is not None:
        # The claimant kept the peer's message that failed a check: replay it.
        try:
            table.apply(rejected.get("message") if isinstance(rejected, dict)  # type: ignore[arg-type]
                        else rejected)  # a malformed one is refused inside, with its code
        except CardsError as exc:
            return _done(report, table, exc.code, exc.culprit, exc.message)
        return _done(report, table, "cards.malformed", None,
                     "the kept rejected message passes every check")
    if table.forfeit is not None:
        report.forfeit = table.forfeit
        claim = table.forfeit
        if claim["due"] is None:  # during play, and no rules were given to say whose move
            return _done(report, table, "cards.forfeit", None,
                         f"the {claim['claimant']} reports the {claim['against']} stopped during "
                         "play; whose move it was is the game's rule, which this audit was not "
                         f"given: {claim['reason']}")
        return _done(report, table, "cards.forfeit", claim["against"],
                     f"the {claim['claimant']} reports the {claim['against']} "
                     f"stopped ({_owed(claim['due'])}): {claim['reason']}")
    if table.phase != Phase.DONE:
        return _done(report, table, "cards.incomplete", None,
                     f"the transcript ends in phase {table.phase}")
    try:
        report.faces = table.final_check()
    except CardsError as exc:
        return _done(report, table, exc.code, exc.culprit, exc.message)
    report.ok = True
    return _done(report, table, None, None, "every signature, proof, share and play checks out")


STEP_WORDS = {"open": "opening", "move": "move"}


def _owed(due: Any) -> str:
    return f"its {STEP_WORDS.get(due[1], due[1])} was due"


def _done(report: AuditReport, table: Table, code: str | None, culprit: str | None,
          message: str) -> AuditReport:
    report.code, report.culprit, report.message = code, culprit, message
    report.messages = len(table.messages)
    report.transcript_hash = table.head.hex()
    report.played = dict(table.played)
    return report


def verify_receipt(receipt: Any, identity: bytes, report: AuditReport | None = None) -> bool:
    """A receipt is signed by ``identity`` and, given the audit ``report`` of the
    transcript, states the same transcript hash and verdict."""
    if not isinstance(receipt, dict) or receipt.get("format") != RECEIPT_FORMAT:
        return False
    sig = receipt.get("sig")
    body = {k: v for k, v in receipt.items() if k != "sig"}
    try:
        VerifyKey(identity).verify(g.digest(RECEIPT_DOMAIN, canonical_bytes(body)),
                                   bytes.fromhex(str(sig)))
    except (BadSignatureError, TypeError, ValueError):
        return False
    if report is None:
        return True
    audit_part = receipt.get("audit") or {}
    faces = g.digest(b"lingxi/cards/faces/v1", canonical_bytes(report.faces)).hex()
    return (receipt.get("transcript_hash") == report.transcript_hash
            and audit_part.get("ok") == report.ok and audit_part.get("code") == report.code
            and (not report.ok or receipt.get("faces_hash") == faces))
