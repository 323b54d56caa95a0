"""A whole group in one process: a sequencer and every member's view, no I/O.

What ``lingxi group test``, the adversarial cases and the benchmarks run;
the TCP runtime moves the same entries between processes. Each member view
can carry observers (its own copy of a game's or a vote's state).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lingxi.contract import Spec
from lingxi.contract.seats import Seats
from lingxi.group.keys import Signer
from lingxi.group.log import Observer
from lingxi.group.sequencer import MemberView, Sequencer
from lingxi.group.verify import make_record

Entropy = Callable[[int], bytes]


def spec_validator(spec: Spec):
    """Group entries carry to_group payloads; check them against the spec."""
    return lambda payload: spec.validate_message(payload, "to_group")


class InMemoryGroup:
    """``n`` members seated and started; seat 0's identity is the sequencer."""

    def __init__(self, spec: Spec, n: int, entropy: Entropy, *, group_id: str = "group-1",
                 observers: Callable[[int], list[Observer]] | None = None,
                 signers: list[Signer] | None = None) -> None:
        seats = spec.seats or Seats(2, 16)
        self.validate = spec_validator(spec)
        self.signers = signers or [Signer(entropy(32)) for _ in range(n)]
        self.sequencer = Sequencer(self.signers[0], group_id, spec.protocol_id, seats,
                                   self.validate)
        self.views = [MemberView(s, group_id, self.validate) for s in self.signers]
        for i, view in enumerate(self.views):
            view.log.observers.extend(observers(i) if observers else [])
        self.deliver(self.sequencer.log.entries[0])
        for i, view in enumerate(self.views):
            self.deliver(self.sequencer.submit(view.entry("join", {"seat": i})))
        self.deliver(self.sequencer.author("start", {}))

    def deliver(self, entry: dict[str, Any], to: list[int] | None = None) -> None:
        for i in range(len(self.views)) if to is None else to:
            self.views[i].receive(entry)

    def send(self, seat: int, payload: dict[str, Any]) -> dict[str, Any]:
        """Seat ``seat`` says ``payload`` to the group; delivered to everyone."""
        entry = self.sequencer.submit(self.views[seat].entry("message", {"payload": payload}))
        self.deliver(entry)
        return entry

    def membership(self, seat: int, kind: str) -> dict[str, Any]:
        """A seat leaves (``leave``) or the sequencer times it out (``timeout``)."""
        if kind == "leave":
            entry = self.sequencer.submit(self.views[seat].entry("leave", {}))
        else:
            entry = self.sequencer.author("timeout", {"member": self.signers[seat].key})
        self.deliver(entry)
        return entry

    def close(self) -> list[dict[str, Any]]:
        """Close the log; every member's receipt over the final head."""
        self.deliver(self.sequencer.close())
        return [v.receipt() for v in self.views]

    def record(self, seat: int, receipts: list[dict[str, Any]]) -> dict[str, Any]:
        return make_record(self.views[seat].log, receipts)
