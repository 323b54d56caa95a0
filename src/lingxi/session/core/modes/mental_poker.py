"""mental_poker: two-party card games with hidden hands and no dealer.

The engine owns the deck: each side runs one :class:`~lingxi.cards.MentalPokerParty`
(joint masking key, two proven shuffles, draws answered by decryption shares
with proofs, plays proven against their position, both keys opened and
audited at the end). The hooks own only the game: the deck's labels, the
initial deal, the legal actions, the choice among them, play legality and
the winner. See docs/session.md ("mental_poker") and docs/mental-poker.md.

Signing. Each side draws a per-session Ed25519 seat key from the injected
entropy and announces it in its ``seat`` message (with a nonce; both nonces
form the cards session id); every cards message and every ``pass`` is signed
with it. The seat itself is signed with the agent's identity key (the driver
injects a signer with ``Start``), over the session id and the protocol id, and
the peer's seat must carry the identity the handshake proved: so a record
ties every signed move to an agent even when the peer aborts and never signs
a receipt. Ending rules and verdicts: :mod:`.mental_poker_rules`.

Heavy steps (my shuffle with its proof, the check of the peer's shuffle
proof) run as ``Compute`` actions; a peer message that arrives meanwhile is
held until the computation is done. A :class:`~lingxi.cards.CardsError` on
a peer message ends the session at once with the error's own code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from lingxi.canonical import canonical_bytes
from lingxi.cards.errors import CardsError
from lingxi.cards.party import MentalPokerParty
from lingxi.cards.payloads import PREFIX, from_payload, to_payload
from lingxi.cards.table import Deal
from lingxi.hooks import methods as hook_methods
from lingxi.hooks.base import implements
from lingxi.hooks.result import DecisionPoint
from lingxi.session import errors as codes
from lingxi.session.core import verdicts
from lingxi.session.core.descriptor import FlowMode
from lingxi.session.core.events import Outcome, PeerAborted
from lingxi.session.core.machine import SessionMachine, State
from lingxi.session.core.modes import mental_poker_cases as cases
from lingxi.session.core.modes import mental_poker_judge as judge
from lingxi.session.core.modes import mental_poker_rules as endings
from lingxi.session.core.modes.mental_poker_rules import pass_bytes

BAD_SEAT = "mental_poker.bad_seat"
DECK_MISMATCH = "mental_poker.deck_mismatch"
ILLEGAL_PLAY = "mental_poker.illegal_play"
BAD_PASS = "mental_poker.bad_pass"
RULE_BROKEN = "mental_poker.rule_broken"
NO_IDENTITY = "mental_poker.no_identity"
FORFEIT = "cards.forfeit"
FALSE_FORFEIT = "cards.false_forfeit"
RESIGNED = "mental_poker.resigned"
MAX_MOVES = 10_000


def _owed_words(owed: Any) -> str:
    step = owed[1] if isinstance(owed, list | tuple) and len(owed) == 2 else None
    words = {"open": "its opening was due", "move": "its move was due"}
    return words.get(str(step), f"its {step} was due" if step else "a step was due")


def bounded_text(value: Any) -> str:
    return repr(value)[:200]


def session_id_of(host_nonce: str, guest_nonce: str) -> str:
    return f"{host_nonce}:{guest_nonce}"


def deal_of(value: Any) -> Deal:
    """A hook's initial deal: a Deal, a dict with host/guest/table, or a 3-list."""
    if isinstance(value, Deal):
        return value
    if isinstance(value, dict):
        value = [value.get("host"), value.get("guest"), value.get("table", 0)]
    if (isinstance(value, list | tuple) and len(value) == 3
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)):
        return Deal(*value)
    raise ValueError("proto_mp_initial_deal returns {'host': n, 'guest': n, 'table': n}")


class _Failed:
    """A CardsError raised inside a Compute, carried back as a value."""

    def __init__(self, error: CardsError) -> None:
        self.error = error


