"""Host and member processes of one group, over TCP or the relay (asyncio).

The host runs the :class:`~lingxi.group.Sequencer` and its own seat; each
member process connects, receives the log entry by entry, checks each one
in its own :class:`~lingxi.group.MemberView`, and submits what its seat
agent says when it is due. A stale submission (a lost race) is refused and
signed again on the new head. When the game is over the host closes the
log, every member signs the final head, and the host hands every receipt to
every member, so each process ends with the same verifiable record.

Frames (JSON objects): member -> host ``submit {envelope, ticket?}``,
``receipt {receipt}``; host -> member ``entry {envelope}``,
``refused {code, message}``, ``done {receipts}``. They travel through a pipe
(:class:`~lingxi.groupnet.frames.TcpPipe`, length-prefixed on a socket, or
the relay's sealed channel, :mod:`lingxi.groupnet.relay`); the code here
never knows which.

A host may hold a :class:`Gate` (a table posted through a registry): a join
or replacement is then admitted only with a ticket the gate accepts for that
seat and the entry's signer, checked before the sequencer appends it and
spent only once it did (a member that lost a race signs again with the same
ticket). A member whose join is refused for good (no ticket, a refused one,
its seat taken) ends with that code instead of trying again. A gate that can
``reopen`` a seat (a posted table) gets back a seat whose member's connection
ended after the start, when the game takes a newcomer then: the host logs a
``timeout`` with ``reopen`` and a new identity takes the seat with ``replace``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from lingxi.contract import Spec
from lingxi.group.agents import SeatAgent
from lingxi.group.errors import GroupError
from lingxi.group.keys import Signer
from lingxi.group.log import GroupLog
from lingxi.group.memory import spec_validator
from lingxi.group.sequencer import MemberView, Sequencer
from lingxi.group.verify import make_record
from lingxi.groupnet.frames import FrameError, TcpPipe, entry_envelope, entry_of

GATED = ("join", "replace")
FINAL_JOIN_REFUSALS = ("group.ticket_missing", "group.ticket_refused", "group.ticket_replayed",
                       "group.ticket_wrong_seat", "group.seat_taken", "group.full")


class Gate(Protocol):
    """Who may take a seat: ``check`` raises a GroupError (its code says why) or returns a
    grant, ``admitted`` is told once the sequencer appended the entry the grant was for."""

    def check(self, seat: int, key: str, ticket: Any) -> Any: ...

    def admitted(self, grant: Any) -> None: ...


class Pipe(Protocol):
    """What carries frames between the host and one member (see frames.TcpPipe)."""

    async def recv(self, timeout: float) -> dict[str, Any]: ...

    def send(self, frame: dict[str, Any]) -> None: ...

    async def drain(self) -> None: ...

    async def close(self) -> None: ...


@dataclass
class Outcome:
    """What a process ends with: its record, the game's result, the problem if any."""

    record: dict[str, Any]
    result: dict[str, Any] | None
    problem: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _problem(error: Exception) -> dict[str, Any]:
    code = getattr(error, "code", "internal.error")
    return {"code": code, "message": str(error), "culprit": getattr(error, "culprit", None)}


