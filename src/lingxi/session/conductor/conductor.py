"""One side of a session around its machine, sans-IO: the only place a session is run.

Every driver (in memory, loopback TCP, real TCP, relay) feeds a
:class:`Conductor` what happened — frame bytes or an envelope its channel
opened, a timer, a decision, a finished computation, a line of input — and
carries out the actions it returns (:mod:`lingxi.session.conductor.actions`).
The conductor owns the whole lifecycle in between, once:

1. each received frame is opened and checked by the wire's
   :class:`~lingxi.wire.codec.SessionCodec` (signature, replay, binding,
   time window, sealing);
2. an accepted envelope is chained into the transcript ("received"), the
   state limit checked, and its payload turned into a machine event;
3. the machine judges it (schema, phase, rules, hooks) and answers with actions;
4. each send is signed and sealed by the codec and chained ("sent");
5. emitted events go to events.jsonl; decisions and snapshots are kept;
6. envelopes arriving after the end are chained as "late";
7. at the end it signs a receipt over the transcript and the handshake and
   settles the peer's receipt.

It reads no clock of its own (the codec's and recorder's clocks are injected)
and does no I/O besides the :class:`~lingxi.session.record.recorder.Recorder`
it is given, whose folder the driver chose (or none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import Any

from lingxi.contract.protocol_id import check_protocol_id
from lingxi.errors import LingxiError
from lingxi.records import Record, record
from lingxi.session.conductor.actions import DriverAction, Emitted, Refuse, SendFrame
from lingxi.session.conductor.link import (
    checkpoint_in,
    control_to_payload,
    is_receipt,
    over_state_limit,
    payload_to_event,
    with_checkpoint,
)
from lingxi.session.core.events import (
    CancelTimer,
    Compute,
    ControlReceived,
    Emit,
    EnvelopeRejected,
    Finish,
    Outcome,
    RequestDecision,
    Send,
    SendControl,
    SetTimer,
    Start,
)
from lingxi.session.core.machine import ROLE_DIRECTION, SessionMachine
from lingxi.session.errors import SessionError
from lingxi.session.record.receipts import receipt_body, result_of, settle, sign_receipt
from lingxi.session.record.recorder import Recorder
from lingxi.session.record.snapshot import snapshot_of
from lingxi.wire.codec import HELD, SessionCodec
from lingxi.wire.envelope import Envelope
from lingxi.wire.errors import EnvelopeError, TransportError

SETTLED = ("decision.made", "decision.timeout_fallback", "decision.declined_fallback")
NO_OFFER = "session.no_offer"


@record
class Settlement(Record):
    """Both receipts of a finished side and what is wrong with the peer's."""

    outcome: Outcome
    head: str
    record: dict[str, Any] = field(default_factory=dict)
    event: dict[str, Any] = field(default_factory=dict)  # receipts.exchanged, as recorded

    @property
    def problems(self) -> list[str]:
        return list(self.record.get("peer_problems") or [])


