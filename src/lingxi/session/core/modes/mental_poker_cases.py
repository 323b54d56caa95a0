"""mental_poker's own cheats, offline check and summary lines.

Cheats reuse :mod:`lingxi.cards.cheats`: an adversary swaps the cheating
party's ``_send`` for one that, at the cheat's step, returns the cheat's
signed, well-linked bad message instead of the honest one (the cheater's own
table is left as it was). Each case expects the cards code of its cheat, so
``lingxi protocol test --adversarial`` names what was caught. Steps that an
honest self-play never reaches (no draw in a trick game) are reported as not
applicable.

The offline check and the verdicts are in :mod:`.mental_poker_judge`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from nacl.signing import SigningKey

from lingxi.cards.cheats import CHEATS
from lingxi.cards.party import MentalPokerParty
from lingxi.cards.payloads import PREFIX
from lingxi.session.core.adversaries import Adversary, Case, Silent
from lingxi.session.core.modes.mental_poker_rules import pass_bytes
from lingxi.session.core.verdicts import verdict_line

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
    "false_forfeit": ("share", 1),
}
NEEDS_DRAW = {"wrong_share", "bad_share_proof", "forged_response", "false_forfeit"}


def _forged_signature(c: MentalPokerParty, h: Any) -> dict[str, Any]:
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

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        party = getattr(side.machine, "party", None)
        if party is not None and not self.installed:
            self.installed = True
            honest = party._send

            def cheating_send(kind: str, body: dict[str, Any], verified: bool = True) -> Any:
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

    @property
    def cheated(self) -> bool:  # type: ignore[override]
        return self.done


class SilentAfterDraw(Adversary):
    """Play honestly until the first draw is answered, then never send again."""

    def __init__(self) -> None:
        self.drew = False

    @property
    def cheated(self) -> bool:  # type: ignore[override]
        return self.drew

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if self.drew and not str(payload.get("action", "")).startswith("session."):
            return []
        if payload.get("action") == PREFIX + "draw":
            self.drew = True
        return [(payload, correlation_id)]


class SilentAtFirstMove(Adversary):
    """Play the setup honestly (so the cheater has seen its hand), then never move."""

    def __init__(self) -> None:
        self.stopped = False

    @property
    def cheated(self) -> bool:  # type: ignore[override]
        return self.stopped

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
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

    @property
    def cheated(self) -> bool:  # type: ignore[override]
        return self.done

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        machine = side.machine
        party = getattr(machine, "party", None)
        if (self.done or payload.get("action") != PREFIX + "play" or party is None
                or machine.table_cards is None):
            return [(payload, correlation_id)]
        self.done = True
        head = payload["prev"]
        key = SigningKey(bytes(32)) if self.forge else machine.signing_key
        sig = key.sign(pass_bytes(machine.session_key, machine.role,
                                  len(machine.history) - 1, head)).signature.hex()
        return [({"action": "pass", "prev": head, "sig": sig}, correlation_id)]


def _false_claim(c: MentalPokerParty, h: Any) -> dict[str, Any]:
    """A signed forfeit claim against the peer, made when it is the claimant's own move."""
    return c.sign("forfeit", {"against": c.peer, "reason": "no answer (made up: my move)"})


class Resigns(Adversary):
    """At its first game move the cheater opens its key instead: it quits (resigns)."""

    def __init__(self) -> None:
        self.installed = False
        self.cheated = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        machine = side.machine
        party = getattr(machine, "party", None)
        if party is not None and not self.installed:
            self.installed = True
            honest = party._send

            def quitting_send(kind: str, body: dict[str, Any], verified: bool = True) -> Any:
                if not self.cheated and kind in ("draw", "play") \
                        and machine.table_cards is not None:
                    self.cheated = True
                    return honest("open", {"secret": party._secret.hex()}, verified)
                return honest(kind, body, verified)

            party._send = quitting_send
        return [(payload, correlation_id)]


class WithholdsOpening(Adversary):
    """Plays the whole game honestly, then never sends its opening (nor anything after)."""

    def __init__(self) -> None:
        self.cheated = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if payload.get("action") == PREFIX + "open":
            self.cheated = True
        if self.cheated and not str(payload.get("action", "")).startswith("session."):
            return []
        return [(payload, correlation_id)]


class ForbiddenPlay(Adversary):
    """Once, plays a card its own rules forbid (in a trick game: a revoke, not following suit
    while holding it), with its own rule checks switched off; then plays on honestly.

    In Crazy Eights the public state shows it at once; in Short Whist it is shown when the
    cheater later plays the suit it did not follow (every card is played).
    """

    def __init__(self) -> None:
        self.installed = False
        self.cheated = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        machine = side.machine
        if not self.installed and getattr(machine, "party", None) is not None:
            self.installed = True
            self._install(machine)
        return [(payload, correlation_id)]

    def _install(self, machine: Any) -> None:
        hooks, role = machine.hooks, machine.role
        legal0, choose0 = hooks.proto_mp_legal_actions, hooks.proto_mp_choose_action
        validate0 = hooks.proto_mp_validate_play

        def forbidden(view: dict[str, Any], honest: list[dict[str, Any]]) -> list[dict[str, Any]]:
            plays = [a for a in honest if a.get("action") == "play"]
            if self.cheated or not plays:
                return []
            held = {a["card"] for a in plays}
            return [{"action": "play", "card": c} for c in view["hand"] if c not in held]

        def legal(view: dict[str, Any]) -> list[dict[str, Any]]:
            honest: list[dict[str, Any]] = legal0(view)
            return honest + forbidden(view, honest)

        def choose(view: dict[str, Any], options: list[dict[str, Any]]) -> dict[str, Any]:
            bad = forbidden(view, legal0(view))
            if bad:
                self.cheated = True
                return bad[0]
            chosen: dict[str, Any] = choose0(view, [a for a in options if a in legal0(view)]
                                             or options)
            return chosen

        def validate(view: dict[str, Any], who: str, action: dict[str, Any]) -> Any:
            return None if who == role else validate0(view, who, action)

        hooks.proto_mp_legal_actions = legal
        hooks.proto_mp_choose_action = choose
        hooks.proto_mp_validate_play = validate


