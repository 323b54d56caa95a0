"""Built-in protocols shipped with Lingxi, each a folder: spec.json, hooks.py, ui/index.html.

They are package data, found with :func:`builtin_dir`; their hooks are local
code like any protocol folder's.
"""

from __future__ import annotations

from pathlib import Path

BUILTINS_ROOT = Path(__file__).resolve().parent


def builtin_names() -> list[str]:
    return sorted(p.name for p in BUILTINS_ROOT.iterdir()
                  if p.is_dir() and (p / "spec.json").is_file())


def builtin_dir(name: str) -> Path | None:
    """The folder of built-in protocol ``name``, or None."""
    if name not in builtin_names():
        return None
    return BUILTINS_ROOT / name
