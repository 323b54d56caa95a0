"""What one seat runs, whatever carries the entries: its game state and its next payload.

A runtime (in memory, or a process over TCP) keeps one :class:`SeatAgent` per
seat: the agent observes the seat's own verified log and says what the seat
sends next, so every process decides from its own copy of the log.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

from lingxi.contract import Spec
from lingxi.group.holdem import HoldemHand, HoldemPlayer, Rules, mixed
from lingxi.group.log import SEATED, GroupLog, Observer
from lingxi.group.vote import Ballot, Tally

Entropy = Callable[[int], bytes]


class SeatAgent:
    """A seat's game or vote: ``observers`` to attach, ``next_payload`` to send."""

    observers: list[Observer]

    def next_payload(self, log: GroupLog, me: int) -> dict[str, Any] | None:
        raise NotImplementedError

    def finished(self) -> bool:
        raise NotImplementedError

    def result(self, log: GroupLog) -> dict[str, Any] | None:
        raise NotImplementedError

    def replaceable(self) -> bool:
        """Whether a seat vacated after the start may be taken by a new identity now (a
        posted table then reopens it at the registry). False unless the game says so."""
        return False


Decide = Callable[[HoldemHand, int, list[str]], Awaitable[str]]


class HoldemAgent(SeatAgent):
    """A Hold'em seat; ``decide`` (async: a model, a remote person) replaces its strategy."""

    def __init__(self, rules: Rules, entropy: Entropy, seed: int) -> None:
        self.hand = HoldemHand(rules)
        self.player = HoldemPlayer(entropy, mixed(random.Random(seed)))
        self.observers = [self.hand]
        self.decide: Decide | None = None

    def next_payload(self, log: GroupLog, me: int) -> Any:
        """The payload now, or (with ``decide``, on a bet) an awaitable of it."""
        legal = self.hand.legal_moves(me)
        if self.decide is not None and legal and self.hand.due() == me:
            return self._decided(me, legal)
        return self.player.next_payload(self.hand, me)

    async def _decided(self, me: int, legal: list[str]) -> dict[str, Any]:
        assert self.decide is not None
        move = await self.decide(self.hand, me, legal)
        if move not in legal:  # a decider's answer is data: an illegal one is not played
            move = "check" if "check" in legal else "fold"
        return {"action": "hp_bet", "move": move}

    def finished(self) -> bool:
        return self.hand.stage == "over"

    def result(self, log: GroupLog) -> dict[str, Any] | None:
        return self.hand.result


class VoteAgent(SeatAgent):
    """Seat 0 puts the motion; every seat says a line, commits, then reveals."""

    def __init__(self, choice: str, entropy: Entropy) -> None:
        self.tally = Tally()
        self.entropy = entropy
        self.ballot = Ballot.draw(choice, entropy)
        self.choose: Callable[[], str] | None = None  # a person's choice, asked at commit
        self.observers = [self.tally.apply]
        self.said: set[str] = set()
        self.seated_now: list[str] = []
        self.reopened: set[int] = set()  # seats vacated and offered again: the vote waits
        self.observers.append(self._note)

    def _note(self, log: GroupLog, entry: dict[str, Any]) -> None:
        self.seated_now = self._seated(log)
        if entry["kind"] == "message" and entry["body"]["payload"].get("action") == "say":
            self.said.add(entry["sender"])
        if entry["kind"] == "timeout" and entry["body"].get("reopen") is True:
            gone = log.members.get(entry["body"].get("member", ""))
            if gone is not None:
                self.reopened.add(gone.seat)
        if entry["kind"] == "replace":
            self.reopened.discard(entry["body"].get("seat"))

    def _seated(self, log: GroupLog) -> list[str]:
        return [m.key for m in log.members.values() if m.status == SEATED]

    def replaceable(self) -> bool:
        """Until every seated member revealed, a vacated seat may be refilled: the newcomer
        says its line and commits before anyone reveals."""
        return not self.tally.votes

    def next_payload(self, log: GroupLog, me: int) -> dict[str, Any] | None:
        key = next((m.key for m in log.members.values() if m.seat == me
                    and m.status == SEATED), None)
        if key is None or not log.started or log.closed or self.reopened:
            return None
        if self.tally.motion is None:
            return {"action": "motion", "text": "adopt the proposal"} if me == 0 else None
        if key not in self.said:
            return {"action": "say", "text": f"seat {me} has its say"}
        if key not in self.tally.commits:
            if self.choose is not None:
                self.ballot = Ballot.draw(self.choose(), self.entropy)
                self.choose = None
            return self.ballot.commit_payload()
        if all(k in self.tally.commits for k in self._seated(log)) and (
                key not in self.tally.votes):
            return self.ballot.reveal_payload()
        return None

    def finished(self) -> bool:
        seated = set(self.seated_now)
        return bool(seated) and seated <= set(self.tally.votes) and not self.reopened

    def result(self, log: GroupLog) -> dict[str, Any] | None:
        return self.tally.to_dict(log)


def agent_for(spec: Spec, seat: int, entropy: Entropy, options: dict[str, Any] | None = None
              ) -> SeatAgent:
    """The seat agent of a built-in group game (by its messages)."""
    values = spec.check_options(options or {}).values
    if "hp_bet" in spec.messages:
        return HoldemAgent(Rules.from_options(values), entropy, seat)
    if "vote_commit" in spec.messages:
        return VoteAgent(("yes", "no", "yes", "abstain")[seat % 4], entropy)
    raise ValueError(f"{spec.name}: no seat agent for this group protocol")
