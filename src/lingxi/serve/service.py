"""One served protocol answering signed ``caller:`` envelopes: check, run the hooks, sign.

:meth:`Service.answer` takes the raw body a caller sent and returns the
HTTP status and the bytes to answer with; it never raises for any input.
In order (docs/callers.md "The HTTP contract"):

1. the body's nesting depth (``caller.too_deep``), before any parser runs;
2. the wire's receive pipeline, prefix ``caller``: shape and the seed's
   AgentEndpoint fields, signature with the key the caller registered
   (``envelope.bad_sender`` for an unknown caller, ``envelope.bad_signature``),
   type = ``caller:<payload.action>``, timestamp window and TTL, the replay
   guard (keyed on the signature), receiver = this agent; and a timestamp
   not before this service started (the guard does not survive a restart);
3. a fresh host machine of the spec (``lingxi.session.answer_once``): the
   payload is checked against the contract's guest-side messages before any
   hook sees it, the hooks answer, and every reply is checked against the
   contract and the flow before it is returned (``message.*``,
   ``session.*``, ``hooks.*`` codes);
4. the last reply is signed with the caller's key and the request's
   algorithm, ``reply_to`` = the request's id, ``correlation_id`` = the
   request's (or its id when it had none).

The clock is injected; requests may be answered from several threads (the
pipeline and its replay guard are used under one lock; each request has its
own hooks and machine).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from lingxi.errors import LingxiError
from lingxi.serve import errors as codes
from lingxi.serve.errors import CallerRefused, ServeError, status_for
from lingxi.serve.limits import DEFAULT_MAX_DEPTH, nesting_exceeds
from lingxi.textsafe import terminal_safe
from lingxi.wire import AgentEndpoint, Envelope, EnvelopeBuilder, ReceivePipeline
from lingxi.wire.builder import random_id
from lingxi.wire.signature import ALGORITHMS, DEFAULT_ALGORITHM

log = logging.getLogger("lingxi.serve")
_START_SLACK = 0.001  # a timestamp is cut to microseconds; a restart takes far longer
MESSAGE_LIMIT = 300  # characters of an error message sent back
# Codes whose message comes from the served hooks' own failure: the caller is told the
# code, the operator's log gets the words (they may name local files or values).
_PRIVATE = frozenset({"hooks.error", "hooks.not_implemented", "hooks.bad_result"})


class KeyBook(Protocol):
    def key_for(self, agent_id: str) -> bytes | None: ...


@dataclass(frozen=True)
class Answer:
    """What to send back: status, JSON bytes, and a line for the operator's log."""

    status: int
    body: bytes
    log: str
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def refusal_body(code: str, message: str) -> bytes:
    """``{"ok": false, "error": {"code", "message"}}`` as ASCII-only JSON.

    The message may quote the caller's own text (a field name, an agent id):
    it is made one terminal-safe line first (controls, bidi and format
    characters written as visible ``\\x1b``-style escapes, at most
    :data:`MESSAGE_LIMIT` characters), so even a client that prints it raw
    shows it harmlessly; the JSON is then ASCII (``\\u`` escapes)."""
    message = terminal_safe(message, MESSAGE_LIMIT)
    return json.dumps({"ok": False, "error": {"code": code, "message": message}},
                      ensure_ascii=True, separators=(",", ":")).encode("ascii")


def refusal(code: str, message: str, log_line: str = "") -> Answer:
    status = status_for(code)
    headers = {}
    if status == 401:
        headers["WWW-Authenticate"] = (f'Synapse-HMAC algorithms="{" ".join(ALGORITHMS)}"')
    return Answer(status, refusal_body(code, message), log_line or f"refused: {code}", code,
                  headers)


