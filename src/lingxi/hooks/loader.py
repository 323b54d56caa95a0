"""Load a protocol's ``hooks.py`` — only ever from a local folder.

The registry never serves Python; hooks are local code the user wrote or
accepted. Loading refuses anything that is not a plain local folder, refuses
skeletons (listing what is still to write) unless explicitly allowed, and
checks that the class implements every method its flow mode requires.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

from lingxi.hooks.base import Hooks, implements
from lingxi.hooks.errors import HooksError
from lingxi.hooks.methods import HookMethod, required_names
from lingxi.hooks.skeleton import HOOKS_FILE, SENTINEL, skeleton_status

ALLOW_SKELETON_ENV = "LINGXI_ALLOW_SKELETON_HOOKS"
# the seed's name for the same test-only bypass, recognised beside Lingxi's
ALLOW_SKELETON_ENVS = (ALLOW_SKELETON_ENV, "AIGENORA_ALLOW_SKELETON_HOOKS")


def skeletons_allowed(flag: bool | None = None) -> bool:
    """The ``--allow-skeleton-hooks`` flag, else ``LINGXI_ALLOW_SKELETON_HOOKS=1``
    (or the seed's ``AIGENORA_ALLOW_SKELETON_HOOKS=1``)."""
    if flag:
        return True
    return any(os.environ.get(name, "").strip() == "1" for name in ALLOW_SKELETON_ENVS)


def hooks_path(folder: str | Path) -> Path:
    """The ``hooks.py`` of a local protocol folder, checked to really live there."""
    text = str(folder)
    if "://" in text:
        raise HooksError("hooks.not_local", f"hooks load only from a local folder, not {text}")
    base = Path(folder).expanduser()
    if not base.is_dir():
        raise HooksError("hooks.not_local", f"{base} is not a folder")
    path = base / HOOKS_FILE
    if not path.is_file():
        raise HooksError("hooks.missing", f"{base} has no {HOOKS_FILE} "
                         f"(start one with: lingxi protocol skeleton {base})")
    if path.resolve().parent != base.resolve():
        raise HooksError("hooks.not_local", f"{path} points outside its protocol folder")
    return path


def check_not_skeleton(path: Path, allow_skeleton: bool | None = None) -> list[str]:
    """Raise ``hooks.skeleton`` for a skeleton unless allowed; return pending names."""
    status = skeleton_status(path)
    if status.is_skeleton and not skeletons_allowed(allow_skeleton):
        markers = " and ".join(status.markers) or SENTINEL
        pending = status.pending or [f"(remove the {markers} sentinel)"]
        raise HooksError(
            "hooks.skeleton",
            f"{path} is a generated skeleton; still to write: {', '.join(pending)} "
            "(bypass for tests only: --allow-skeleton-hooks or LINGXI_ALLOW_SKELETON_HOOKS=1)",
            details={"pending": status.pending, "sentinel": status.sentinel,
                     "markers": status.markers})
    return status.pending


def _import(path: Path):
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    name = f"lingxi_local_hooks_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HooksError("hooks.import_failed", f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as error:  # author code, SystemExit included: a typed error
        sys.modules.pop(name, None)
        raise HooksError("hooks.import_failed",
                         f"{path}: {type(error).__name__}: {error}") from error
    return module


def _find_class(module, path: Path) -> type[Hooks]:
    chosen = getattr(module, "HOOKS", None)
    if isinstance(chosen, type) and issubclass(chosen, Hooks):
        return chosen
    found = [obj for obj in vars(module).values()
             if isinstance(obj, type) and issubclass(obj, Hooks) and obj is not Hooks
             and obj.__module__ == module.__name__]
    if not found:
        raise HooksError("hooks.no_class", f"{path} defines no subclass of lingxi.hooks.Hooks")
    if len(found) > 1:
        names = ", ".join(sorted(c.__name__ for c in found))
        raise HooksError("hooks.ambiguous_class",
                         f"{path} defines several Hooks classes ({names}); set HOOKS = <class>")
    return found[0]


def load_hooks_class(folder: str | Path, *, methods: tuple[HookMethod, ...] | list[HookMethod] = (),
                     mode: str = "session_loop",
                     allow_skeleton: bool | None = None) -> type[Hooks]:
    """The hooks class of a local protocol folder, ready to instantiate.

    ``methods`` are the hook methods of the spec's flow mode (from its
    descriptor); the class must implement every required one.
    """
    path = hooks_path(folder)
    pending = check_not_skeleton(path, allow_skeleton)
    cls = _find_class(_import(path), path)
    if not pending:  # an allowed skeleton is expected to lack methods
        probe = cls.__new__(cls)
        missing = [name for name in required_names(methods) if not implements(probe, name)]
        if missing:
            raise HooksError("hooks.missing_methods",
                             f"{path}: {cls.__name__} does not implement {', '.join(missing)} "
                             f"(required by flow mode {mode})", details={"missing": missing})
    return cls