class GroupHost:
    """The sequencer and seat 0, serving ``seats - 1`` members (each through its pipe)."""

    def __init__(self, spec: Spec, seats: int, signer: Signer, agent: SeatAgent, *,
                 group_id: str, timeout: float = 60.0, gate: Gate | None = None,
                 seat_timeout: float | None = None) -> None:
        assert spec.seats is not None
        self.spec, self.seats, self.agent, self.timeout = spec, seats, agent, timeout
        self.gate = gate
        self.seat_timeout = timeout if seat_timeout is None else seat_timeout
        validate = spec_validator(spec)
        self.sequencer = Sequencer(signer, group_id, spec.protocol_id, spec.seats, validate)
        self.me = MemberView(signer, group_id, validate)
        self.me.log.observers.extend(agent.observers)
        self.clients: list[Pipe] = []
        self.seated_by: dict[int, str] = {}  # id(pipe) -> the member its join/replace seated
        self.reopened: set[int] = set()  # seats vacated and offered again by the gate
        self.receipts: dict[str, dict[str, Any]] = {}
        self.done = asyncio.Event()
        self.problem: dict[str, Any] | None = None
        self.last_progress = time.monotonic()
        self.me.receive(self.sequencer.log.entries[0])

    @property
    def log(self) -> GroupLog:
        return self.me.log

    def _publish(self, entry: dict[str, Any]) -> None:
        self.last_progress = time.monotonic()
        frame = {"t": "entry", "envelope": entry_envelope(entry, time.time())}
        for pipe in self.clients:
            pipe.send(frame)
        try:
            self.me.receive(entry)
        except GroupError as error:  # a cheat: the hand ended with the evidence in the log
            self.problem = self.problem or _problem(error)

    def _pump(self) -> None:
        """The host's own steps until it has nothing more to do now."""
        for _ in range(64):
            log = self.log
            if log.closed:
                self.receipts.setdefault(self.me.signer.key, self.me.receipt())
                self._maybe_done()
                return
            if log.seat_of(self.me.signer.key) is None and not log.started:
                entry = self.sequencer.submit(self.me.entry("join", {"seat": 0}))
            elif not log.started and len(log.seated()) == self.seats:
                entry = self.sequencer.author("start", {})
            elif log.started and (self.agent.finished() or self.problem is not None):
                entry = self.sequencer.close()
            elif log.started and (payload := self.agent.next_payload(log, 0)) is not None:
                entry = self.sequencer.submit(self.me.entry("message", {"payload": payload}))
            else:
                return
            self._publish(entry)

    def _maybe_done(self, force: bool = False) -> None:
        seated = {m.key for m in self.log.seated()}
        if (force or seated <= set(self.receipts)) and not self.done.is_set():
            frame = {"t": "done", "receipts": list(self.receipts.values())}
            for pipe in self.clients:
                pipe.send(frame)
            self.done.set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self.serve(TcpPipe(reader, writer))
        except asyncio.CancelledError:  # the host is ending: asyncio's stream callback
            writer.close()               # would log a cancelled handler as a traceback

    async def serve(self, pipe: Pipe) -> None:
        """One member's connection, whatever carries it, until the group is done."""
        self.clients.append(pipe)
        for entry in self.log.entries:
            pipe.send({"t": "entry", "envelope": entry_envelope(entry, time.time())})
        gone = False
        try:
            while not self.done.is_set():
                frame = await pipe.recv(self.timeout * 4)
                self._handle(pipe, frame)
                await pipe.drain()
        except FrameError:  # garbage, oversized, silent or gone: this connection ends
            gone = True
            await pipe.close()
        finally:
            if pipe in self.clients:
                self.clients.remove(pipe)
            member = self.seated_by.pop(id(pipe), None)
        if gone:  # not when the host itself is ending (its handlers are cancelled)
            self._vacate(member)

    def _vacate(self, key: str | None) -> None:
        """A member's connection ended while it holds a seat after the start: when the
        game lets a new identity take it now and the gate can offer it again (a posted
        table), the seat is timed out with ``reopen`` and offered; otherwise nothing
        (a silent member that owes is timed out by the watch, as before)."""
        reopen = getattr(self.gate, "reopen", None)
        log = self.log
        if (key is None or reopen is None or self.done.is_set() or not log.started
                or log.closed or log.seat_of(key) is None or not self.agent.replaceable()):
            return
        seat = log.seat_of(key)
        assert seat is not None
        self._publish(self.sequencer.author("timeout", {"member": key, "reopen": True}))
        self.reopened.add(seat)
        reopen(seat)
        self._pump()

    def _handle(self, pipe: Pipe, frame: dict[str, Any]) -> None:
        kind = frame.get("t")
        try:
            if kind == "submit":
                entry = entry_of(frame.get("envelope"))
                grant = self._gate(entry, frame.get("ticket"))
                self._publish(self.sequencer.submit(entry))
                if entry.get("kind") in GATED:
                    self.seated_by[id(pipe)] = entry["sender"]
                    self.reopened.discard(entry["body"].get("seat"))
                if grant is not None and self.gate is not None:
                    self.gate.admitted(grant)
                self._pump()
            elif kind == "receipt":
                key = self.log.check_receipt(frame.get("receipt"))
                if self.log.seat_of(key) is None:  # only the seated sign the table's end
                    raise GroupError("group.not_member", "a receipt from an identity that "
                                     "holds no seat")
                self.receipts[key] = frame["receipt"]
                self._maybe_done()
        except (GroupError, FrameError, ValueError) as error:
            pipe.send({"t": "refused", "code": getattr(error, "code", "group.malformed"),
                       "message": str(error)[:500]})

    def _gate(self, entry: Any, ticket: Any) -> Any:
        """The gate's grant for a join or replacement (None without a gate or for other
        entries); raises its refusal before the sequencer sees the entry."""
        if self.gate is None or not isinstance(entry, dict) or entry.get("kind") not in GATED:
            return None
        body, sender = entry.get("body"), entry.get("sender")
        seat = body.get("seat") if isinstance(body, dict) else None
        if type(seat) is not int or not isinstance(sender, str):
            raise GroupError("group.malformed", "a join names its seat and its signer")
        return self.gate.check(seat, sender, ticket)

    async def _watch(self) -> None:
        """A member that owes the next step and stays silent is timed out (it forfeits).

        With nobody to blame (seats never filled), the log is closed as stalled
        and, a timeout later, the run ends with the receipts that came.
        """
        while not self.done.is_set():
            await asyncio.sleep(min(1.0, self.timeout / 4))
            limit = self.timeout if self.log.started and not self.reopened \
                else self.seat_timeout
            if time.monotonic() - self.last_progress < limit:
                continue
            if self.log.closed:
                self._maybe_done(force=True)
                continue
            due = getattr(getattr(self.agent, "hand", None), "due", lambda: None)()
            member = next((m for m in self.log.seated() if m.seat == due), None)
            if member is not None and member.key != self.me.signer.key:
                self._publish(self.sequencer.author("timeout", {"member": member.key}))
            else:
                self.problem = self.problem or {"code": "group.stalled", "message": "no member "
                                                "made progress within the timeout",
                                                "culprit": None}
                self._publish(self.sequencer.close())
            self._pump()

    async def listen(self, host: str, port: int) -> tuple[asyncio.Server, str]:
        """Accept members over TCP on ``host:port``; the server and its bound endpoint."""
        server = await asyncio.start_server(self._serve, host, port)
        bound = server.sockets[0].getsockname()
        return server, f"tcp://{bound[0]}:{bound[1]}"

    async def run(self, host: str, port: int, ready=None) -> Outcome:
        """Serve members over TCP on ``host:port`` until the group is done."""
        server, where = await self.listen(host, port)
        if ready is not None:
            ready(where)
        try:
            return await self.play()
        finally:
            server.close()

    async def play(self) -> Outcome:
        """Sequence the log until the group is done; members arrive through :meth:`serve`."""
        self._pump()
        watcher = asyncio.create_task(self._watch())
        try:
            await self.done.wait()
            for pipe in list(self.clients):  # a connection that never reads is not waited for
                try:
                    await asyncio.wait_for(pipe.drain(), self.timeout)
                except (TimeoutError, OSError, FrameError):
                    await pipe.close()
        finally:
            watcher.cancel()
        record = make_record(self.log, list(self.receipts.values()))
        return Outcome(record, self.agent.result(self.log), self.problem)


