"""The ending rules of a mental-poker session: seats, who owes what, how it ends.

One place for the facts the live machine and the offline judge share:

- **Seats bind agents.** Each side signs its seat (seat key, nonce, role,
  session id, protocol id; the host's also the universe and the deal) with
  its Ed25519 identity key. A verdict names an identity only from a seat
  whose signature verifies; every cards message is signed with the seat key
  it names, so a cheat that aborts still leaves a record pointing at an agent.
- **Who owes what when.** Setup steps, the share after a draw and the second
  opening are due from the cards protocol (``Table.due``). During play the
  side to move owes its move (``proto_mp_turn``, else the side whose legal
  actions are not empty); once the game is decided the host owes its
  opening. A forfeit claim by the side that owes is refused and blames it.
- **Endings.** The game's result stands when both keys are opened; an opening
  before the game is decided is a resignation (the opener loses); a withheld
  opening, or any step withheld, loses for the side that owed it once the
  other side claims the forfeit; a breach that the public plays show, a card
  cheat or a false claim loses for the breacher at once. The verdict itself
  (its fields and vocabulary) is :mod:`lingxi.session.core.verdicts`.

Pure: signing goes through the injected identity object.
"""

from __future__ import annotations

import hashlib
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from lingxi.canonical import canonical_bytes
from lingxi.session.core.verdicts import ROLES

SEAT_DOMAIN = b"lingxi/session/mental_poker/seat/v1"
SEAT_FIELDS = ("signing_key", "nonce", "identity", "universe", "deal")



def seat_bytes(session_id: str, protocol_id: str, role: str, seat: dict[str, Any]) -> bytes:
    """What a side's identity key signs when it sits down."""
    body = {k: seat[k] for k in SEAT_FIELDS if k in seat}
    return hashlib.sha256(SEAT_DOMAIN + canonical_bytes(
        {"session": session_id, "protocol": protocol_id, "role": role, **body})).digest()


def sign_seat(identity: Any, session_id: str, protocol_id: str, role: str,
              seat: dict[str, Any]) -> str:
    """The seat's ``seat_sig``: ``identity.sign`` over :func:`seat_bytes` (hex)."""
    return bytes(identity.sign(seat_bytes(session_id, protocol_id, role, seat))).hex()


def seat_signed(session_id: str, protocol_id: str, role: str, seat: dict[str, Any]) -> bool:
    """Whether ``seat`` carries its ``identity``'s valid signature for this session and role."""
    try:
        VerifyKey(bytes.fromhex(str(seat["identity"]))).verify(
            seat_bytes(session_id, protocol_id, role, seat), bytes.fromhex(str(seat["seat_sig"])))
    except (KeyError, BadSignatureError, ValueError, TypeError):
        return False
    return True


def game_owed(decided: bool, turn: str | None) -> tuple[str, str] | None:
    """(role, step) the game requires when the cards protocol has no due step."""
    if decided:
        return ("host", "open")
    return (turn, "move") if turn in ROLES else None


PASS_DOMAIN = b"lingxi/session/mental_poker/pass/v1"


def pass_bytes(session_id: str, role: str, moves: int, head: str) -> bytes:
    """What a ``pass`` signs: the cards session, the passer, the move number, the table head."""
    return hashlib.sha256(PASS_DOMAIN + canonical_bytes(
        {"session": session_id, "role": role, "moves": moves, "prev": head})).digest()
