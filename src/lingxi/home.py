"""Where Lingxi keeps its data: ``$LINGXI_HOME`` (default ``~/.lingxi``).

Layout: ``identity/`` (Ed25519 keys), ``protocols/<id[:8]>/<id[8:]>/`` (protocol
cache), ``sessions/<session-id>/`` (session folders).
"""

from __future__ import annotations

import os
from pathlib import Path


def lingxi_home() -> Path:
    """The data folder, from ``$LINGXI_HOME`` or ``~/.lingxi``."""
    env = os.environ.get("LINGXI_HOME")
    return Path(env).expanduser() if env else Path.home() / ".lingxi"


def identity_dir() -> Path:
    return lingxi_home() / "identity"


def protocol_cache_root() -> Path:
    """Where protocols fetched from registries are cached (their UI bundles with them)."""
    return lingxi_home() / "protocols"


def protocol_cache_dir(protocol_id: str) -> Path:
    return protocol_cache_root() / protocol_id[:8] / protocol_id[8:]


def sessions_dir() -> Path:
    return lingxi_home() / "sessions"
