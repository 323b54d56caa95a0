"""UI bundles: immutable, content-addressed, size-capped static files for a protocol.

A bundle is a set of ``{path, content}`` files. Its id is SHA-256 of the
canonical JSON manifest ``{path: sha256(content)}``, so the same files always
give the same id and a stored bundle can never change. Only static web assets
are accepted; anything the agent's machine could execute (Python, shell,
binaries, scripts for other interpreters) is refused by extension and by
content (a ``#!`` line, ELF, Mach-O, PE, Python bytecode, archives).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.registry.errors import RegistryError

MAX_BUNDLE_BYTES = 1024 * 1024
MAX_FILE_BYTES = 512 * 1024
MAX_FILES = 64
ALLOWED = frozenset({".html", ".htm", ".css", ".js", ".mjs", ".json", ".svg", ".png", ".jpg",
                     ".jpeg", ".gif", ".webp", ".ico", ".txt", ".md", ".woff", ".woff2",
                     ".wasm", ".map"})
# Content that some program on the agent's machine would run or unpack.
MAGIC = (b"#!", b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf",
         b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"PK\x03\x04", b"\x1f\x8b")
PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*$")


def _refused(message: str, path: str | None = None) -> RegistryError:
    return RegistryError("registry.bundle_refused", message, status=422,
                         details={"path": path} if path else None)


def check_files(files: dict[str, bytes]) -> dict[str, Any]:
    """The manifest of a valid bundle; raise RegistryError naming the first bad file."""
    if not files:
        raise _refused("a bundle needs at least one file")
    if len(files) > MAX_FILES:
        raise _refused(f"a bundle holds at most {MAX_FILES} files")
    total = 0
    for path, content in sorted(files.items()):
        if (not PATH.match(path) or posixpath.normpath(path) != path or ".." in path.split("/")
                or len(path) > 200):
            raise _refused(f"{path!r} is not a plain relative path", path)
        extension = posixpath.splitext(path)[1].lower()
        if extension not in ALLOWED:
            raise _refused(f"{path}: only static web files are accepted, not "
                           f"{extension or 'a file without extension'}", path)
        if len(content) > MAX_FILE_BYTES:
            raise RegistryError("registry.bundle_too_large",
                                f"{path} is over {MAX_FILE_BYTES} bytes", status=413)
        if content.startswith(MAGIC) or (extension != ".wasm" and content.startswith(b"\0asm")):
            raise _refused(f"{path}: executable or archive content is refused", path)
        total += len(content)
    if total > MAX_BUNDLE_BYTES:
        raise RegistryError("registry.bundle_too_large",
                            f"the bundle is {total} bytes; at most {MAX_BUNDLE_BYTES}", status=413)
    manifest = {path: hashlib.sha256(content).hexdigest() for path, content in files.items()}
    return {"bundle_id": bundle_id(manifest), "files": manifest, "size": total}


def bundle_id(manifest: dict[str, str]) -> str:
    return sha256_hex(canonical_bytes(manifest))
