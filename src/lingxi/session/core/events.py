"""Events into a session machine and actions out of it (the sans-IO boundary).

A driver turns the world (envelopes, timers, decisions, local input) into
events, feeds them to ``machine.handle(event)`` and performs the returned
actions. Machines never touch sockets, clocks or global randomness.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError, field
from enum import StrEnum
from typing import Any

from lingxi.records import FrozenRecord, frozen_record

_set = object.__setattr__


class _Frozen:
    """What ``@dataclass(frozen=True)`` gave these classes, written once.

    Equality and hash by field values (same class only), a ``Name(field=…)``
    repr, no assignment after ``__init__``, ``__match_args__``. Each class
    writes its own ``__init__``: generating these 19 dataclasses compiled over
    a hundred functions at every start, about 7 % of ``protocol test``'s CPU
    (issue 22.7); tests/session/test_event_records.py holds them to the
    dataclass behaviour.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        type.__setattr__(cls, "__match_args__", cls._fields)  # positional patterns, as a dataclass

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


# ---------------------------------------------------------------- events in


class Start(_Frozen):
    """Begin the session (the host sends its offer; the guest waits for it).

    The driver passes what it knows after the handshake: ``identity``, this
    agent's signer (``public_hex`` and ``sign(data) -> bytes``, Ed25519; the
    secret stays inside it), ``peer_key``, the peer's identity key the
    handshake proved (64 hex), and ``session_id``. A mode that must bind a
    statement to an agent (a mental-poker seat) signs with it; nothing else
    in the core signs.
    """

    identity: Any = None
    peer_key: str | None = None
    session_id: str | None = None
    _fields = ("identity", "peer_key", "session_id")

    def __init__(self, identity: Any = None,
                 peer_key: str | None = None,
                 session_id: str | None = None) -> None:
        _set(self, "identity", identity)
        _set(self, "peer_key", peer_key)
        _set(self, "session_id", session_id)


class PayloadReceived(_Frozen):
    """A peer envelope passed the wire pipeline; its payload is not yet validated."""

    payload: Any
    correlation_id: str | None = None
    size: int = 0  # bytes of the envelope as the driver recorded it (for the byte limit)
    _fields = ("payload", "correlation_id", "size")

    def __init__(self, payload: Any, correlation_id: str | None = None, size: int = 0) -> None:
        _set(self, "payload", payload)
        _set(self, "correlation_id", correlation_id)
        _set(self, "size", size)


class ControlReceived(_Frozen):
    """A session control envelope from the peer: offer, accept, close."""

    kind: str
    body: dict[str, Any]
    _fields = ("kind", "body")

    def __init__(self, kind: str, body: dict[str, Any] | None = None) -> None:
        _set(self, "kind", kind)
        _set(self, "body", {} if body is None else body)


class _Refusal(_Frozen):
    """A coded end with its evidence: the fields the two refusals below share."""

    code: str
    message: str = ""
    evidence: dict[str, Any]
    _fields = ("code", "message", "evidence")

    def __init__(self, code: str,
                 message: str = '',
                 evidence: dict[str, Any] | None = None) -> None:
        _set(self, "code", code)
        _set(self, "message", message)
        _set(self, "evidence", {} if evidence is None else evidence)


class PeerAborted(_Refusal):
    """The peer sent an abort control (its code, reason and evidence)."""


class EnvelopeRejected(_Refusal):
    """The wire refused an envelope (bad signature, replay, stale, malformed…)."""


class TimerFired(_Frozen):
    name: str
    _fields = ("name",)

    def __init__(self, name: str) -> None:
        _set(self, "name", name)


class DecisionMade(_Frozen):
    point_id: str
    value: Any
    _fields = ("point_id", "value")

    def __init__(self, point_id: str, value: Any) -> None:
        _set(self, "point_id", point_id)
        _set(self, "value", value)


class DecisionDeclined(_Frozen):
    """The decider gave up on a point (e.g. a model that kept answering illegal values):
    the spec's timeout action applies now instead of at the deadline."""

    point_id: str
    reason: str = ""
    _fields = ("point_id", "reason")

    def __init__(self, point_id: str, reason: str = '') -> None:
        _set(self, "point_id", point_id)
        _set(self, "reason", reason)


class AbortRequested(_Frozen):
    """The local participant ends the session (``lingxi session abort``, Ctrl-C)."""

    reason: str = "aborted by the local participant"
    _fields = ("reason",)

    def __init__(self, reason: str = 'aborted by the local participant') -> None:
        _set(self, "reason", reason)


