"""mental_poker's own cheats, offline check and summary lines.

Cheats reuse :mod:`lingxi.cards.cheats`: an adversary swaps the cheating
party's ``_send`` for one that, at the cheat's step, returns the cheat's
signed, well-linked bad message instead of the honest one (the cheater's own
table is left as it was). Each case expects the cards code of its cheat, so
``lingxi protocol test --adversarial`` names what was caught. Steps that an
honest self-play never reaches (no draw in a trick game) are reported as not
applicable.

The offline check rebuilds the cards transcript from the session transcript
(the seats give the signing keys, the nonces, the universe and the deal) and
re-runs :func:`lingxi.cards.audit` on it, plus every ``pass`` signature.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from lingxi.cards import audit
from lingxi.cards.cheats import CHEATS
from lingxi.cards.errors import CardsError
from lingxi.cards.party import TRANSCRIPT_FORMAT
from lingxi.cards.payloads import PREFIX, from_payload
from lingxi.cards.table import Deal, Params, Table
from lingxi.session.core.adversaries import Adversary, Case, Silent

# cheat name -> (step whose message it replaces, which one of the cheater's, 0 = first game play)
TRIGGERS: dict[str, tuple[str, int]] = {
    "rogue_key": ("hello", 1), "copied_key": ("hello", 1),
    "corrupt_entry": ("shuffle", 1), "duplicate_entry": ("shuffle", 1),
    "missing_card": ("shuffle", 1), "stacked_shuffle": ("shuffle", 1),
    "stacked_shuffle_host": ("shuffle", 1), "non_permutation": ("shuffle", 1),
    "replayed_shuffle": ("shuffle", 1),
    "wrong_share": ("share", 1), "bad_share_proof": ("share", 1),
    "forged_response": ("share", 1),
    "wrong_face": ("play", 0), "not_in_hand": ("play", 0), "double_play": ("play", 0),
    "peek": ("play", 0), "peek_dealt": ("play", 0),
    "false_opening": ("open", 1), "skipped_opening": ("open", 1),
}
NEEDS_DRAW = {"wrong_share", "bad_share_proof", "forged_response"}


def _forged_signature(c: Any, h: Any) -> dict[str, Any]:
    msg = c.sign("draw", {"position": c.table.cursor})
    stranger = SigningKey(bytes(32))
    from lingxi.cards.table import signing_bytes
    msg["sig"] = stranger.sign(signing_bytes(msg)).signature.hex()
    return msg


class PartyCheat(Adversary):
    """Replace the cheater's ``nth`` cards message of ``step`` with ``make(party, party)``.

    ``nth == 0`` means the cheater's first play after the table cards.
    """

    def __init__(self, step: str, nth: int, make: Callable[[Any, Any], dict[str, Any]]) -> None:
        self.step, self.nth, self.make = step, nth, make
        self.seen = 0
        self.installed = False
        self.done = False

    def outgoing(self, side: Any, payload: dict[str, Any], correlation_id: str | None):
        party = getattr(side.machine, "party", None)
        if party is not None and not self.installed:
            self.installed = True
            honest = party._send

            def cheating_send(kind: str, body: dict[str, Any], verified: bool = True):
                if not self.done and kind == self.step:
                    self.seen += 1
                    skip = len(party.params.deal.table_positions()) if (
                        self.nth == 0 and party.role == "host") else 0
                    if self.seen == (self.nth or 1) + skip:
                        self.done = True
                        return self.make(party, party)
                return honest(kind, body, verified)

            party._send = cheating_send
        return [(payload, correlation_id)]


class SilentAfterDraw(Adversary):
    """Play honestly until the first draw is answered, then never send again."""

    def __init__(self) -> None:
        self.drew = False

    def outgoing(self, side: Any, payload: dict[str, Any], correlation_id: str | None):
        if self.drew and not str(payload.get("action", "")).startswith("session."):
            return []
        if payload.get("action") == PREFIX + "draw":
            self.drew = True
        return [(payload, correlation_id)]


class SilentAtFirstMove(Adversary):
    """Play the setup honestly (so the cheater has seen its hand), then never move."""

    def __init__(self) -> None:
        self.stopped = False

    def outgoing(self, side: Any, payload: dict[str, Any], correlation_id: str | None):
        machine = side.machine
        if getattr(machine, "table_cards", None) is not None and (
                payload.get("action") in ("pass", PREFIX + "draw", PREFIX + "play")):
            self.stopped = True
        if self.stopped and not str(payload.get("action", "")).startswith("session."):
            return []
        return [(payload, correlation_id)]


class IllegalPass(Adversary):
    """Replace the cheater's first game play with a correctly signed pass."""

    def __init__(self, forge: bool = False) -> None:
        self.done, self.forge = False, forge

    def outgoing(self, side: Any, payload: dict[str, Any], correlation_id: str | None):
        machine = side.machine
        party = getattr(machine, "party", None)
        if (self.done or payload.get("action") != PREFIX + "play" or party is None
                or machine.table_cards is None):
            return [(payload, correlation_id)]
        self.done = True
        from lingxi.session.core.modes.mental_poker import pass_bytes
        head = payload["prev"]
        key = SigningKey(bytes(32)) if self.forge else machine.signing_key
        sig = key.sign(pass_bytes(machine.session_key, machine.role,
                                  len(machine.history) - 1, head)).signature.hex()
        return [({"action": "pass", "prev": head, "sig": sig}, correlation_id)]


