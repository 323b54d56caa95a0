"""The network driver: one machine over a wire SecureChannel (TCP or in-memory pair).

Runs the same sans-IO machine as the in-memory driver, with real time:
envelopes from the channel become events, timers are loop deadlines,
decisions come from a callback or the state folder's inbox (written by
``lingxi session decide``), free-mode input from an async line source. When
the machine finishes, both sides exchange signed receipts over their
transcript heads and verify each other's.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.contract.protocol_id import check_protocol_id
from lingxi.errors import LingxiError
from lingxi.session.core.decisions import DeciderContext, Decline
from lingxi.session.core.events import (
    AbortRequested,
    Compute,
    ComputeDone,
    ControlReceived,
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
from lingxi.session.drivers.link import is_receipt, over_state_limit, payload_to_event
from lingxi.session.drivers.live import LiveSession
from lingxi.session.errors import SessionError
from lingxi.session.record.receipts import receipt_body, receipt_hash, settle, sign_receipt
from lingxi.session.record.recorder import INBOX, Recorder
from lingxi.session.record.snapshot import snapshot_of
from lingxi.wire.channel import SecureChannel
from lingxi.wire.errors import EnvelopeError, TransportError, WireError

INBOX_POLL = 0.1  # while a decision is open
INBOX_IDLE_POLL = 0.5  # otherwise (an abort request from `lingxi session abort`)
SNAPSHOT_EVERY = 0.5
SETTLED = ("decision.made", "decision.timeout_fallback", "decision.declined_fallback")
INTERRUPT_GRACE = 2.0  # seconds to tell the peer we stopped, after Ctrl-C


@dataclass
class DriveResult:
    outcome: Outcome
    state_dir: Path | None
    head: str
    receipts: dict[str, Any] = field(default_factory=dict)
    peer_problems: list[str] = field(default_factory=list)

    @property
    def receipts_verified(self) -> bool:
        return bool(self.receipts.get("peer")) and not self.peer_problems

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome.to_dict(), "state_dir": str(self.state_dir or ""),
                "transcript_head": self.head, "receipts_verified": self.receipts_verified,
                "peer_problems": self.peer_problems,
                "receipt_hash": receipt_hash(self.receipts["local"])
                if self.receipts.get("local") else None}


class Driver:
    """Runs one machine over a channel.

    ``machine`` is a machine, or — for a guest that learns the protocol from
    the host — a function from the offered protocol_id to the machine: the
    offer then arrives, is recorded and is fed to the machine like every other
    envelope, and a refusal (unknown or unexpected protocol) is sent to the
    host as an abort with its code before the error is raised here.
    """

    def __init__(self, machine: SessionMachine | Callable[[Any], SessionMachine],
                 channel: SecureChannel, *, recorder: Recorder,
                 identity: Any, decider: Callable[[RequestDecision], Any] | None = None,
                 inputs: AsyncIterator[str | None] | None = None,
                 receipt_timeout: float = 5.0, offer_timeout: float = 30.0,
                 adversary: Any = None, live: LiveSession | None = None) -> None:
        self.machine_for = None if isinstance(machine, SessionMachine) else machine
        self.machine: SessionMachine = machine if isinstance(machine, SessionMachine) \
            else None  # type: ignore[assignment]  # set from the offer in run()
        self.offer_timeout = offer_timeout
        self.adversary = adversary  # tests only: a cheating rewriter of what this side sends
        self.channel = channel
        self.recorder = recorder
        self.identity = identity
        self.decider = decider
        self.live = live
        self._deciding: asyncio.Future[Any] | None = None
        self.inputs = inputs
        self.receipt_timeout = receipt_timeout
        self.loop = asyncio.get_running_loop()
        self.timers: dict[str, float] = {}
        self.pending: RequestDecision | None = None
        self.peer_receipt: dict[str, Any] | None = None
        role = self.machine.role if self.machine is not None else "guest"
        self.my_dir = ROLE_DIRECTION[role]
        self.peer_dir = ROLE_DIRECTION["guest" if role == "host" else "host"]
        self.queue: list[Any] = []  # events produced locally (decisions, computations)
        self.computing: set[asyncio.Future] = set()
        self._wake = asyncio.Event()
        self._outbox: list[tuple[str, Any]] = []
        self._snapshot_due = True  # snapshot.json: at once on changes, else at most every 0.5 s
        self._snapshot_at = 0.0

    # ------------------------------------------------------------ actions
    async def _send(self, payload: dict[str, Any], correlation_id: str | None = None) -> None:
        kind = None if isinstance(payload.get("action"), str) else "p2p:unnamed"
        try:
            env = await self.channel.send(payload, type=kind, correlation_id=correlation_id)
        except TransportError as error:
            self.recorder.event({"event": "transport.send_failed", "code": error.code,
                                 "reason": error.message})
            if not self.machine.finished:
                self.queue.append(ControlReceived("close", {"reason": error.message}))
            return
        if not is_receipt(payload):
            self.recorder.envelope(self.my_dir, env.to_dict(), "sent")

    async def process(self, actions: list[Any]) -> None:
        """Perform a batch of machine actions; sends and decisions are awaited in order."""
        self._outbox = []
        perform(actions, self)
        for kind, item in self._outbox:
            if kind == "send":
                await self._send(*item)
            else:
                await self._ask(item)
        now = self.loop.time()
        if self._snapshot_due or now - self._snapshot_at >= SNAPSHOT_EVERY:
            self.snapshot()
            self._snapshot_due = False
            self._snapshot_at = now

    # ActionTarget: what each action means over a channel
    def send(self, payload: dict[str, Any], correlation_id: str | None) -> None:
        items = ([(payload, correlation_id)] if self.adversary is None
                 else self.adversary.outgoing(self, payload, correlation_id))
        for item in items:
            self._outbox.append(("send", item))

    def emit(self, event: dict[str, Any]) -> None:
        record = self.recorder.event(event)
        if event.get("event") in SETTLED:
            self._settled()
        if self.live is not None:
            self.live.event(record)

    def _settled(self) -> None:
        """The open decision got its value: nobody waits for the decider any more."""
        self.pending = None
        self._snapshot_due = True
        if self._deciding is not None and not self._deciding.done():
            self._deciding.cancel()
        self._deciding = None
        if self.live is not None:
            self.live.asked(None, None)

    # steering, from a LiveSession (terminal, browser UI, agent) in this loop
    def answer(self, point_id: str, value: Any) -> None:
        self.queue.append(DecisionMade(point_id, value))
        self._wake.set()

    def abort(self, reason: str) -> None:
        self.queue.append(AbortRequested(reason))
        self._wake.set()

    def input(self, line: str) -> None:
        self.queue.append(LocalInput(line))
        self._wake.set()

    def set_timer(self, name: str, seconds: float) -> None:
        self.timers[name] = self.loop.time() + seconds

    def cancel_timer(self, name: str) -> None:
        self.timers.pop(name, None)

    def request_decision(self, request: RequestDecision) -> None:
        self._outbox.append(("ask", request))

    def compute(self, action: Compute) -> None:
        """In a worker thread, so heartbeats and the peer's frames keep flowing."""
        future = self.loop.run_in_executor(None, run_compute, action)
        self.computing.add(asyncio.ensure_future(self._computed(action.name, future)))

    async def _computed(self, name: str, future: Any) -> None:
        self.queue.append(ComputeDone(name, await future))
        self._wake.set()

    def finished(self, outcome: Outcome) -> None:
        self.timers.clear()
        self._settled()

    async def _ask(self, request: RequestDecision) -> None:
        self.pending = request
        self.pending_deadline = time.time() + request.timeout_seconds
        self._snapshot_due = True
        if self.live is not None:
            self.live.asked(request, self.pending_deadline)
        if self.decider is not None:  # else the inbox, a watcher or the timeout answers
            self._deciding = asyncio.ensure_future(self._decide(request))

    async def _decide(self, request: RequestDecision) -> None:
        """Run the decider beside the loop (timers, peer frames and watchers go on); a sync
        decider runs in a worker thread so a blocking one cannot stall the session."""
        decider = self.decider
        assert decider is not None
        try:
            if inspect.iscoroutinefunction(decider) or inspect.iscoroutinefunction(
                    type(decider).__call__):
                value = await decider(request)
            else:
                value = await self.loop.run_in_executor(None, decider, request)
                if inspect.isawaitable(value):
                    value = await value
        except asyncio.CancelledError:
            raise
        except Decline as declined:
            self.queue.append(DecisionDeclined(request.point_id, declined.reason))
        except Exception as error:  # a broken decider is a declined point, never a crash
            self.queue.append(DecisionDeclined(
                request.point_id, f"the decider raised {type(error).__name__}: {error}"))
        else:
            if value is not None:
                self.queue.append(DecisionMade(request.point_id, value))
        self._wake.set()

    def snapshot(self) -> None:
        if self.recorder.state_dir is None:
            return
        self.recorder.snapshot({"pid": os.getpid(), **snapshot_of(self.machine, self.channel.session_id,
                                              self.identity, self.channel.keys.peer_identity,
                                              self.pending if not self.machine.finished else None,
                                              getattr(self, "pending_deadline", None)),
                                "transcript_head": self.recorder.transcript.head()})

    def _inbox(self) -> list[Any]:
        """Requests written by `lingxi session decide|abort` into the state folder."""
        folder = self.recorder.state_dir
        if folder is None:
            return []
        out: list[Any] = []
        for path in sorted((folder / INBOX).glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            finally:
                with contextlib.suppress(OSError):
                    path.unlink()
            if isinstance(data, dict) and isinstance(data.get("abort"), str):
                out.append(AbortRequested(data["abort"][:500] or "aborted"))
            elif isinstance(data, dict) and "value" in data and self.pending is not None:
                out.append(DecisionMade(str(data.get("point_id") or self.pending.point_id),
                                        data["value"]))
        return out

    # ------------------------------------------------------------- events
    def _event_for(self, item: Any) -> Any:
        if isinstance(item, EnvelopeError):
            return EnvelopeRejected(item.code, item.message, {"path": item.path})
        if isinstance(item, TransportError):
            if item.code == "transport.closed":
                return ControlReceived("close", {"reason": item.message})
            return EnvelopeRejected(item.code, item.message, {})
        payload = item.payload
        if is_receipt(payload):  # receipts come after the end, never during a session
            return ControlReceived("receipt", {})
        size = self.recorder.envelope(self.peer_dir, item.to_dict(), "received")
        limit = over_state_limit(self.machine, self.recorder) if self.machine else None
        return limit or payload_to_event(payload, item.correlation_id, size)

    async def _recv(self) -> Any:
        try:
            return await self.channel.recv()
        except (EnvelopeError, TransportError) as error:
            return error

    async def _resolve(self) -> list[Any]:
        """Wait for the host's offer and build the machine it names; the offer is the first event."""
        try:
            item = await asyncio.wait_for(self._recv(), self.offer_timeout)
        except TimeoutError:
            item = TransportError("transport.timeout", "the host sent no offer in time")
        if isinstance(item, TransportError):
            raise SessionError("session.no_offer", f"the host did not start: {item.message}",
                               exit_code=1)
        event = None if isinstance(item, EnvelopeError) or is_receipt(item.payload) \
            else self._event_for(item)
        offered = event.body.get("protocol_id") if isinstance(event, ControlReceived) \
            and event.kind == "offer" else None
        if offered is None:
            await self._refuse("session.out_of_phase", "expected the session offer first")
            raise SessionError("session.no_offer", "the host did not start with an offer",
                               exit_code=1)
        try:
            check_protocol_id(offered)
            assert self.machine_for is not None
            self.machine = self.machine_for(offered)
        except LingxiError as error:  # tell the host instead of leaving it waiting
            await self._refuse(error.code, error.message)
            raise
        return [event]

    async def _refuse(self, code: str, message: str) -> None:
        with contextlib.suppress(WireError):
            await self.channel.abort(code, message)
        self.recorder.close()

    def _bind(self) -> None:
        """Tell the watchers and the decider what is being played, once the machine exists."""
        spec = self.machine.spec
        if self.live is not None:
            self.live.attach(self, {
                "protocol": spec.name, "protocol_id": spec.protocol_id, "mode": self.machine.mode,
                "role": self.machine.role, "session_id": self.channel.session_id,
                "state_dir": str(self.recorder.state_dir or ""),
                "peer_key": self.channel.keys.peer_identity,
                "description": getattr(spec, "description", "") or "",
                "rules": (spec.raw or {}).get("rules") or {}})
        bind = getattr(self.decider, "bind", None)
        if callable(bind):
            bind(DeciderContext(spec, self.machine.role,
                                lambda event: self.emit({"role": self.machine.role, **event})))

    async def run(self, first_events: list[Any] | None = None) -> DriveResult:
        try:
            return await self._run(first_events)
        except asyncio.CancelledError:
            await self._interrupted()
            raise
        finally:
            if self.live is not None and self.machine is not None \
                    and self.machine.outcome is not None:
                self.live.ended(self.machine.outcome)

    async def _interrupted(self) -> None:
        """Ctrl-C (the task was cancelled): tell the peer, leave a finished snapshot."""
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        if self.machine is None or self.machine.finished:
            return
        actions = self.machine.handle(AbortRequested("interrupted (Ctrl-C)"))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process(actions), INTERRUPT_GRACE)
        with contextlib.suppress(Exception):
            self.snapshot()

    async def _run(self, first_events: list[Any] | None = None) -> DriveResult:
        if self.machine is None:
            first_events = await self._resolve() + list(first_events or [])
        self._bind()
        await self.process(self.machine.handle(Start(
            self.identity, self.channel.keys.peer_identity, self.channel.session_id)))
        for event in first_events or []:
            await self.process(self.machine.handle(event))
        inputs = self.inputs
        receiver: asyncio.Future[Any] | None = asyncio.ensure_future(self._recv())
        reader = asyncio.ensure_future(anext(inputs, None)) if inputs is not None else None
        try:
            while not self.machine.finished:
                if self.queue:
                    await self.process(self.machine.handle(self.queue.pop(0)))
                    continue
                for made in self._inbox():
                    self.queue.append(made)
                if self.queue:
                    continue
                now = self.loop.time()
                due = [(at, name) for name, at in self.timers.items() if at <= now]
                if due:
                    _, name = min(due)
                    del self.timers[name]
                    await self.process(self.machine.handle(TimerFired(name)))
                    continue
                wait = min([at - now for at in self.timers.values()] or [3600.0])
                if self.recorder.state_dir is not None:
                    wait = min(wait, INBOX_POLL if self.pending is not None else INBOX_IDLE_POLL)
                self._wake.clear()
                woken = asyncio.ensure_future(self._wake.wait())
                waiters: set[asyncio.Future[Any]] = {woken}
                waiters |= {task for task in (receiver, reader) if task is not None}
                done, _ = await asyncio.wait(waiters, timeout=max(wait, 0.0),
                                             return_when=asyncio.FIRST_COMPLETED)
                if not woken.done():
                    woken.cancel()
                if receiver is not None and receiver in done:
                    item = receiver.result()
                    terminal = isinstance(item, TransportError)
                    receiver = None if terminal else asyncio.ensure_future(self._recv())
                    event = self._event_for(item)
                    if event is not None:
                        await self.process(self.machine.handle(event))
                    if receiver is None and not self.machine.finished:
                        await self.process(self.machine.handle(
                            ControlReceived("close", {"reason": "channel ended"})))
                if reader is not None and reader in done:
                    line = reader.result()
                    reader = (asyncio.ensure_future(anext(inputs, None))
                              if line is not None and inputs is not None else None)
                    await self.process(self.machine.handle(LocalInput(line)))
            return await self._receipts(receiver)
        finally:
            for task in (receiver, reader, self._deciding, *self.computing):
                if task is not None and not task.done():
                    task.cancel()
            self.recorder.close()

    async def _receipts(self, receiver: asyncio.Future | None) -> DriveResult:
        outcome = self.machine.outcome
        assert outcome is not None
        transcript = self.recorder.transcript
        mine = sign_receipt(receipt_body(transcript, session_id=self.channel.session_id,
                                         protocol_id=self.machine.spec.protocol_id,
                                         role=self.machine.role,
                                         public_key=self.identity.public_hex,
                                         status=outcome.status,
                                         handshake=self.channel.keys.transcript_hash),
                           self.identity)
        await self._send({"action": "session.receipt", "receipt": mine})
        deadline = self.loop.time() + self.receipt_timeout
        while self.peer_receipt is None and receiver is not None:
            left = deadline - self.loop.time()
            if left <= 0:
                break
            done, _ = await asyncio.wait({receiver}, timeout=left)
            if not done:
                break
            item = receiver.result()
            if isinstance(item, TransportError):
                break
            if not isinstance(item, EnvelopeError) and is_receipt(item.payload):
                self.peer_receipt = item.payload.get("receipt")
            else:
                if not isinstance(item, EnvelopeError):  # in flight when we finished
                    self.recorder.envelope(self.peer_dir, item.to_dict(), "late")
                receiver = asyncio.ensure_future(self._recv())
        if receiver is not None and not receiver.done():
            receiver.cancel()
        receipts = settle(mine, self.peer_receipt, transcript,
                          peer_key=self.channel.keys.peer_identity,
                          session_id=self.channel.session_id,
                          handshake=self.channel.keys.transcript_hash)
        problems = receipts["peer_problems"]
        self.recorder.receipts(receipts)
        self.recorder.event({"event": "receipts.exchanged", "verified": not problems,
                             "problems": problems})
        self.snapshot()
        return DriveResult(outcome, self.recorder.state_dir, transcript.head(), receipts,
                           problems)


async def lines_from(source: str | Path | None) -> AsyncIterator[str | None]:
    """Free-mode input: lines of a script file, or of stdin when ``source`` is "-"."""
    if source is None:
        return
    if str(source) == "-":
        from lingxi.lines import LineReader

        reader = LineReader()  # a daemon thread: a session that ends mid-line never waits
        while (line := await reader.line()) is not None:
            yield line
    else:
        for line in read_script(source):
            yield line
    yield None


def read_script(source: str | Path) -> list[str]:
    """The lines of an input script, read before the session starts (typed errors)."""
    from lingxi.errors import InputError

    try:
        return Path(source).read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise InputError("input.not_utf8", f"{source}: not UTF-8 text (byte {error.start})"
                         ) from None
    except OSError as error:
        raise InputError("input.unreadable", f"cannot read {source}: {error.strerror or error}"
                         ) from None


def wall_clock() -> float:
    return time.time()
