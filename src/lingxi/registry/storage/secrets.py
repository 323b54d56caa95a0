"""The registry's private keys live in files, never in its database.

A stolen database backup must not let anyone mint tickets, checkpoints or
relay credentials, so the Ed25519 signing key and the relay NKey seeds are
kept in files readable by their owner only (``0600``, refused otherwise, as
ssh does). Where they are, first match wins:

1. the path given to the store (``lingxi server --key-file``);
2. ``$LINGXI_REGISTRY_KEY_FILE`` (a secret mounted by an orchestrator);
3. for SQLite, ``<database file>.key`` beside it (every process that opens the
   file, embedded or served, from any home, signs alike);
4. otherwise ``$LINGXI_HOME/registry/server.key``.

Relay seeds sit beside the signing key, in ``<key file>.relay.json``. Every
process on one database must be given the same files; the log records which
public key is current (:mod:`lingxi.registry.storage.keylog`), so a process
holding another key refuses to start instead of signing a split history.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from lingxi.home import lingxi_home
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import ServerKey

ENV = "LINGXI_REGISTRY_KEY_FILE"


def key_path(given: str | os.PathLike[str] | None = None, *,
             sqlite_file: str | None = None) -> Path:
    """Where the signing key is, by the order above (``sqlite_file``: the database's)."""
    if given:
        return Path(given).expanduser()
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    if sqlite_file and sqlite_file != ":memory:":
        database = Path(sqlite_file).expanduser()
        return database.with_name(database.name + ".key")
    return lingxi_home() / "registry" / "server.key"


def relay_path(key_file: Path) -> Path:
    return key_file.with_name(key_file.name + ".relay.json")


def _unsafe(path: Path) -> RegistryError:
    return RegistryError("registry.key_file_unsafe",
                         f"{path} is readable by others; chmod 600 it (a registry key must be "
                         "its owner's only)", status=500, exit_code=2)


def read_secret(path: Path) -> str | None:
    """The file's text, or None when it does not exist; refuses group/other access."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise _unsafe(path)
    return path.read_text(encoding="utf-8").strip()


def write_secret(path: Path, text: str, *, replace: bool = False) -> bool:
    """Create ``path`` with mode 0600 holding ``text``; False when it already existed.

    With ``replace`` the new text goes to a temporary 0600 file that is then
    renamed over the old one, so a reader never sees half a key.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = path.with_name(path.name + ".new") if replace else path
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if not replace:
            return False
        target.unlink()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    if replace:
        os.replace(target, path)
    return True


def load_server_key(path: Path, *, fallback: str | None = None) -> ServerKey:
    """The key in ``path``; created from ``fallback`` (a private hex, e.g. a key being
    migrated out of the database) or freshly when the file does not exist."""
    text = read_secret(path)
    if text is None:
        fresh = ServerKey.from_private_hex(fallback) if fallback else ServerKey.generate()
        if write_secret(path, fresh.private_hex()):
            return fresh
        text = read_secret(path)  # another process created it first
        assert text is not None
    try:
        return ServerKey.from_private_hex(text)
    except ValueError:
        raise RegistryError("registry.key_file_bad",
                            f"{path} does not hold a 64-hex Ed25519 private key", status=500,
                            exit_code=2) from None


def load_relay_seeds(path: Path, fallback: dict[str, Any] | None, make: Any) -> dict[str, Any]:
    """The relay seeds in ``path``; written from ``fallback`` or ``make()`` when absent."""
    text = read_secret(path)
    if text is None:
        seeds = fallback if fallback is not None else make()
        if write_secret(path, json.dumps(seeds, sort_keys=True)):
            return seeds
        text = read_secret(path)
        assert text is not None
    seeds = json.loads(text)
    if not isinstance(seeds, dict):
        raise RegistryError("registry.key_file_bad", f"{path} does not hold relay seeds",
                            status=500, exit_code=2)
    return seeds
