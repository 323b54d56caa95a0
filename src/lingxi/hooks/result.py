"""What a hook hands back to the engine, and what a decision looks like.

A hook never talks to the network itself: it returns a :class:`HookResult`
and the session engine validates, signs and sends the response, ends the
session, or aborts it with a reason code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lingxi.records import Record


@dataclass(repr=False, eq=False)
class HookResult(Record):
    """The answer of one hook call.

    ``response``: a payload (or a list of payloads, sent in order) this side
    sends next; ``None`` to send nothing now. ``completed``: this side
    considers the session over (the engine closes it after sending the
    response). ``abort``: a reason (``True`` or a short text) to abort the
    session; the engine sends an ``abort`` control envelope with code
    ``hooks.abort``.
    """

    response: dict[str, Any] | list[dict[str, Any]] | None = None
    completed: bool = False
    abort: bool | str = False

    def responses(self) -> list[dict[str, Any]]:
        if self.response is None:
            return []
        if isinstance(self.response, list):
            return list(self.response)
        return [self.response]


@dataclass(repr=False, eq=False)
class DecisionPoint(Record):
    """A choice this side must make, as a decider is allowed to see it.

    ``legal``: the values a decision may take (empty = any value the hooks
    accept; ``bounds`` limits integers). ``view``: the projection the hooks build (state summary, hints)
    — never a raw peer payload. ``default``: the hooks' own suggestion, used
    for ``auto`` decisions and as the fallback when a decider times out.
    """

    legal: list[Any] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)
    default: Any = None
    message: str | None = None
    bounds: tuple[Any, Any] | None = None  # inclusive (min, max) for integer decisions
    # The other party's own words the decider may need (a chat line, a bid's note), kept
    # apart from ``view`` and marked as such: a decider (a model above all) treats them as
    # data from the peer, never as instructions. Only what the hooks put here is shown.
    peer_text: dict[str, str] = field(default_factory=dict)
