"""Who may call a served protocol: the callers file, its keys, and registering a caller.

The seed's HMAC needs a key both sides know (seed §4.3: "extract the
sender's key"). A P2A caller has no session and no handshake, so the key is
registered beforehand, once, on the serving machine:
``lingxi callers add ALICE`` draws 32 random bytes, writes them as 64 hex
characters into the callers file and prints them once. Those 64 characters
*are* the HMAC key (as text, like every ``--key-file`` of ``lingxi
envelope``); the caller keeps them in a key file of its own.

The file (default ``$LINGXI_HOME/callers.json``, mode 0600, written through
:mod:`lingxi.files` under a lock) looks like::

    {"kind": "lingxi.callers/1",
     "callers": {"alice": {"key": "<64 hex>", "added": "2026-…Z"}}}

A file readable by group or others is refused (``callers.insecure_permissions``),
as an identity key would be. A running server re-reads the file when it
changes, so a caller added (or removed) while it serves counts at once; a
file that breaks while serving is reported and the last good one is kept.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lingxi.errors import InputError, LingxiError
from lingxi.files import folder_lock, write_private_json
from lingxi.home import lingxi_home

KIND = "lingxi.callers/1"
CALLER_ID = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")  # printable, no '|' (the signed separator)
_KEY = re.compile(r"[!-~]{32,512}")  # printable ASCII, no spaces: a key someone could type
MAX_FILE = 16 << 20
log = logging.getLogger("lingxi.serve")


def default_callers_file() -> Path:
    return lingxi_home() / "callers.json"


def _bad(path: Path, message: str) -> InputError:
    return InputError("callers.bad_file", f"{path}: {message}")


def check_caller_id(agent_id: str) -> str:
    """``agent_id`` if it can name a caller, else ``callers.bad_id`` (exit 2)."""
    if not isinstance(agent_id, str) or not CALLER_ID.fullmatch(agent_id):
        shown = agent_id if isinstance(agent_id, str) else type(agent_id).__name__
        raise InputError("callers.bad_id", f"a caller id is 1-128 of A-Z a-z 0-9 _ . : @ -, "
                         f"not {shown[:60]!r}")
    return agent_id


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return out


def read_callers(path: Path) -> dict[str, dict[str, Any]]:
    """The callers in ``path`` (an absent file: none); every problem is one coded error."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise InputError("input.unreadable", f"cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise _bad(path, "not a regular file")
    if info.st_mode & 0o077:
        raise InputError("callers.insecure_permissions",
                         f"{path} is readable by others (mode {info.st_mode & 0o777:o}); it holds "
                         f"keys: chmod 600 {path}")
    if info.st_size > MAX_FILE:
        raise _bad(path, f"larger than {MAX_FILE} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"), object_pairs_hook=_unique)
    except OSError as error:
        raise InputError("input.unreadable", f"cannot read {path}: {error.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise _bad(path, f"not a JSON document ({str(error)[:80]})") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise _bad(path, f"not a callers file (kind must be {KIND!r})")
    callers = data.get("callers")
    if not isinstance(callers, dict):
        raise _bad(path, "'callers' must be an object of caller id -> {key, added}")
    for agent_id, entry in callers.items():
        if not CALLER_ID.fullmatch(agent_id):
            raise _bad(path, f"caller id {agent_id[:60]!r} is not 1-128 of A-Z a-z 0-9 _ . : @ -")
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) \
                or not _KEY.fullmatch(entry["key"]):
            raise _bad(path, f"caller {agent_id}: 'key' must be 32-512 printable characters")
    return callers


def _write(path: Path, callers: dict[str, dict[str, Any]]) -> None:
    write_private_json(path, {"kind": KIND, "callers": callers})


def _locked(path: Path) -> Any:
    return folder_lock(path.parent, f".{path.name}.lock")


def add_caller(path: Path, agent_id: str, *, replace: bool = False,
               new_key: Callable[[], str] = lambda: secrets.token_hex(32),
               now: Callable[[], float] = time.time) -> str:
    """Register ``agent_id`` with a fresh key and return the key (the only time it is shown).

    ``callers.exists`` (exit 2) when it is registered already, unless ``replace``
    (which rotates its key: the old one stops working at once).
    """
    check_caller_id(agent_id)
    with _locked(path):
        callers = read_callers(path)
        if agent_id in callers and not replace:
            raise InputError("callers.exists", f"{agent_id} is registered already; "
                             "--replace gives it a new key (the old one stops working)")
        key = new_key()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now()))
        callers[agent_id] = {"key": key, "added": stamp}
        _write(path, callers)
    return key


def remove_caller(path: Path, agent_id: str) -> None:
    """Forget ``agent_id`` (its key stops working); ``callers.unknown`` if it is not there."""
    with _locked(path):
        callers = read_callers(path)
        if agent_id not in callers:
            raise InputError("callers.unknown", f"no caller {agent_id[:60]!r} in {path}")
        del callers[agent_id]
        _write(path, callers)


def list_callers(path: Path) -> list[dict[str, str]]:
    """Registered callers, without their keys."""
    return [{"agent_id": agent_id, "added": str(entry.get("added", ""))}
            for agent_id, entry in sorted(read_callers(path).items())]


class CallerBook:
    """The keys a server checks signatures with, re-read when the file changes.

    ``key_for(agent_id)`` is what :class:`lingxi.wire.ReceivePipeline` asks:
    the caller's key as bytes, or None for an unknown caller
    (``envelope.bad_sender``). ``refuse`` names agent ids that may never call
    (the server's own id: a reply must never pass as a request).
    """

    def __init__(self, path: Path, *, refuse: frozenset[str] = frozenset()) -> None:
        self.path = path
        self.refuse = refuse
        self._keys: dict[str, bytes] = {}
        self._stamp: tuple[int, int, int] | None = None
        self.reload(strict=True)

    def _current_stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def reload(self, *, strict: bool = False) -> None:
        """Read the file again; ``strict`` raises a broken file, otherwise it is logged."""
        stamp = self._current_stamp()
        try:
            callers = read_callers(self.path)
        except LingxiError as error:
            if strict:
                raise
            log.warning("keeping the previous callers: %s", error)
            self._stamp = stamp
            return
        self._keys = {agent_id: entry["key"].encode("ascii")
                      for agent_id, entry in callers.items() if agent_id not in self.refuse}
        self._stamp = stamp

    def key_for(self, agent_id: str) -> bytes | None:
        if self._current_stamp() != self._stamp:
            self.reload()
        return self._keys.get(agent_id)

    def __len__(self) -> int:
        return len(self._keys)