async def connect_tcp(endpoint: str, timeout: float | None = None) -> TcpPipe:
    """A pipe to the host at ``tcp://HOST:PORT`` (OSError or TimeoutError when it cannot be
    reached within ``timeout``)."""
    host, _, port = endpoint.removeprefix("tcp://").rpartition(":")
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(host.strip("[]"), int(port)), timeout)
    return TcpPipe(reader, writer)


async def join_group(spec: Spec, endpoint: str, seat: int, signer: Signer, agent: SeatAgent,
                     *, timeout: float = 60.0, host_key: str | None = None,
                     joined=None, ticket: str | None = None) -> Outcome:
    """Play one seat of the group hosted at ``tcp://HOST:PORT`` to the end."""
    return await play_seat(await connect_tcp(endpoint), spec, seat, signer, agent,
                           timeout=timeout, host_key=host_key, joined=joined, ticket=ticket)


async def play_seat(pipe: Pipe, spec: Spec, seat: int, signer: Signer, agent: SeatAgent, *,
                    timeout: float = 60.0, host_key: str | None = None,
                    joined=None, ticket: str | None = None,
                    group_id: str | None = None) -> Outcome:
    """Play one seat to the end through ``pipe`` (connected to the host); closes it.

    ``host_key``: the sequencer the member expects (the open entry's signer).
    ``ticket``: the registry ticket sent with this seat's join (a posted table's gate).
    ``group_id``: the group the member was promised (a posted table's id).
    """
    view: MemberView | None = None
    pending: str | None = None
    problem: dict[str, Any] | None = None
    receipts: list[dict[str, Any]] = []

    def submit(kind: str, body: dict[str, Any]) -> None:
        nonlocal pending
        assert view is not None
        entry = view.entry(kind, body)
        frame: dict[str, Any] = {"t": "submit", "envelope": entry_envelope(entry, time.time())}
        if kind in GATED and ticket is not None:
            frame["ticket"] = ticket
        pipe.send(frame)
        pending = kind

    async def act() -> None:
        assert view is not None
        log = view.log
        if pending or log.closed:
            return
        if view.signer.key not in log.members and not log.started:
            submit("join", {"seat": seat})
        elif view.signer.key not in log.members:  # after the start: a vacated seat only
            if any(m.seat == seat for m in log.members.values()) and not any(
                    m.seat == seat for m in log.seated()):
                submit("replace", {"seat": seat})
        elif log.started and problem is None and (
                payload := agent.next_payload(log, seat)) is not None:
            if inspect.isawaitable(payload):  # a decider (a model) answers in its own time
                payload = await payload
            submit("message", {"payload": payload})

    try:
        while True:
            frame = await pipe.recv(timeout * 4)
            kind = frame.get("t")
            if kind == "entry":
                entry = entry_of(frame.get("envelope"))
                if view is None:
                    view = MemberView(signer, entry["group"], spec_validator(spec))
                    view.log.observers.extend(agent.observers)
                    if entry["body"].get("protocol_id") != spec.protocol_id:
                        raise GroupError("group.wrong_protocol", "the host opened the group "
                                         "with another protocol")
                    if host_key is not None and entry["sender"] != host_key:
                        raise GroupError("group.wrong_host", "the group was opened by another "
                                         "sequencer than --host-key")
                    if group_id is not None and entry["group"] != group_id:
                        raise GroupError("group.wrong_group", "the host opened another group "
                                         "than the table it posted")
                try:
                    view.receive(entry)
                except GroupError as error:
                    problem = problem or _problem(error)
                if entry["sender"] == signer.key:
                    pending = None
                    if entry["kind"] in GATED and joined is not None:
                        joined(entry["group"])
                if view.log.closed:
                    pipe.send({"t": "receipt", "receipt": view.receipt()})
                await act()
            elif kind == "refused":
                code = frame.get("code")
                if pending in GATED and code in FINAL_JOIN_REFUSALS:
                    raise GroupError(str(code), f"the host refused this seat's join: "
                                     f"{str(frame.get('message'))[:300]}")
                pending = None
                await act()
            elif kind == "done":
                receipts = list(frame.get("receipts") or [])
                break
            await pipe.drain()
    finally:
        await pipe.close()
    assert view is not None
    return Outcome(make_record(view.log, receipts), agent.result(view.log), problem)
