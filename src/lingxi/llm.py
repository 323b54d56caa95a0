"""A small client for OpenAI-compatible chat-completions endpoints.

Shared by the play loop's ``llm`` actor (sync) and the session's ``llm``
decider (async), so the facts about such an endpoint live in one place:

- the URL rule (:func:`endpoint`): a base like ``http://host:8000/v1`` gets
  ``/chat/completions``, a bare host gets ``/v1/chat/completions``, a full
  ``…/chat/completions`` URL is kept; only http and https are accepted;
- the options both callers take (:func:`settings_from_options`): ``url``,
  ``model``, ``api_key_env`` (the *name* of the environment variable holding
  the key; no Authorization header when omitted), ``timeout``,
  ``temperature``, ``max_tokens``;
- the request body (:meth:`ChatSettings.body`) and the reply text
  (:func:`reply_text`: ``choices[0].message.content``, string or content parts);
- how a failure is reported: a :class:`LlmError` whose ``kind`` is one of
  ``bad_option``, ``no_key``, ``timeout``, ``http``, ``bad_response``,
  ``too_large``. Callers turn it into their own codes (``actor.llm_http``,
  ``decider.llm_timeout``…);
- the bounds every call keeps, whatever the endpoint does: a wall-clock
  limit on the whole call (connect, headers and body: httpx's own timeouts
  are per read, so an endpoint dripping a byte every half second would never
  trip them), a cap on the reply's bytes while it streams in
  (:data:`MAX_REPLY_BYTES`; only :data:`ERROR_BODY_BYTES` of an error body
  are read), and the API key redacted (:func:`redact`) from every text this
  module returns or puts into an error — an endpoint that echoes the
  ``Authorization`` header cannot get the key into events, stderr or a record.

Nothing here knows about games or sessions; callers build the messages.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from lingxi.errors import LingxiError

OPTION_NAMES = ("url", "model", "api_key_env", "timeout", "temperature", "max_tokens")
KINDS = ("bad_option", "no_key", "timeout", "http", "bad_response", "too_large")
MAX_REPLY_BYTES = 1024 * 1024  # a chat reply of a few thousand tokens is far smaller
ERROR_BODY_BYTES = 4096  # of an error body: enough for its message
SNIPPET = 120  # characters of an error body quoted in an error
REDACTED = "[redacted]"
FRAGMENT = 8  # characters of a key that count as the key when echoed in part
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+")
# a fence: ``` then an optional language tag ending its line, the body, ```
_FENCE = re.compile(r"```(?:[A-Za-z0-9_+-]+[ \t]*\n|[ \t]*\n?)(.*?)```", re.S)


class LlmError(LingxiError):
    """A chat endpoint could not be configured, reached or understood.

    ``code`` is ``llm.<kind>``; callers map ``kind`` onto their own codes.
    """

    def __init__(self, kind: str, message: str, **kwargs: Any) -> None:
        assert kind in KINDS, kind
        super().__init__(f"llm.{kind}", message, **kwargs)
        self.kind = kind


def endpoint(url: str) -> str:
    """The chat-completions URL for a base URL or a full endpoint."""
    url = url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if re.search(r"/v\d+$", url):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


@dataclass(frozen=True)
class ChatSettings:
    """Where and how to ask: the full endpoint URL, the model, limits and headers."""

    url: str
    model: str
    timeout: float
    temperature: float
    max_tokens: int
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # may hold the key
    secrets: tuple[str, ...] = field(default=(), repr=False)  # redacted from every text

    @property
    def shown_url(self) -> str:
        """The URL as errors show it: no user:password, no query (either may hold a key)."""
        return shown_url(self.url)

    def body(self, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """The JSON body of one chat-completions request."""
        return {"model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, **extra, "messages": messages}


def _number(options: dict[str, str], name: str, default: float, kind: type) -> Any:
    raw = options.get(name)
    if raw is None:
        return kind(default)
    try:
        value = kind(str(raw).strip())
    except ValueError:
        raise LlmError("bad_option", f"llm option {name} is not a number: {raw!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise LlmError("bad_option", f"llm option {name} is not a finite number: {raw!r}")
    return value


def settings_from_options(options: dict[str, str], *, timeout: float,
                          max_tokens: int, temperature: float = 0.0) -> ChatSettings:
    """Settings from ``url``, ``model``, ``api_key_env``, ``timeout``, ``temperature``,
    ``max_tokens`` (the keyword arguments are the caller's defaults).

    The caller checks first which option names it takes and which are required;
    this raises :class:`LlmError` (``bad_option``, ``no_key``) for bad values.
    """
    raw_url = str(options.get("url") or "")
    url = endpoint(raw_url.strip())
    if not re.match(r"https?://[^/\s]+", url):
        raise LlmError("bad_option", f"llm url must be http(s)://HOST[:PORT][/PATH]: {raw_url!r}")
    model = str(options.get("model") or "").strip()
    if not model:
        raise LlmError("bad_option", "llm option model is empty")
    seconds = _number(options, "timeout", timeout, float)
    heat = _number(options, "temperature", temperature, float)
    tokens = _number(options, "max_tokens", max_tokens, int)
    if seconds <= 0:
        raise LlmError("bad_option", f"llm option timeout must be more than 0 s: {seconds}")
    if not 0 <= heat <= 2:
        raise LlmError("bad_option", f"llm option temperature must be within 0..2: {heat}")
    if tokens < 1:
        raise LlmError("bad_option", f"llm option max_tokens must be at least 1: {tokens}")
    headers = {"Content-Type": "application/json"}
    secrets: tuple[str, ...] = ()
    key_env = options.get("api_key_env")
    if key_env:
        key = os.environ.get(key_env)
        if not key:
            raise LlmError("no_key", f"environment variable {key_env} (api_key_env) is not set")
        headers["Authorization"] = f"Bearer {key}"
        secrets = (key,)
    return ChatSettings(url, model, seconds, heat, tokens, headers, secrets)


def shown_url(url: str) -> str:
    """``url`` without its user:password and query, for messages."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the endpoint"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret, and any part of one at least :data:`FRAGMENT`
    characters long, replaced by ``[redacted]``; ``Bearer <token>`` too."""
    secrets = [s for s in secrets if s]
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        size = min(len(secret), FRAGMENT)
        for gram in {secret[i:i + size] for i in range(len(secret) - size + 1)}:
            start = text.find(gram)
            while start != -1:
                spans.append((start, start + size))
                start = text.find(gram, start + 1)
    if spans:
        merged: list[list[int]] = []
        for start, stop in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], stop)
            else:
                merged.append([start, stop])
        out, cursor = [], 0
        for start, stop in merged:
            out += [text[cursor:start], REDACTED]
            cursor = stop
        out.append(text[cursor:])
        text = "".join(out)
    return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def reply_text(status: int, content: bytes, settings: ChatSettings) -> str:
    """The model's message text from a reply, or :class:`LlmError` (``http``,
    ``bad_response``); every text is redacted of the settings' secrets."""
    url = settings.shown_url
    if status >= 400:
        body = " ".join(content.decode("utf-8", "replace").split())
        snippet = redact(body, settings.secrets)[:SNIPPET]
        raise LlmError("http", f"{url} answered HTTP {status}: {snippet}",
                       details={"status": status})
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        raise LlmError("bad_response", f"{url} did not answer JSON") from None
    try:
        content_value = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LlmError("bad_response",
                       "the endpoint's answer has no choices[0].message.content") from None
    if isinstance(content_value, list):  # some servers answer with content parts
        content_value = "".join(p.get("text", "") for p in content_value
                                if isinstance(p, dict) and isinstance(p.get("text", ""), str))
    if not isinstance(content_value, str):
        raise LlmError("bad_response", "the model's message content is not text")
    return redact(content_value, settings.secrets)


