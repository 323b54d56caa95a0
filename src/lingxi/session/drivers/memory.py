"""The in-memory driver: both sides' conductors in one process, on a virtual clock.

Both sides run deterministically for a seed. The pairing does the wire's
real handshake (Ed25519 identities, X25519 ephemeral keys, per-direction
keys, sealing) over an in-memory pipe, so every message is signed, sealed,
framed and checked exactly as over TCP — by the same
:class:`~lingxi.session.conductor.Conductor`. Timers fire on a virtual clock
when nothing else can happen, so a silent peer times out instantly in wall
time but exactly at its configured timeout in session time. Used by
``protocol test``, the adversarial library, ``run_local`` and the benchmarks;
:mod:`lingxi.session.drivers.loopback` runs the same schedule over real TCP.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Coroutine, Generator, Iterator
from dataclasses import field
from pathlib import Path
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.records import Record, record
from lingxi.session.conductor import Conductor, Emitted, Refuse, SendFrame, run_compute
from lingxi.session.core.adversaries import Adversary
from lingxi.session.core.decisions import Decline
from lingxi.session.core.events import (
    CancelTimer,
    Compute,
    ComputeDone,
    DecisionDeclined,
    DecisionMade,
    Finish,
    LocalInput,
    Outcome,
    RequestDecision,
    SetTimer,
    TimerFired,
)
from lingxi.session.core.machine import SessionMachine
from lingxi.session.record.recorder import EVENTS, Recorder
from lingxi.wire.builder import uuid4_text
from lingxi.wire.codec import SessionCodec
from lingxi.wire.envelope import AgentEndpoint
from lingxi.wire.handshake import SessionKeys, client_handshake, server_handshake
from lingxi.wire.identity import Identity

EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z: virtual time zero
NO_ANSWER = object()
ROLES = ("host", "guest")
PEER = {"host": "guest", "guest": "host"}
Carry = Generator[tuple[str, bytes], bytes, "PairResult"]


@record
class PairResult(Record):
    host: Outcome
    guest: Outcome
    heads: dict[str, str]
    receipts: dict[str, dict[str, Any]]
    receipt_problems: dict[str, list[str]]
    elapsed: float
    events: dict[str, list[dict[str, Any]]]
    session_id: str
    machines: dict[str, SessionMachine] = field(default_factory=dict)
    state_dirs: dict[str, Path | None] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        return self.host

    def iter_events(self, role: str) -> Iterator[dict[str, Any]]:
        """``role``'s events in order: the kept list, else read back from events.jsonl one
        line at a time (a long run's summary never holds them all)."""
        if self.events.get(role):
            yield from self.events[role]
            return
        folder = self.state_dirs.get(role)
        if folder is None:
            return
        with (folder / EVENTS).open(encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)

    @property
    def receipts_verified(self) -> bool:
        return not any(self.receipt_problems.values())

    @property
    def receipt_hash(self) -> str:
        return sha256_hex(canonical_bytes([self.receipts.get("host"), self.receipts.get("guest")]))


class StuckError(RuntimeError):
    """Both machines wait and no timer is armed: a machine bug, never a peer's doing."""


def _uuids(rng: random.Random) -> Callable[[], str]:
    """Envelope ids from a seeded generator (reproducible self-play): what
    ``str(uuid.UUID(int=rng.getrandbits(128), version=4))`` gives."""
    return lambda: uuid4_text(f"{rng.getrandbits(128):032x}")


def _bytes(rng: random.Random) -> Callable[[int], bytes]:
    return rng.randbytes


class Pipe:
    """One end of an in-memory frame pipe for stepping a handshake without an event loop."""

    via = "memory"

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.inbox: deque[bytes] = deque()
        self.other: Pipe | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def send(self, frame: bytes) -> None:
        assert self.other is not None
        self.other.inbox.append(bytes(frame))

    async def recv(self, idle_timeout: float | None = None) -> bytes:
        while not self.inbox:
            await _Turn()
        return self.inbox.popleft()

    async def close(self) -> None:
        self._closed = True


class _Turn:
    """Give the other side a turn (the stepper below resumes us after it)."""

    def __await__(self) -> Generator[None, None, None]:
        yield


def step_both(first: Coroutine[Any, Any, Any], second: Coroutine[Any, Any, Any],
              limit: int = 64) -> tuple[Any, Any]:
    """Run two coroutines that only wait on each other's frames to their results."""
    coros, results, done = [first, second], [None, None], [False, False]
    for _ in range(limit):
        for i, coro in enumerate(coros):
            if not done[i]:
                try:
                    coro.send(None)
                except StopIteration as stop:
                    done[i], results[i] = True, stop.value
        if all(done):
            return results[0], results[1]
    for coro in coros:
        coro.close()
    raise StuckError("the in-memory handshake did not finish")


@record
class Setup(Record):
    """Everything a seed decides before the first session message: who, which keys, when."""

    seed: int
    clock: Callable[[], float]
    identities: dict[str, Identity]
    endpoints: dict[str, AgentEndpoint]
    rngs: dict[str, random.Random]

    @classmethod
    def for_seed(cls, seed: int, clock: Callable[[], float]) -> Setup:
        rng = random.Random(f"lingxi-local-{seed}")
        identities = {r: Identity.from_seed(rng.randbytes(32)) for r in ROLES}
        endpoints = {r: AgentEndpoint(identities[r].agent_id, "lingxi", f"local://{r}")
                     for r in ROLES}
        rngs = {r: random.Random(f"lingxi-local-{seed}-{r}") for r in ROLES}
        return cls(seed, clock, identities, endpoints, rngs)

    def handshakes(self, host_transport: Any, guest_transport: Any
                   ) -> tuple[Coroutine[Any, Any, SessionKeys], Coroutine[Any, Any, SessionKeys]]:
        """The host's and the guest's side of the real handshake, seeded."""
        host = server_handshake(host_transport, self.identities["host"], self.endpoints["host"],
                                clock=self.clock, id_factory=_uuids(self.rngs["host"]),
                                rng=_bytes(self.rngs["host"]))
        guest = client_handshake(guest_transport, self.identities["guest"],
                                 self.endpoints["guest"], clock=self.clock,
                                 id_factory=_uuids(self.rngs["guest"]),
                                 rng=_bytes(self.rngs["guest"]))
        return host, guest

    def codec(self, keys: SessionKeys) -> SessionCodec:
        rng = self.rngs[keys.role]
        return SessionCodec(keys, clock=self.clock, id_factory=_uuids(rng),
                            nonce_factory=_bytes(rng))


def memory_keys(setup: Setup) -> dict[str, SessionKeys]:
    """Both sides' session keys from the real handshake over an in-memory pipe."""
    host_end, guest_end = Pipe("local://guest"), Pipe("local://host")
    host_end.other, guest_end.other = guest_end, host_end
    host, guest = step_both(*setup.handshakes(host_end, guest_end))
    return {"host": host, "guest": guest}


class Pairing:
    """Two conductors and the one schedule both the memory and the loopback driver follow.

    :meth:`steps` is a generator: it yields ``(receiver, frame)`` for every
    frame a side sends and expects the bytes that reached the receiver back,
    so the carrier (a Python list, or a real TCP connection) is the driver's
    only part. Frames, decisions and results are delivered in one FIFO order.
    """

    def __init__(self, host: SessionMachine, guest: SessionMachine, *, setup: Setup,
                 clock_ref: list[float], keys: dict[str, SessionKeys],
                 state_dir: str | Path | None = None,
                 deciders: dict[str, Callable[[RequestDecision], Any]] | None = None,
                 inputs: dict[str, list[str | None]] | None = None,
                 adversary: tuple[str, Adversary] | None = None,
                 keep_events: bool = True, max_steps: int = 5_000_000) -> None:
        self.setup = setup
        self._now = clock_ref  # [seconds since EPOCH], shared with setup.clock
        self.deciders = deciders or {}
        self.max_steps = max_steps
        self.queue: deque[tuple[str, Any]] = deque()
        self.timers: dict[str, dict[str, float]] = {r: {} for r in ROLES}
        self.inputs: dict[str, deque[str | None]] = {
            r: deque((inputs or {}).get(r, [])) for r in ROLES}
        self.conductors: dict[str, Conductor] = {}
        for role, machine in (("host", host), ("guest", guest)):
            folder = Path(state_dir) / role if state_dir is not None else None
            recorder = Recorder(folder, role, clock=setup.clock, keep_events=keep_events)
            cheat = adversary[1] if adversary is not None and adversary[0] == role else None
            self.conductors[role] = Conductor(machine, setup.codec(keys[role]),
                                              recorder=recorder,
                                              identity=setup.identities[role], adversary=cheat)
        self.session_id = keys["host"].session_id

    @property
    def now(self) -> float:
        return self._now[0]

    def steps(self) -> Carry:
        for role in ROLES:
            self._perform(role, self.conductors[role].start())
        steps = turn = 0
        while not (all(c.finished for c in self.conductors.values()) and not self.queue):
            steps += 1
            if steps > self.max_steps:
                raise StuckError(f"no end after {self.max_steps} steps")
            if self.queue:
                target, item = self.queue.popleft()
                conductor = self.conductors[target]
                if isinstance(item, bytes):
                    arrived = yield target, item
                    self._perform(target, conductor.frame(arrived))
                else:
                    self._perform(target, conductor.handle(item))
                continue
            feeders = [r for r in ROLES if self.inputs[r] and not self.conductors[r].finished]
            if feeders:
                role = feeders[turn % len(feeders)]
                turn += 1
                line = self.inputs[role].popleft()
                self._perform(role, self.conductors[role].handle(LocalInput(line)))
                continue
            due = [(at, role, name) for role in ROLES for name, at in self.timers[role].items()]
            if not due:
                raise StuckError("both sides wait and no timer is armed")
            at, role, name = min(due)
            self._now[0] = max(self.now, at)
            del self.timers[role][name]
            self._perform(role, self.conductors[role].handle(TimerFired(name)))
        return self._result()

    def _perform(self, role: str, actions: list[Any]) -> None:
        """How one side's actions play out in the paired world."""
        for action in actions:
            if isinstance(action, SendFrame):
                self.queue.append((PEER[role], action.data))
            elif isinstance(action, SetTimer):
                self.timers[role][action.name] = self.now + action.seconds
            elif isinstance(action, CancelTimer):
                self.timers[role].pop(action.name, None)
            elif isinstance(action, RequestDecision):
                self._ask(role, action)
            elif isinstance(action, Compute):  # inline, before anything else happens
                self.queue.appendleft((role, ComputeDone(action.name, run_compute(action))))
            elif isinstance(action, Finish):
                self.timers[role].clear()
            elif isinstance(action, Refuse):
                raise action.error
            elif not isinstance(action, Emitted):
                raise TypeError(f"unknown driver action {action!r}")

    def _ask(self, role: str, request: RequestDecision) -> None:
        decider = self.deciders.get(role)
        try:
            value = decider(request) if decider is not None else NO_ANSWER
        except Decline as declined:
            value = DecisionDeclined(request.point_id, declined.reason)
        if isinstance(value, DecisionDeclined):
            self.queue.append((role, value))
        elif value is not NO_ANSWER and value is not None:  # None: no answer (as on the network)
            self.queue.append((role, DecisionMade(request.point_id, value)))

    def _result(self) -> PairResult:
        settled = {role: c.settle() for role, c in self.conductors.items()}
        for conductor in self.conductors.values():
            conductor.recorder.close()
        return PairResult(
            settled["host"].outcome, settled["guest"].outcome,
            {r: s.head for r, s in settled.items()},
            {r: s.record["local"] for r, s in settled.items()},
            {r: s.problems for r, s in settled.items()}, self.now,
            {r: c.recorder.events for r, c in self.conductors.items()}, self.session_id,
            {r: c.machine for r, c in self.conductors.items()},
            {r: c.recorder.state_dir for r, c in self.conductors.items()})


class LocalPair:
    """Both sides over the in-memory carrier (frames handed over as they are)."""

    def __init__(self, host: SessionMachine, guest: SessionMachine, *, seed: int = 0,
                 **options: Any) -> None:
        self._now = [0.0]
        self.setup = Setup.for_seed(seed, self.clock)
        self.pairing = Pairing(host, guest, setup=self.setup, clock_ref=self._now,
                               keys=memory_keys(self.setup), **options)
        self.session_id = self.pairing.session_id

    def clock(self) -> float:
        return EPOCH + self._now[0]

    def run(self) -> PairResult:
        steps = self.pairing.steps()
        try:
            _, frame = next(steps)
            while True:
                _, frame = steps.send(frame)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