class Service:
    """A request_response protocol served to registered callers (see the module doc).

    ``protocol`` is a :class:`lingxi.protocols.catalogue.LoadedProtocol`;
    ``endpoint`` is this agent as callers address it (its ``endpoint`` the URL
    they POST to); ``callers`` gives each caller's key.
    """

    def __init__(self, protocol: Any, endpoint: AgentEndpoint, callers: KeyBook, *,
                 clock: Callable[[], float], options: dict[str, Any] | None = None,
                 window_seconds: float = 120.0, replay_capacity: int = 100_000,
                 max_depth: int = DEFAULT_MAX_DEPTH,
                 id_factory: Callable[[], str] = random_id,
                 hooks_seed: Callable[[], int] = lambda: secrets.randbits(64),
                 started_at: float | None = None) -> None:
        from lingxi.session import SessionConfig

        spec = protocol.spec
        if spec.flow.mode != "request_response":
            raise ServeError("serve.not_request_response",
                             f"{spec.name} runs in flow mode {spec.flow.mode}; only "
                             "request_response protocols can be served to callers")
        self.protocol = protocol
        self.spec = spec
        self.endpoint = endpoint
        self.callers = callers
        self.clock = clock
        self.options = spec.check_options(options or {}).values
        self.max_depth = max_depth
        self.id_factory = id_factory
        self.hooks_seed = hooks_seed
        self.config = SessionConfig(control_mode="autonomous")
        self.pipeline = ReceivePipeline(self._key, clock=clock, window_seconds=window_seconds,
                                        replay_capacity=replay_capacity,
                                        expect_receiver=endpoint.agent_id)
        self._lock = threading.Lock()
        # The replay guard lives in memory: a request signed before this process
        # started may have been accepted by its predecessor, so it is refused.
        self.not_before = clock() if started_at is None else started_at

    def _key(self, agent_id: str) -> bytes | None:
        if agent_id == self.endpoint.agent_id:
            return None  # never take our own replies for requests
        return self.callers.key_for(agent_id)

    def describe(self) -> dict[str, Any]:
        """What ``GET`` answers: who to address and what is served (public facts)."""
        return {"ok": True, "agent": self.endpoint.to_dict(),
                "protocol": {"name": self.spec.name, "protocol_id": self.spec.protocol_id,
                             "spec_version": self.spec.spec_version, "mode": self.spec.flow.mode},
                "type_prefix": "caller", "algorithms": list(ALGORITHMS),
                "window_seconds": self.pipeline.window_seconds}

    # ---------------------------------------------------------------- answering
    def answer(self, body: bytes) -> Answer:
        """The answer to one POSTed body; never raises for any input."""
        try:
            return self._answer(body)
        except LingxiError as error:
            return refusal(error.code, error.message,
                           f"refused: {error.code}: {error.message}")

    def _accept(self, body: bytes) -> tuple[Envelope, bytes]:
        if nesting_exceeds(body, self.max_depth):
            raise CallerRefused(codes.TOO_DEEP,
                                f"the body nests more than {self.max_depth} levels deep")
        with self._lock:
            env = self.pipeline.accept(body, expect_prefix="caller")
            key = self._key(env.sender.agent_id)
        if env.instant + _START_SLACK < self.not_before:
            raise CallerRefused("envelope.stale", "signed before this server started (a "
                                "restarted server cannot tell it from a replay); sign it again")
        if key is None:  # removed between the two lookups: treat as unknown
            raise CallerRefused("envelope.bad_sender", "the caller is no longer registered")
        return env, key

    def _answer(self, body: bytes) -> Answer:
        from lingxi.session import make_machine
        from lingxi.session.core.oneshot import answer_once

        env, key = self._accept(body)
        who = env.sender.agent_id
        correlation = env.correlation_id or env.id
        try:
            hooks = self.protocol.hooks("host", self.hooks_seed())
        except Exception as error:  # the served hooks' own constructor failed
            return refusal("hooks.error", "the served protocol's hooks failed on this request",
                           f"caller {who}: hooks could not be made: {type(error).__name__}: "
                           f"{error}")
        machine = make_machine("host", self.spec, hooks, options=self.options,
                               config=self.config)
        result = answer_once(machine, env.payload, correlation_id=correlation, size=len(body))
        action = env.payload.get("action")
        if result.abort is not None:
            code, message = result.abort
            line = f"caller {who}: {action} refused: {code}: {message}"
            if code in _PRIVATE:
                message = "the served protocol's hooks failed on this request"
            return refusal(code, message, line)
        reply = result.reply
        if reply is None:
            return refusal("hooks.no_response", "the served protocol sent no reply",
                           f"caller {who}: {action} refused: the hooks sent no reply")
        builder = EnvelopeBuilder(self.endpoint, env.sender, key, clock=self.clock,
                                  id_factory=self.id_factory, prefix="caller",
                                  algorithm=env.signature_algorithm or DEFAULT_ALGORITHM)
        out = builder.build(reply.payload, reply_to=env.id, correlation_id=correlation)
        return Answer(200, out.to_bytes(), f"caller {who}: {action} -> {reply.message}")
