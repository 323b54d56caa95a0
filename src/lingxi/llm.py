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
  ``bad_option``, ``no_key``, ``timeout``, ``http``, ``bad_response``. Callers
  turn it into their own codes (``actor.llm_http``, ``decider.llm_timeout``…).

Nothing here knows about games or sessions; callers build the messages.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from lingxi.errors import LingxiError

OPTION_NAMES = ("url", "model", "api_key_env", "timeout", "temperature", "max_tokens")
KINDS = ("bad_option", "no_key", "timeout", "http", "bad_response")
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
    key_env = options.get("api_key_env")
    if key_env:
        key = os.environ.get(key_env)
        if not key:
            raise LlmError("no_key", f"environment variable {key_env} (api_key_env) is not set")
        headers["Authorization"] = f"Bearer {key}"
    return ChatSettings(url, model, seconds, heat, tokens, headers)


def reply_text(response: httpx.Response, url: str) -> str:
    """The model's message text, or :class:`LlmError` (``http``, ``bad_response``)."""
    if response.status_code >= 400:
        snippet = " ".join(response.text.split())[:120]
        raise LlmError("http", f"{url} answered HTTP {response.status_code}: {snippet}",
                       details={"status": response.status_code})
    try:
        body = response.json()
    except ValueError:
        raise LlmError("bad_response", f"{url} did not answer JSON") from None
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LlmError("bad_response",
                       "the endpoint's answer has no choices[0].message.content") from None
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content
                          if isinstance(p, dict) and isinstance(p.get("text", ""), str))
    if not isinstance(content, str):
        raise LlmError("bad_response", "the model's message content is not text")
    return content


def _transport_error(error: httpx.HTTPError, url: str, seconds: float) -> LlmError:
    if isinstance(error, httpx.TimeoutException):
        return LlmError("timeout", f"no answer from {url} within {seconds:g} s")
    return LlmError("http", f"cannot reach {url}: {error}")


def complete(client: httpx.Client, settings: ChatSettings, body: dict[str, Any],
             *, timeout: float | None = None) -> str:
    """POST one request with a sync client; the reply text or :class:`LlmError`."""
    seconds = settings.timeout if timeout is None else timeout
    try:
        response = client.post(settings.url, json=body, headers=settings.headers,
                               timeout=seconds)
    except httpx.HTTPError as error:
        raise _transport_error(error, settings.url, seconds) from error
    return reply_text(response, settings.url)


async def acomplete(client: httpx.AsyncClient, settings: ChatSettings, body: dict[str, Any],
                    *, timeout: float | None = None) -> str:
    """POST one request with an async client; the reply text or :class:`LlmError`."""
    seconds = settings.timeout if timeout is None else timeout
    try:
        response = await client.post(settings.url, json=body, headers=settings.headers,
                                     timeout=seconds)
    except httpx.HTTPError as error:
        raise _transport_error(error, settings.url, seconds) from error
    return reply_text(response, settings.url)


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
