"""The common core of every flow-mode machine.

Responsibilities shared by all modes: the offer/accept opening (the host's
options travel to the guest and are re-checked there), validation of every
payload in both directions, calling hooks safely, decisions, timers, and
turning every violation into an abort (control envelope + event + finish).
Mode subclasses implement :meth:`begin`, :meth:`on_message`,
:meth:`allow_send`, :meth:`after_send`, :meth:`advance` and
:meth:`waiting_for_peer`.

Entropy (nonces, correlation ids) comes from an injected byte source,
``secrets.token_bytes`` unless a test passes a seeded one; the hooks' game
randomness is separate (``HookContext.rng``). Heavy work runs through a
:class:`Compute` action, so a network driver can run it off its event loop.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from enum import StrEnum
from typing import Any, ClassVar

from lingxi.canonical import canonical_json
from lingxi.contract.model import MessageSchema
from lingxi.errors import LingxiError
from lingxi.hooks.base import Hooks
from lingxi.hooks.result import DecisionPoint, HookResult
from lingxi.records import Record, record
from lingxi.session import errors as codes
from lingxi.session.core.decisions import DecisionPolicy, legal_value
from lingxi.session.core.descriptor import describe
from lingxi.session.core.entropy import SYSTEM, Entropy
from lingxi.session.core.events import (
    AbortRequested,
    Action,
    CancelTimer,
    Compute,
    ComputeDone,
    ControlReceived,
    DecisionDeclined,
    DecisionMade,
    Emit,
    EnvelopeRejected,
    Event,
    Finish,
    LocalInput,
    Outcome,
    PayloadReceived,
    PeerAborted,
    RequestDecision,
    Send,
    SendControl,
    SetTimer,
    Start,
    Status,
    TimerFired,
)

ROLE_DIRECTION = {"host": "host_to_guest", "guest": "guest_to_host"}
EVIDENCE_LIMIT = 4096
TEXT_LIMIT = 2000  # bytes of a message's one-line description in events
# A peer deciding by hand says how long it may take (``session.deciding``); we wait that
# long plus a grace, but never longer than this, and at most once per message it sends.
DECIDING_MAX = 24 * 3600.0
DECIDING_GRACE = 10.0


class State(StrEnum):
    """Where a session stands; the opening's transitions are in :data:`OPENING`."""

    NEW = "new"
    OFFERED = "offered"  # host: offer sent, waiting for the accept
    WAITING_OFFER = "waiting_offer"  # guest: waiting for the host's offer
    RUNNING = "running"


# (state, role, what happens) -> next state. Anything else in the opening is a violation.
OPENING: dict[tuple[State, str, str], State] = {
    (State.NEW, "host", "start"): State.OFFERED,
    (State.NEW, "guest", "start"): State.WAITING_OFFER,
    (State.WAITING_OFFER, "guest", "offer"): State.RUNNING,
    (State.OFFERED, "host", "accept"): State.RUNNING,
}


LIMIT_DEFAULTS = {"max_messages": 100_000, "max_bytes": 64 * 1024 * 1024,
                  "max_state_bytes": 256 * 1024 * 1024}


@record
class SessionConfig(Record):
    """Local run-time settings; none of them touches the spec or its hash.

    The three limits bound what one session may cost: messages and envelope
    bytes received from the peer, and bytes written to the state folder.
    ``None`` takes :data:`LIMIT_DEFAULTS` (sized for a laptop), or the spec's
    ``timing.limits`` value when that is lower: a spec (someone else's text)
    may only tighten a limit, never raise it. A value given here, a local
    choice, wins either way.
    """

    peer_timeout: float = 30.0  # seconds a peer may stay silent when it is its turn
    idle_timeout: float = 300.0  # free mode: seconds without any message
    control_mode: str | None = None  # autonomous | hybrid | human (None: the spec's decision)
    max_rounds: int = 100_000
    max_messages: int | None = None
    max_bytes: int | None = None
    max_state_bytes: int | None = None

    def limits(self, spec: Any) -> dict[str, int]:
        """The effective limits for ``spec``: this run's, else the lower of the spec's and
        the defaults."""
        declared = (getattr(spec, "timing", None) or {}).get("limits")
        declared = declared if isinstance(declared, dict) else {}
        out = {}
        for name, default in LIMIT_DEFAULTS.items():
            mine, theirs = getattr(self, name), declared.get(name)
            if mine is not None:
                out[name] = int(mine)
            elif type(theirs) is int and 0 < theirs < default:
                out[name] = theirs
            else:
                out[name] = default
        return out


