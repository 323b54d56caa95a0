"""Make signed (optionally sealed) envelopes for one sender/receiver pair.

Drivers hand it payloads; it fills id, timestamp, type (``<prefix>:<action>``),
conversation id and signature. Clock, id factory and nonce source are injected
so tests are deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_string
from typing import Any

from lingxi.wire.aead import aead_cipher, seal_envelope
from lingxi.wire.envelope import WIRE_VERSION, AgentEndpoint, Envelope, json_string
from lingxi.wire.signature import DEFAULT_ALGORITHM, as_key, compute_signature, keyed_hmac
from lingxi.wire.timefmt import format_rfc3339

_RANDOM_POOL: list[str] = []


def _uuid4(h: str) -> str:
    """32 random hex digits as a version 4 UUID string."""
    variant = "89ab"[int(h[16], 16) & 3]
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"


def random_id() -> str:
    """A random (version 4) UUID string; 256 ids are drawn and formatted at a time."""
    if not _RANDOM_POOL:
        block = os.urandom(16 * 256).hex()
        _RANDOM_POOL.extend(_uuid4(block[i:i + 32]) for i in range(0, len(block), 32))
    return _RANDOM_POOL.pop()


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
        self._template: tuple[tuple[Any, ...], Any, bytes, bytes, bytes] | None = None
        self._aead: tuple[bytes, Any] | None = None  # (aead_key, its cipher), this builder's own

    def _session_template(self) -> tuple[Any, bytes, bytes, bytes]:
        """What every plaintext envelope of this builder shares, computed once.

        The keyed HMAC, the signed ``sender|receiver|`` prefix, and the frame's
        constant JSON around the per-message fields (with and without ``reply_to``).
        Recomputed if a field it depends on was reassigned.
        """
        inputs = (self.sender, self.receiver, self.key, self.algorithm, self.conversation_id,
                  self.group_id, self.version)
        cached = self._template
        if cached is not None and cached[0] == inputs:
            return cached[1:]
        mac = keyed_hmac(self.key, self.algorithm)
        receiver_id = self.receiver.agent_id if self.receiver is not None else ""
        head = f"{self.sender.agent_id}|{receiver_id}|".encode()

        def frame(with_reply_to: bool) -> bytes:
            def const(value: bytes) -> bytes:
                return value.replace(b"%", b"%%")
            fields: list[tuple[str, bytes]] = [
                ("id", b"%s"), ("payload", b"%s"), ("sender", const(self.sender.canonical())),
                ("signature", b'"%s"'), ("timestamp", b'"%s"'), ("type", b"%s"),
                ("signature_algorithm", const(json_string(self.algorithm))),
                ("version", const(json_string(self.version)))]
            if self.conversation_id is not None:
                fields.append(("conversation_id", const(json_string(self.conversation_id))))
            if self.group_id is not None:
                fields.append(("group_id", const(json_string(self.group_id))))
            if self.receiver is not None:
                fields.append(("receiver", const(self.receiver.canonical())))
            if with_reply_to:
                fields.append(("reply_to", b"%s"))
            fields.sort()
            return b"{" + b",".join(b'"%s":%s' % (name.encode(), value)
                                    for name, value in fields) + b"}"

        self._template = (inputs, mac, head, frame(False), frame(True))
        return self._template[1:]

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
        env_id = self.id_factory()
        timestamp = format_rfc3339(self.clock())
        env = Envelope._from_state({
            "id": env_id, "type": type, "sender": self.sender, "payload": payload,
            "timestamp": timestamp, "version": self.version,
            "receiver": self.receiver, "correlation_id": correlation_id, "reply_to": reply_to,
            "group_id": self.group_id, "conversation_id": self.conversation_id, "ttl": ttl,
            "broadcast": broadcast, "encrypt": None, "signature": None,
            "signature_algorithm": self.algorithm,
            "_payload_json": None, "_instant": None, "_wire": None, "_bytes": None,
        })
        state = env.__dict__  # ``env`` is ours alone until returned: finish it in place
        if encrypt:
            if self.aead_key is None:
                raise ValueError("encrypt=True needs the builder's aead_key")
            cached = self._aead
            if cached is None or cached[0] is not self.aead_key:
                cached = self._aead = (self.aead_key, aead_cipher(self.aead_key))
            env = seal_envelope(env, cached[1], self.nonce_factory)
            env.__dict__["signature"] = compute_signature(env, self.key, self.algorithm,
                                                          keyed=self._session_template()[0])
            return env
        mac, head, plain_frame, reply_frame = self._session_template()
        payload_json = env.payload_json()
        mac = mac.copy()
        mac.update(head + timestamp.encode() + b"|" + payload_json)
        signature = state["signature"] = mac.hexdigest()
        if broadcast is None and correlation_id is None and ttl is None:
            values = (_encode_string(env_id).encode(), payload_json, signature.encode(),
                      timestamp.encode(), _encode_string(type).encode())
            if reply_to is None:
                state["_bytes"] = plain_frame % values
            else:
                state["_bytes"] = reply_frame % (*values[:2], _encode_string(reply_to).encode(),
                                                 *values[2:])
        return env
