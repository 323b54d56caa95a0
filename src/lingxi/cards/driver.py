"""In-process driver: two honest parties play one whole game, messages pumped in memory.

Used by the benchmark and the tests; a session machine does the same over
the wire, with heavy steps in ``Compute``. Game moves that are not card
operations (a pass) travel beside the cards messages, as the session's own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nacl.signing import SigningKey

from lingxi.cards.audit import AuditReport, audit
from lingxi.cards.errors import CardsError
from lingxi.cards.games import GAMES
from lingxi.cards.party import MentalPokerParty
from lingxi.roles import peer_name

Strategy = Callable[[list[dict[str, Any]], random.Random], dict[str, Any]]


def seeded_entropy(seed: int | str) -> Callable[[int], bytes]:
    """A deterministic byte source, for tests and benchmarks only."""
    rng = random.Random(seed)
    return rng.randbytes


def first_legal(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Play the first legal card; draw or pass only when no card fits."""
    plays = [a for a in actions if a["action"] == "play"]
    return plays[0] if plays else actions[0]


def random_legal(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    return rng.choice(actions)


@dataclass
class GameResult:
    winner: str | None
    host: MentalPokerParty
    guest: MentalPokerParty
    draws: int = 0
    plays: int = 0
    messages: int = 0
    largest_message: int = 0
    revokes: list[int] = field(default_factory=list)
    reports: dict[str, AuditReport] = field(default_factory=dict)


def make_pair(game: str, seed: int | str, session_id: str = "session-1",
              cls_host: type[MentalPokerParty] = MentalPokerParty,
              cls_guest: type[MentalPokerParty] = MentalPokerParty
              ) -> tuple[MentalPokerParty, MentalPokerParty]:
    rules = GAMES[game]
    rng = random.Random(f"ids-{seed}")
    hs, gs = rng.randbytes(32), rng.randbytes(32)
    hid, gid = bytes(SigningKey(hs).verify_key), bytes(SigningKey(gs).verify_key)
    host = cls_host("host", session_id, rules.universe(), seeded_entropy(f"h-{seed}"),
                    signing_seed=hs, peer_identity=gid, deal=rules.DEAL)
    guest = cls_guest("guest", session_id, rules.universe(), seeded_entropy(f"g-{seed}"),
                      signing_seed=gs, peer_identity=hid, deal=rules.DEAL)
    return host, guest


class Wire:
    """Deliver messages both ways until nobody has anything to say."""

    def __init__(self, host: MentalPokerParty, guest: MentalPokerParty) -> None:
        self.parties = {"host": host, "guest": guest}
        self.count = 0
        self.largest = 0
        self.on_message: Callable[[dict[str, Any]], None] | None = None

    def send(self, msg: dict[str, Any]) -> None:
        queue = [msg]
        while queue:
            m = queue.pop(0)
            self.count += 1
            if self.on_message:
                self.on_message(m)
            to = self.parties[peer_name(m["from"])]
            queue.extend(to.receive(m, to.check(m)))


def setup(host: MentalPokerParty, guest: MentalPokerParty, wire: Wire) -> None:
    wire.send(host.hello())
    wire.send(host.shuffle(host.prepare_shuffle()))
    wire.send(guest.shuffle(guest.prepare_shuffle()))  # the host's deal follows, then the guest's


def play_game(game: str = "crazy_eights", seed: int | str = 0, *,
              strategy: Strategy = first_legal, max_turns: int = 500,
              measure_sizes: bool = False) -> GameResult:
    """Set up, shuffle, deal, play to the end, open and audit; raise on any cheat."""
    import json

    rules = GAMES[game]
    host, guest = make_pair(game, seed)
    wire = Wire(host, guest)
    result = GameResult(None, host, guest)
    if measure_sizes:
        def size(m: dict[str, Any]) -> None:
            result.largest_message = max(result.largest_message, len(json.dumps(m)))
        wire.on_message = size
    setup(host, guest, wire)
    for pos in rules.DEAL.table_positions():
        wire.send(host.play(pos))
    starter = host.table.played[rules.DEAL.table_positions()[0]]
    state = rules.start(starter)
    parties = {"host": host, "guest": guest}
    rng = random.Random(f"strategy-{seed}")
    history: list[tuple[str, str, str | None]] = []
    for _ in range(max_turns):
        if rules.winner(state) is not None:
            break
        me = parties[state.turn]
        hand = me.hand()
        actions = rules.legal_actions(state, me.role, list(hand.values()))
        if not actions:
            raise CardsError("cards.state", f"no legal action for the {me.role}")
        action = strategy(actions, rng)
        if action["action"] == "draw":
            wire.send(me.draw())
            result.draws += 1
        elif action["action"] == "play":
            pos = next(p for p, c in hand.items() if c == action["card"])
            msg = me.play(pos, note=action.get("suit"))
            peer = parties[peer_name(me.role)]
            why = rules.validate_play(state, me.role, msg["card"], msg.get("note"))
            if why is not None:
                raise CardsError("cards.state", f"illegal play: {why}")
            wire.send(msg)
            assert peer.table.played[pos] == action["card"]
            history.append((me.role, action["card"], getattr(state, "led", None)))
            result.plays += 1
        state = rules.apply(state, me.role, action)
    result.winner = rules.winner(state)
    wire.send(host.open())
    result.messages = wire.count
    result.reports = {"host": _receipt(host), "guest": _receipt(guest)}
    if hasattr(rules, "revokes"):  # hidden-information rules, checked after the opening
        faces = host.faces or []
        hands = {r: [faces[p] for p in rules.DEAL.positions(r)
                     if p not in rules.DEAL.table_positions()] for r in ("host", "guest")}
        result.revokes = rules.revokes(history, hands)
    return result


def _receipt(party: MentalPokerParty) -> AuditReport:
    """The end audit each party keeps (the cheap one: openings checked online)."""
    if party.faces is None:
        raise CardsError("cards.incomplete", "the game ended without both openings")
    return AuditReport(True, messages=len(party.table.messages),
                       transcript_hash=party.table.head.hex(), faces=list(party.faces),
                       played=dict(party.table.played))


def full_audit(result: GameResult) -> AuditReport:
    return audit(result.host.transcript())
