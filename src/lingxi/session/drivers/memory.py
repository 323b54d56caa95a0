"""The in-memory driver: two machines, real envelopes, a virtual clock.

Both sides run in one process, deterministically: every message is signed
with the wire's EnvelopeBuilder and checked by its ReceivePipeline (replay
guard, binding, time window) exactly as over TCP; timers fire on a virtual
clock when nothing else can happen, so a silent peer times out instantly in
wall time but exactly at its configured timeout in session time. Used by
``protocol test``, the adversarial library, ``run_local`` and the benchmark.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.session.core.adversaries import Adversary
from lingxi.session.core.decisions import Decline
from lingxi.session.core.events import (
    Compute,
    ComputeDone,
    DecisionDeclined,
    DecisionMade,
    EnvelopeRejected,
    LocalInput,
    Outcome,
    RequestDecision,
    Start,
    TimerFired,
)
from lingxi.session.core.machine import ROLE_DIRECTION, SessionMachine
from lingxi.session.drivers.actions import perform, run_compute
from lingxi.session.drivers.link import over_state_limit, payload_to_event
from lingxi.session.record.receipts import receipt_body, settle, sign_receipt
from lingxi.session.record.recorder import Recorder
from lingxi.session.record.snapshot import snapshot_of
from lingxi.wire.builder import EnvelopeBuilder
from lingxi.wire.envelope import AgentEndpoint
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.identity import Identity
from lingxi.wire.pipeline import ReceivePipeline

EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z: virtual time zero
NO_ANSWER = object()


@dataclass
class Side:
    role: str
    machine: SessionMachine
    recorder: Recorder
    builder: EnvelopeBuilder
    pipeline: ReceivePipeline
    identity: Identity
    timers: dict[str, float] = field(default_factory=dict)
    outcome: Outcome | None = None
    inputs: deque = field(default_factory=deque)
    sent: int = 0

    @property
    def direction(self) -> str:
        return ROLE_DIRECTION[self.role]


@dataclass
class PairResult:
    host: Outcome
    guest: Outcome
    heads: dict[str, str]
    receipts: dict[str, dict[str, Any]]
    receipt_problems: dict[str, list[str]]
    elapsed: float
    events: dict[str, list[dict[str, Any]]]
    session_id: str
    machines: dict[str, SessionMachine] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        return self.host

    @property
    def receipts_verified(self) -> bool:
        return not any(self.receipt_problems.values())

    @property
    def receipt_hash(self) -> str:
        from lingxi.canonical import canonical_bytes, sha256_hex
        return sha256_hex(canonical_bytes([self.receipts.get("host"), self.receipts.get("guest")]))


def _uuids(rng: random.Random) -> Callable[[], str]:
    """Envelope ids from a seeded generator (reproducible self-play)."""
    return lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))


class StuckError(RuntimeError):
    """Both machines wait and no timer is armed: a machine bug, never a peer's doing."""