class SeatCheat(Adversary):
    """The cheater's seat is signed wrongly: by a stranger's key, for another identity than
    the handshake proved, or for another session; or it is signed rightly and still
    wrong: sent twice, a host's seat that names no deck, a guest's that names one."""

    STRANGER = SigningKey(bytes(range(32)))

    def __init__(self, how: str) -> None:
        self.how = how
        self.cheated = False

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if self.cheated or payload.get("action") != "seat":
            return [(payload, correlation_id)]
        from lingxi.session.core.modes.mental_poker_rules import seat_bytes, sign_seat

        machine = side.machine
        seat = dict(payload)
        session, pid, role = str(machine.session_id), machine.spec.protocol_id, machine.role
        self.cheated = True
        if self.how == "twice":
            return [(payload, correlation_id), (seat, correlation_id)]
        if self.how in ("no deck", "deck"):
            if self.how == "no deck":
                seat.pop("universe", None)
                seat.pop("deal", None)
            else:
                seat["universe"] = list(machine.universe)
                seat["deal"] = [machine.deal.host, machine.deal.guest, machine.deal.table]
            seat["seat_sig"] = sign_seat(machine.identity, session, pid, role, seat)
            return [(seat, correlation_id)]
        stranger = self.STRANGER
        if self.how == "identity":
            seat["identity"] = bytes(stranger.verify_key).hex()
        if self.how == "session":
            seat["seat_sig"] = bytes(machine.identity.sign(
                seat_bytes("another-session", pid, role, seat))).hex()
        else:
            seat["seat_sig"] = stranger.sign(seat_bytes(session, pid, role, seat)).signature.hex()
        return [(seat, correlation_id)]


def _verdict_code(outcome: Any) -> str | None:
    """What a victim that completed detected: the verdict's code (e.g. a resignation)."""
    if outcome.status != "completed":
        return outcome.code if outcome.by == "local" else None
    return ((outcome.summary or {}).get("verdict") or {}).get("code")


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
    cases.extend(_ending_cases(honest))
    return cases


def _ending_cases(honest: dict[str, list[dict[str, Any]]]) -> list[Case]:
    """Blame, resignation, withheld openings, public breaches, identity-bound seats."""
    cases = []
    for cheater in ("guest", "host"):
        if _moves(honest, cheater, "play"):
            cases.append(Case(f"false forfeit claim: at its own move the {cheater} claims the "
                              f"peer stopped ({cheater})", cheater, ("cards.false_forfeit",),
                              partial(PartyCheat, "play", 0, _false_claim)))
    cases.append(Case("resignation: the guest opens its key instead of its first move (guest)",
                      "guest", ("mental_poker.resigned",), Resigns, detect=_verdict_code))
    for cheater in ("guest", "host"):
        cases.append(Case(f"withheld opening: the {cheater} plays to the end, then never opens "
                          f"({cheater})", cheater, ("cards.forfeit",), WithholdsOpening))
    cases.append(Case("forbidden play (a revoke in a trick game), shown by the public plays "
                      "(guest)", "guest", ("mental_poker.illegal_play",), ForbiddenPlay))
    for how, text in (("key", "signed by a stranger's key"),
                      ("identity", "naming another identity than its handshake"),
                      ("session", "signed for another session")):
        for cheater in ("host", "guest"):
            cases.append(Case(f"seat {text} ({cheater})", cheater, ("mental_poker.bad_seat",),
                              partial(SeatCheat, how)))
    cases.append(Case("seat sent twice (guest)", "guest", ("session.out_of_phase",),
                      partial(SeatCheat, "twice")))
    cases.append(Case("host's seat naming no deck, rightly signed (host)", "host",
                      ("mental_poker.bad_seat",), partial(SeatCheat, "no deck")))
    cases.append(Case("guest's seat naming a deck, rightly signed (guest)", "guest",
                      ("mental_poker.bad_seat",), partial(SeatCheat, "deck")))
    return cases


class _SilentAfterSeat(Silent):
    """Announce the seat, then say nothing (the peer times out waiting for its key)."""

    def outgoing(self, side: Any, payload: dict[str, Any],
                 correlation_id: str | None) -> list[tuple[dict[str, Any], str | None]]:
        if payload.get("action") in ("session.offer", "session.accept", "seat"):
            return [(payload, correlation_id)]
        return []


def mp_lines(events: Iterable[dict[str, Any]], hooks: Any) -> list[str]:
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
        elif kind == "mp.resigned":
            lines.append(f"the {event.get('by')} resigns (it opened before the game was decided)")
        elif kind == "session.finished":
            verdict = (event.get("summary") or {}).get("verdict")
            if isinstance(verdict, dict):
                lines.append("verdict: " + verdict_line(verdict))
    return lines
