"""Events into a session machine and actions out of it (the sans-IO boundary).

A driver turns the world (envelopes, timers, decisions, local input) into
events, feeds them to ``machine.handle(event)`` and performs the returned
actions. Machines never touch sockets, clocks or global randomness.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# ---------------------------------------------------------------- events in


@dataclass(frozen=True)
class Start:
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


@dataclass(frozen=True)
class PayloadReceived:
    """A peer envelope passed the wire pipeline; its payload is not yet validated."""

    payload: Any
    correlation_id: str | None = None
    size: int = 0  # bytes of the envelope as the driver recorded it (for the byte limit)


@dataclass(frozen=True)
class ControlReceived:
    """A session control envelope from the peer: offer, accept, close."""

    kind: str
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PeerAborted:
    code: str
    message: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EnvelopeRejected:
    """The wire refused an envelope (bad signature, replay, stale, malformed…)."""

    code: str
    message: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TimerFired:
    name: str


@dataclass(frozen=True)
class DecisionMade:
    point_id: str
    value: Any


@dataclass(frozen=True)
class DecisionDeclined:
    """The decider gave up on a point (e.g. a model that kept answering illegal values):
    the spec's timeout action applies now instead of at the deadline."""

    point_id: str
    reason: str = ""


@dataclass(frozen=True)
class AbortRequested:
    """The local participant ends the session (``lingxi session abort``, Ctrl-C)."""

    reason: str = "aborted by the local participant"


@dataclass(frozen=True)
class ComputeDone:
    """A :class:`Compute` action's work finished: its return value, or the exception it raised."""

    name: str
    result: Any


@dataclass(frozen=True)
class LocalInput:
    """One line of local input for free mode; ``None`` means end of input."""

    line: str | None


# -------------------------------------------------------------- actions out


@dataclass(frozen=True)
class Send:
    """Send a validated protocol payload (the driver wraps and signs it)."""

    payload: dict[str, Any]
    message: str
    correlation_id: str | None = None


@dataclass(frozen=True)
class SendControl:
    """Send a session control envelope: offer, accept, abort, close."""

    kind: str
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SetTimer:
    """(Re)arm timer ``name`` to fire ``seconds`` from now."""

    name: str
    seconds: float


@dataclass(frozen=True)
class CancelTimer:
    name: str


@dataclass(frozen=True)
class Emit:
    """A local event for events.jsonl, the UI and the console."""

    event: dict[str, Any]


@dataclass(frozen=True)
class RequestDecision:
    """Ask the external decider. It sees only this projection, never a peer payload."""

    point_id: str
    legal: list[Any]
    view: dict[str, Any]
    timeout_seconds: float
    bounds: tuple[Any, Any] | None = None
    message: str | None = None
    peer_text: dict[str, str] = field(default_factory=dict)  # the hooks marked it: peer words


@dataclass(frozen=True)
class Compute:
    """Run ``work()`` (pure, possibly slow) and feed back :class:`ComputeDone`.

    The in-memory driver runs it inline; the network driver runs it in a worker
    thread so heartbeats keep flowing meanwhile.
    """

    name: str
    work: Callable[[], Any]


class Status(StrEnum):
    """How a session ended: the flow completed, or one side aborted it."""

    COMPLETED = "completed"
    ABORTED = "aborted"


@dataclass(frozen=True)
class Outcome:
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


@dataclass(frozen=True)
class Finish:
    outcome: Outcome


Event = (Start | PayloadReceived | ControlReceived | PeerAborted | EnvelopeRejected
         | TimerFired | DecisionMade | DecisionDeclined | AbortRequested | ComputeDone
         | LocalInput)
Action = (Send | SendControl | SetTimer | CancelTimer | Emit | RequestDecision | Compute
          | Finish)