class LocalPair:
    def __init__(self, host: SessionMachine, guest: SessionMachine, *, seed: int = 0,
                 state_dir: str | Path | None = None,
                 deciders: dict[str, Callable[[RequestDecision], Any]] | None = None,
                 inputs: dict[str, list[str | None]] | None = None,
                 adversary: tuple[str, Adversary] | None = None,
                 keep_events: bool = True, max_steps: int = 5_000_000) -> None:
        rng = random.Random(f"lingxi-local-{seed}")
        self.now = 0.0
        self.session_id = f"{rng.getrandbits(128):032x}"
        keys = {d: rng.randbytes(32) for d in ROLE_DIRECTION.values()}
        self.deciders = deciders or {}
        self.adversary = adversary
        self.max_steps = max_steps
        self.queue: deque = deque()
        self.sides: dict[str, Side] = {}
        idents = {r: Identity.from_seed(rng.randbytes(32)) for r in ("host", "guest")}
        ends = {r: AgentEndpoint(idents[r].agent_id, "lingxi", f"memory://{r}")
                for r in ("host", "guest")}
        for role, machine in (("host", host), ("guest", guest)):
            peer = "guest" if role == "host" else "host"
            ids = random.Random(f"ids-{seed}-{role}")
            folder = Path(state_dir) / role if state_dir is not None else None
            builder = EnvelopeBuilder(ends[role], ends[peer], keys[ROLE_DIRECTION[role]],
                                      clock=self.clock, conversation_id=self.session_id,
                                      id_factory=_uuids(ids))
            pipeline = ReceivePipeline(keys[ROLE_DIRECTION[peer]], clock=self.clock,
                                       expect_conversation_id=self.session_id,
                                       expect_sender=ends[peer], expect_receiver=ends[role])
            side = Side(role, machine, Recorder(folder, role, clock=self.clock,
                                                keep_events=keep_events),
                        builder, pipeline, idents[role])
            side.inputs.extend((inputs or {}).get(role, []))
            self.sides[role] = side

    def clock(self) -> float:
        return EPOCH + self.now

    # ---------------------------------------------------------------- running
    def run(self) -> PairResult:
        for role in ("host", "guest"):
            self._snapshot(role)
            peer = self.sides["guest" if role == "host" else "host"]
            self._process(role, self.sides[role].machine.handle(Start(
                self.sides[role].identity, peer.identity.public_hex, self.session_id)))
        steps = 0
        turn = 0
        while not all(s.machine.finished for s in self.sides.values()):
            steps += 1
            if steps > self.max_steps:
                raise StuckError(f"no end after {self.max_steps} steps")
            if self.queue:
                target, item = self.queue.popleft()
                self._deliver(target, item)
                continue
            feeders = [s for s in self.sides.values() if s.inputs and not s.machine.finished]
            if feeders:
                side = feeders[turn % len(feeders)]
                turn += 1
                self._process(side.role, side.machine.handle(LocalInput(side.inputs.popleft())))
                continue
            due = [(at, role, name) for role, s in self.sides.items() if not s.machine.finished
                   for name, at in s.timers.items()]
            if not due:
                raise StuckError("both sides wait and no timer is armed")
            at, role, name = min(due)
            self.now = max(self.now, at)
            del self.sides[role].timers[name]
            self._process(role, self.sides[role].machine.handle(TimerFired(name)))
        return self._finish()

    def _deliver(self, target: str, item: Any) -> None:
        side = self.sides[target]
        if side.machine.finished:
            if isinstance(item, dict):
                self.queue.appendleft((target, item))
                self._record_late(target)
            return
        if isinstance(item, DecisionMade | DecisionDeclined | ComputeDone):
            self._process(target, side.machine.handle(item))
            return
        try:
            env = side.pipeline.accept(item)
        except EnvelopeError as error:
            event: Any = EnvelopeRejected(error.code, error.message,
                                          {"envelope_id": item.get("id") if isinstance(item, dict)
                                           else None, "path": error.path})
        else:
            size = side.recorder.envelope(ROLE_DIRECTION["guest" if target == "host" else "host"],
                                          item, "received")
            event = over_state_limit(side.machine, side.recorder) or payload_to_event(
                env.payload, env.correlation_id, size)
            if event is None:
                return
        self._process(target, side.machine.handle(event))

    def _transmit(self, side: Side, payload: dict[str, Any], correlation_id: str | None) -> None:
        peer = "guest" if side.role == "host" else "host"
        items = [(payload, correlation_id)]
        cheat = self.adversary[1] if self.adversary and self.adversary[0] == side.role else None
        if cheat is not None:
            items = cheat.outgoing(side, payload, correlation_id)
        for body, cid in items:
            self.now += 1e-6  # distinct timestamps: identical payloads are not replays
            kind = None if isinstance(body.get("action"), str) else "p2p:unnamed"
            envelope = side.builder.build(body, type=kind, correlation_id=cid).to_dict()
            for sent in (cheat.wire(side, envelope) if cheat is not None else [envelope]):
                side.sent += 1
                side.recorder.envelope(side.direction, sent, "sent")
                self.queue.append((peer, sent))

    def _process(self, role: str, actions: list[Any]) -> None:
        perform(actions, _SideTarget(self, self.sides[role]))

    def _snapshot(self, role: str, pending: RequestDecision | None = None) -> None:
        side = self.sides[role]
        side.recorder.snapshot(snapshot_of(
            side.machine, self.session_id, side.identity,
            self.sides["guest" if role == "host" else "host"].identity.public_hex, pending,
            self.clock() + pending.timeout_seconds if pending is not None else None))

    def _record_late(self, target: str) -> None:
        """Keep an envelope that was in flight when its receiver finished (not processed)."""
        _, item = self.queue.popleft()
        if not isinstance(item, dict):
            return
        try:
            self.sides[target].pipeline.accept(item)
        except EnvelopeError:
            return
        peer = "guest" if target == "host" else "host"
        self.sides[target].recorder.envelope(ROLE_DIRECTION[peer], item, "late")

    def _finish(self) -> PairResult:
        while self.queue:
            self._record_late(self.queue[0][0])
        receipts, problems = {}, {}
        for role, side in self.sides.items():
            body = receipt_body(side.recorder.transcript, session_id=self.session_id,
                                protocol_id=side.machine.spec.protocol_id, role=role,
                                public_key=side.identity.public_hex,
                                status=side.outcome.status if side.outcome else "unknown")
            receipts[role] = sign_receipt(body, side.identity)
        for role, side in self.sides.items():
            peer = "guest" if role == "host" else "host"
            record = settle(receipts[role], receipts[peer], side.recorder.transcript,
                            peer_key=self.sides[peer].identity.public_hex,
                            session_id=self.session_id)
            problems[role] = record["peer_problems"]
            side.recorder.receipts(record)
            side.recorder.close()
        host, guest = self.sides["host"].outcome, self.sides["guest"].outcome
        assert host is not None and guest is not None  # the loop ran until both finished
        return PairResult(host, guest,
                          {r: s.recorder.transcript.head() for r, s in self.sides.items()},
                          receipts, problems, self.now,
                          {r: s.recorder.events for r, s in self.sides.items()}, self.session_id,
                          {r: s.machine for r, s in self.sides.items()})


