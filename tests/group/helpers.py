"""Shared builders for group tests: deterministic signers, a seated group in memory."""

from __future__ import annotations

import hashlib

from lingxi.contract.seats import Seats
from lingxi.group import MemberView, Sequencer, Signer

PID = "ab" * 32


def signer(name: str) -> Signer:
    return Signer(hashlib.sha256(name.encode()).digest())


def seated(n: int, *, start: bool = True, validate=None, group: str = "g1",
           seats: Seats | None = None) -> tuple[Sequencer, list[MemberView]]:
    """A sequencer (seat 0's identity) and ``n`` member views, all joined, delivered to all."""
    host = signer("member0")
    seq = Sequencer(host, group, PID, seats or Seats(2, 6), validate)
    views = [MemberView(host if i == 0 else signer(f"member{i}"), group, validate)
             for i in range(n)]
    deliver(views, seq.log.entries[0])
    for i, view in enumerate(views):
        deliver(views, seq.submit(view.entry("join", {"seat": i})))
    if start:
        deliver(views, seq.author("start", {}))
    return seq, views


def deliver(views, entry) -> None:
    for view in views:
        view.receive(entry)
