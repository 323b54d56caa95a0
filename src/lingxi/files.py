"""Private, atomic file writes for keys and state (temp file, fsync, rename).

A reader never sees half a file: the text goes to a uniquely named temporary
file in the same folder, is flushed to disk, and replaces the target in one
rename. Files are 0600 and new folders 0700, like the identity keys. A
failure is ``io.write_failed``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from lingxi.errors import LingxiError


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) as a 0700 folder when missing."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise LingxiError("io.write_failed", f"cannot create {path}: {error.strerror or error}",
                          exit_code=2) from None
    return path


def write_private_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, mode 0600."""
    folder = private_dir(path.parent)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        tmp = None
    except OSError as error:
        raise LingxiError("io.write_failed", f"cannot write {path}: {error.strerror or error}",
                          exit_code=2) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_private_json(path: Path, data: Any) -> None:
    write_private_text(path, json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