def _guard(work: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        try:
            return work()
        except CardsError as error:
            return _Failed(error)
    return run


class MentalPokerMachine(SessionMachine):
    mode = "mental_poker"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.party: MentalPokerParty | None = None
        self.history: list[dict[str, Any]] = []
        self.table_cards: list[str] | None = None
        self.winner: str | None = None
        self.deferred: list[tuple[str, dict[str, Any]]] = []
        self.peer_seat: dict[str, Any] | None = None
        self._peer_waits = True
        self.resigned: str | None = None  # the side that opened before the game was decided
        self.verdict: dict[str, Any] | None = None  # set where the end is decided

    def begin(self) -> None:
        self._seed = self.entropy(32)
        self.signing_key = SigningKey(self._seed)
        self.nonce = self.entropy(16).hex()
        universe = self.call("proto_mp_deck_universe")
        if self.finished:
            return
        if not isinstance(universe, list | tuple) or not all(isinstance(c, str) for c in universe):
            self.violation(codes.HOOKS_BAD_RESULT, "proto_mp_deck_universe must return a list "
                           "of card labels", {"returned": type(universe).__name__})
            return
        self.universe = list(universe)
        deal = self.call("proto_mp_initial_deal")
        if self.finished:
            return
        try:
            self.deal = deal_of(deal)
        except ValueError as error:
            self.violation(codes.HOOKS_BAD_RESULT, str(error), {})
            return
        if self.identity is None or self.session_id is None:
            self.violation(NO_IDENTITY, "mental poker needs this agent's identity key to sign "
                           "its seat (run the session through a driver)", {})
            return
        if self.role == "host":
            self.send(self._seat({"universe": self.universe,
                                  "deal": [self.deal.host, self.deal.guest, self.deal.table]}))

    def _seat(self, extra: dict[str, Any]) -> dict[str, Any]:
        """My seat: seat key, nonce and identity, signed with the identity key."""
        seat = {"action": "seat", "signing_key": bytes(self.signing_key.verify_key).hex(),
                "nonce": self.nonce, "identity": self.identity.public_hex, **extra}
        seat["seat_sig"] = endings.sign_seat(self.identity, str(self.session_id),
                                             self.spec.protocol_id, self.role, seat)
        return seat

    @property
    def identities(self) -> dict[str, str | None]:
        """Identity keys by role: mine, and the peer's (its signed seat's, which must be the
        one its handshake proved; before the seat, the handshake's)."""
        mine = self.identity.public_hex if self.identity is not None else None
        theirs = self.peer_seat.get("identity") if self.peer_seat else self.peer_key
        return {self.role: mine, self.peer: theirs}

    # ------------------------------------------------------------- views
    @property
    def session_key(self) -> str:
        assert self.peer_seat is not None  # asked only once both seats are known
        host, guest = ((self.nonce, self.peer_seat["nonce"]) if self.role == "host"
                       else (self.peer_seat["nonce"], self.nonce))
        return session_id_of(host, guest)

    def view(self) -> dict[str, Any]:
        """What the hooks (and a decider) see: my hand and the public game."""
        party = self.party
        assert party is not None
        table = party.table
        sizes = {r: sum(1 for p, o in table.owner.items() if o == r and p not in table.played)
                 for r in ("host", "guest")}
        table_cards = self.table_cards or [table.played[p] for p in self.deal.table_positions()
                                           if p in table.played]
        return {"role": self.role, "hand": sorted(party.hand().values()),
                "table": list(table_cards), "history": [dict(h) for h in self.history],
                "stock": party.stock_left(), "hand_sizes": sizes}

    # ----------------------------------------------------------- who owes
    def _decided(self) -> bool:
        """Whether the public game is over (the rules name a result)."""
        if self.party is None or self.party.table.must_reveal:
            return False
        return self.call("proto_mp_check_winner", self.view()) is not None

    def whose_turn(self, view: dict[str, Any]) -> str | None:
        """The side to move: ``proto_mp_turn`` when the hooks have it, else this side when
        its legal actions are not empty, else the peer."""
        if implements(self.hooks, "proto_mp_turn"):
            turn = self.call("proto_mp_turn", view)
            if turn not in ("host", "guest", None):
                self.violation(codes.HOOKS_BAD_RESULT, "proto_mp_turn returns 'host', 'guest' "
                               "or None", {"returned": bounded_text(turn)})
                return None
            return None if turn is None else str(turn)
        return self.role if self.call("proto_mp_legal_actions", view) else self.peer

    def _game_due(self, table: Any) -> tuple[str, str] | None:
        """The party's ``game_due``: during play, the move or opening the game requires."""
        if table.must_reveal:
            return None
        view = self.view()
        decided = self.call("proto_mp_check_winner", view) is not None
        return endings.game_owed(decided, None if decided else self.whose_turn(view))

    def position(self) -> dict[str, Any]:
        return {"phase": self.party.table.phase if self.party else "seat",
                "iteration": len(self.history)}

    def rounds_played(self) -> int:
        return len(self.history)

    # ------------------------------------------------------------ receiving
    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        if self.computing:
            self.deferred.append((name, payload))
            return
        self._handle(name, payload)

    def _handle(self, name: str, payload: dict[str, Any]) -> None:
        self.emit("message.received", message=name, payload=payload, **self.position())
        if name == "seat":
            self._on_seat(payload)
        elif self.party is None:
            self.violation(codes.OUT_OF_PHASE, f"{name!r} before both seats were announced",
                           {"payload": payload})
        elif name == "pass":
            self._on_pass(payload)
        elif name.startswith(PREFIX):
            self._on_cards(payload)
        else:
            self.violation(codes.OUT_OF_PHASE, f"{name!r} is not a mental_poker message",
                           {"payload": payload})

    def _on_seat(self, payload: dict[str, Any]) -> None:
        if self.peer_seat is not None:
            self.violation(codes.OUT_OF_PHASE, "a second seat", {"payload": payload})
            return
        mine = bytes(self.signing_key.verify_key).hex()
        if payload["signing_key"] == mine or payload["nonce"] == self.nonce:
            self._breach(BAD_SEAT, "the peer's seat copies this side's key or nonce",
                         {"payload": payload})
            return
        if self.peer_key is not None and payload.get("identity") != self.peer_key:
            self._breach(BAD_SEAT, "the peer's seat names another identity than the one its "
                         "handshake proved", {"payload": payload, "handshake": self.peer_key})
            return
        if not endings.seat_signed(str(self.session_id), self.spec.protocol_id, self.peer,
                                   payload):
            self._breach(BAD_SEAT, "the peer's seat is not signed by its identity key for "
                         "this session", {"payload": payload})
            return
        if self.role == "guest":
            theirs = (payload.get("universe"), payload.get("deal"))
            if theirs[0] is None or theirs[1] is None:
                self._breach(BAD_SEAT, "the host's seat must name the universe and the deal",
                             {"payload": payload})
                return
            local = [self.deal.host, self.deal.guest, self.deal.table]
            if list(theirs[0]) != self.universe or list(theirs[1]) != local:
                self.violation(DECK_MISMATCH, "the host's deck or deal differs from this side's "
                               "hooks", {"offered": {"universe": theirs[0], "deal": theirs[1]},
                                         "local": {"universe": self.universe, "deal": local}})
                return
        elif "universe" in payload or "deal" in payload:
            self._breach(BAD_SEAT, "only the host's seat names the deck", {"payload": payload})
            return
        self.peer_seat = dict(payload)
        try:
            self.party = MentalPokerParty(
                self.role, self.session_key, self.universe, self.entropy,
                signing_seed=self._seed, peer_identity=bytes.fromhex(payload["signing_key"]),
                deal=self.deal, game_due=self._game_due)
        except CardsError as error:
            self.violation(error.code, f"the deck cannot be played: {error.message}", {})
            return
        self.emit("mp.seated", session=self.session_key, peer_key=payload["signing_key"],
                  cards=len(self.universe))
        if self.role == "guest":
            self.send(self._seat({}))

    def _breach(self, code: str, message: str, evidence: dict[str, Any],
                culprit: str | None = "peer") -> None:
        """End the session for a broken rule; the culprit (the peer by default) loses."""
        who = self.peer if culprit == "peer" else culprit
        self.verdict = verdicts.verdict(verdicts.BREACH, code=code, culprit=who, reason=message,
                                       identities=self.identities)
        self.violation(code, message, evidence)

    def _rule_culprit(self, reason: str) -> str | None:
        """Which side a hidden-rule reason names ('the host played …'), if it names one."""
        named = [r for r in ("host", "guest") if f"the {r}" in reason]
        return named[0] if len(named) == 1 else None

    def _cards_violation(self, error: CardsError, payload: dict[str, Any]) -> None:
        evidence = {"culprit": error.culprit, "message": payload,
                    "message_sha256": hashlib.sha256(canonical_bytes(payload)).hexdigest(),
                    "path": error.path}
        self.emit("mp.cheat_detected", code=error.code, culprit=error.culprit,
                  message_sha256=evidence["message_sha256"])
        how = verdicts.FALSE_CLAIM if error.code == FALSE_FORFEIT else verdicts.BREACH
        self.verdict = verdicts.verdict(how, code=error.code, culprit=error.culprit,
                                       reason=error.message, identities=self.identities)
        self.violation(error.code, f"mental poker: {error.message}", evidence)

    def _game_on(self) -> bool:
        party = self.party
        return (party is not None and self.table_cards is not None and party.table.due() is None
                and party.table.phase == "play")

    def _on_cards(self, payload: dict[str, Any]) -> None:
        party = self.party
        assert party is not None
        try:
            msg = from_payload(payload)
            party.table.check_envelope(msg)  # shape, link, signature: before any game rule
        except CardsError as error:
            self._cards_violation(error, payload)
            return
        kind = msg["mp"]
        if kind == "draw" and msg["position"] == party.table.cursor and self._game_on():
            if not self._check_rule(self.peer, {"action": "draw"}, payload):
                return
        if kind == "shuffle":
            self.compute("mp.check_shuffle", _guard(lambda: party.check(msg)),
                         lambda checked: self._receive(msg, payload, checked))
            return
        self._receive(msg, payload, None)

    def _receive(self, msg: dict[str, Any], payload: dict[str, Any], checked: Any) -> None:
        party = self.party
        assert party is not None
        if isinstance(checked, _Failed):
            self._cards_violation(checked.error, payload)
            return
        game_move = self._game_on() and msg["mp"] in ("draw", "play")
        if (msg["mp"] == "open" and not party.table.opened and party.table.phase == "play"
                and party.table.due() is None and not self._decided()):
            self.resigned = self.peer  # an opening before the game is decided: it resigns
        if self.finished:  # the hooks failed deciding it
            return
        try:
            replies = party.receive(msg, checked)
        except CardsError as error:
            self.resigned = None
            self._cards_violation(error, payload)
            return
        if self.finished:  # the hooks failed while the table asked who owes
            return
        if self.resigned == self.peer and msg["mp"] == "open":
            self.emit("mp.resigned", by=self.peer, moves=len(self.history))
        if game_move and msg["mp"] == "play":
            action = {"action": "play", "card": msg["card"]}
            if msg.get("note") is not None:
                action["note"] = msg["note"]
            if not self._check_rule(self.peer, action, payload):
                return
            self._record(self.peer, action)
        elif game_move:
            self._record(self.peer, {"action": "draw"})
        for reply in replies:
            if self.finished:
                return
            self.send(to_payload(reply))
        if msg["mp"] == "forfeit" and not self.finished:  # the peer claims I stopped, and I did owe the step
            self.emit("mp.forfeit", claim=msg, against=self.role)
            owed = (party.table.forfeit or {}).get("due")
            self.verdict = verdicts.verdict(
                verdicts.FORFEIT, code=FORFEIT, culprit=self.role, identities=self.identities,
                reason=f"the {self.peer} claims this side stopped ({_owed_words(owed)})")
            self.finish("aborted", code=FORFEIT, reason=f"the {self.peer} recorded a forfeit "
                        f"against this side: {msg['reason']}", by="peer")

    def _on_pass(self, payload: dict[str, Any]) -> None:
        party = self.party
        assert party is not None and self.peer_seat is not None
        if not self._game_on():
            self._breach(BAD_PASS, "a pass outside the game's turns", {"payload": payload})
            return
        expected = party.table.head.hex()
        try:
            if payload["prev"] != expected:
                raise BadSignatureError("not linked to the table")
            VerifyKey(bytes.fromhex(self.peer_seat["signing_key"])).verify(
                pass_bytes(self.session_key, self.peer, len(self.history), expected),
                bytes.fromhex(payload["sig"]))
        except (BadSignatureError, ValueError):
            self._breach(BAD_PASS, "the pass is not signed by the peer's seat key for this move",
                         {"payload": payload, "expected_prev": expected})
            return
        action = {"action": "pass"}
        if self._check_rule(self.peer, action, payload):
            self._record(self.peer, action)

    def _check_rule(self, role: str, action: dict[str, Any], payload: dict[str, Any]) -> bool:
        """Whether ``role``'s move keeps the hooks' rules (a broken one ends the session)."""
        reason = self.call("proto_mp_validate_play", self.view(), role, dict(action))
        if self.finished:
            return False
        if reason:
            self._breach(ILLEGAL_PLAY, f"the {role}'s {action['action']} breaks the rules: "
                         f"{reason}", {"payload": payload, "action": action,
                                       "reason": str(reason)})
            return False
        return True

    def _record(self, role: str, action: dict[str, Any]) -> bool:
        """Keep a move; False when it runs past the move limit (the session is then over)."""
        move = {"by": role, **action}
        self.history.append(move)
        self.emit("mp.move", **move)
        if len(self.history) > min(MAX_MOVES, self.config.max_rounds):
            self.violation(codes.TOO_LONG, "the game ran past the local move limit",
                           {"moves": len(self.history)})
            return False
        return True

    # ------------------------------------------------------------- sending
    def _send_cards(self, msg: dict[str, Any]) -> None:
        party = self.party
        if (msg.get("mp") == "open" and party is not None and list(party.table.opened) ==
                [self.role] and self.resigned is None and not self._decided()):
            self.resigned = self.role  # I opened first, the game undecided: I resign
        self.send(to_payload(msg))

    def advance(self) -> None:
        while self.state == State.RUNNING and not self.finished and not self.paused:
            if self.deferred:
                self._handle(*self.deferred.pop(0))
                continue
            party = self.party
            self._peer_waits = True
            if party is None:
                return
            if party.faces is not None:
                self._end()
                return
            due = party.due()
            if self.finished:  # the hooks failed while the table asked who owes
                return
            try:
                if due == "hello":
                    self._send_cards(party.hello())
                    continue
                if due == "shuffle":
                    self._peer_waits = False
                    self.compute("mp.shuffle", _guard(party.prepare_shuffle), self._shuffled)
                    return
                if due == "deal":
                    self._send_cards(party.deal())
                    continue
                if due == "play":
                    self._send_cards(party.play(party.table.must_reveal[0]))
                    continue
            except CardsError as error:  # a local state error: a bug, reported as such
                self.violation(codes.HOOKS_ERROR, f"mental poker: {error.message}", {})
                return
            if party.table.due() is not None or party.table.phase != "play":
                return
            if self.table_cards is None:
                self.table_cards = [party.table.played[p] for p in self.deal.table_positions()]
                self.emit("mp.table", cards=self.table_cards, hand=sorted(party.hand().values()))
            if not self._turn():
                return

    def _shuffled(self, prepared: Any) -> None:
        assert self.party is not None
        if isinstance(prepared, _Failed):
            self.violation(codes.HOOKS_ERROR, f"mental poker: {prepared.error.message}", {})
            return
        self._send_cards(self.party.shuffle(prepared))

    def _turn(self) -> bool:
        """Act if it is my move; True when something was done and the loop may go on."""
        party = self.party
        assert party is not None
        view = self.view()
        winner = self.call("proto_mp_check_winner", view)
        if self.finished:
            return False
        if winner is not None:
            if self.winner is None:
                self.winner = str(winner)
                self.emit("mp.game_over", winner=self.winner, moves=len(self.history))
            if self.role == "host":
                self._send_cards(party.open())
                return True
            return False
        legal = self.call("proto_mp_legal_actions", view)
        if self.finished:
            return False
        if not isinstance(legal, list) or not all(isinstance(a, dict) for a in legal):
            self.violation(codes.HOOKS_BAD_RESULT, "proto_mp_legal_actions must return a list "
                           "of action dicts", {"returned": type(legal).__name__})
            return False
        if not legal:
            return False
        self._peer_waits = False
        point = self._point(view, legal)
        if self.finished:
            return False

        def choose() -> Any:
            return self.call("proto_mp_choose_action", view, list(legal))

        self.decide(point, lambda action: self._act(action, legal), choose)
        return True

    def _point(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> DecisionPoint:
        """The move as the hooks put it to a player (``proto_mp_point``: a prompt, the state
        that matters); the legal actions stay the engine's."""
        shown = self.call("proto_mp_point", dict(view), list(legal)) \
            if implements(self.hooks, "proto_mp_point") else None
        if not isinstance(shown, DecisionPoint):
            return DecisionPoint(legal=legal, view=view)
        return DecisionPoint(legal=legal, view=dict(shown.view or view), message=shown.message,
                             peer_text=dict(shown.peer_text or {}))

    def _act(self, action: Any, legal: list[dict[str, Any]]) -> None:
        party = self.party
        assert party is not None
        if action not in legal:
            self.violation(codes.HOOKS_BAD_RESULT, "the chosen action is not one of the legal "
                           "actions", {"action": action, "legal": legal})
            return
        reason = self.call("proto_mp_validate_play", self.view(), self.role, dict(action))
        if self.finished:
            return
        if reason:
            self.violation(codes.HOOKS_INVALID_MESSAGE, f"the hooks' own action breaks their "
                           f"rules: {reason}", {"action": action})
            return
        kind = action.get("action")
        try:
            if kind == "draw":
                msg = party.draw()
                if self._record(self.role, {"action": "draw"}):
                    self._send_cards(msg)
            elif kind == "play":
                hand = party.hand()
                pos = next((p for p, c in sorted(hand.items()) if c == action.get("card")), None)
                if pos is None:
                    self.violation(codes.HOOKS_BAD_RESULT, f"{action.get('card')!r} is not in "
                                   "this side's hand", {"action": action})
                    return
                note = action.get("note")
                msg = party.play(pos, note=None if note is None else str(note))
                move = {"action": "play", "card": str(action["card"])}
                if note is not None:
                    move["note"] = str(note)
                if self._record(self.role, move):
                    self._send_cards(msg)
            elif kind == "pass":
                head = party.table.head.hex()
                sig = self.signing_key.sign(pass_bytes(self.session_key, self.role,
                                                       len(self.history), head)).signature
                if self._record(self.role, {"action": "pass"}):
                    self.send({"action": "pass", "prev": head, "sig": sig.hex()})
            else:
                self.violation(codes.HOOKS_BAD_RESULT, f"unknown action {kind!r} (play, draw "
                               "or pass)", {"action": action})
        except CardsError as error:
            self.violation(codes.HOOKS_ERROR, f"mental poker: {error.message}", {"action": action})

    def _end(self) -> None:
        party = self.party
        assert party is not None and party.faces is not None
        if implements(self.hooks, "proto_mp_audit"):
            reason = self.call("proto_mp_audit", self.view(), list(party.faces))
            if self.finished:
                return
            if reason:
                self.violation(RULE_BROKEN, f"the opening shows a broken rule: {reason}",
                               {"reason": str(reason), "faces": list(party.faces)})
                return
        receipt = party.receipt()
        if self.resigned is not None:
            winner = verdicts.other(self.resigned)
            self.verdict = verdicts.verdict(
                verdicts.RESIGNATION, code=RESIGNED, culprit=self.resigned, winner=winner,
                identities=self.identities, reason=f"the {self.resigned} opened its key before "
                "the game was decided: it resigns")
            reason = f"the {self.resigned} resigned: {winner} wins"
        else:
            self.verdict = verdicts.verdict(verdicts.GAME, winner=self.winner,
                                           identities=self.identities,
                                           reason="the game's rules decided it")
            reason = f"game over: {self.winner or 'no winner'}"
        self.emit("mp.receipt", receipt=receipt, winner=self.verdict["winner"])
        self.finish("completed", reason=reason)

    def engine_summary(self, summary: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
        """The engine's verdict (winner, how, culprit and its identity key) over the hooks'."""
        found = self.verdict or verdicts.verdict(
            verdicts.INCOMPLETE, code=outcome.code, identities=self.identities,
            reason=outcome.reason or "the session ended before the game did")
        return {**summary, "winner": found["winner"], "verdict": found}

    # --------------------------------------------------------- waiting, ends
    def waiting_for_peer(self) -> bool:
        base = self.base_waiting()
        if base is not None:
            return base
        party = self.party
        if party is None or self.deferred:
            return party is None
        due = party.table.due()
        if due is not None:
            return due[0] == self.peer
        return party.faces is None and self._peer_waits

    def waiting_description(self) -> Any:
        party = self.party
        if party is None:
            return "the peer's seat"
        due = party.table.owing()
        words = {"open": "the opening", "move": "a move"}
        return f"{words.get(due[1], due[1])} from the {due[0]}" if due else "the peer's move"

    def _claim_forfeit(self, reason: str) -> dict[str, Any] | None:
        party = self.party
        if (party is None or party.faces is not None or party.table.forfeit is not None
                or party.rejected is not None or party.table.phase == "hello"
                and not party.table.keys):
            return None
        try:
            return party.forfeit(reason)
        except CardsError:
            return None

    def on_timer(self, name: str) -> None:
        if name == "peer" and not self.finished and self.waiting_for_peer():
            self._forfeit_now(f"no answer within {self._peer_seconds:g}s "
                              f"({self.waiting_description()})", "stopped answering")
        if not self.finished:
            super().on_timer(name)

    def on_control(self, event: Any) -> None:
        """The peer's receipt or close mid-game: it ended its session while it owed a step
        (e.g. it kept its opening back), which is withholding that step."""
        if event.kind in ("receipt", "close") and self.state == State.RUNNING \
                and not self.finished:
            self._forfeit_now(f"the peer ended its session ({event.kind}) while it owed "
                              f"{self.waiting_description()}", "ended its session")
        if not self.finished:
            super().on_control(event)

    def _forfeit_now(self, reason: str, what: str) -> None:
        """Sign and send a forfeit claim when the peer owes the next step, and end the game
        with it (the peer loses); nothing when this side owes the step itself."""
        waiting = self.waiting_description()
        claim = self._claim_forfeit(reason)
        if claim is None or self.finished:
            return
        self._peer_timer = False
        self.emit("mp.forfeit", claim=claim, against=self.peer)
        self.send(to_payload(claim))
        owed = (self.party.table.forfeit or {}).get("due") if self.party else None
        self.verdict = verdicts.verdict(
            verdicts.FORFEIT, code=FORFEIT, culprit=self.peer, identities=self.identities,
            reason=f"the {self.peer} {what} ({_owed_words(owed)})")
        self.violation(FORFEIT, f"the {self.peer} {what} ({waiting}): recorded as a forfeit",
                       {"claim": claim, "transcript_hash": claim["prev"]})

    def dispatch(self, event: Any) -> None:
        if isinstance(event, PeerAborted) and not self.finished:
            claim = self._claim_forfeit(f"aborted ({event.code}) before the game ended")
            if claim is not None:
                self.emit("mp.forfeit", claim=claim, against=self.peer, code=event.code)
                owed = (self.party.table.forfeit or {}).get("due") if self.party else None
                self.verdict = verdicts.verdict(
                    verdicts.FORFEIT, code=FORFEIT, culprit=self.peer, identities=self.identities,
                    reason=f"the {self.peer} aborted ({_owed_words(owed)})")
        super().dispatch(event)


def _descriptor() -> FlowMode:
    return FlowMode(
        "mental_poker", lambda spec: MentalPokerMachine,
        (hook_methods.MP_DECK_UNIVERSE, hook_methods.MP_INITIAL_DEAL,
         hook_methods.MP_LEGAL_ACTIONS, hook_methods.MP_CHOOSE_ACTION,
         hook_methods.MP_VALIDATE_PLAY, hook_methods.MP_CHECK_WINNER, hook_methods.MP_AUDIT,
         hook_methods.MP_POINT, hook_methods.START, hook_methods.FINISH,
         hook_methods.DESCRIBE),
        summary=cases.mp_lines, adversarial_cases=cases.mp_cases, verify=judge.verify_game,
        judge=judge.judge_dict, compare=judge.compare_dict)


DESCRIPTOR = _descriptor()
