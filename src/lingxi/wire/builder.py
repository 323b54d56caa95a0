"""Make signed (optionally sealed) envelopes for one sender/receiver pair.

Drivers hand it payloads; it fills id, timestamp, type (``<prefix>:<action>``),
conversation id and signature. Clock, id factory and nonce source are injected
so tests are deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from lingxi.wire.aead import seal_envelope
from lingxi.wire.envelope import WIRE_VERSION, AgentEndpoint, Envelope
from lingxi.wire.signature import DEFAULT_ALGORITHM, as_key, compute_signature
from lingxi.wire.timefmt import format_rfc3339

_RANDOM_POOL: list[str] = []


def random_id() -> str:
    """A random (version 4) UUID string; randomness is fetched 256 ids at a time."""
    if not _RANDOM_POOL:
        block = os.urandom(16 * 256).hex()
        _RANDOM_POOL.extend(block[i:i + 32] for i in range(0, len(block), 32))
    h = _RANDOM_POOL.pop()
    variant = "89ab"[int(h[16], 16) & 3]
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"


os.register_at_fork(after_in_child=_RANDOM_POOL.clear)  # a child must not reuse the parent's ids


class EnvelopeBuilder:
    def __init__(self, sender: AgentEndpoint, receiver: AgentEndpoint | None,
                 key: bytes | str, *, clock: Callable[[], float],
                 id_factory: Callable[[], str] = random_id,
                 conversation_id: str | None = None, prefix: str = "p2p",
                 algorithm: str = DEFAULT_ALGORITHM, aead_key: bytes | None = None,
                 nonce_factory: Callable[[int], bytes] = os.urandom,
                 group_id: str | None = None, version: str = WIRE_VERSION) -> None:
        self.sender = sender
        self.receiver = receiver
        self.key = as_key(key)
        self.clock = clock
        self.id_factory = id_factory
        self.conversation_id = conversation_id
        self.prefix = prefix
        self.algorithm = algorithm
        self.aead_key = aead_key
        self.nonce_factory = nonce_factory
        self.group_id = group_id
        self.version = version

    def build(self, payload: dict[str, Any], *, type: str | None = None,
              reply_to: str | None = None, correlation_id: str | None = None,
              ttl: int | None = None, encrypt: bool = False,
              broadcast: bool | None = None) -> Envelope:
        """A signed envelope carrying ``payload`` (sealed first when ``encrypt``)."""
        if type is None:
            action = payload.get("action")
            if not isinstance(action, str):
                raise ValueError("payload needs a string 'action' (or pass type=)")
            type = f"{self.prefix}:{action}"
        env = Envelope._from_state({
            "id": self.id_factory(), "type": type, "sender": self.sender, "payload": payload,
            "timestamp": format_rfc3339(self.clock()), "version": self.version,
            "receiver": self.receiver, "correlation_id": correlation_id, "reply_to": reply_to,
            "group_id": self.group_id, "conversation_id": self.conversation_id, "ttl": ttl,
            "broadcast": broadcast, "encrypt": None, "signature": None,
            "signature_algorithm": self.algorithm,
            "_payload_json": None, "_instant": None, "_wire": None,
        })
        if encrypt:
            if self.aead_key is None:
                raise ValueError("encrypt=True needs the builder's aead_key")
            env = seal_envelope(env, self.aead_key, self.nonce_factory)
        # ``env`` is ours alone until returned, so sign it in place (no copy)
        env.__dict__["signature"] = compute_signature(env, self.key, self.algorithm)
        return env
