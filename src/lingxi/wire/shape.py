"""A session's sealed envelopes read by one regular expression instead of a JSON parser.

Every sealed envelope one peer's :class:`~lingxi.wire.builder.EnvelopeBuilder`
sends in a session is the same canonical JSON around a few varying fields:
the endpoints, conversation id, version and algorithm never change, and id,
nonce, ciphertext, reply_to, signature, timestamp and type are plain ASCII.
:class:`SealedShape` is learnt from one envelope the receive pipeline
accepted and matches later bytes against that exact form. A match is an
envelope the general parser would read to the very same fields (no escapes,
no repeated key, no whitespace: nothing in the form allows them), so the
pipeline skips the JSON decoder, the duplicate-key hook and the field checks
the form already guarantees. Anything else — another spelling, an optional
field, a group message, a timestamp the fast reader does not take — returns
``None`` and goes through :meth:`Envelope.parse`, which raises the typed error.
Tests compare both readers on generated and altered envelopes.
"""

from __future__ import annotations

import re
from typing import Any

from lingxi.wire.envelope import AgentEndpoint, Envelope, json_string
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.timefmt import parse_rfc3339

_ALG = b"ChaCha20-Poly1305"
# every character class below excludes '"' and '\\': a match has no JSON escape in it
_UUID = rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_REPLY_TO = rb"[\x20\x21\x23-\x5b\x5d-\x7e]{1,256}"  # printable ASCII: one byte per character
_TIMESTAMP = rb"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z"
_TYPE = rb"(?:p2p|caller):[A-Za-z0-9_.:-]{1,128}"  # point-to-point prefixes: a receiver is named


class SealedShape:
    """The exact form of one peer's sealed envelopes in one session (see the module doc)."""

    def __init__(self, sender: AgentEndpoint, receiver: AgentEndpoint, conversation_id: str,
                 version: str, algorithm: str, signature_hex: int) -> None:
        self.sender, self.receiver = sender, receiver
        self.conversation_id, self.version, self.algorithm = conversation_id, version, algorithm
        # the constant pieces, in key order, between the varying fields
        head = b'{"conversation_id":' + json_string(conversation_id) + b',"encrypt":true,"id":"'
        to_receiver = b'","receiver":' + receiver.canonical()
        to_sender = b',"sender":' + sender.canonical()
        to_type = b'","type":"'
        end = b'","version":' + json_string(version) + b"}"
        pattern = (re.escape(head) + b"(" + _UUID + b")"
                   + re.escape(b'","payload":')
                   + b"(" + re.escape(b'{"alg":"' + _ALG + b'","ciphertext":"')
                   + rb"([A-Za-z0-9+/]*={0,2})" + re.escape(b'","nonce":"') + rb"([0-9a-f]{24})"
                   + re.escape(b'"}') + b")"
                   + re.escape(to_receiver[1:])
                   + rb'(?:,"reply_to":"(' + _REPLY_TO + rb')")?'
                   + re.escape(to_sender + b',"signature":"')
                   + b"([0-9a-f]{%d})" % signature_hex
                   + re.escape(b'","signature_algorithm":' + json_string(algorithm)
                               + b',"timestamp":"')
                   + b"(" + _TIMESTAMP + b")" + re.escape(to_type) + b"(" + _TYPE + b")"
                   + re.escape(end))
        self.fullmatch = re.compile(pattern, re.ASCII).fullmatch
        self._pieces = (head, to_receiver, to_sender + b',"timestamp":"', to_type, end)
        self.signed_head = f"{sender.agent_id}|{receiver.agent_id}|".encode()  # signed first

    @classmethod
    def learn(cls, env: Envelope, *, sender: object = None,
              receiver: object = None) -> SealedShape | None:
        """The shape of ``env`` (a sealed envelope as parsed, before opening), or ``None``
        when its form is not one the shape covers. ``sender``/``receiver``: endpoint
        objects the caller compares envelopes with; when equal to ``env``'s, envelopes
        read through the shape carry those very objects (compared by identity)."""
        if not (env.encrypt is True and env.receiver is not None and env.conversation_id
                and env.signature_algorithm and env.signature is not None
                and env.correlation_id is None and env.group_id is None and env.ttl is None
                and env.broadcast is None and env.prefix in ("p2p", "caller")
                and len(env.signature) in (64, 128)):
            return None
        own_sender = sender if isinstance(sender, AgentEndpoint) and sender == env.sender \
            else env.sender
        own_receiver = receiver if isinstance(receiver, AgentEndpoint) \
            and receiver == env.receiver else env.receiver
        return cls(own_sender, own_receiver, env.conversation_id, env.version,
                   env.signature_algorithm, len(env.signature))

    def parse(self, data: bytes) -> tuple[Envelope, bytes] | None:
        """The envelope in ``data`` and its header's canonical JSON (the sealed payload's
        associated data), or ``None``: "use the general parser"."""
        match = self.fullmatch(data)
        if match is None:
            return None
        env_id, payload_json, ciphertext, nonce, reply_to, signature, timestamp, kind = \
            match.groups()
        try:
            instant = parse_rfc3339(timestamp.decode())
        except EnvelopeError:
            return None  # the general parser raises it, with its own message
        header = self.header(env_id, reply_to, timestamp, kind)
        state: dict[str, Any] = {
            "id": env_id.decode(), "type": kind.decode(), "sender": self.sender,
            "payload": {"alg": ALG_TEXT, "ciphertext": ciphertext.decode(),
                        "nonce": nonce.decode()},
            "timestamp": timestamp.decode(), "version": self.version, "receiver": self.receiver,
            "correlation_id": None,
            "reply_to": None if reply_to is None else reply_to.decode(), "group_id": None,
            "conversation_id": self.conversation_id, "ttl": None, "broadcast": None,
            "encrypt": True, "signature": signature.decode(),
            "signature_algorithm": self.algorithm, "_payload_json": payload_json,
            "_instant": instant, "_wire": data, "_bytes": None,
        }
        return Envelope._from_state(state), header

    def header(self, env_id: bytes, reply_to: bytes | None, timestamp: bytes,
               kind: bytes) -> bytes:
        """The canonical JSON of the header of a matched envelope (the fields as matched):
        the sealed payload's associated data."""
        head, to_receiver, to_time, to_type, end = self._pieces
        if reply_to is None:
            return b"".join((head, env_id, to_receiver, to_time, timestamp, to_type, kind, end))
        return b"".join((head, env_id, to_receiver, b',"reply_to":"', reply_to, b'"',
                         to_time, timestamp, to_type, kind, end))


ALG_TEXT = _ALG.decode()