def _moves(honest: dict[str, list[dict[str, Any]]], role: str, action: str) -> int:
    return sum(1 for e in honest.get("host", []) if e.get("event") == "mp.move"
               and e.get("by") == role and e.get("action") == action)


def mp_cases(spec: Any, honest: dict[str, list[dict[str, Any]]]) -> list[Case]:
    cases: list[Case] = []
    drawer = next((r for r in ("guest", "host") if _moves(honest, r, "draw")), None)
    for name, (step, nth) in TRIGGERS.items():
        cheat = CHEATS[name]
        cheater = cheat.cheater
        if name in NEEDS_DRAW:  # the side that answers a draw cheats in its answer
            cheater = "host" if drawer == "guest" else "guest"
        label = f"{name.replace('_', ' ')}: {cheat.text} ({cheater})"
        if name in NEEDS_DRAW and drawer is None:
            cases.append(Case(label, cheater, (), None,
                              "not applicable: nobody draws in an honest self-play"))
            continue
        if step == "play" and not _moves(honest, cheater, "play"):
            cases.append(Case(label, cheater, (), None,
                              f"not applicable: the {cheater} never plays a card"))
            continue
        cases.append(Case(label, cheater, (cheat.code,),
                          partial(PartyCheat, step, nth, cheat.make)))
    cases.append(Case("forged cards signature: a draw signed by another key (guest)", "guest",
                      ("cards.bad_signature",), partial(PartyCheat, "play", 0,
                                                        _forged_signature)))
    if drawer is not None:
        cases.append(Case(f"abort after a draw: the {drawer} sees its card, then goes silent",
                          drawer, ("cards.forfeit",), SilentAfterDraw))
    else:
        cases.append(Case("abort after a draw", "guest", (), None,
                          "not applicable: nobody draws in an honest self-play"))
    cases.append(Case("abort after the deal: the guest sees its hand, then never moves",
                      "guest", ("cards.forfeit",), SilentAtFirstMove))
    cases.append(Case("silent after the seats: no masking key (host)", "host",
                      ("cards.forfeit", "session.timeout"), partial(_SilentAfterSeat)))
    cases.append(Case("illegal pass instead of the first play (guest)", "guest",
                      ("mental_poker.illegal_play",), IllegalPass))
    cases.append(Case("pass signed by another key (guest)", "guest",
                      ("mental_poker.bad_pass",), partial(IllegalPass, True)))
    return cases


class _SilentAfterSeat(Silent):
    """Announce the seat, then say nothing (the peer times out waiting for its key)."""

    def outgoing(self, side: Any, payload: dict[str, Any], correlation_id: str | None):
        if payload.get("action") in ("session.offer", "session.accept", "seat"):
            return [(payload, correlation_id)]
        return []


# ----------------------------------------------------------------- offline


