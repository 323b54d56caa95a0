"""The hooks API protocol authors write against (``lingxi.hooks``).

- :class:`Hooks` — subclass it in a local ``hooks.py``;
- :class:`HookResult` — what a hook returns (response, completed, abort);
- :class:`DecisionPoint` — a choice with its legal values and the projection
  a decider may see;
- :func:`load_hooks_class` — load hooks from a local protocol folder only,
  refusing skeletons;
- :func:`write_skeleton` / :func:`skeleton_status` — generate and detect
  skeletons for specs that arrive without hooks.
"""

from lingxi.hooks.base import HookContext, Hooks, implements
from lingxi.hooks.errors import HooksError
from lingxi.hooks.loader import (
                                 ALLOW_SKELETON_ENV,
                                 check_not_skeleton,
                                 hooks_path,
                                 load_hooks_class,
                                 skeletons_allowed,
)
from lingxi.hooks.methods import METHODS_BY_MODE, HookMethod, methods_for, required_for
from lingxi.hooks.result import DecisionPoint, HookResult
from lingxi.hooks.skeleton import (
                                 PLACEHOLDER,
                                 SENTINEL,
                                 SIDECAR,
                                 SkeletonStatus,
                                 render_skeleton,
                                 skeleton_status,
                                 write_skeleton,
)

__all__ = [
    "ALLOW_SKELETON_ENV", "METHODS_BY_MODE", "PLACEHOLDER", "SENTINEL", "SIDECAR",
    "DecisionPoint", "HookContext", "HookMethod", "HookResult", "Hooks", "HooksError",
    "SkeletonStatus", "check_not_skeleton", "hooks_path", "implements", "load_hooks_class",
    "methods_for", "render_skeleton", "required_for", "skeleton_status", "skeletons_allowed",
    "write_skeleton",
]
