"""This agent's long-term Ed25519 identity key, kept under ``$LINGXI_HOME/identity``.

Files: ``ed25519.key`` (PKCS#8 PEM, mode 0600) and ``identity.json`` (public
key, agent id, creation time). The folder is created 0700 on first use. A key
file readable by group or others is refused, as ssh does. Both files are
written atomically through :mod:`lingxi.files` (a full disk leaves no
half-written key), and a 0-byte key counts as no key.
The agent id is ``lx-`` + the first 16 hex characters of SHA-256(public key).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from lingxi.errors import WriteFailed
from lingxi.files import folder_lock, is_empty_or_absent, private_dir, write_private
from lingxi.home import identity_dir
from lingxi.wire.errors import IdentityError
from lingxi.wire.timefmt import format_rfc3339

KEY_FILE = "ed25519.key"
INFO_FILE = "identity.json"


def agent_id_for(public_hex: str) -> str:
    return "lx-" + hashlib.sha256(bytes.fromhex(public_hex)).hexdigest()[:16]


def verify_ed25519(public_hex: str, signature: bytes, data: bytes) -> bool:
    """True when ``signature`` is ``public_hex``'s Ed25519 signature of ``data``."""
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex)).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


class Identity:
    """An Ed25519 key pair with its derived agent id."""

    def __init__(self, private_key: Ed25519PrivateKey, created: str | None = None,
                 path: Path | None = None) -> None:
        self._private = private_key
        raw = private_key.public_key().public_bytes_raw()
        self.public_hex = raw.hex()
        self.agent_id = agent_id_for(self.public_hex)
        self.created = created
        self.path = path

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> Identity:
        """A deterministic identity from 32 bytes (tests, fixtures)."""
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    def sign(self, data: bytes) -> bytes:
        return self._private.sign(data)

    def to_dict(self) -> dict[str, str | None]:
        return {"agent_id": self.agent_id, "public_key": self.public_hex, "algorithm": "Ed25519",
                "created": self.created, "path": str(self.path) if self.path else None}

    # ---- persistence ---------------------------------------------------------
    @classmethod
    def exists(cls, directory: Path | None = None) -> bool:
        """Whether a key is stored; a 0-byte key (a write that never finished) is none."""
        return not is_empty_or_absent((directory or identity_dir()) / KEY_FILE)

    @classmethod
    def load(cls, directory: Path | None = None) -> Identity:
        folder = directory or identity_dir()
        key_path = folder / KEY_FILE
        if is_empty_or_absent(key_path):
            raise IdentityError("identity.missing",
                                f"no identity at {folder}; run `lingxi identity init`")
        mode = key_path.stat().st_mode & 0o777
        if mode & 0o077:
            raise IdentityError("identity.insecure_permissions",
                                f"{key_path} is readable by others (mode {mode:o}); "
                                f"run chmod 600 {key_path}")
        # for key files only: see save()
        from cryptography.hazmat.primitives import serialization

        try:
            key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        except (ValueError, TypeError) as error:
            raise IdentityError("identity.corrupt", f"{key_path} is not a PEM key: {error}"
                                ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError("identity.corrupt", f"{key_path} is not an Ed25519 key")
        created = None
        try:
            info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
            created = info.get("created") if isinstance(info.get("created"), str) else None
        except (OSError, ValueError, AttributeError, RecursionError):
            pass
        return cls(key, created=created, path=folder)

    @classmethod
    def load_or_create(cls, directory: Path | None = None,
                       clock: Callable[[], float] = time.time) -> tuple[Identity, bool]:
        """The stored identity, creating it first if there is none; ``(identity, created)``.

        Creation holds a lock in the folder, so concurrent first runs in one
        home make one key and all load it. A 0-byte key left by an earlier
        failed write counts as none and is replaced.
        """
        folder = directory or identity_dir()
        if cls.exists(folder):
            return cls.load(folder), False
        with folder_lock(folder):
            key_path = folder / KEY_FILE
            if cls.exists(folder):  # another process made it while we waited
                return cls.load(folder), False
            if key_path.exists():  # 0 bytes: never finished, holds no key
                try:
                    key_path.unlink()
                except OSError as error:
                    raise WriteFailed(f"cannot remove the empty key {key_path}: "
                                      f"{error.strerror or error}") from None
            identity = cls.generate()
            identity.created = format_rfc3339(clock())
            try:
                identity.save(folder)
            except FileExistsError:  # a process without the lock (older version) won
                return cls.load(folder), False
        return identity, True

    def save(self, directory: Path | None = None) -> None:
        """Write the key (0600, atomically, never overwriting) and its public description.

        Raises FileExistsError when a key is already stored, WriteFailed
        (``io.write_failed``) when the disk refuses; either way no partial key
        is ever visible.
        """
        # Imported here, for key files only: cryptography's serialization module loads
        # its RSA, DSA, EC and SSH support, which a session (raw Ed25519 keys) never uses.
        from cryptography.hazmat.primitives import serialization

        folder = private_dir(directory or identity_dir())
        pem = self._private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())
        write_private(folder / KEY_FILE, pem, exclusive=True)
        self.path = folder
        info = {k: v for k, v in self.to_dict().items() if k != "path"}
        write_private(folder / INFO_FILE, (json.dumps(info, indent=2) + "\n").encode("utf-8"))