class Conductor:
    """Runs one side's machine; see the module doc.

    ``machine`` is the side's machine, or ``None`` for a guest that learns the
    protocol from the host's offer: ``machine_for(protocol_id)`` then builds it
    (a refusal is told to the host as an abort with its code).
    ``adversary`` (tests and ``protocol test --adversarial`` only) rewrites
    what this side sends, before signing (``outgoing``) and after (``wire``).
    """

    def __init__(self, machine: SessionMachine | None, codec: SessionCodec, *,
                 recorder: Recorder, identity: Any,
                 machine_for: Callable[[str], SessionMachine] | None = None,
                 adversary: Any = None,
                 snapshot_extra: Callable[[], dict[str, Any]] | None = None,
                 registry_checkpoint: str | None = None) -> None:
        if machine is None and machine_for is None:
            raise ValueError("a conductor needs a machine or machine_for")
        self._machine = machine
        self.machine_for = machine_for
        self.codec = codec
        self.recorder = recorder
        self.identity = identity
        self.adversary = adversary
        self.snapshot_extra = snapshot_extra
        self.registry_checkpoint = registry_checkpoint  # sent in this side's offer or accept
        self.peer_checkpoint: str | None = None  # what the peer's offer or accept carried
        keys = codec.keys
        self.session_id: str = keys.session_id
        self.peer_key: str = keys.peer_identity
        self.handshake: str = keys.transcript_hash
        self.role: str = machine.role if machine is not None else keys.role
        self.my_dir = ROLE_DIRECTION[self.role]
        self.peer_dir = ROLE_DIRECTION["guest" if self.role == "host" else "host"]
        self.pending: RequestDecision | None = None
        self.pending_deadline: float | None = None
        self.peer_receipt: Any = None
        self.receipt: dict[str, Any] | None = None
        self.sent = 0
        self._first: list[Any] = []

    # ------------------------------------------------------------ state
    @property
    def machine(self) -> SessionMachine:
        if self._machine is None:
            raise RuntimeError("the machine exists once the offer arrived")
        return self._machine

    @property
    def has_machine(self) -> bool:
        return self._machine is not None

    @property
    def finished(self) -> bool:
        return self._machine is not None and self._machine.finished

    @property
    def outcome(self) -> Outcome | None:
        return self._machine.outcome if self._machine is not None else None

    @property
    def settled(self) -> bool:
        """Finished, receipt sent, and the peer's receipt in (or given up on by the driver)."""
        return self.finished and self.peer_receipt is not None

    # ------------------------------------------------------------ inputs
    def start(self) -> list[DriverAction]:
        """Begin: Start to the machine, then the offer that built it (a guest's)."""
        out = self._feed(self.machine.handle(Start(self.identity, self.peer_key,
                                                   self.session_id)))
        self.snapshot()
        first, self._first = self._first, []
        for event in first:
            out += self.handle(event)
        return out

    def frame(self, data: bytes) -> list[DriverAction]:
        """Frame bytes from the transport: opened and checked by the codec, then judged."""
        try:
            opened = self.codec.open_frame(data)
        except TransportError as error:
            return self.received(error)
        if opened is HELD:
            return []
        try:
            env = self.codec.accept(opened)
        except EnvelopeError as error:
            return self.received(error)
        return self.received(env)

    def received(self, item: Envelope | EnvelopeError | TransportError) -> list[DriverAction]:
        """An envelope the wire accepted, or the error it refused one with."""
        if self._machine is None:
            return self._resolve(item)
        if self._machine.finished:
            self._after_end(item)
            return []
        event = self._event_for(item)
        return self.handle(event) if event is not None else []

    def handle(self, event: Any) -> list[DriverAction]:
        """Any machine event from the driver: a timer, a decision, a result, input, an abort."""
        if self.finished:
            return []
        return self._feed(self.machine.handle(event))

    def closed(self, reason: str) -> list[DriverAction]:
        """The channel ended under the session."""
        return self.handle(ControlReceived("close", {"reason": reason}))

    # ------------------------------------------------------------ the end
    def settle(self) -> Settlement:
        """Settle the receipts (whatever the peer sent, or nothing) and write receipts.json."""
        outcome = self.outcome
        assert outcome is not None and self.receipt is not None  # only after the end
        transcript = self.recorder.transcript
        record = settle(self.receipt, self.peer_receipt, transcript, peer_key=self.peer_key,
                        session_id=self.session_id, handshake=self.handshake)
        self.recorder.receipts(record)
        problems = record["peer_problems"]
        event = self.recorder.event({
            "event": "receipts.exchanged", "role": self.role, "verified": not problems,
            "problems": problems, "transcript_head": transcript.head(),
            "receipt_hash": record["local_hash"], "peer_receipt_hash": record["peer_hash"]})
        self.snapshot()
        return Settlement(outcome, transcript.head(), record, event)

    def snapshot(self) -> None:
        """Write snapshot.json: the machine's state, position and open decision."""
        if self.recorder.state_dir is None or self._machine is None:
            return
        machine = self._machine
        data = snapshot_of(machine, self.session_id, self.identity, self.peer_key,
                           self.pending if not machine.finished else None,
                           self.pending_deadline)
        data["transcript_head"] = self.recorder.transcript.head()
        if self.peer_checkpoint is not None:
            data["peer_registry_checkpoint"] = self.peer_checkpoint
        if self.snapshot_extra is not None:
            data = {**self.snapshot_extra(), **data}
        self.recorder.snapshot(data)

    # ------------------------------------------------------------ internals
    def _resolve(self, item: Any) -> list[DriverAction]:
        """The first envelope of a guest must be the offer that names the protocol."""
        if isinstance(item, TransportError):
            return [Refuse(SessionError(NO_OFFER, f"the host did not start: {item.message}",
                                        exit_code=1))]
        if isinstance(item, EnvelopeError):
            self.recorder.event({"event": "offer.rejected", "role": self.role,
                                 "code": item.code, "reason": item.message})
            return self._refuse(item.code, f"the host's offer was refused: {item.message}",
                                SessionError(item.code, f"the host's offer was refused: "
                                             f"{item.message}", exit_code=1))
        event = None if is_receipt(item.payload) else self._event_for(item)
        offered = event.body.get("protocol_id") if isinstance(event, ControlReceived) \
            and event.kind == "offer" else None
        if offered is None:
            return self._refuse("session.out_of_phase", "expected the session offer first",
                                SessionError(NO_OFFER, "the host did not start with an offer",
                                             exit_code=1))
        try:
            check_protocol_id(offered)
            assert self.machine_for is not None
            machine = self.machine_for(offered)
        except LingxiError as error:  # tell the host instead of leaving it waiting
            return self._refuse(error.code, error.message, error)
        self._machine = machine
        self._first = [event]
        return []

    def _refuse(self, code: str, message: str, error: LingxiError) -> list[DriverAction]:
        _, frame = self.codec.build(control_to_payload(SendControl(
            "abort", {"code": code, "message": message})))
        return [SendFrame(frame), Refuse(error)]

    def _event_for(self, item: Envelope | EnvelopeError | TransportError) -> Any:
        if isinstance(item, EnvelopeError):
            return EnvelopeRejected(item.code, item.message, {"path": item.path})
        if isinstance(item, TransportError):
            if item.code == "transport.closed":
                return ControlReceived("close", {"reason": item.message})
            return EnvelopeRejected(item.code, item.message, {})
        payload = item.payload
        if is_receipt(payload):  # receipts come after the end, never during a session
            return ControlReceived("receipt", {})
        size = self.recorder.envelope(self.peer_dir, item, "received")
        note = checkpoint_in(payload)
        if note is not None and self.peer_checkpoint is None:
            self.peer_checkpoint = note
            self.recorder.event({"event": "registry.peer_checkpoint", "role": self.role,
                                 "checkpoint": note})
        limit = over_state_limit(self._machine, self.recorder) if self._machine else None
        return limit or payload_to_event(payload, item.correlation_id, size)

    def _after_end(self, item: Any) -> None:
        """The peer's receipt, or an envelope that was in flight when this side finished."""
        if not isinstance(item, Envelope):
            return
        if is_receipt(item.payload):
            receipt = item.payload.get("receipt")
            self.peer_receipt = receipt if receipt is not None else {}
        else:
            self.recorder.envelope(self.peer_dir, item, "late")

    def _feed(self, actions: Iterable[Any]) -> list[DriverAction]:
        out: list[DriverAction] = []
        due = False  # snapshot.json after the batch: an open or settled decision, the end
        for action in actions:
            if isinstance(action, Send):
                out += self._send(action.payload, action.correlation_id)
            elif isinstance(action, SendControl):
                out += self._send(with_checkpoint(control_to_payload(action),
                                                  self.registry_checkpoint), None)
            elif isinstance(action, Emit):
                due = self._emit(action.event, out) or due
            elif isinstance(action, RequestDecision):
                self.pending = action
                self.pending_deadline = self.codec.clock() + action.timeout_seconds
                due = True
                out.append(action)
            elif isinstance(action, Finish):
                out.append(action)
                due = True
                out += self._sign_receipt(action.outcome)
            elif isinstance(action, SetTimer | CancelTimer | Compute):
                out.append(action)
            else:
                raise TypeError(f"unknown action {action!r}")
        if due:
            self.snapshot()
        return out

    def _emit(self, event: dict[str, Any], out: list[DriverAction]) -> bool:
        """Record an event; True when it settled the open decision (a snapshot is due)."""
        out.append(Emitted(self.recorder.event(event)))
        if event.get("event") in SETTLED:
            self.pending = None
            self.pending_deadline = None
            return True
        return False

    def _send(self, payload: dict[str, Any], correlation_id: str | None, *,
              record: bool = True) -> list[DriverAction]:
        """Sign, seal and chain what the machine sends (through the adversary, in tests)."""
        cheat = self.adversary
        items = ([(payload, correlation_id)] if cheat is None
                 else cheat.outgoing(self, payload, correlation_id))
        out: list[DriverAction] = []
        for body, cid in items:
            kind = None if isinstance(body.get("action"), str) else "p2p:unnamed"
            if cheat is None or not record:
                env, frame = self.codec.build(body, type=kind, correlation_id=cid)
                if record:
                    self._sent(env)
                out.append(SendFrame(frame))
                continue
            env, data = self.codec.envelope(body, type=kind, correlation_id=cid)
            opened = env.to_dict()
            for forged in cheat.wire(self, opened):
                # the honest envelope, a repeat of it, one rewritten after signing, or bytes
                if isinstance(forged, bytes):
                    out.append(SendFrame(self.codec.frame_for(forged)))
                    continue
                same = forged is opened or forged == opened
                wire = data if same else self.codec.wire_bytes(forged)
                self._sent(env if forged is opened else forged)
                out.append(SendFrame(self.codec.frame_for(wire)))
        return out

    def _sent(self, envelope: dict[str, Any] | Envelope) -> None:
        self.sent += 1
        self.recorder.envelope(self.my_dir, envelope, "sent")

    def _sign_receipt(self, outcome: Outcome) -> list[DriverAction]:
        """This side's receipt over everything it sent and received, bound to the handshake."""
        body = receipt_body(self.recorder.transcript, session_id=self.session_id,
                            protocol_id=self.machine.spec.protocol_id, role=self.role,
                            public_key=self.identity.public_hex, status=outcome.status,
                            handshake=self.handshake,
                            result=result_of(outcome.status, outcome.summary))
        self.receipt = sign_receipt(body, self.identity)
        return self._send({"action": "session.receipt", "receipt": self.receipt}, None,
                          record=False)
