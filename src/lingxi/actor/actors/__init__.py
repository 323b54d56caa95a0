"""The actor registry: ``create_actor(name, seed=, options=)`` and ``ACTOR_NAMES``.

Every actor answers ``select(view, frame_png) -> selection`` from the ActorView/4
dict and the current frame's PNG bytes only. Modules are imported on demand so
that importing this registry stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .base import Actor, ActorError

__all__ = ["ACTOR_NAMES", "Actor", "ActorError", "create_actor"]

_REGISTRY = {
    "random": ("random_actor", "RandomActor"),
    "greedy-match3": ("greedy", "GreedyMatch3Actor"),
    "explorer": ("explorer", "ExplorerActor"),
    "scripted": ("scripted", "ScriptedActor"),
    "human": ("human", "HumanActor"),
    "llm": ("llm", "LlmActor"),
}
ACTOR_NAMES: tuple[str, ...] = tuple(_REGISTRY)


def create_actor(name: str, *, seed: int, options: dict[str, str] | None = None,
                 **extra: Any) -> Actor:
    """Build the actor called ``name`` (raises ActorError ``actor.unknown`` / ``actor.bad_option``).

    ``extra`` carries injectables for tests and the CLI: ``input_stream`` and
    ``output_stream`` for ``human``, ``transport`` (an httpx transport) for ``llm``.
    """
    if name not in _REGISTRY:
        raise ActorError("actor.unknown", f"unknown actor {name!r}; choose one of {', '.join(ACTOR_NAMES)}")
    module_name, class_name = _REGISTRY[name]
    cls = getattr(import_module(f"{__name__}.{module_name}"), class_name)
    allowed = {"human": {"input_stream", "output_stream"}, "llm": {"transport"}}.get(name, set())
    stray = sorted(set(extra) - allowed)
    if stray:
        raise TypeError(f"actor {name!r} does not accept {', '.join(stray)}")
    return cls(seed=int(seed), options=dict(options or {}), **extra)
