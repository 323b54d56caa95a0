"""The adversarial cases of the group protocols: every cheat class, each caught and named.

Each case plays a group in memory (:mod:`lingxi.group.memory`) with one
hostile member or a hostile sequencer and reports the code it expected, the
code it got and whether the culprit is the identity that cheated. What
``lingxi group test PROTOCOL --adversarial`` (and ``protocol test`` of a
group spec) runs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lingxi.cards import group as g
from lingxi.contract import Spec
from lingxi.group.errors import GroupError
from lingxi.group.holdem_play import HoldemTable
from lingxi.group.memory import InMemoryGroup
from lingxi.group.vote import Ballot, Tally


@dataclass
class Case:
    name: str
    expected: tuple[str, ...]
    code: str | None = None
    culprit_ok: bool = False

    @property
    def caught(self) -> bool:
        return self.code in self.expected and self.culprit_ok

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.name, "expected": list(self.expected), "code": self.code,
                "culprit_named": self.culprit_ok, "caught": self.caught}


def game_of(spec: Spec) -> str:
    """Which group game a spec's messages describe: holdem or vote."""
    if "hp_bet" in spec.messages:
        return "holdem"
    if "vote_commit" in spec.messages:
        return "vote"
    return "log"


def _entropy(seed: int) -> Callable[[int], bytes]:
    rng = random.Random(seed)
    return lambda n: rng.randbytes(n)


def _run(case: Case, culprit: str, action: Callable[[], None]) -> Case:
    try:
        action()
    except GroupError as error:
        case.code, case.culprit_ok = error.code, error.culprit == culprit
    return case


# -- hostile sequencer (any group protocol) ------------------------------------------------

def _hello(spec: Spec) -> dict[str, Any]:
    if "say" in spec.messages:
        return {"action": "say", "text": "hello"}
    return {"action": "error", "code": "note", "message": "hello"}


def _forking(spec: Spec, seats: int, seed: int) -> Case:
    group = InMemoryGroup(spec, seats, _entropy(seed))
    twin = copy.deepcopy(group.sequencer)
    payload = _hello(spec)
    one = group.sequencer.submit(group.views[1].entry("message", {"payload": payload}))
    other = twin.submit(group.views[2 % seats].entry("message", {"payload": payload}))
    group.views[1].receive(one)

    def act() -> None:
        group.views[1].receive(other)
    return _run(Case("forking sequencer", ("group.forked",)), group.sequencer.signer.key, act)


def _reordering(spec: Spec, seats: int, seed: int) -> Case:
    group = InMemoryGroup(spec, seats, _entropy(seed))
    first = group.sequencer.submit(group.views[1].entry("message", {"payload": _hello(spec)}))
    group.views[1].receive(first)
    second = group.sequencer.submit(group.views[1].entry("message", {"payload": _hello(spec)}))

    def act() -> None:
        group.views[0].receive(second)
    return _run(Case("reordering sequencer", ("group.bad_seq",)), group.sequencer.signer.key,
                act)


def _tampering(spec: Spec, seats: int, seed: int) -> Case:
    group = InMemoryGroup(spec, seats, _entropy(seed))
    entry = group.sequencer.submit(group.views[1].entry("message", {"payload": _hello(spec)}))
    forged = copy.deepcopy(entry)
    forged["body"]["payload"] = dict(forged["body"]["payload"], action="error", code="forged")
    case = Case("tampered entry (relay or sequencer)", ("group.bad_signature",))
    try:
        group.views[0].receive(forged)
    except GroupError as error:
        case.code, case.culprit_ok = error.code, error.culprit is None  # no one to blame
    return case


# -- hostile members: Hold'em ---------------------------------------------------------------

def _holdem_case(spec: Spec, seats: int, seed: int, name: str, expected: tuple[str, ...],
                 cheat: int, tamper) -> Case:
    table = HoldemTable(spec, seats, _entropy(seed))
    case = Case(name, expected)
    _, error = table.play_catching(tamper)
    if error is not None:
        case.code = error.code
        case.culprit_ok = error.culprit == table.group.signers[cheat].key
    return case


def holdem_cases(spec: Spec, seats: int, seed: int) -> list[Case]:
    cheat = seats - 1
    stranger = g.base(g.sc_from_int(7)).hex()

    def stacked(seat, hand, payload):
        if seat == cheat and payload["action"] == "hp_shuffle":
            deck = list(payload["deck"])
            deck[0], deck[1] = deck[1], deck[0]
            return dict(payload, deck=deck)
        return None

    def rogue(seat, hand, payload):
        if seat == cheat and payload["action"] == "hp_key":
            return dict(payload, key=stranger)
        return None

    def wrong_share(stage):
        def tamper(seat, hand, payload):
            if seat == cheat and payload["action"] == "hp_shares" and payload["stage"] == stage:
                return dict(payload, shares=[stranger] + payload["shares"][1:])
            return None
        return tamper

    cases = [
        _holdem_case(spec, seats, seed, "stacked shuffle", ("cards.bad_shuffle",), cheat,
                     stacked),
        _holdem_case(spec, seats, seed, "masking key without proof", ("cards.rogue_key",),
                     cheat, rogue),
        _holdem_case(spec, seats, seed, "wrong hole share", ("cards.bad_share",
                                                            "cards.bad_share_proof"), cheat,
                     wrong_share("hole")),
        _holdem_case(spec, seats, seed, "wrong board share", ("cards.bad_share",
                                                             "cards.bad_share_proof"), cheat,
                     wrong_share("river")),
        _holdem_case(spec, seats, seed, "wrong card at showdown", ("cards.bad_share",
                                                                  "cards.bad_share_proof"),
                     cheat, wrong_share("showdown")),
    ]
    cases.append(_silent(spec, seats, seed))
    cases.append(_false_forfeit(spec, seats, seed))
    cases.append(_illegal_move(spec, seats, seed))
    return cases


