"""Private local state written atomically: keys, session folders, receipts.

A reader must never see half a file, even when the disk fills up, the
process is killed, or two first runs race in one ``$LINGXI_HOME``. Every
write goes to a uniquely named temporary file in the target's own folder, is
flushed and fsynced, and is then renamed over the target (or hard-linked to
it when the target must not be replaced), and the folder is fsynced. Files
are created 0600 and folders 0700: the state is the user's alone. Failures
are :class:`~lingxi.errors.WriteFailed` (``io.write_failed``), never a raw
OSError. Stdlib-only; sits below every layer, like :mod:`lingxi.errors`.

Inside :func:`unsynced` (a self-play's own folders, which nobody else checks and one
command with the same seed makes again) the writes are as atomic as ever but not
fsynced: a reader still never sees half a file; only a power cut may lose them.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from lingxi.errors import WriteFailed

FILE_MODE = 0o600
DIR_MODE = 0o700
_SYNCED: ContextVar[bool] = ContextVar("lingxi_files_synced", default=True)


@contextlib.contextmanager
def unsynced() -> Iterator[None]:
    """Writes in this block (this thread or task only) are atomic but not fsynced."""
    token = _SYNCED.set(False)
    try:
        yield
    finally:
        _SYNCED.reset(token)


def _reason(error: OSError) -> str:
    return error.strerror or type(error).__name__


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` (and missing parents) and make it 0700; WriteFailed on failure."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.chmod(folder, DIR_MODE)
    except OSError as error:
        raise WriteFailed(f"cannot create folder {folder}: {_reason(error)}") from None
    return folder


_CREATE = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)  # as tempfile
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def _temporary(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """``tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)``: a new 0600 file of
    a random name, opened exclusively; :mod:`tempfile` itself would import :mod:`shutil`
    and with it bz2, lzma and zlib at every start (a twentieth of a ``protocol test``)."""
    for _ in range(100):
        name = "".join(_NAME_CHARS[b % 37] for b in os.urandom(8))
        path = os.path.join(folder, f"{prefix}{name}{suffix}")
        try:
            return os.open(path, _CREATE, FILE_MODE), os.path.abspath(path)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open folders; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_private(path: str | os.PathLike[str], data: bytes, *,
                  exclusive: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically as a 0600 file (its folder made 0700).

    With ``exclusive`` an existing file is never replaced: ``FileExistsError``
    is raised instead (and nothing is written), so concurrent creators agree on
    one winner. Every other failure is :class:`WriteFailed`.
    """
    target = Path(path)
    folder = private_dir(target.parent)
    synced = _SYNCED.get()
    tmp: str | None = None
    try:
        fd, tmp = _temporary(folder, f".{target.name}.", ".tmp")
        try:
            os.fchmod(fd, FILE_MODE)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if synced:
                os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            os.link(tmp, target)  # atomic create-if-absent; FileExistsError if present
        else:
            os.replace(tmp, target)
            tmp = None
        if synced:
            _fsync_dir(folder)
    except FileExistsError:
        raise
    except OSError as error:
        raise WriteFailed(f"cannot write {target}: {_reason(error)}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return target


def write_private_text(path: str | os.PathLike[str], text: str, *,
                       exclusive: bool = False) -> Path:
    """:func:`write_private` of ``text`` as UTF-8."""
    return write_private(path, text.encode("utf-8"), exclusive=exclusive)


def write_private_json(path: str | os.PathLike[str], value: Any, *, indent: int | None = 2,
                       exclusive: bool = False) -> Path:
    """:func:`write_private` of ``value`` as UTF-8 JSON with a final newline."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True,
                      allow_nan=False)
    return write_private(path, (text + "\n").encode("utf-8"), exclusive=exclusive)


def is_empty_or_absent(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` does not exist or holds 0 bytes (a write that never finished)."""
    try:
        return os.stat(path).st_size == 0
    except (FileNotFoundError, NotADirectoryError):  # or a file where its folder should be
        return True


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str], name: str = ".lock") -> Iterator[None]:
    """Hold an exclusive advisory lock on ``folder/name`` (created 0600) for the block.

    Used by first-run creators (an identity, a cache entry) so that two
    processes in one home do the work once. Where ``fcntl`` is missing the
    block runs unlocked; exclusive writes still keep the files whole.
    """
    base = private_dir(folder)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(base / name, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as error:
        raise WriteFailed(f"cannot create lock {base / name}: {_reason(error)}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
