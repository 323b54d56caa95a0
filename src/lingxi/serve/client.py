"""The caller's side: sign one request, POST it, check the reply as strictly as the server.

:func:`call` is what ``lingxi call`` runs, and what a Python caller can use.
The request is checked against the local spec before it is sent (the server
would refuse it anyway, but a caller should learn its mistake without a
round trip). The reply must be a ``caller:`` envelope signed with the same
key, sent by the agent we addressed to us, replying to our request's id with
our correlation id, inside the time window, never seen before, and its
payload must be one of the spec's host-side messages. An answer that is not
200 is the server's refusal: its code is reported only when it looks like a
code (the text is the server's words and is treated as data).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lingxi.errors import CheckFailed, LingxiError
from lingxi.textsafe import peer_words
from lingxi.wire import AgentEndpoint, Envelope, EnvelopeBuilder, EnvelopeError, ReceivePipeline
from lingxi.wire.agent_fields import lingxi_endpoint
from lingxi.wire.signature import DEFAULT_ALGORITHM

MAX_ANSWER = 4 << 20  # bytes of an answer we read
_CODE = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+")


class CallError(CheckFailed):
    """The call did not produce a verified reply (exit 1)."""


@dataclass(frozen=True)
class CallResult:
    request: Envelope
    reply: Envelope


def caller_endpoint(agent_id: str) -> AgentEndpoint:
    """The endpoint a caller without a callback presents (``lingxi://<id>``)."""
    return AgentEndpoint(agent_id, "lingxi", lingxi_endpoint(agent_id))


def _read(response: Any) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER:
            raise CallError("call.bad_answer", f"the answer is over {MAX_ANSWER} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CallError("call.bad_answer", f"the {what} is not JSON") from None


def _fetch(client: Any, method: str, url: str, **kwargs: Any) -> tuple[int, bytes]:
    import httpx

    try:
        with client.stream(method, url, **kwargs) as response:
            return response.status_code, _read(response)
    except httpx.HTTPError as error:
        raise CallError("call.unreachable", f"cannot reach {url}: {type(error).__name__}: "
                        f"{str(error)[:160]}") from None


def _refusal(status: int, data: bytes) -> CallError:
    """The server's refusal as a CallError with its code (if it looks like one)."""
    try:
        error = json.loads(data.decode("utf-8"))["error"]
        code, message = error["code"], error["message"]
    except (UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError):
        return CallError("call.bad_answer", f"HTTP {status} without a coded error")
    if not isinstance(code, str) or len(code) > 64 or not _CODE.fullmatch(code):
        return CallError("call.bad_answer", f"HTTP {status} with a malformed error code")
    text = message if isinstance(message, str) else ""
    return CallError(code, f"the server refused the request (HTTP {status}; it says: "
                     f"{peer_words(text, 300)})", details={"status": status, "refused": True})


def discover(client: Any, url: str, spec: Any) -> AgentEndpoint:
    """The served agent's endpoint from ``GET url``; its protocol must be ``spec``'s."""
    status, data = _fetch(client, "GET", url)
    if status != 200:
        raise _refusal(status, data)
    info = _json(data, "service description")
    try:
        agent = AgentEndpoint.from_dict(info["agent"], "$.agent")
        served = info["protocol"]["protocol_id"]
    except (KeyError, TypeError):
        raise CallError("call.bad_answer", "the service description has no agent/protocol"
                        ) from None
    except EnvelopeError as error:
        raise CallError("call.bad_answer", f"the served agent is malformed: {error}") from None
    if served != spec.protocol_id:
        raise CallError("call.protocol_mismatch",
                        f"{url} serves protocol {str(served)[:64]}, not the local "
                        f"{spec.protocol_id}")
    return agent


def call(url: str, payload: dict[str, Any], *, spec: Any, sender: AgentEndpoint,
         key: bytes, receiver: AgentEndpoint | None = None,
         algorithm: str = DEFAULT_ALGORITHM, ttl: int | None = None,
         correlation_id: str | None = None, timeout: float = 30.0,
         clock: Callable[[], float] = time.time, window_seconds: float = 120.0,
         client: Any = None) -> CallResult:
    """Sign ``payload`` as a ``caller:`` request to ``url`` and return the verified reply."""
    import httpx

    spec.check_message(payload, "guest_to_host")  # our own mistake: before any request
    own = client is None
    http = client if client is not None else httpx.Client(timeout=timeout)
    try:
        if receiver is None:
            receiver = discover(http, url, spec)
        builder = EnvelopeBuilder(sender, receiver, key, clock=clock, prefix="caller",
                                  algorithm=algorithm)
        request = builder.build(payload, correlation_id=correlation_id, ttl=ttl)
        status, data = _fetch(http, "POST", url, content=request.to_bytes(),
                              headers={"Content-Type": "application/json"})
    finally:
        if own:
            http.close()
    if status != 200:
        raise _refusal(status, data)
    pipeline = ReceivePipeline(key, clock=clock, window_seconds=window_seconds,
                               expect_sender=receiver.agent_id, expect_receiver=sender.agent_id)
    try:
        reply = pipeline.accept(data, expect_prefix="caller", expect_reply_to=request.id,
                                expect_correlation_id=request.correlation_id or request.id)
        spec.check_message(reply.payload, "host_to_guest")
    except LingxiError as error:
        raise CallError(error.code, f"the reply is not acceptable: {error.message}",
                        path=error.path) from None
    return CallResult(request, reply)
