"""Make signed (optionally sealed) envelopes for one sender/receiver pair.

Drivers hand it payloads; it fills id, timestamp, type (``<prefix>:<action>``),
conversation id and signature. Clock, id factory and nonce source are injected
so tests are deterministic.
"""

from __future__ import annotations

import os
from binascii import b2a_base64
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_string
from typing import Any

from lingxi.wire.aead import AEAD_ALGORITHM, NONCE_BYTES, aead_cipher, sealed_payload
from lingxi.wire.envelope import WIRE_VERSION, AgentEndpoint, Envelope, canonical_bytes, json_string
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.signature import DEFAULT_ALGORITHM, as_key, keyed_hmac
from lingxi.wire.timefmt import format_rfc3339

_RANDOM_POOL: list[str] = []
_Template = tuple[Any, bytes, dict[tuple[bool, bool, bool], bytes]]
# the fields the per-session template (and the cipher) are made from: assigning one drops them
_TEMPLATE_FIELDS = frozenset({"sender", "receiver", "key", "algorithm", "conversation_id",
                              "group_id", "version", "aead_key"})
_SEALED_OPEN = b'{"alg":"%s","ciphertext":"' % AEAD_ALGORITHM.encode()


def uuid4_text(h: str) -> str:
    """32 random hex digits as a version 4 UUID string: ``str(uuid.UUID(hex=h, version=4))``,
    without importing :mod:`uuid` (and :mod:`platform` with it) at start-up."""
    variant = "89ab"[int(h[16], 16) & 3]
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"


def random_id() -> str:
    """A random (version 4) UUID string; 256 ids are drawn and formatted at a time."""
    if not _RANDOM_POOL:
        block = os.urandom(16 * 256).hex()
        _RANDOM_POOL.extend(uuid4_text(block[i:i + 32]) for i in range(0, len(block), 32))
    return _RANDOM_POOL.pop()


_NONCE_POOL: list[bytes] = []


def random_nonce(size: int) -> bytes:
    """``os.urandom(size)``; 12-byte nonces are drawn 256 at a time (one system call
    for 256 messages: a sealed session draws one per envelope). A nonce travels in
    the clear, so the pool holds nothing secret."""
    if size == NONCE_BYTES:
        try:
            return _NONCE_POOL.pop()
        except IndexError:
            block = os.urandom(NONCE_BYTES * 256)
            _NONCE_POOL.extend(block[i:i + NONCE_BYTES] for i in range(0, len(block), NONCE_BYTES))
    return os.urandom(size)


def _forget_pools() -> None:
    """A child process must not reuse the parent's ids or nonces."""
    _RANDOM_POOL.clear()
    _NONCE_POOL.clear()


os.register_at_fork(after_in_child=_forget_pools)