def _peer_text(point: DecisionPoint) -> dict[str, str]:
    """The peer words the hooks marked for the decider, as bounded strings."""
    marked = getattr(point, "peer_text", None) or {}
    if not isinstance(marked, dict):
        return {}
    return {str(k)[:64]: str(v).encode("utf-8")[:TEXT_LIMIT].decode("utf-8", "ignore")
            for k, v in list(marked.items())[:16]}


def bounded(value: Any) -> Any:
    """Evidence small enough for an abort envelope (large values become a digest)."""
    try:
        text = canonical_json(value)
    except (TypeError, ValueError):
        text = repr(value)
        value = text
    if len(text.encode("utf-8")) <= EVIDENCE_LIMIT:
        return value
    from lingxi.canonical import sha256_hex
    return {"truncated": text[:512], "sha256": sha256_hex(text.encode("utf-8")),
            "bytes": len(text.encode("utf-8"))}


class SessionMachine:
    """Events in, actions out. Subclass per flow mode."""

    mode: ClassVar[str] = "session_loop"

    def __init__(self, *, role: str, spec: Any, hooks: Hooks,
                 options: dict[str, Any] | None = None, config: SessionConfig | None = None,
                 entropy: Entropy | None = None) -> None:
        if role not in ROLE_DIRECTION:
            raise ValueError(f"role must be host or guest, not {role!r}")
        self.role = role
        self.peer = "guest" if role == "host" else "host"
        self.my_dir = ROLE_DIRECTION[role]
        self.peer_dir = ROLE_DIRECTION[self.peer]
        self.spec = spec
        self.hooks = hooks
        self.config = config or SessionConfig()
        self.entropy: Entropy = entropy or SYSTEM
        self.policy = DecisionPolicy.resolve(spec.decision, self.config.control_mode)
        self.limits = self.config.limits(spec)
        self.received_bytes = 0
        self.declared: dict[str, MessageSchema] = spec.messages
        # The host's options are checked now (a usage error raises here); the
        # guest receives them in the offer and checks them there.
        self.options: dict[str, Any] | None = (
            spec.check_options(options or {}).values if role == "host" else None)
        self.state: State = State.NEW
        self.finished = False
        self.outcome: Outcome | None = None
        self.sent_count = 0
        self.received_count = 0
        self._out: list[Any] = []
        self._awaiting: tuple[str, DecisionPoint, Callable[[Any], None],
                              Callable[[], Any]] | None = None
        self._point_seq = 0
        self._peer_timer = False
        self._progress = False
        self._peer_seconds = self.config.peer_timeout  # what the armed peer timer allows
        self._peer_allowance: float | None = None  # announced by the peer's session.deciding
        self._allowance_open = True  # one announcement per message the peer sends
        self._computing: dict[str, Callable[[Any], None]] = {}
        self.identity: Any = None  # from Start: this agent's signer (public_hex, sign)
        self.peer_key: str | None = None  # from Start: the peer's handshake-proven key
        self.session_id: str | None = None

    # ------------------------------------------------------------ public API
    def handle(self, event: Event) -> list[Action]:
        """Feed one event; return the actions to perform, in order."""
        if self.finished:
            return []
        self._out = []
        self.dispatch(event)
        if not self.finished:
            self.arm_timers()
        return self._out

    # ------------------------------------------------------------- dispatch
    def dispatch(self, event: Any) -> None:
        """One event to its handler (a mode may extend it and call ``super()``)."""
        if isinstance(event, PayloadReceived):
            self._progress = True
            self._on_payload(event)
        elif isinstance(event, Start):
            self._start(event)
        elif isinstance(event, ControlReceived):
            self._progress = True
            self.on_control(event)
        elif isinstance(event, PeerAborted):
            self.emit("peer.aborted", code=bounded(event.code), reason=bounded(event.message),
                      evidence={k: bounded(v) for k, v in list(event.evidence.items())[:32]})
            self.finish("aborted", code=event.code, reason=event.message or "peer aborted",
                        by="peer")
        elif isinstance(event, EnvelopeRejected):
            self.violation(event.code, event.message or "envelope rejected", event.evidence)
        elif isinstance(event, TimerFired):
            self.on_timer(event.name)
        elif isinstance(event, DecisionMade):
            self._on_decision(event)
        elif isinstance(event, DecisionDeclined):
            self._on_declined(event)
        elif isinstance(event, AbortRequested):
            self.emit("session.abort_requested", reason=bounded(event.reason))
            self._out.append(SendControl("abort", {"code": codes.ABORTED_LOCALLY,
                                                   "message": event.reason, "evidence": {}}))
            self.finish("aborted", code=codes.ABORTED_LOCALLY, reason=event.reason, by="local")
        elif isinstance(event, ComputeDone):
            self._on_compute(event)
        elif isinstance(event, LocalInput):
            if self.state == State.RUNNING:
                self.on_input(event.line)
                if not self.finished:
                    self.advance()
            else:
                self.queue_input(event.line)
        else:
            raise TypeError(f"unknown event {event!r}")

    def _start(self, event: Start) -> None:
        if self.state != State.NEW:
            return
        self.identity, self.peer_key, self.session_id = (event.identity, event.peer_key,
                                                         event.session_id)
        self.state = OPENING[(State.NEW, self.role, "start")]
        if self.role == "host":
            self._out.append(SendControl("offer", {
                "protocol_id": self.spec.protocol_id, "options": self.options,
                "mode": self.mode, "spec_version": self.spec.spec_version}))
            self.emit("session.offered", protocol_id=self.spec.protocol_id, options=self.options)
        else:
            self.emit("session.waiting_offer", protocol_id=self.spec.protocol_id)

    def on_control(self, event: ControlReceived) -> None:
        """The opening, the peer's deciding notice and close (a mode may extend it)."""
        kind, body = event.kind, event.body or {}
        opening = OPENING.get((self.state, self.role, kind))
        if opening is not None and kind == "offer":
            theirs = body.get("protocol_id")
            if theirs != self.spec.protocol_id:
                self.violation(codes.PROTOCOL_MISMATCH,
                               "the host offers a different protocol than the local spec",
                               {"offered": theirs, "local": self.spec.protocol_id})
                return
            try:
                self.options = self.spec.check_options(body.get("options") or {}).values
            except LingxiError as error:
                self.violation(codes.BAD_OPTIONS, f"the host's options break the contract: {error}",
                               {"options": body.get("options"),
                                "findings": [f.to_dict() for f in error.findings]})
                return
            self._out.append(SendControl("accept", {"protocol_id": self.spec.protocol_id}))
            self._begin()
        elif opening is not None and kind == "accept":
            if body.get("protocol_id") not in (None, self.spec.protocol_id):
                self.violation(codes.PROTOCOL_MISMATCH, "the guest accepted a different protocol",
                               {"accepted": body.get("protocol_id")})
                return
            self._begin()
        elif kind == "deciding" and self.state == State.RUNNING:
            self._on_peer_deciding(body)
        elif kind == "close":
            if self.flow_done():
                self.finish("completed", reason="peer closed after the flow completed")
            else:
                self.emit("peer.closed", reason=body.get("reason", ""))
                self.finish("aborted", code=codes.PEER_CLOSED,
                            reason=str(body.get("reason") or "peer closed the session"), by="peer")
        else:
            self.violation(codes.BAD_CONTROL, f"control {kind!r} is not expected now",
                           {"kind": kind, "state": self.state})

    def _begin(self) -> None:
        self.state = State.RUNNING
        self.hooks.ctx.options = copy.deepcopy(self.options or {})
        self.emit("session.started", role=self.role, options=self.options, mode=self.mode)
        self.call("proto_start")
        if not self.finished:
            self.begin()
        if not self.finished:
            self.advance()

    def _on_peer_deciding(self, body: dict[str, Any]) -> None:
        """The peer waits for a person (or model): give it its decision time, once per message."""
        seconds: Any = body.get("seconds")
        if type(seconds) not in (int, float) or not 0 < seconds <= DECIDING_MAX:
            self.violation(codes.BAD_CONTROL, "session.deciding needs 0 < seconds <= "
                           f"{DECIDING_MAX:g}", {"seconds": bounded(seconds)})
            return
        if not self._allowance_open:
            self.emit("peer.deciding_ignored", reason="a second announcement without a message")
            return
        self._allowance_open = False
        self._peer_allowance = float(seconds) + DECIDING_GRACE
        self.emit("peer.deciding", seconds=float(seconds))

    def _on_payload(self, event: PayloadReceived) -> None:
        payload = event.payload
        self._peer_allowance = None
        self._allowance_open = True
        if self.state != State.RUNNING:
            self.violation(codes.OUT_OF_PHASE, "protocol message before the session started",
                           {"payload": payload, "state": self.state})
            return
        try:
            schema = self.spec.check_message(payload, self.peer_dir)
        except LingxiError as error:
            self.violation(error.code, f"peer message rejected: {error.message}",
                           {"payload": payload,
                            "findings": [f.to_dict() for f in error.findings]})
            return
        self.received_count += 1
        self.received_bytes += event.size
        if self.received_count > self.limits["max_messages"]:
            self.violation(codes.TOO_LONG, "the peer sent more messages than this session allows",
                           {"max_messages": self.limits["max_messages"]})
            return
        if self.received_bytes > self.limits["max_bytes"]:
            self.violation(codes.TOO_LARGE, "the peer sent more bytes than this session allows",
                           {"max_bytes": self.limits["max_bytes"],
                            "received_bytes": self.received_bytes})
            return
        self.on_message(schema.name, payload, event.correlation_id)
        if not self.finished:
            self.advance()

    def on_timer(self, name: str) -> None:
        """A timer the driver fired: the peer's, the decision's or the idle one."""
        if name == "peer":
            self._peer_timer = False
            if self.waiting_for_peer():
                self.violation(codes.TIMEOUT,
                               f"the peer stayed silent for {self._peer_seconds:g}s",
                               {"waiting_for": self.waiting_description(),
                                "seconds": self._peer_seconds})
        elif name == "decision" and self._awaiting is not None:
            self._timeout_action("no decision before the timeout")
        elif name == "idle":
            self.on_idle()

    # ------------------------------------------------------------- decisions
    def decide(self, point: DecisionPoint, resume: Callable[[Any], None],
               fallback: Callable[[], Any]) -> None:
        """Get a value for ``point`` from the hooks or the decider, then ``resume(value)``."""
        if not self.policy.manual:
            value = fallback()
            if not self.finished:  # the hook that chose failed
                resume(value)
            return
        self._point_seq += 1
        point_id = f"d{self._point_seq}"
        view = dict(point.view or {})
        if self.policy.suggest:
            view["suggested"] = fallback()
            if self.finished:
                return
            suggestion = view["suggested"]
            fallback = lambda: suggestion  # noqa: E731 - reuse the computed suggestion
        self._awaiting = (point_id, point, resume, fallback)
        self._out.append(SendControl("deciding", {"seconds": self.policy.timeout_seconds}))
        self._out.append(RequestDecision(point_id, list(point.legal or []), view,
                                         self.policy.timeout_seconds, point.bounds, point.message,
                                         _peer_text(point)))
        self._out.append(SetTimer("decision", self.policy.timeout_seconds))
        self.emit("decision.requested", point_id=point_id, legal=list(point.legal or []),
                  view=view, timeout_seconds=self.policy.timeout_seconds,
                  bounds=list(point.bounds) if point.bounds is not None else None,
                  message=point.message,
                  **({"peer_text": _peer_text(point)} if _peer_text(point) else {}))

    def _timeout_action(self, why: str, declined: bool = False) -> None:
        """The spec's timeout action for the open decision: the hooks' fallback, or abort."""
        assert self._awaiting is not None
        point_id, point, resume, fallback = self._awaiting
        self._awaiting = None
        self._out.append(CancelTimer("decision"))
        if self.policy.on_timeout == "abort":
            self.violation(codes.DECISION_TIMEOUT, why,
                           {"point_id": point_id, "seconds": self.policy.timeout_seconds})
            return
        value = fallback()
        if self.finished:  # the fallback hook failed
            return
        self.emit("decision.declined_fallback" if declined else "decision.timeout_fallback",
                  point_id=point_id, value=value)
        resume(value)
        if not self.finished:
            self.advance()

    def _on_declined(self, event: DecisionDeclined) -> None:
        if self._awaiting is None or event.point_id != self._awaiting[0]:
            self.emit("decision.ignored", point_id=event.point_id, reason="no such open decision")
            return
        self.emit("decision.declined", point_id=event.point_id, reason=bounded(event.reason))
        self._timeout_action(f"the decider gave up: {event.reason}", declined=True)

    def _on_decision(self, event: DecisionMade) -> None:
        if self._awaiting is None or event.point_id != self._awaiting[0]:
            self.emit("decision.ignored", point_id=event.point_id, reason="no such open decision")
            return
        point_id, point, resume, _ = self._awaiting
        if not legal_value(event.value, list(point.legal or []), point.bounds):
            self.emit("decision.rejected", point_id=point_id, value=bounded(event.value),
                      legal=list(point.legal or []))
            return
        self._awaiting = None
        self._out.append(CancelTimer("decision"))
        self.emit("decision.made", point_id=point_id, value=event.value, source="decider")
        resume(event.value)
        if not self.finished:
            self.advance()

    # ----------------------------------------------------------------- compute
    def compute(self, name: str, work: Callable[[], Any], then: Callable[[Any], None]) -> None:
        """Run pure, heavy ``work`` outside the machine, then ``then(result)``.

        A failure inside ``work`` is an exception value in the result, turned
        into a violation here (the peer's data made it fail).
        """
        self._computing[name] = then
        self._out.append(Compute(name, work))

    def _on_compute(self, event: ComputeDone) -> None:
        then = self._computing.pop(event.name, None)
        if then is None:
            return
        if isinstance(event.result, LingxiError):
            self.violation(event.result.code, event.result.message, dict(event.result.details))
            return
        if isinstance(event.result, BaseException):
            self.violation(codes.HOOKS_ERROR, f"computation {event.name} failed: "
                           f"{type(event.result).__name__}: {event.result}", {"compute": event.name})
            return
        then(event.result)
        if not self.finished:
            self.advance()

    @property
    def computing(self) -> bool:
        return bool(self._computing)

    @property
    def paused(self) -> bool:
        """Waiting on this side: for a decision or a computation."""
        return self._awaiting is not None or bool(self._computing)

    @property
    def awaiting_decision(self) -> bool:
        return self._awaiting is not None

    # --------------------------------------------------------------- helpers
    def emit(self, name: str, **data: Any) -> None:
        if name in ("message.sent", "message.received") and isinstance(data.get("payload"), dict):
            text = describe(self.hooks, data["payload"])  # the hooks' projection, for watchers
            if text is not None:
                data["text"] = text.encode("utf-8")[:TEXT_LIMIT].decode("utf-8", "ignore")
        self._out.append(Emit({"event": name, "role": self.role, **data}))

    def call(self, name: str, *args: Any) -> Any:
        """Run a hook; any exception becomes an abort with a hooks.* code.

        A hook that fails finishes the session and gives None: a caller that goes
        on to use the value checks ``self.finished`` first. A finished session runs
        no more hooks.
        """
        if self.finished:
            return None
        try:
            return getattr(self.hooks, name)(*args)
        except KeyboardInterrupt:
            raise
        except NotImplementedError:
            self.violation(codes.HOOKS_NOT_IMPLEMENTED, f"hook {name} is not implemented",
                           {"hook": name})
        except BaseException as error:  # author code, SystemExit included: never end the engine
            self.violation(codes.HOOKS_ERROR, f"hook {name} raised {type(error).__name__}: {error}",
                           {"hook": name, "exception": type(error).__name__})
        return None

    def apply(self, result: Any, correlation_id: str | None = None) -> None:
        """Act on a HookResult: send its responses, abort, or complete."""
        if result is None or self.finished:
            return
        if not isinstance(result, HookResult):
            self.violation(codes.HOOKS_BAD_RESULT,
                           f"hooks returned {type(result).__name__}, not HookResult", {})
            return
        if result.abort:
            reason = result.abort if isinstance(result.abort, str) else "hooks aborted"
            self.violation(codes.HOOKS_ABORT, reason, {})
            return
        for payload in result.responses():
            self.send(payload, correlation_id)
            if self.finished:
                return
        if result.completed:
            self.hooks_completed()

    def send(self, payload: Any, correlation_id: str | None = None) -> None:
        """Validate our own payload and the flow, then emit a Send action."""
        if self.finished:
            return
        try:
            schema = self.spec.check_message(payload, self.my_dir)
        except LingxiError as error:
            self.violation(codes.HOOKS_INVALID_MESSAGE,
                           f"local hooks built an invalid message: {error.message}",
                           {"payload": payload, "findings": [f.to_dict() for f in error.findings]})
            return
        if not self.allow_send(schema.name, payload):
            self.violation(codes.HOOKS_OUT_OF_PHASE,
                           f"local hooks tried to send {schema.name!r} out of phase",
                           {"message": schema.name, "expected": self.waiting_description()})
            return
        self.sent_count += 1
        self._out.append(Send(payload, schema.name, correlation_id))
        self.emit("message.sent", message=schema.name, payload=payload, **self.position())
        self.after_send(schema.name, payload)

    def violation(self, code: str, message: str,
                  evidence: dict[str, Any] | None = None) -> None:
        """End the session: abort envelope to the peer, a local event, Finish.

        The session is over when this returns (``self.finished``): the caller returns
        at once and each caller up the stack checks ``finished`` before going on. A
        second end (the session already over) adds nothing.
        """
        if self.finished:
            return
        evidence = {k: bounded(v) for k, v in (evidence or {}).items()}
        self.emit("violation", code=code, reason=message, evidence=evidence)
        self._out.append(SendControl("abort", {"code": code, "message": message,
                                               "evidence": evidence}))
        self.finish("aborted", code=code, reason=message, by="local")

    def finish(self, status: str, *, code: str | None = None, reason: str = "",
               by: str | None = None) -> None:
        """End the session with ``status`` (once; a later end adds nothing)."""
        if self.finished:
            return
        self.finished = True
        base = Outcome(Status(status), self.role, code, reason, by, {}, self.rounds_played(),
                       self.sent_count + self.received_count)
        summary = {}
        try:
            summary = self.hooks.proto_finish(base.to_dict()) or {}
            if not isinstance(summary, dict):
                summary = {"summary": str(summary)}
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # a broken summary hook must not hide the outcome
            summary = {"proto_finish_error": f"{type(error).__name__}: {error}"}
        summary = self.engine_summary(summary, base)
        self.outcome = Outcome(base.status, self.role, code, reason, by, summary,
                               base.rounds, base.messages)
        for timer in ("peer", "decision", "idle"):
            self._out.append(CancelTimer(timer))
        self.emit("session.finished", **self.outcome.to_dict())
        self._out.append(Finish(self.outcome))

    def arm_timers(self) -> None:
        """Set or cancel the peer timer after a step (a mode may add its own timers)."""
        waiting = self.waiting_for_peer()
        if waiting and (not self._peer_timer or self._progress):
            self._peer_seconds = max(self.config.peer_timeout, self._peer_allowance or 0.0)
            self._out.append(SetTimer("peer", self._peer_seconds))
            self._peer_timer = True
        elif not waiting and self._peer_timer:
            self._out.append(CancelTimer("peer"))
            self._peer_timer = False
        self._progress = False

    def base_waiting(self) -> bool | None:
        """Waiting states common to every mode (None: ask the mode)."""
        if self.state in (State.OFFERED, State.WAITING_OFFER):
            return True
        if self.state != State.RUNNING or self.finished or self.paused:
            return False
        return None

    # ---------------------------------------------------------- mode hooks
    def begin(self) -> None:
        """The session is running; set up mode state."""

    def advance(self) -> None:
        """Do whatever this side can do now (send, ask for a decision, finish)."""

    def on_message(self, name: str, payload: dict[str, Any], correlation_id: str | None) -> None:
        raise NotImplementedError

    def allow_send(self, name: str, payload: dict[str, Any]) -> bool:
        return True

    def after_send(self, name: str, payload: dict[str, Any]) -> None:
        """Record that ``name`` was sent."""

    def waiting_for_peer(self) -> bool:
        return bool(self.base_waiting())

    def waiting_description(self) -> Any:
        return self.state

    def flow_done(self) -> bool:
        return False

    def hooks_completed(self) -> None:
        """The hooks say the session is over for them."""
        if self.flow_done():
            self.finish("completed")
            return
        self._out.append(SendControl("close", {"reason": "completed by the hooks"}))
        self.finish("completed", reason="the hooks ended the session before the flow completed")

    def on_input(self, line: str | None) -> None:
        self.emit("input.ignored", reason=f"{self.mode} takes no local input")

    def queue_input(self, line: str | None) -> None:
        self.emit("input.ignored", reason="the session has not started")

    def on_idle(self) -> None:
        """Free mode ends an idle session; other modes ignore the idle timer."""

    def rounds_played(self) -> int:
        return 0

    def engine_summary(self, summary: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
        """What the engine itself knows about the end (a verdict), added to the hooks'."""
        return summary

    def position(self) -> dict[str, Any]:
        return {}