class _SideTarget:
    """How one side's actions play out in the in-memory world."""

    def __init__(self, pair: LocalPair, side: Side) -> None:
        self.pair, self.side = pair, side

    def send(self, payload: dict[str, Any], correlation_id: str | None) -> None:
        self.pair._transmit(self.side, payload, correlation_id)

    def emit(self, event: dict[str, Any]) -> None:
        self.side.recorder.event(event)

    def set_timer(self, name: str, seconds: float) -> None:
        self.side.timers[name] = self.pair.now + seconds

    def cancel_timer(self, name: str) -> None:
        self.side.timers.pop(name, None)

    def request_decision(self, request: RequestDecision) -> None:
        self.pair._snapshot(self.side.role, pending=request)
        decider = self.pair.deciders.get(self.side.role)
        try:
            value = decider(request) if decider is not None else NO_ANSWER
        except Decline as declined:
            value = DecisionDeclined(request.point_id, declined.reason)
        if isinstance(value, DecisionDeclined):
            self.pair.queue.append((self.side.role, value))
        elif value is not NO_ANSWER and value is not None:  # None: no answer (as on the network)
            self.pair.queue.append((self.side.role, DecisionMade(request.point_id, value)))

    def compute(self, action: Compute) -> None:
        """Inline: the work is done before anything else happens (deterministic)."""
        self.pair.queue.appendleft((self.side.role, ComputeDone(action.name, run_compute(action))))

    def finished(self, outcome: Outcome) -> None:
        self.side.outcome = outcome
        self.side.timers.clear()
        self.pair._snapshot(self.side.role)
