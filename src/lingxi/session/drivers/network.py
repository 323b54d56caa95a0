"""The network driver: one side's conductor over a wire SecureChannel, in real time.

The :class:`~lingxi.session.conductor.Conductor` runs the session; this
driver only moves bytes and time: envelopes the channel opened go to the
conductor, the frames it returns go to the channel (sealed by the channel's
own codec, so they stay in order with the keepalive's), timers are loop
deadlines, decisions come from a callback or the state folder's inbox
(written by ``lingxi session decide``), free-mode input from an async line
source. After the end it waits a while for the peer's receipt.
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

from lingxi.records import Record
from lingxi.session.conductor import SETTLED, Conductor, Emitted, Refuse, SendFrame, run_compute
from lingxi.session.core.decisions import DeciderContext, Decline
from lingxi.session.core.events import (
    AbortRequested,
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
from lingxi.session.drivers.live import LiveSession
from lingxi.session.record.receipts import receipt_hash
from lingxi.session.record.recorder import INBOX, Recorder
from lingxi.wire.channel import SecureChannel
from lingxi.wire.errors import EnvelopeError, TransportError

INBOX_POLL = 0.1  # while a decision is open
INBOX_IDLE_POLL = 0.5  # otherwise (an abort request from `lingxi session abort`)
SNAPSHOT_EVERY = 0.5
INTERRUPT_GRACE = 2.0  # seconds to tell the peer we stopped, after Ctrl-C


@dataclass(repr=False, eq=False)
class DriveResult(Record):
    outcome: Outcome
    state_dir: Path | None
    head: str
    receipts: dict[str, Any] = field(default_factory=dict)
    peer_problems: list[str] = field(default_factory=list)
    peer_checkpoint: str | None = None  # the registry checkpoint the peer's opening carried

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
    """Runs one side's conductor over a channel.

    ``machine`` is a machine, or — for a guest that learns the protocol from
    the host — a function from the offered protocol_id to the machine: the
    offer then arrives, is recorded and is fed to the machine like every other
    envelope, and a refusal (unknown or unexpected protocol, an offer the wire
    refused) is sent to the host as an abort with its code before the error is
    raised here. ``registry_checkpoint`` (the last registry checkpoint this side
    checked) rides in its offer or accept; the peer's is ``DriveResult.peer_checkpoint``.
    """

    def __init__(self, machine: SessionMachine | Callable[[Any], SessionMachine],
                 channel: SecureChannel, *, recorder: Recorder,
                 identity: Any, decider: Callable[[RequestDecision], Any] | None = None,
                 inputs: AsyncIterator[str | None] | None = None,
                 receipt_timeout: float = 5.0, offer_timeout: float = 30.0,
                 adversary: Any = None, live: LiveSession | None = None,
                 registry_checkpoint: str | None = None) -> None:
        self.live = live  # read by the snapshot, which the conductor may write at once
        given = machine if isinstance(machine, SessionMachine) else None
        machine_for = None if isinstance(machine, SessionMachine) else machine
        self.conductor = Conductor(given, channel.codec, recorder=recorder, identity=identity,
                                   machine_for=machine_for,
                                   adversary=adversary,
                                   snapshot_extra=self._snapshot_extra,
                                   registry_checkpoint=registry_checkpoint)
        self.offer_timeout = offer_timeout
        self.channel = channel
        self.recorder = recorder
        self.identity = identity
        self.decider = decider
        self._deciding: asyncio.Future[Any] | None = None
        self.inputs = inputs
        self.receipt_timeout = receipt_timeout
        self.loop = asyncio.get_running_loop()
        self.timers: dict[str, float] = {}
        self.queue: list[Any] = []  # events produced locally (decisions, computations)
        self.computing: set[asyncio.Future[Any]] = set()
        self._wake = asyncio.Event()
        self._snapshot_at = 0.0

    def _snapshot_extra(self) -> dict[str, Any]:
        """This process, and the peer's registry nickname once it is proven for the key the
        handshake pinned (``session list`` names the peer by it)."""
        extra: dict[str, Any] = {"pid": os.getpid()}
        nickname = self.live.info.get("peer_nickname") if self.live is not None else None
        if isinstance(nickname, str) and nickname:
            extra["peer_nickname"] = nickname
        return extra

    @property
    def machine(self) -> SessionMachine:
        return self.conductor.machine

    @property
    def pending(self) -> RequestDecision | None:
        return self.conductor.pending

    # ------------------------------------------------------------ actions
    async def process(self, actions: list[Any]) -> None:
        """Carry out a batch of the conductor's actions; frames are sent in order."""
        frames: list[bytes] = []
        for action in actions:
            if isinstance(action, SendFrame):
                frames.append(action.data)
                continue
            await self._flush(frames)
            frames = []
            if isinstance(action, Emitted):
                self._emitted(action.record)
            elif isinstance(action, SetTimer):
                self.timers[action.name] = self.loop.time() + action.seconds
            elif isinstance(action, CancelTimer):
                self.timers.pop(action.name, None)
            elif isinstance(action, RequestDecision):
                self._ask(action)
            elif isinstance(action, Compute):
                self._compute(action)
            elif isinstance(action, Finish):
                self.timers.clear()
                self._settled()
            elif isinstance(action, Refuse):
                self.recorder.close()
                raise action.error
        await self._flush(frames)
        now = self.loop.time()
        if now - self._snapshot_at >= SNAPSHOT_EVERY:
            self.conductor.snapshot()
            self._snapshot_at = now

    async def _flush(self, frames: list[bytes]) -> None:
        if not frames:
            return
        try:
            await self.channel.send_frames(frames)
        except TransportError as error:
            self.recorder.event({"event": "transport.send_failed", "code": error.code,
                                 "reason": error.message})
            if self.conductor.has_machine and not self.conductor.finished:
                self.queue.append(("closed", error.message))

    def _emitted(self, record: dict[str, Any]) -> None:
        if record.get("event") in SETTLED:
            self._settled()
        if self.live is not None:
            self.live.event(record)

    def _settled(self) -> None:
        """The open decision got its value: nobody waits for the decider any more."""
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

    def _compute(self, action: Compute) -> None:
        """In a worker thread, so heartbeats and the peer's frames keep flowing."""
        future = self.loop.run_in_executor(None, run_compute, action)
        self.computing.add(asyncio.ensure_future(self._computed(action.name, future)))

    async def _computed(self, name: str, future: Any) -> None:
        self.queue.append(ComputeDone(name, await future))
        self._wake.set()

    def _ask(self, request: RequestDecision) -> None:
        if self.live is not None:
            self.live.asked(request, self.conductor.pending_deadline)
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
        self.conductor.snapshot()

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
            pending = self.conductor.pending
            if isinstance(data, dict) and isinstance(data.get("abort"), str):
                out.append(AbortRequested(data["abort"][:500] or "aborted"))
            elif isinstance(data, dict) and "value" in data and pending is not None:
                out.append(DecisionMade(str(data.get("point_id") or pending.point_id),
                                        data["value"]))
        return out

    # ------------------------------------------------------------- events
    async def _recv(self) -> Any:
        try:
            return await self.channel.recv()
        except (EnvelopeError, TransportError) as error:
            return error

    async def _resolve(self) -> None:
        """Wait for the host's offer; the conductor builds the machine it names (or refuses)."""
        try:
            item = await asyncio.wait_for(self._recv(), self.offer_timeout)
        except TimeoutError:
            item = TransportError("transport.timeout", "the host sent no offer in time")
        await self.process(self.conductor.received(item))

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
                                lambda event: self._emitted(self.recorder.event(
                                    {"role": self.machine.role, **event}))))

    async def run(self, first_events: list[Any] | None = None) -> DriveResult:
        try:
            return await self._run(first_events)
        except asyncio.CancelledError:
            await self._interrupted()
            raise
        finally:
            outcome = self.conductor.outcome
            if self.live is not None and outcome is not None:
                self.live.ended(outcome)

    async def _interrupted(self) -> None:
        """Ctrl-C (the task was cancelled): tell the peer, leave a finished snapshot."""
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        if not self.conductor.has_machine or self.conductor.finished:
            return
        actions = self.conductor.handle(AbortRequested("interrupted (Ctrl-C)"))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process(actions), INTERRUPT_GRACE)
        with contextlib.suppress(Exception):
            self.snapshot()

    async def _step(self, item: Any) -> None:
        if isinstance(item, tuple) and item[0] == "closed":
            await self.process(self.conductor.closed(item[1]))
        else:
            await self.process(self.conductor.handle(item))

    async def _run(self, first_events: list[Any] | None = None) -> DriveResult:
        if not self.conductor.has_machine:
            await self._resolve()
        self._bind()
        await self.process(self.conductor.start())
        for event in first_events or []:
            await self.process(self.conductor.handle(event))
        self._receiver: asyncio.Future[Any] | None = asyncio.ensure_future(self._recv())
        self._reader = self._next_line()
        try:
            while not self.conductor.finished:
                if not await self._work_now():
                    await self._wait_for_io()
            return await self._receipts(self._receiver)
        finally:
            for task in (self._receiver, self._reader, self._deciding, *self.computing):
                if task is not None and not task.done():
                    task.cancel()
            self.recorder.close()

    def _next_line(self) -> asyncio.Future[str | None] | None:
        """The next local input line, as a task (None: this side reads no input)."""
        if self.inputs is None:
            return None
        return asyncio.ensure_future(anext(self.inputs, None))

    async def _work_now(self) -> bool:
        """Run one queued item or the earliest due timer; False when nothing is due now."""
        if self.queue:
            await self._step(self.queue.pop(0))
            return True
        self.queue.extend(self._inbox())
        if self.queue:
            return True
        now = self.loop.time()
        due = [(at, name) for name, at in self.timers.items() if at <= now]
        if not due:
            return False
        _, name = min(due)
        del self.timers[name]
        await self.process(self.conductor.handle(TimerFired(name)))
        return True

    def _wait_seconds(self) -> float:
        """Until the next timer, and no longer than the inbox poll when a folder is kept."""
        now = self.loop.time()
        wait = min([at - now for at in self.timers.values()] or [3600.0])
        if self.recorder.state_dir is not None:
            wait = min(wait, INBOX_POLL if self.conductor.pending is not None
                       else INBOX_IDLE_POLL)
        return max(wait, 0.0)

    async def _wait_for_io(self) -> None:
        """Sleep until a frame, an input line, a wake-up or the next timer, then take it."""
        self._wake.clear()
        woken = asyncio.ensure_future(self._wake.wait())
        waiters: set[asyncio.Future[Any]] = {woken}
        waiters |= {task for task in (self._receiver, self._reader) if task is not None}
        done, _ = await asyncio.wait(waiters, timeout=self._wait_seconds(),
                                     return_when=asyncio.FIRST_COMPLETED)
        if not woken.done():
            woken.cancel()
        if self._receiver is not None and self._receiver in done:
            item = self._receiver.result()
            terminal = isinstance(item, TransportError)
            self._receiver = None if terminal else asyncio.ensure_future(self._recv())
            await self.process(self.conductor.received(item))
            if terminal and not self.conductor.finished:
                await self.process(self.conductor.closed("channel ended"))
        if self._reader is not None and self._reader in done:
            line = self._reader.result()
            self._reader = self._next_line() if line is not None else None
            await self.process(self.conductor.handle(LocalInput(line)))

    async def _receipts(self, receiver: asyncio.Future[Any] | None) -> DriveResult:
        """Wait (a while) for the peer's receipt; what arrives meanwhile is recorded late."""
        deadline = self.loop.time() + self.receipt_timeout
        while self.conductor.peer_receipt is None and receiver is not None:
            left = deadline - self.loop.time()
            if left <= 0:
                break
            done, _ = await asyncio.wait({receiver}, timeout=left)
            if not done:
                break
            item = receiver.result()
            if isinstance(item, TransportError):
                break
            self.conductor.received(item)
            receiver = asyncio.ensure_future(self._recv())
        if receiver is not None and not receiver.done():
            receiver.cancel()
        settled = self.conductor.settle()
        if self.live is not None:  # watchers (the page, the console) see the proof too
            self.live.event(settled.event)
        return DriveResult(settled.outcome, self.recorder.state_dir, settled.head,
                           settled.record, settled.problems, self.conductor.peer_checkpoint)


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
