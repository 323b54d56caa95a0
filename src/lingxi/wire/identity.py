"""This agent's long-term Ed25519 identity key, kept under ``$LINGXI_HOME/identity``.

Files: ``ed25519.key`` (PKCS#8 PEM, mode 0600) and ``identity.json`` (public
key, agent id, creation time). The folder is created 0700 on first use. A key
file readable by group or others is refused, as ssh does.
The agent id is ``lx-`` + the first 16 hex characters of SHA-256(public key).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

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
        raw = private_key.public_key().public_bytes(serialization.Encoding.Raw,
                                                    serialization.PublicFormat.Raw)
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
        return ((directory or identity_dir()) / KEY_FILE).exists()

    @classmethod
    def load(cls, directory: Path | None = None) -> Identity:
        folder = directory or identity_dir()
        key_path = folder / KEY_FILE
        if not key_path.exists():
            raise IdentityError("identity.missing",
                                f"no identity at {folder}; run `lingxi identity init`")
        mode = key_path.stat().st_mode & 0o777
        if mode & 0o077:
            raise IdentityError("identity.insecure_permissions",
                                f"{key_path} is readable by others (mode {mode:o}); "
                                f"run chmod 600 {key_path}")
        try:
            key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        except (ValueError, TypeError) as error:
            raise IdentityError("identity.corrupt", f"{key_path} is not a PEM key: {error}"
                                ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError("identity.corrupt", f"{key_path} is not an Ed25519 key")
        created = None
        try:
            created = json.loads((folder / INFO_FILE).read_text(encoding="utf-8")).get("created")
        except (OSError, ValueError, AttributeError):
            pass
        return cls(key, created=created, path=folder)

    @classmethod
    def load_or_create(cls, directory: Path | None = None,
                       clock: Callable[[], float] = time.time) -> tuple[Identity, bool]:
        """The stored identity, creating it first if there is none; ``(identity, created)``."""
        folder = directory or identity_dir()
        if (folder / KEY_FILE).exists():
            return cls.load(folder), False
        identity = cls.generate()
        identity.created = format_rfc3339(clock())
        try:
            identity.save(folder)
        except FileExistsError:  # another process created it first
            return cls.load(folder), False
        return identity, True

    def save(self, directory: Path | None = None) -> None:
        """Write the key (0600, never overwriting) and its public description."""
        folder = directory or identity_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(folder, 0o700)
        pem = self._private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())
        fd = os.open(folder / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        self.path = folder
        info = {k: v for k, v in self.to_dict().items() if k != "path"}
        (folder / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
