"""Signed registry requests: Ed25519 over method, path, timestamp, nonce and body hash.

Every mutating request carries four headers::

    X-Lingxi-Agent      lx-… (the signer's agent id)
    X-Lingxi-Timestamp  integer Unix seconds, as sent
    X-Lingxi-Nonce      32–64 lowercase hex, fresh per request
    X-Lingxi-Signature  128 lowercase hex: Ed25519 over :func:`signing_bytes`

The signed text binds the method, the path with its query, the timestamp, the
nonce and SHA-256 of the exact body bytes, so a captured request cannot be
replayed to another route, with another body, or (after the nonce window)
at all. The server remembers nonces for the length of its timestamp window;
a timestamp outside the window is refused as stale, so nothing older needs
remembering. A record keeps its signed request, which makes it checkable
offline by anyone holding the signer's public key.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any, Protocol

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import is_hex, verify

DOMAIN = b"lingxi/registry/request/v1"
AGENT, TIMESTAMP, NONCE, SIGNATURE = ("x-lingxi-agent", "x-lingxi-timestamp",
                                      "x-lingxi-nonce", "x-lingxi-signature")
HEADERS = (AGENT, TIMESTAMP, NONCE, SIGNATURE)
WINDOW_SECONDS = 300


class Signer(Protocol):
    agent_id: str
    public_hex: str

    def sign(self, data: bytes) -> bytes: ...


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def signing_bytes(method: str, path: str, timestamp: str, nonce: str, digest: str) -> bytes:
    """The exact bytes a request signature covers."""
    return b"\n".join([DOMAIN, method.upper().encode(), path.encode("utf-8"),
                       timestamp.encode(), nonce.encode(), digest.encode()])


def sign_request(signer: Signer, method: str, path: str, body: bytes, *,
                 now: float | None = None, nonce: str | None = None) -> dict[str, str]:
    """The four headers that sign this request as ``signer``."""
    timestamp = str(int(time.time() if now is None else now))
    nonce = nonce or os.urandom(16).hex()
    signature = signer.sign(signing_bytes(method, path, timestamp, nonce, body_hash(body)))
    return {AGENT: signer.agent_id, TIMESTAMP: timestamp, NONCE: nonce,
            SIGNATURE: signature.hex()}


@dataclass(frozen=True)
class SignedRequest:
    """What a record keeps of the request that created it."""

    agent_id: str
    method: str
    path: str
    timestamp: str
    nonce: str
    body_sha256: str
    signature: str

    def to_dict(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id, "method": self.method, "path": self.path,
                "timestamp": self.timestamp, "nonce": self.nonce,
                "body_sha256": self.body_sha256, "signature": self.signature}

    def verify(self, public_hex: str) -> bool:
        return verify(public_hex, bytes.fromhex(self.signature),
                      signing_bytes(self.method, self.path, self.timestamp, self.nonce,
                                    self.body_sha256))


def _refuse(code: str, message: str) -> RegistryError:
    return RegistryError(code, message, status=401)


def parse_signed(headers: Any, method: str, path: str, body: bytes, *, now: float,
                 window: int = WINDOW_SECONDS) -> SignedRequest:
    """Read and shape-check the signature headers (not yet the key or the nonce).

    Refuses a missing header (``registry.signature_missing``), a malformed one
    (``registry.signature_malformed``) and a timestamp outside ``window``
    (``registry.request_stale``).
    """
    values = {name: headers.get(name) for name in HEADERS}
    missing = [name for name, value in values.items() if not value]
    if missing:
        raise _refuse("registry.signature_missing",
                      f"this request must be signed; missing header {missing[0]}")
    agent, timestamp, nonce, signature = (values[h] for h in HEADERS)
    if not timestamp.isdigit() or len(timestamp) > 12:
        raise _refuse("registry.signature_malformed", "X-Lingxi-Timestamp is not Unix seconds")
    if not is_hex(nonce) or not 32 <= len(nonce) <= 64:
        raise _refuse("registry.signature_malformed", "X-Lingxi-Nonce is not 32-64 hex chars")
    if not is_hex(signature, 128):
        raise _refuse("registry.signature_malformed", "X-Lingxi-Signature is not 128 hex chars")
    if not (isinstance(agent, str) and agent.startswith("lx-") and is_hex(agent[3:], 16)):
        raise _refuse("registry.signature_malformed", "X-Lingxi-Agent is not an agent id")
    if abs(now - int(timestamp)) > window:
        raise _refuse("registry.request_stale",
                      f"the request timestamp is more than {window} s from the server's clock")
    return SignedRequest(agent, method.upper(), path, timestamp, nonce, body_hash(body),
                         signature)


def check_signature(request: SignedRequest, public_hex: str) -> None:
    if not request.verify(public_hex):
        raise _refuse("registry.signature_invalid",
                      "the request signature does not verify with the agent's key")