class ComputeDone(_Frozen):
    """A :class:`Compute` action's work finished: its return value, or the exception it raised."""

    name: str
    result: Any
    _fields = ("name", "result")

    def __init__(self, name: str, result: Any) -> None:
        _set(self, "name", name)
        _set(self, "result", result)


class LocalInput(_Frozen):
    """One line of local input for free mode; ``None`` means end of input."""

    line: str | None
    _fields = ("line",)

    def __init__(self, line: str | None) -> None:
        _set(self, "line", line)


# -------------------------------------------------------------- actions out


class Send(_Frozen):
    """Send a validated protocol payload (the driver wraps and signs it)."""

    payload: dict[str, Any]
    message: str
    correlation_id: str | None = None
    _fields = ("payload", "message", "correlation_id")

    def __init__(self, payload: dict[str, Any],
                 message: str,
                 correlation_id: str | None = None) -> None:
        _set(self, "payload", payload)
        _set(self, "message", message)
        _set(self, "correlation_id", correlation_id)


class SendControl(_Frozen):
    """Send a session control envelope: offer, accept, abort, close."""

    kind: str
    body: dict[str, Any]
    _fields = ("kind", "body")

    def __init__(self, kind: str, body: dict[str, Any] | None = None) -> None:
        _set(self, "kind", kind)
        _set(self, "body", {} if body is None else body)


class SetTimer(_Frozen):
    """(Re)arm timer ``name`` to fire ``seconds`` from now."""

    name: str
    seconds: float
    _fields = ("name", "seconds")

    def __init__(self, name: str, seconds: float) -> None:
        _set(self, "name", name)
        _set(self, "seconds", seconds)


class CancelTimer(_Frozen):
    name: str
    _fields = ("name",)

    def __init__(self, name: str) -> None:
        _set(self, "name", name)


class Emit(_Frozen):
    """A local event for events.jsonl, the UI and the console."""

    event: dict[str, Any]
    _fields = ("event",)

    def __init__(self, event: dict[str, Any]) -> None:
        _set(self, "event", event)


class RequestDecision(_Frozen):
    """Ask the external decider. It sees only this projection, never a peer payload."""

    point_id: str
    legal: list[Any]
    view: dict[str, Any]
    timeout_seconds: float
    bounds: tuple[Any, Any] | None = None
    message: str | None = None
    peer_text: dict[str, str]  # the hooks marked it: peer words
    _fields = ("point_id", "legal", "view", "timeout_seconds", "bounds", "message", "peer_text")

    def __init__(self, point_id: str,
                 legal: list[Any],
                 view: dict[str, Any],
                 timeout_seconds: float,
                 bounds: tuple[Any, Any] | None = None,
                 message: str | None = None,
                 peer_text: dict[str, str] | None = None) -> None:
        _set(self, "point_id", point_id)
        _set(self, "legal", legal)
        _set(self, "view", view)
        _set(self, "timeout_seconds", timeout_seconds)
        _set(self, "bounds", bounds)
        _set(self, "message", message)
        _set(self, "peer_text", {} if peer_text is None else peer_text)


class Compute(_Frozen):
    """Run ``work()`` (pure, possibly slow) and feed back :class:`ComputeDone`.

    The in-memory driver runs it inline; the network driver runs it in a worker
    thread so heartbeats keep flowing meanwhile.
    """

    name: str
    work: Callable[[], Any]
    _fields = ("name", "work")

    def __init__(self, name: str, work: Callable[[], Any]) -> None:
        _set(self, "name", name)
        _set(self, "work", work)


class Status(StrEnum):
    """How a session ended: the flow completed, or one side aborted it."""

    COMPLETED = "completed"
    ABORTED = "aborted"


@frozen_record
class Outcome(FrozenRecord):
    """How a session ended (``status`` given as a Status or its name)."""

    status: Status
    role: str
    code: str | None = None
    reason: str = ""
    by: str | None = None  # "local" | "peer" for aborts
    summary: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0
    messages: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))  # a name is checked too

    @property
    def ok(self) -> bool:
        return self.status is Status.COMPLETED

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "role": self.role, "code": self.code,
                "reason": self.reason, "by": self.by, "summary": self.summary,
                "rounds": self.rounds, "messages": self.messages}


class Finish(_Frozen):
    outcome: Outcome
    _fields = ("outcome",)

    def __init__(self, outcome: Outcome) -> None:
        _set(self, "outcome", outcome)


Event = (Start | PayloadReceived | ControlReceived | PeerAborted | EnvelopeRejected
         | TimerFired | DecisionMade | DecisionDeclined | AbortRequested | ComputeDone
         | LocalInput)
Action = (Send | SendControl | SetTimer | CancelTimer | Emit | RequestDecision | Compute
          | Finish)
