"""The two ends of a group log: the sequencer that orders, the member that checks.

Both are pure state: a runtime (in memory or over TCP) moves the entries.
A member signs an entry naming the head it saw; the sequencer appends it if
that head is still the head, else refuses it as stale (the member re-signs on
the new head, as with any optimistic concurrency), and countersigns what it
appends. A member checks every delivered entry and keeps each checkpoint, so
a second, different checkpoint for a position it already holds is proof of a
fork, printable with both signed entries.
"""

from __future__ import annotations

from typing import Any

from lingxi.contract.seats import Seats
from lingxi.group.errors import GroupError
from lingxi.group.keys import Signer, verify
from lingxi.group.log import (
    GroupLog,
    Validator,
    checkpoint_bytes,
    entry_hash,
    make_entry,
    make_receipt,
)


def seats_body(seats: Seats) -> dict[str, Any]:
    body: dict[str, Any] = {"min": seats.min, "max": seats.max}
    if seats.roles:
        body["roles"] = list(seats.roles)
    return body


class Sequencer:
    """Orders one group's log: checks, appends and countersigns entries."""

    def __init__(self, signer: Signer, group_id: str, protocol_id: str, seats: Seats,
                 validate: Validator | None = None) -> None:
        self.signer = signer
        self.log = GroupLog(group_id, validate)
        self.author("open", {"protocol_id": protocol_id, "seats": seats_body(seats)})

    def _countersign(self, entry: dict[str, Any]) -> dict[str, Any]:
        signed = dict(entry)
        signed["order"] = self.signer.sign(
            checkpoint_bytes(self.log.group_id, entry["seq"], entry_hash(entry)))
        return signed

    def submit(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Append a member's entry; the countersigned entry to deliver to everyone.

        A stale entry (it names an older head) raises ``group.broken_chain``
        with no culprit: its sender lost a race and signs again.
        """
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k != "order"}
        self.log.append(entry, checkpointed=False)
        signed = self._countersign(entry)
        self.log.entries[-1] = signed
        return signed

    def author(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """An entry of the sequencer's own (open, start, timeout, close, its messages)."""
        return self.submit(make_entry(self.signer, self.log.group_id, self.log.seq,
                                      self.log.head, kind, body))

    def close(self) -> dict[str, Any]:
        """The close entry, naming who held each seat and how each ended."""
        return self.author("close", {"seats": self.log.seat_summary()})


class MemberView:
    """One member's copy of the log, checked entry by entry as it is delivered."""

    def __init__(self, signer: Signer, group_id: str, validate: Validator | None = None
                 ) -> None:
        self.signer = signer
        self.log = GroupLog(group_id, validate)

    def entry(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """A new entry of this member on the head it has seen."""
        return make_entry(self.signer, self.log.group_id, self.log.seq, self.log.head,
                          kind, body)

    def receive(self, entry: Any) -> bool:
        """Check and apply a delivered entry; False for a copy of one already held.

        Raises ``group.forked`` (culprit: the sequencer) for a second entry
        the sequencer countersigned at a position already held.
        """
        if isinstance(entry, dict) and type(entry.get("seq")) is int and (
                0 <= entry["seq"] < self.log.seq):
            held = self.log.entries[entry["seq"]]
            if entry_hash(entry) == entry_hash(held):
                return False
            raise_if_fork(self.log.group_id, self.log.sequencer, held, entry)
            raise GroupError("group.broken_chain", f"a second, unsigned entry for position "
                             f"{entry['seq']} (ignored: the sequencer did not sign it)")
        if isinstance(entry, dict) and type(entry.get("seq")) is int and (
                entry["seq"] > self.log.seq and self.log.sequencer is not None
                and verify(self.log.sequencer, checkpoint_bytes(
                    self.log.group_id, entry["seq"], entry_hash(entry)), entry.get("order"))):
            raise GroupError("group.bad_seq", f"the sequencer delivered entry {entry['seq']} "
                             f"before {self.log.seq} (reordered or dropped)",
                             culprit=self.log.sequencer, evidence={"entry": entry,
                                                                    "expected": self.log.seq})
        self.log.append(entry)
        return True

    def receipt(self) -> dict[str, Any]:
        """This member's signature over the head it holds."""
        return make_receipt(self.signer, self.log.group_id, self.log.seq, self.log.head)


def raise_if_fork(group_id: str, sequencer: str | None, one: dict[str, Any],
                  other: dict[str, Any]) -> None:
    """Raise ``group.forked`` if the sequencer countersigned both ``one`` and ``other``."""
    if sequencer is None or one.get("seq") != other.get("seq"):
        return
    if entry_hash(one) == entry_hash(other):
        return
    signed = [verify(sequencer, checkpoint_bytes(group_id, e["seq"], entry_hash(e)),
                     e.get("order")) for e in (one, other)]
    if all(signed):
        raise GroupError("group.forked", f"the sequencer {sequencer[:16]}… countersigned two "
                         f"different entries for position {one['seq']}", culprit=sequencer,
                         evidence={"seq": one["seq"], "one": one, "other": other})
