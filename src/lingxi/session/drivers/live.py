"""A running session as its watchers see it: events as they happen, the open
decision, and the two ways to steer it (answer, abort).

The terminal console, the browser UI and an agent all hold the same
:class:`LiveSession`; the network driver attaches to it and feeds it. It lives
in the driver's event loop (no threads): ``subscribe()`` gives an asyncio
queue of event records (``None`` once the session is over), ``answer()`` and
``abort()`` turn into machine events. Everything here is the engine's events
and the hooks' projection; no raw peer payload is exposed except what the
engine's own events carry (validated against the contract), and a watcher
that prints must still escape it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from lingxi.session.core.decisions import legal_value
from lingxi.session.core.events import Outcome, RequestDecision
from lingxi.session.core.registry import takes_input
from lingxi.session.errors import SessionError

HISTORY = 2000  # events kept for a watcher that connects late (the state folder has all)


class LiveSession:
    def __init__(self, *, history: int = HISTORY) -> None:
        self.events: deque[dict[str, Any]] = deque(maxlen=history)
        self.pending: RequestDecision | None = None
        self.deadline: float | None = None  # wall-clock seconds
        self.outcome: Outcome | None = None
        self.info: dict[str, Any] = {}  # protocol, role, session_id, state_dir, rules
        self._subscribers: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._listeners: list[Any] = []
        self._driver: Any = None
        self._changed = asyncio.Event()

    # ------------------------------------------------------------- watchers
    def subscribe(self) -> asyncio.Queue[dict[str, Any] | None]:
        """A queue of every event from now on (``None`` at the end); unsubscribe when done."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        if self.outcome is not None:
            queue.put_nowait(None)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Any]) -> None:
        self._subscribers.discard(queue)

    def listen(self, callback: Any) -> None:
        """Call ``callback(record)`` synchronously for every event, in order (a console)."""
        self._listeners.append(callback)

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    def pending_dict(self) -> dict[str, Any] | None:
        request = self.pending
        if request is None:
            return None
        left = None if self.deadline is None else max(0.0, self.deadline - time.time())
        return {"point_id": request.point_id, "legal": request.legal, "view": request.view,
                "bounds": list(request.bounds) if request.bounds else None,
                "message": request.message, "peer_text": request.peer_text,
                "timeout_seconds": request.timeout_seconds,
                "seconds_left": None if left is None else round(left, 1)}

    def state(self) -> dict[str, Any]:
        """What a watcher shows now: who and what, the open decision, the outcome."""
        return {**self.info, "pending_decision": self.pending_dict(),
                "finished": self.finished,
                "outcome": self.outcome.to_dict() if self.outcome else None}

    async def wait_changed(self, timeout: float | None = None) -> None:
        """Return once a decision opens or closes or the session ends (or after ``timeout``)."""
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass

    # -------------------------------------------------------------- steering
    def answer(self, value: Any, point_id: str | None = None) -> str:
        """Answer the open decision; typed errors for no decision, another point, an illegal value."""
        request = self.pending
        if self.finished:
            raise SessionError("session.finished", "the session has ended", exit_code=1)
        if request is None:
            raise SessionError("session.no_pending_decision",
                               "the session is not waiting for a decision", exit_code=1)
        if point_id not in (None, request.point_id):
            raise SessionError("decision.stale", f"decision {point_id} is no longer open "
                               f"(open: {request.point_id})", exit_code=1)
        if not legal_value(value, request.legal, request.bounds):
            raise SessionError("decision.illegal", f"{value!r} is not allowed; legal: "
                               f"{request.legal} bounds: {request.bounds}", exit_code=1)
        self._driver.answer(request.point_id, value)
        return request.point_id

    def send_input(self, line: str) -> None:
        """Free mode: one line of local input, as if typed (the hooks' proto_on_input)."""
        if self.finished:
            raise SessionError("session.finished", "the session has ended", exit_code=1)
        if not takes_input(self.info.get("mode")):
            raise SessionError("session.no_input", f"a {self.info.get('mode')} session takes "
                               "no free input", exit_code=1)
        self._driver.input(line)

    def abort(self, reason: str = "aborted by the local participant") -> None:
        if self.finished:
            raise SessionError("session.finished", "the session has ended", exit_code=1)
        self._driver.abort(reason)

    # ---------------------------------------------------- called by the driver
    def attach(self, driver: Any, info: dict[str, Any]) -> None:
        self._driver = driver
        self.info.update(info)

    def event(self, record: dict[str, Any]) -> None:
        self.events.append(record)
        for callback in self._listeners:
            callback(record)
        for queue in self._subscribers:
            queue.put_nowait(record)

    def asked(self, request: RequestDecision | None, deadline: float | None) -> None:
        self.pending, self.deadline = request, deadline
        self._changed.set()

    def ended(self, outcome: Outcome) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.pending = None
        for queue in self._subscribers:
            queue.put_nowait(None)
        self._changed.set()
