"""The hooks API protocol authors write against (``lingxi.hooks``).

- :class:`Hooks` — subclass it in a local ``hooks.py``;
- :class:`HookResult` — what a hook returns (response, completed, abort);
- :class:`DecisionPoint` — a choice with its legal values and the projection
  a decider may see;
- :func:`load_hooks_class` — load hooks from a local protocol folder only,
  refusing skeletons;
- :func:`write_skeleton` / :func:`skeleton_status` — generate and detect
  skeletons for specs that arrive without hooks.

Names are imported on first use, so the session machines (which need only
the base and result types) never pull in the loader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "HookContext": "base", "Hooks": "base", "implements": "base",
    "HooksError": "errors",
    "ALLOW_SKELETON_ENV": "loader", "ALLOW_SKELETON_ENVS": "loader", "check_not_skeleton": "loader", "hooks_path": "loader",
    "load_hooks_class": "loader", "skeletons_allowed": "loader",
    "HookMethod": "methods", "ordered": "methods", "required_names": "methods",
    "DecisionPoint": "result", "HookResult": "result",
    "PLACEHOLDER": "skeleton", "PLACEHOLDERS": "skeleton", "SENTINEL": "skeleton",
    "SENTINELS": "skeleton", "SIDECAR": "skeleton", "SIDECARS": "skeleton",
    "SkeletonStatus": "skeleton", "render_skeleton": "skeleton", "skeleton_status": "skeleton",
    "write_skeleton": "skeleton",
}

__all__ = sorted(_WHERE)

if TYPE_CHECKING:
    from lingxi.hooks.base import HookContext, Hooks, implements  # noqa: F401
    from lingxi.hooks.errors import HooksError  # noqa: F401
    from lingxi.hooks.loader import (  # noqa: F401
        ALLOW_SKELETON_ENV,
        ALLOW_SKELETON_ENVS,
        check_not_skeleton,
        hooks_path,
        load_hooks_class,
        skeletons_allowed,
    )
    from lingxi.hooks.methods import HookMethod, ordered, required_names  # noqa: F401
    from lingxi.hooks.result import DecisionPoint, HookResult  # noqa: F401
    from lingxi.hooks.skeleton import (  # noqa: F401
        PLACEHOLDER,
        PLACEHOLDERS,
        SENTINEL,
        SENTINELS,
        SIDECAR,
        SIDECARS,
        SkeletonStatus,
        render_skeleton,
        skeleton_status,
        write_skeleton,
    )


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'lingxi.hooks' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"lingxi.hooks.{module}"), name)
    globals()[name] = value
    return value