def cards_transcript(entries: list[dict[str, Any]]) -> tuple[
        dict[str, Any] | None, list[tuple[int, str, dict[str, Any]]], list[str]]:
    """(cards transcript, passes as (cards messages before it, sender, payload), problems)."""
    seats: dict[str, dict[str, Any]] = {}
    messages: list[dict[str, Any]] = []
    passes: list[tuple[int, str, dict[str, Any]]] = []
    problems: list[str] = []
    for entry in entries:
        payload = (entry.get("envelope") or {}).get("payload") or {}
        action = payload.get("action") if isinstance(payload, dict) else None
        sender = "host" if entry.get("direction") == "host_to_guest" else "guest"
        if action == "seat":
            seats.setdefault(sender, payload)
        elif action == "pass":
            passes.append((len(messages), sender, payload))
        elif isinstance(action, str) and action.startswith(PREFIX):
            try:
                messages.append(from_payload(payload))
            except CardsError as error:
                problems.append(f"entry {entry.get('n')}: {error.message}")
    if not seats and not messages:
        return None, [], problems
    if set(seats) != {"host", "guest"}:
        problems.append("the transcript lacks a seat of each side")
        return None, [], problems
    host, guest = seats["host"], seats["guest"]
    transcript: dict[str, Any] = {"format": TRANSCRIPT_FORMAT,
                  "session_id": f"{host.get('nonce')}:{guest.get('nonce')}",
                  "universe": list(host.get("universe") or []),
                  "deal": list(host.get("deal") or []),
                  "identities": {"host": host.get("signing_key"),
                                 "guest": guest.get("signing_key")},
                  "messages": messages}
    return transcript, passes, problems


def verify_game(entries: list[dict[str, Any]], spec: Any) -> list[str]:
    """Offline: the cards audit over the transcript, and every pass signature."""
    from lingxi.session.core.modes.mental_poker import pass_bytes

    transcript, passes, problems = cards_transcript(entries)
    if transcript is None:
        return problems
    report = audit(transcript)
    if not report.ok:
        who = f" (culprit: {report.culprit})" if report.culprit else ""
        problems.append(f"cards audit: {report.code}{who}: {report.message}")
    try:
        params = Params(transcript["session_id"], tuple(transcript["universe"]),
                        Deal(*transcript["deal"]),
                        {r: bytes.fromhex(k) for r, k in transcript["identities"].items()})
        table = Table(params)
    except (CardsError, TypeError, ValueError):
        return problems
    heads = [table.head.hex()]
    moves = [0]
    table_n = len(params.deal.table_positions())
    count = 0
    for msg in transcript["messages"]:
        try:
            table.apply(msg, verified=True)
        except CardsError:
            break
        if msg["mp"] in ("draw", "play"):
            count += 1
        heads.append(table.head.hex())
        moves.append(count)
    passed = 0
    for before, sender, payload in passes:
        if before >= len(heads):
            problems.append("a pass after the audit stopped")
            continue
        played = moves[before] - table_n + passed
        passed += 1
        try:
            VerifyKey(bytes.fromhex(transcript["identities"][sender])).verify(
                pass_bytes(transcript["session_id"], sender, played, heads[before]),
                bytes.fromhex(str(payload.get("sig"))))
            if payload.get("prev") != heads[before]:
                raise BadSignatureError("unlinked")
        except (BadSignatureError, ValueError, TypeError):
            problems.append(f"a {sender} pass is not signed for its place in the game")
    return problems


def mp_lines(events: list[dict[str, Any]], hooks: Any) -> list[str]:
    """Readable lines: the face-up cards, every move, the winner and the audit."""
    lines = []
    for event in events:
        kind = event.get("event")
        if kind == "mp.table":
            lines.append(f"table: {' '.join(event.get('cards') or [])}")
        elif kind == "mp.move":
            by, action = event.get("by"), event.get("action")
            if action == "play":
                note = f" (names {event['note']})" if event.get("note") else ""
                lines.append(f"{by} plays {event.get('card')}{note}")
            elif action == "draw":
                lines.append(f"{by} draws")
            else:
                lines.append(f"{by} passes")
        elif kind == "mp.game_over":
            lines.append(f"winner: {event.get('winner')}")
        elif kind == "mp.receipt":
            audit_part = (event.get("receipt") or {}).get("audit") or {}
            lines.append("audit: every shuffle, share and play checks out"
                         if audit_part.get("ok") else f"audit: {audit_part.get('code')}")
        elif kind == "mp.cheat_detected":
            lines.append(f"cheat detected: {event.get('code')} by {event.get('culprit')}")
        elif kind == "mp.forfeit":
            lines.append(f"forfeit recorded against the {event.get('against')}")
    return lines