def _to_preflop(spec: Spec, seats: int, seed: int) -> HoldemTable:
    table = HoldemTable(spec, seats, _entropy(seed))
    while table.hands[0].stage != "preflop":
        table.step()
    return table


def _silent(spec: Spec, seats: int, seed: int) -> Case:
    """The due seat goes silent; the sequencer's timeout makes it forfeit, and only it pays."""
    table = _to_preflop(spec, seats, seed)
    while table.hands[0].stage == "preflop":
        table.step()
    due = table.hands[0].due()
    assert due is not None
    table.group.membership(due, "timeout")
    result = table.hands[0].result or {}
    others_whole = all(d >= 0 for s, d in enumerate(result.get("delta", [])) if s != due)
    return Case("silent seat (timed out while it owed)", ("holdem.forfeit",),
                result.get("code"), result.get("culprit") == table.group.signers[due].key
                and others_whole)


def _false_forfeit(spec: Spec, seats: int, seed: int) -> Case:
    table = _to_preflop(spec, seats, seed)
    due = table.hands[0].due()
    assert due is not None
    claimant, innocent = (due + 1) % seats, (due + 2) % seats
    if innocent == due:  # two seats: the only other seat is the claimant itself
        innocent = claimant

    def act() -> None:
        table.group.send(claimant, {"action": "hp_forfeit", "seat": innocent})
    return _run(Case("false forfeit claim", ("holdem.false_forfeit",)),
                table.group.signers[claimant].key, act)


def _illegal_move(spec: Spec, seats: int, seed: int) -> Case:
    table = _to_preflop(spec, seats, seed)
    due = table.hands[0].due()
    assert due is not None
    other = (due + 1) % seats

    def act() -> None:
        table.group.send(other, {"action": "hp_bet", "move": "call"})
    return _run(Case("bet out of turn", ("holdem.out_of_turn",)),
                table.group.signers[other].key, act)


# -- hostile members: group-vote ------------------------------------------------------------

def _vote_group(spec: Spec, seats: int, seed: int) -> tuple[InMemoryGroup, list[Ballot]]:
    entropy = _entropy(seed)
    tallies = [Tally() for _ in range(seats)]
    group = InMemoryGroup(spec, seats, entropy, observers=lambda i: [tallies[i].apply])
    ballots = [Ballot.draw(("yes", "no")[i % 2], entropy) for i in range(seats)]
    group.send(0, {"action": "motion", "text": "adopt the proposal"})
    return group, ballots


def vote_cases(spec: Spec, seats: int, seed: int) -> list[Case]:
    cheat = seats - 1
    out = []
    group, ballots = _vote_group(spec, seats, seed)
    for i in range(seats):
        group.send(i, ballots[i].commit_payload())

    def lie() -> None:
        group.send(cheat, dict(ballots[cheat].reveal_payload(), choice="abstain"))
    out.append(_run(Case("reveal that does not open its commitment", ("vote.bad_reveal",)),
                    group.signers[cheat].key, lie))
    group, ballots = _vote_group(spec, seats, seed)
    group.send(cheat, ballots[cheat].commit_payload())

    def early() -> None:
        group.send(cheat, ballots[cheat].reveal_payload())
    out.append(_run(Case("reveal before every seat committed", ("vote.early_reveal",)),
                    group.signers[cheat].key, early))
    group, ballots = _vote_group(spec, seats, seed)
    group.send(cheat, ballots[cheat].commit_payload())

    def twice() -> None:
        group.send(cheat, ballots[cheat].commit_payload())
    out.append(_run(Case("second commitment", ("vote.double_commit",)),
                    group.signers[cheat].key, twice))
    return out


def adversarial(spec: Spec, seats: int, seed: int = 1) -> list[Case]:
    """Every cheat class of the spec's game, then the hostile sequencer's."""
    game = game_of(spec)
    cases = holdem_cases(spec, seats, seed) if game == "holdem" else (
        vote_cases(spec, seats, seed) if game == "vote" else [])
    return cases + [_forking(spec, seats, seed), _reordering(spec, seats, seed),
                    _tampering(spec, seats, seed)]
