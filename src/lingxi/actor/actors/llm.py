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
The URL rule, the request and the reply's text come from :mod:`lingxi.llm`,
shared with the session's ``llm`` decider.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from lingxi import llm
from lingxi.llm import endpoint

from .base import Actor, ActorError, check_options

__all__ = ["INSTRUCTION", "LlmActor", "endpoint", "extract_selection"]

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


def _actor_error(error: llm.LlmError) -> ActorError:
    """The actor's code for a shared-client failure (``actor.llm_http``, ``actor.bad_option``…)."""
    code = "actor.bad_option" if error.kind == "bad_option" else f"actor.llm_{error.kind}"
    return ActorError(code, error.message, details=error.details)


def extract_selection(text: str) -> dict[str, Any]:
    """The first JSON object in a model's reply (inside a code fence or bare)."""
    for value in llm.json_values(text, "{"):
        if isinstance(value, dict):
            return value
    snippet = " ".join(text.split())[:80]
    raise ActorError("actor.llm_unparseable", f"the model's reply holds no JSON selection: {snippet!r}")


class LlmActor(Actor):
    name = "llm"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None,
                 transport: Any = None) -> None:
        options = dict(options or {})
        check_options(self.name, options, set(llm.OPTION_NAMES), {"url", "model"})
        try:
            self._settings = llm.settings_from_options(options, timeout=60.0, max_tokens=400)
        except llm.LlmError as error:
            raise _actor_error(error) from None
        self._url = self._settings.url
        self._model = self._settings.model
        self._seed = seed
        self._transport = transport  # an httpx async transport (tests); None: the network

    def request_body(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        image = "data:image/png;base64," + base64.b64encode(frame_png).decode("ascii")
        return self._settings.body([
            {"role": "system", "content": INSTRUCTION},
            {"role": "user", "content": [
                {"type": "text", "text": "ActorView:\n" + json.dumps(view, ensure_ascii=False)},
                {"type": "image_url", "image_url": {"url": image}},
            ]},
        ], seed=self._seed)

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        try:
            text = llm.complete(self._settings, self.request_body(view, frame_png),
                                transport=self._transport)
        except llm.LlmError as error:
            raise _actor_error(error) from None
        return extract_selection(text)

    def close(self) -> None:
        """Nothing to release: each call opens and closes its own connection."""
