"""Deciders: who answers a session's decision points when the hooks do not.

A decider is a callable ``(RequestDecision) -> value`` (or an awaitable of
one); ``None`` means "no answer from me" (the inbox, a watcher or the timeout
decides), and raising :class:`~lingxi.session.core.decisions.Decline` gives the
point up so the spec's timeout action applies at once. A decider may have
``bind(context)`` (:class:`~lingxi.session.core.decisions.DeciderContext`),
called once before its first point with the spec and an event writer.

Deciders see only the decision's projection (legal values, bounds, the
hooks' view, the time left), never a peer payload.
"""

from __future__ import annotations

import importlib
from typing import Any

from lingxi.errors import InputError

KINDS = {
    "terminal": ("lingxi.deciders.terminal", "TerminalDecider"),
    "llm": ("lingxi.deciders.llm", "LlmDecider"),
}


def make_decider(kind: str, options: dict[str, str] | None = None, **extra: Any) -> Any:
    """The decider ``kind`` built from ``--decider-option`` KEY=VALUE pairs."""
    where = KINDS.get(kind)
    if where is None:
        raise InputError("decider.unknown",
                         f"unknown decider {kind!r}; choose one of {', '.join(sorted(KINDS))}")
    module, name = where
    cls = getattr(importlib.import_module(module), name)
    return cls.from_options(dict(options or {}), **extra)