class EnvelopeBuilder:
    def __init__(self, sender: AgentEndpoint, receiver: AgentEndpoint | None,
                 key: bytes | str, *, clock: Callable[[], float],
                 id_factory: Callable[[], str] = random_id,
                 conversation_id: str | None = None, prefix: str = "p2p",
                 algorithm: str = DEFAULT_ALGORITHM, aead_key: bytes | None = None,
                 nonce_factory: Callable[[int], bytes] = random_nonce,
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
        self._template: _Template | None = None
        self._aead: Any = None  # the cipher of aead_key, this builder's own

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _TEMPLATE_FIELDS:  # a field the template or the cipher is made from
            object.__setattr__(self, "_template", None)
            object.__setattr__(self, "_aead", None)

    def _session_template(self) -> _Template:
        """What every envelope of this builder shares, computed once.

        The keyed HMAC, the signed ``sender|receiver|`` prefix, and the constant
        JSON around the per-message fields: of the whole envelope and of a sealed
        one's header, keyed by ``(with reply_to, sealed, whole)``. Made again after
        a field it depends on was reassigned (``__setattr__`` drops it).
        """
        cached = self._template
        if cached is not None:
            return cached
        mac = keyed_hmac(self.key, self.algorithm)
        receiver_id = self.receiver.agent_id if self.receiver is not None else ""
        head = f"{self.sender.agent_id}|{receiver_id}|".encode()

        def const(value: bytes) -> bytes:
            return value.replace(b"%", b"%%")

        def frame(with_reply_to: bool, sealed: bool, whole: bool) -> bytes:
            """Placeholders, in key order: id, [payload], [reply_to], [signature],
            timestamp, type."""
            fields: list[tuple[str, bytes]] = [
                ("id", b"%s"), ("sender", const(self.sender.canonical())),
                ("timestamp", b'"%s"'), ("type", b"%s"),
                ("version", const(json_string(self.version)))]
            if whole:
                fields += [("payload", b"%s"), ("signature", b'"%s"'),
                           ("signature_algorithm", const(json_string(self.algorithm)))]
            if sealed:
                fields.append(("encrypt", b"true"))
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

        frames = {(reply, sealed, whole): frame(reply, sealed, whole)
                  for reply in (False, True) for sealed in (False, True)
                  for whole in (False, True)}
        self._template = (mac, head, frames)
        return self._template

    def _cipher(self) -> Any:
        cipher = self._aead
        if cipher is None:
            if self.aead_key is None:
                raise ValueError("encrypt=True needs the builder's aead_key")
            cipher = self._aead = aead_cipher(self.aead_key)
        return cipher

    def _state(self, payload: dict[str, Any], type: str | None, reply_to: str | None,
               correlation_id: str | None, ttl: int | None,
               broadcast: bool | None) -> dict[str, Any]:
        """The fields of a new plaintext envelope, unsigned."""
        if type is None:
            action = payload.get("action")
            if not isinstance(action, str):
                raise ValueError("payload needs a string 'action' (or pass type=)")
            type = f"{self.prefix}:{action}"
        return {
            "id": self.id_factory(), "type": type, "sender": self.sender, "payload": payload,
            "timestamp": format_rfc3339(self.clock()), "version": self.version,
            "receiver": self.receiver, "correlation_id": correlation_id, "reply_to": reply_to,
            "group_id": self.group_id, "conversation_id": self.conversation_id, "ttl": ttl,
            "broadcast": broadcast, "encrypt": None, "signature": None,
            "signature_algorithm": self.algorithm,
            "_payload_json": None, "_instant": None, "_wire": None, "_bytes": None,
        }

    def build(self, payload: dict[str, Any], *, type: str | None = None,
              reply_to: str | None = None, correlation_id: str | None = None,
              ttl: int | None = None, encrypt: bool = False,
              broadcast: bool | None = None) -> Envelope:
        """A signed envelope carrying ``payload`` (sealed first when ``encrypt``)."""
        state = self._state(payload, type, reply_to, correlation_id, ttl, broadcast)
        if encrypt:
            return self._seal(state)[0]
        env = Envelope._from_state(state)  # ours alone until returned: finish it in place
        mac, head, frames = self._session_template()
        payload_json = env.payload_json()
        timestamp = state["timestamp"].encode()
        signature = state["signature"] = mac.hexdigest(head + timestamp + b"|" + payload_json)
        if broadcast is None and correlation_id is None and ttl is None:
            state["_bytes"] = self._fill(frames, state, False, True, payload_json, signature)
        return env

    def build_sealed(self, payload: dict[str, Any], *, type: str | None = None,
                     reply_to: str | None = None, correlation_id: str | None = None,
                     ttl: int | None = None,
                     broadcast: bool | None = None) -> tuple[Envelope, Envelope]:
        """Seal, sign and serialise ``payload`` in one pass.

        Returns the sealed envelope (``to_bytes()`` is what travels) and its opened
        twin, the form both sides record: the plaintext payload, ``encrypt: true``,
        the sealed form's signature, and ``wire`` = the sealed envelope's bytes.
        """
        return self._seal(self._state(payload, type, reply_to, correlation_id, ttl, broadcast))

    def build_sealed_opened(self, payload: dict[str, Any], *, type: str | None = None,
                            reply_to: str | None = None) -> Envelope:
        """The opened twin of :meth:`build_sealed` alone, for an envelope without
        correlation id, ttl or broadcast (what a session channel sends): ``wire`` is
        what travels. The same bytes in fewer steps: no field dict is filled twice,
        no sealed envelope object is made (a test holds both equal)."""
        mac, head, frames = self._template or self._session_template()
        cipher = self._aead or self._cipher()
        if type is None:
            action = payload.get("action")
            if not isinstance(action, str):
                raise ValueError("payload needs a string 'action' (or pass type=)")
            type = f"{self.prefix}:{action}"
        env_id = self.id_factory()
        timestamp = format_rfc3339(self.clock())
        try:
            payload_json = canonical_bytes(payload)
        except (ValueError, TypeError, RecursionError) as error:
            raise EnvelopeError("envelope.malformed", f"payload is not JSON-encodable: {error}",
                                path="$.payload") from None
        nonce = self.nonce_factory(NONCE_BYTES)
        if len(nonce) != NONCE_BYTES:
            raise ValueError("nonce_factory must return 12 bytes")
        id_json, stamp = _encode_string(env_id).encode(), timestamp.encode()
        type_json = _encode_string(type).encode()
        if reply_to is None:
            header = frames[(False, True, False)] % (id_json, stamp, type_json)
        else:
            reply_json = _encode_string(reply_to).encode()
            header = frames[(True, True, False)] % (id_json, reply_json, stamp, type_json)
        sealed_json = b'%s%s","nonce":"%s"}' % (
            _SEALED_OPEN, b2a_base64(cipher.encrypt(nonce, payload_json, header), newline=False),
            nonce.hex().encode())
        signature = mac.hexdigest(head + stamp + b"|" + sealed_json)
        if reply_to is None:
            wire = frames[(False, True, True)] % (id_json, sealed_json, signature.encode(),
                                                  stamp, type_json)
        else:
            wire = frames[(True, True, True)] % (id_json, sealed_json, reply_json,
                                                 signature.encode(), stamp, type_json)
        return Envelope._from_state({
            "id": env_id, "type": type, "sender": self.sender, "payload": payload,
            "timestamp": timestamp, "version": self.version, "receiver": self.receiver,
            "correlation_id": None, "reply_to": reply_to, "group_id": self.group_id,
            "conversation_id": self.conversation_id, "ttl": None, "broadcast": None,
            "encrypt": True, "signature": signature, "signature_algorithm": self.algorithm,
            "_payload_json": payload_json, "_instant": None, "_wire": wire, "_bytes": None,
        })

    @staticmethod
    def _fill(frames: dict[tuple[bool, bool, bool], bytes], state: dict[str, Any],
              sealed: bool, whole: bool, payload_json: bytes = b"",
              signature: str = "") -> bytes:
        """A template of :meth:`_session_template` filled with ``state``'s own fields."""
        reply_to = state["reply_to"]
        values: tuple[bytes, ...] = (_encode_string(state["id"]).encode(),)
        if whole:
            values += (payload_json,)
        if reply_to is not None:
            values += (_encode_string(reply_to).encode(),)
        if whole:
            values += (signature.encode(),)
        values += (state["timestamp"].encode(), _encode_string(state["type"]).encode())
        return frames[(reply_to is not None, sealed, whole)] % values

    def _seal(self, state: dict[str, Any]) -> tuple[Envelope, Envelope]:
        """The sealed, signed envelope of the plaintext ``state`` and its opened twin.

        The payload's canonical JSON, the header's and the sealed payload's are
        each computed once; no intermediate envelope is made. Tests hold the
        result equal to ``seal_envelope`` + ``compute_signature`` + ``to_bytes``.
        """
        cipher = self._cipher()
        mac, head, frames = self._session_template()
        env = Envelope._from_state(state)
        payload_json = env.payload_json()
        state["encrypt"] = True
        nonce = self.nonce_factory(NONCE_BYTES)
        if len(nonce) != NONCE_BYTES:
            raise ValueError("nonce_factory must return 12 bytes")
        templated = state["broadcast"] is None and state["correlation_id"] is None \
            and state["ttl"] is None
        header = self._fill(frames, state, True, False) if templated else env.header_bytes()
        sealed, sealed_json = sealed_payload(nonce, cipher.encrypt(nonce, payload_json, header))
        signature = mac.hexdigest(head + state["timestamp"].encode() + b"|" + sealed_json)
        opened = dict(state)
        opened["signature"] = signature
        state.update(payload=sealed, _payload_json=sealed_json, signature=signature)
        if templated:
            state["_bytes"] = self._fill(frames, state, True, True, sealed_json, signature)
        opened["_wire"] = env.to_bytes()
        return env, Envelope._from_state(opened)