def _transport_error(error: httpx.HTTPError, settings: ChatSettings, seconds: float) -> LlmError:
    url = settings.shown_url
    if isinstance(error, httpx.TimeoutException):
        return LlmError("timeout", f"no answer from {url} within {seconds:g} s")
    reason = redact(str(error), settings.secrets)[:SNIPPET]
    return LlmError("http", f"cannot reach {url}: {reason}")


async def _exchange(client: httpx.AsyncClient, settings: ChatSettings, body: dict[str, Any],
                    seconds: float) -> tuple[int, bytes]:
    """POST and read the reply, streaming, never more than the cap allows."""
    async with client.stream("POST", settings.url, json=body, headers=settings.headers,
                             timeout=seconds) as response:
        status = response.status_code
        limit = ERROR_BODY_BYTES if status >= 400 else MAX_REPLY_BYTES
        declared = response.headers.get("content-length", "")
        if status < 400 and declared.isdigit() and int(declared) > limit:
            raise LlmError("too_large", f"{settings.shown_url} announced a reply of "
                           f"{int(declared)} bytes (at most {limit} are read)")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                if status >= 400:  # enough of an error body to say what it was
                    break
                raise LlmError("too_large", f"{settings.shown_url} sent a reply of more than "
                               f"{limit} bytes; stopped reading")
        return status, b"".join(chunks)[:limit]


async def acomplete(client: httpx.AsyncClient, settings: ChatSettings, body: dict[str, Any],
                    *, timeout: float | None = None) -> str:
    """POST one request; the reply text or :class:`LlmError`.

    The whole call — connecting, the headers, every byte of the body — ends
    within ``timeout`` seconds (default: the settings' timeout) by the clock.
    """
    seconds = settings.timeout if timeout is None else timeout
    try:
        async with asyncio.timeout(seconds):
            status, content = await _exchange(client, settings, body, seconds)
    except TimeoutError:
        raise LlmError("timeout", f"no complete answer from {settings.shown_url} within "
                       f"{seconds:g} s") from None
    except httpx.HTTPError as error:
        raise _transport_error(error, settings, seconds) from None
    return reply_text(status, content, settings)


def complete(settings: ChatSettings, body: dict[str, Any], *, timeout: float | None = None,
             transport: httpx.AsyncBaseTransport | None = None) -> str:
    """:func:`acomplete` for synchronous callers (the play loop's actor), same bounds.

    It runs on its own event loop — in this thread, or in a worker thread
    when this one already runs a loop — because only a task can be cut off
    by the clock while a read is pending. ``transport`` is for tests (an
    httpx async transport such as ``httpx.MockTransport``).
    """
    async def once() -> str:
        async with httpx.AsyncClient(transport=transport) as client:
            return await acomplete(client, settings, body, timeout=timeout)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(once())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, once()).result()


def json_values(text: str, starts: str = "{") -> Iterator[Any]:
    """Every JSON value in a model's reply that begins at one of ``starts``: inside
    code fences first, then anywhere in the text (prose around it is tolerated)."""
    decoder = json.JSONDecoder()
    chunks = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in chunks:
        for start, char in enumerate(chunk):
            if char not in starts:
                continue
            try:
                value, _ = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                continue
            yield value


def strip_fences(text: str) -> str:
    """The reply without code-fence markers (the text inside the first fence, if any)."""
    found = _FENCE.search(text)
    return (found.group(1) if found else text).strip()
