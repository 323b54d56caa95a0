"""group-vote on a group log: a motion, commit-reveal ballots, a tally anyone recounts.

The tally is a pure function of the log's entries, so a third party with a
record (and the public identity keys in it) reaches the same count as every
member. A ballot is ``SHA256(choice:nonce)`` (the spec's commit_reveal rule,
:mod:`lingxi.contract.commit_reveal`); reveals are allowed only once every
member seated at that moment has committed, so nobody sees a vote before
casting theirs. A reveal that does not open its commitment names its sender.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lingxi.contract.commit_reveal import CommitReveal, commitment, matches
from lingxi.group.errors import GroupError
from lingxi.group.log import SEATED, GroupLog, Validator, replay

CHOICES = ("yes", "no", "abstain")


@dataclass
class Tally:
    """The state of the vote after each entry, and the count at the end."""

    rule: CommitReveal = field(default_factory=lambda: CommitReveal(32))
    motion: str | None = None
    proposer: str | None = None
    commits: dict[str, str] = field(default_factory=dict)
    votes: dict[str, str] = field(default_factory=dict)
    said: int = 0

    def counts(self) -> dict[str, int]:
        return {c: sum(1 for v in self.votes.values() if v == c) for c in CHOICES}

    def result(self) -> str:
        counts = self.counts()
        return "carried" if counts["yes"] > counts["no"] else "rejected"

    def to_dict(self, log: GroupLog) -> dict[str, Any]:
        seats = {m.key: m.seat for m in log.members.values()}
        return {"motion": self.motion, "proposer": self.proposer, "counts": self.counts(),
                "result": self.result(),
                "votes": {str(seats[k]): v for k, v in sorted(self.votes.items(),
                                                              key=lambda kv: seats[kv[0]])},
                "absent": sorted(seats[k] for k in seats if k not in self.votes)}

    def _refuse(self, code: str, text: str, sender: str, entry: dict) -> GroupError:
        return GroupError(code, text, culprit=sender, evidence={"entry": entry})

    def apply(self, log: GroupLog, entry: dict[str, Any]) -> None:
        """One log entry (already appended to ``log``); raises on a broken vote rule."""
        if entry["kind"] != "message":
            return
        sender, payload = entry["sender"], entry["body"]["payload"]
        action = payload.get("action")
        if action == "say" or action == "error":
            self.said += 1
        elif action == "motion":
            if self.motion is not None:
                raise self._refuse("vote.second_motion", "a motion is already open", sender,
                                   entry)
            self.motion, self.proposer = payload["text"], sender
        elif action == "vote_commit":
            if self.motion is None:
                raise self._refuse("vote.no_motion", "no motion to vote on", sender, entry)
            if sender in self.commits:
                raise self._refuse("vote.double_commit", "one commitment per member", sender,
                                   entry)
            self.commits[sender] = payload["commitment"]
        elif action == "vote_reveal":
            self._reveal(log, sender, payload, entry)

    def _reveal(self, log: GroupLog, sender: str, payload: dict, entry: dict) -> None:
        if sender not in self.commits:
            raise self._refuse("vote.no_commit", "a reveal without a commitment", sender, entry)
        waiting = [m.seat for m in log.members.values()
                   if m.status == SEATED and m.key not in self.commits]
        if waiting and not self.votes:
            raise self._refuse("vote.early_reveal", f"seats {waiting} have not committed",
                               sender, entry)
        if sender in self.votes:
            raise self._refuse("vote.double_reveal", "one reveal per member", sender, entry)
        if not self.rule.nonce_ok(payload["nonce"]):
            raise self._refuse("vote.bad_nonce", f"a nonce is {self.rule.nonce_length} "
                               "lowercase hex characters", sender, entry)
        if not matches(payload["choice"], payload["nonce"], self.commits[sender]):
            raise self._refuse("vote.bad_reveal", "the reveal does not open the commitment",
                               sender, entry)
        self.votes[sender] = payload["choice"]


def recount(group_id: str, entries: list[Any], validate: Validator | None = None,
            rule: CommitReveal | None = None) -> tuple[GroupLog, Tally]:
    """Recount a vote from a record's entries; the first broken rule raises, naming its sender."""
    result = Tally(rule or CommitReveal(32))
    log = replay(group_id, entries, validate, [result.apply])
    return log, result


@dataclass
class Ballot:
    """A member's own vote: the choice and nonce it keeps until the reveal."""

    choice: str
    nonce: str

    @classmethod
    def draw(cls, choice: str, entropy: Callable[[int], bytes],
             rule: CommitReveal | None = None) -> Ballot:
        if choice not in CHOICES:
            raise GroupError("group.malformed", f"a vote is one of {', '.join(CHOICES)}")
        return cls(choice, (rule or CommitReveal(32)).make_nonce(entropy))

    def commit_payload(self) -> dict[str, Any]:
        return {"action": "vote_commit", "commitment": commitment(self.choice, self.nonce)}

    def reveal_payload(self) -> dict[str, Any]:
        return {"action": "vote_reveal", "choice": self.choice, "nonce": self.nonce}
