"""llm: asks any OpenAI-compatible chat endpoint for the next selection.

Each step sends exactly two things about the game: the ActorView/4 JSON and the
current frame as a PNG data URL (plus a fixed instruction saying what to
answer). The reply's first JSON object is the selection; code fences and prose
around it are tolerated. A reply with no JSON object, an HTTP failure or a
timeout raises a typed :class:`ActorError`; a JSON object that does not match
the selection schema is returned as-is so the harness records it as a protocol
error and asks again (the model then sees the error in ``protocolErrors``).

Options: ``url`` (base like ``http://host:8000/v1`` or the full
``…/chat/completions``), ``model``, ``api_key_env`` (name of the environment
variable holding the key; no Authorization header when omitted), ``timeout``
(seconds, default 60), ``temperature`` (default 0), ``max_tokens`` (default 400).
"""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

from .base import Actor, ActorError, check_options

INSTRUCTION = """You play a browser game through the ActorView/4 contract.
The user message holds the current view (JSON) and the current frame (image, 390x844).
Answer with exactly one JSON object, a selection, and nothing else:
  {"type":"tap","target":{"targetId":"r00"}}
  {"type":"tap","target":{"targetId":"l00","cell":{"row":3,"column":4}}}
  {"type":"drag","from":{"targetId":"l00","cell":{"row":1,"column":1}},"to":{"targetId":"l00","cell":{"row":1,"column":2}}}
  {"type":"key","key":"ArrowUp"}
  {"type":"wait","ms":300}
  {"type":"swap_pair","candidateId":"ms012"}
Use only types in legalSelections.types, target ids from visualTargetCatalog, keys from
legalSelections.safeKeys and candidate ids from interactionCandidates. A cell is required for
lattice (l..) and grid (g01) targets and forbidden for regions (r..). You may add
"reason" (at most 280 characters). Follow the brief; fix anything listed in protocolErrors."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def endpoint(url: str) -> str:
    """The chat-completions URL for a base URL or a full endpoint."""
    url = url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if re.search(r"/v\d+$", url):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


def extract_selection(text: str) -> dict[str, Any]:
    """The first JSON object in a model's reply (inside a code fence or bare)."""
    decoder = json.JSONDecoder()
    chunks = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in chunks:
        for start in [i for i, ch in enumerate(chunk) if ch == "{"]:
            try:
                value, _ = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    snippet = " ".join(text.split())[:80]
    raise ActorError("actor.llm_unparseable", f"the model's reply holds no JSON selection: {snippet!r}")


def _reply_text(body: Any) -> str:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ActorError("actor.llm_bad_response", "the endpoint's answer has no choices[0].message.content") from exc
    if isinstance(content, list):   # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ActorError("actor.llm_bad_response", "the model's message content is not text")
    return content


class LlmActor(Actor):
    name = "llm"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None,
                 transport: Any = None) -> None:
        import httpx

        options = dict(options or {})
        check_options(self.name, options, {"url", "model", "api_key_env", "timeout", "temperature",
                                           "max_tokens"}, {"url", "model"})
        self._url = endpoint(options["url"])
        if not self._url.startswith(("http://", "https://")):
            raise ActorError("actor.bad_option", f"llm url must be http(s): {options['url']!r}")
        self._model = options["model"]
        self._seed = seed
        try:
            timeout = float(options.get("timeout", "60"))
            self._temperature = float(options.get("temperature", "0"))
            self._max_tokens = int(options.get("max_tokens", "400"))
        except ValueError as exc:
            raise ActorError("actor.bad_option", f"llm option is not a number: {exc}") from exc
        headers = {"Content-Type": "application/json"}
        key_env = options.get("api_key_env")
        if key_env:
            key = os.environ.get(key_env)
            if not key:
                raise ActorError("actor.llm_no_key", f"environment variable {key_env} (api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def request_body(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        image = "data:image/png;base64," + base64.b64encode(frame_png).decode("ascii")
        return {
            "model": self._model,
            "temperature": self._temperature,
            "max_tokens": self._max_tokens,
            "seed": self._seed,
            "messages": [
                {"role": "system", "content": INSTRUCTION},
                {"role": "user", "content": [
                    {"type": "text", "text": "ActorView:\n" + json.dumps(view, ensure_ascii=False)},
                    {"type": "image_url", "image_url": {"url": image}},
                ]},
            ],
        }

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        import httpx

        try:
            response = self._client.post(self._url, json=self.request_body(view, frame_png))
        except httpx.TimeoutException as exc:
            raise ActorError("actor.llm_timeout", f"no answer from {self._url} in time") from exc
        except httpx.HTTPError as exc:
            raise ActorError("actor.llm_http", f"cannot reach {self._url}: {exc}") from exc
        if response.status_code >= 400:
            snippet = " ".join(response.text.split())[:120]
            raise ActorError("actor.llm_http", f"{self._url} answered HTTP {response.status_code}: {snippet}",
                             details={"status": response.status_code})
        try:
            body = response.json()
        except ValueError as exc:
            raise ActorError("actor.llm_bad_response", f"{self._url} did not answer JSON") from exc
        return extract_selection(_reply_text(body))

    def close(self) -> None:
        self._client.close()
