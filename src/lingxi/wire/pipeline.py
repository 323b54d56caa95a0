"""What a receiver runs on every envelope, in order, each failure with its own code.

parse → version → required fields (``Envelope.parse``) → signature with the
sender's key → open ``encrypt: true`` payloads → type/payload binding →
timestamp window and TTL → replay guard → reply_to / correlation / conversation
/ sender / receiver / group expectations.

The clock is injected; nothing here touches sockets or the system time.
"""

from __future__ import annotations

import hmac
from binascii import a2b_base64, a2b_hex
from collections.abc import Callable
from typing import Any

from cryptography.exceptions import InvalidTag

from lingxi.wire.aead import aead_cipher, open_envelope
from lingxi.wire.envelope import PREFIXES, AgentEndpoint, Envelope, decode_json_strict
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.shape import SealedShape
from lingxi.wire.signature import KeyedHmac, as_key, keyed_hmac, verify_signature
from lingxi.wire.timefmt import parse_rfc3339

DEFAULT_WINDOW_SECONDS = 120.0
_PLAIN_PREFIXES = frozenset(PREFIXES)  # no ':' inside, so "<prefix>:<action>" splits back
_UNSET: Any = object()
_compare = hmac.compare_digest


def check_binding(env: Envelope, expect_prefix: str | None = "p2p") -> None:
    """``type`` must be ``<prefix>:<payload.action>``; the prefix must be the expected one."""
    if expect_prefix is not None and env.prefix != expect_prefix:
        raise EnvelopeError("envelope.type_mismatch",
                            f"expected a {expect_prefix}: message, got {env.type!r}", path="$.type")
    action = env.payload.get("action")
    if not isinstance(action, str):
        raise EnvelopeError("envelope.type_mismatch", "payload.action must be a string naming "
                            "the message type", path="$.payload.action")
    if env.name != action:
        raise EnvelopeError("envelope.type_mismatch",
                            f"type {env.type!r} does not match payload.action {action[:60]!r}",
                            path="$.type")


def check_time(env: Envelope, now: float, window_seconds: float) -> float:
    """Raise stale/expired; return the instant after which the envelope can no longer pass."""
    instant = env.instant
    if abs(now - instant) > window_seconds:
        raise EnvelopeError("envelope.stale",
                            f"timestamp is {now - instant:+.1f} s from the receiver's clock; "
                            f"the window is ±{window_seconds:g} s", path="$.timestamp")
    last = instant + window_seconds
    if env.ttl is not None:
        if now > instant + env.ttl:
            raise EnvelopeError("envelope.expired",
                                f"ttl of {env.ttl} s ran out {now - instant - env.ttl:.1f} s ago",
                                path="$.ttl")
        last = min(last, instant + env.ttl)
    return last


def _endpoint_matches(actual: AgentEndpoint | None, expected: AgentEndpoint | str) -> bool:
    if actual is None:
        return False
    if isinstance(expected, str):
        return actual.agent_id == expected
    return actual is expected or actual == expected


def check_expectations(env: Envelope, *, reply_to: str | None = None,
                       correlation_id: str | None = None, conversation_id: str | None = None,
                       sender: AgentEndpoint | str | None = None,
                       receiver: AgentEndpoint | str | None = None,
                       group_id: str | None = None) -> None:
    """Bind the unsigned correlation fields to what the caller is waiting for."""
    if reply_to is not None and env.reply_to != reply_to:
        raise EnvelopeError("envelope.bad_reply_to",
                            f"expected a reply to {reply_to}, got {env.reply_to}", path="$.reply_to")
    if correlation_id is not None and env.correlation_id != correlation_id:
        raise EnvelopeError("envelope.bad_correlation",
                            f"expected correlation_id {correlation_id}, got {env.correlation_id}",
                            path="$.correlation_id")
    if conversation_id is not None and env.conversation_id != conversation_id:
        raise EnvelopeError("envelope.bad_conversation",
                            f"expected conversation_id {conversation_id}, got {env.conversation_id}",
                            path="$.conversation_id")
    if sender is not None and not _endpoint_matches(env.sender, sender):
        raise EnvelopeError("envelope.bad_sender", "sender is not the expected peer",
                            path="$.sender")
    if receiver is not None and not _endpoint_matches(env.receiver, receiver):
        raise EnvelopeError("envelope.bad_receiver", "receiver is not this agent",
                            path="$.receiver")
    if group_id is not None and env.group_id != group_id:
        raise EnvelopeError("envelope.bad_group", f"expected group_id {group_id}",
                            path="$.group_id")


class ReceivePipeline:
    """Checks incoming envelopes from one or more senders.

    ``key_for`` is the HMAC key of every sender, or a function from
    ``sender.agent_id`` to its key (raise ``KeyError`` or return ``None`` for an
    unknown sender). ``aead_key`` opens ``encrypt: true`` payloads. The
    ``expect_*`` arguments set standing expectations (a session channel knows
    its peer, itself and its conversation id); ``accept`` can add more.
    """

    def __init__(self, key_for: Callable[[str], bytes | None] | bytes | str, *,
                 clock: Callable[[], float], window_seconds: float = DEFAULT_WINDOW_SECONDS,
                 replay_capacity: int = 100_000, replay_guard: ReplayGuard | None = None,
                 aead_key: bytes | None = None, expect_conversation_id: str | None = None,
                 expect_sender: AgentEndpoint | str | None = None,
                 expect_receiver: AgentEndpoint | str | None = None) -> None:
        self._fixed_key: bytes | None = None
        if isinstance(key_for, bytes | bytearray | str):
            fixed = as_key(key_for)
            self._key_for: Callable[[str], bytes | None] = lambda _agent: fixed
            if type(self).key_for is ReceivePipeline.key_for:
                self._fixed_key = fixed  # accept() may skip the lookup
        else:
            self._key_for = key_for
        if window_seconds <= 0:
            raise ValueError("window_seconds must be positive")
        self.clock = clock
        self.window_seconds = float(window_seconds)
        self.guard = replay_guard if replay_guard is not None else ReplayGuard(replay_capacity)
        self.aead_key = aead_key
        self.expect_conversation_id = expect_conversation_id
        self.expect_sender = expect_sender
        self.expect_receiver = expect_receiver
        # keyed HMACs of this pipeline's senders and its AEAD cipher: they live and die with it
        self._keyed: dict[tuple[bytes, str], KeyedHmac] = {}
        self._aead: tuple[bytes, Any] | None = None
        self._shape: SealedShape | None = None  # read the peer's sealed envelopes fast
        self._shape_mac: KeyedHmac | None = None  # the keyed HMAC of the shape's algorithm

    def key_for(self, agent_id: str) -> bytes:
        try:
            key = self._key_for(agent_id)
        except KeyError:
            key = None
        if key is None:
            raise EnvelopeError("envelope.bad_sender", f"no key for sender {agent_id[:60]!r}",
                                path="$.sender.agent_id")
        return as_key(key)

    def accept(self, data: bytes | bytearray | str | dict[str, Any] | Envelope, *,
               expect_prefix: str | None = "p2p", expect_reply_to: str | None = None,
               expect_correlation_id: str | None = None,
               expect_conversation_id: str | None = _UNSET,
               expect_group_id: str | None = None, check_clock: bool = True) -> Envelope:
        """The checked (and opened) envelope, or an :class:`EnvelopeError` with its code."""
        shape = self._shape
        if shape is not None and type(data) is bytes and check_clock \
                and expect_conversation_id is _UNSET and expect_reply_to is None \
                and expect_correlation_id is None and expect_group_id is None:
            env = self._accept_learnt(shape, data, expect_prefix)
            if env is not None:
                return env
        env, sealed, signature = self._verified(data, shape)
        action = env.payload.get("action")
        if not (type(action) is str and expect_prefix in _PLAIN_PREFIXES
                and env.type == expect_prefix + ":" + action):
            check_binding(env, expect_prefix)  # anything but the plain match: the full check
        if check_clock:
            last = check_time(env, self.clock(), self.window_seconds)
            self.guard.check_and_remember(signature or "", last, self.clock())
        self._check_expected(env, expect_reply_to, expect_correlation_id,
                             expect_conversation_id, expect_group_id)
        if shape is None and sealed is not None and type(data) is bytes:
            self._learn(sealed)
        return env

    def _verified(self, data: bytes | bytearray | str | dict[str, Any] | Envelope,
                  shape: SealedShape | None) -> tuple[Envelope, Envelope | None, str | None]:
        """The envelope read, its signature checked and, when sealed, opened: the opened
        envelope, the sealed one (None when it was not sealed) and the signature."""
        parsed = shape.parse(data) if shape is not None and type(data) is bytes else None
        header: bytes | None = None
        if parsed is not None:
            env, header = parsed
        else:
            env = _envelope_of(data)
        key = self._fixed_key
        verify_signature(env, key if key is not None else self.key_for(env.sender.agent_id),
                         keyed=self._keyed)
        if not env.encrypt:
            return env, None, env.signature
        return open_envelope(env, self._cipher(), header=header), env, env.signature

    def _check_expected(self, env: Envelope, reply_to: str | None, correlation_id: str | None,
                        conversation_id: str | None, group_id: str | None) -> None:
        """The expectations of this call and the pipeline's standing ones."""
        if conversation_id is _UNSET:
            conversation_id = self.expect_conversation_id
        asked = reply_to is not None or correlation_id is not None or group_id is not None
        if asked or not self._standing_hold(env, conversation_id):
            check_expectations(
                env, reply_to=reply_to, correlation_id=correlation_id,
                conversation_id=conversation_id, sender=self.expect_sender,
                receiver=self.expect_receiver, group_id=group_id)

    def _learn(self, sealed: Envelope) -> None:
        """The peer's form, from an accepted sealed envelope (its later ones are read in
        one pass, :meth:`_accept_learnt`)."""
        self._shape = SealedShape.learn(sealed, sender=self.expect_sender,
                                        receiver=self.expect_receiver)
        key = self._fixed_key
        if self._shape is not None and key is not None:
            self._shape_mac = keyed_hmac(key, self._shape.algorithm)

    def _accept_learnt(self, shape: SealedShape, data: bytes,
                       expect_prefix: str | None) -> Envelope | None:
        """:meth:`accept` of an envelope in the peer's learnt form, in one pass.

        The checks of the general path, on the fields as the form reads them:
        signature, opening, binding, window, standing expectations (the form fixes
        sender, receiver and conversation), then the replay guard. ``None`` as soon
        as any check does not pass, with nothing remembered: the general path then
        runs and raises the first failure with its code. So this path refuses
        nothing the general one accepts and accepts nothing it refuses (tests
        compare both on altered envelopes).
        """
        mac = self._shape_mac
        sender, receiver = self.expect_sender, self.expect_receiver
        conversation_id = self.expect_conversation_id
        if mac is None or (sender is not None and sender is not shape.sender) \
                or (receiver is not None and receiver is not shape.receiver) \
                or (conversation_id is not None and conversation_id != shape.conversation_id):
            return None
        match = shape.fullmatch(data)
        aead = self._aead
        cipher = aead[1] if aead is not None and aead[0] is self.aead_key else self._cipher()
        if match is None or cipher is None:
            return None
        env_id, payload_json, ciphertext, nonce, reply_to, signature, timestamp, kind = \
            match.groups()
        expected = mac.hexdigest(shape.signed_head + timestamp + b"|" + payload_json)
        if not _compare(expected.encode(), signature):
            return None
        try:
            plain = cipher.decrypt(a2b_hex(nonce), a2b_base64(ciphertext, strict_mode=True),
                                   shape.header(env_id, reply_to, timestamp, kind))
            payload = decode_json_strict(plain.decode())
            stamp = timestamp.decode()
            instant = parse_rfc3339(stamp)
        except (InvalidTag, ValueError, RecursionError, EnvelopeError):
            return None  # the general path raises it with its code
        action = payload.get("action") if type(payload) is dict else None
        kind_text = kind.decode()
        if type(action) is not str or expect_prefix not in _PLAIN_PREFIXES \
                or kind_text != expect_prefix + ":" + action:
            return None
        now = self.clock()
        window = self.window_seconds
        if abs(now - instant) > window:
            return None
        signature_text = signature.decode()
        self.guard.check_and_remember(signature_text, instant + window, now)
        return Envelope._from_state({
            "id": env_id.decode(), "type": kind_text, "sender": shape.sender,
            "payload": payload, "timestamp": stamp, "version": shape.version,
            "receiver": shape.receiver, "correlation_id": None,
            "reply_to": None if reply_to is None else reply_to.decode(), "group_id": None,
            "conversation_id": shape.conversation_id, "ttl": None, "broadcast": None,
            "encrypt": True, "signature": signature_text,
            "signature_algorithm": shape.algorithm, "_payload_json": None,
            "_instant": instant, "_wire": data, "_bytes": None,
        })

    def _cipher(self) -> Any:
        """The AEAD cipher of the current key (built once per key), None without a key."""
        if self.aead_key is None:
            return None
        cached = self._aead
        if cached is None or cached[0] is not self.aead_key:
            cached = self._aead = (self.aead_key, aead_cipher(self.aead_key))
        return cached[1]

    def _standing_hold(self, env: Envelope, conversation_id: str | None) -> bool:
        """The common case, checked without building errors: the standing expectations
        (conversation, sender, receiver) hold."""
        sender, receiver = self.expect_sender, self.expect_receiver
        return ((conversation_id is None or env.conversation_id == conversation_id)
                and (sender is None or env.sender is sender or env.sender == sender)
                and (receiver is None or env.receiver is receiver or env.receiver == receiver))


def _envelope_of(data: bytes | bytearray | str | dict[str, Any] | Envelope) -> Envelope:
    """Parse (or re-check) what arrived; an Envelope object is checked as its dict."""
    if type(data) is bytes:
        return Envelope.parse(data)
    if isinstance(data, Envelope):
        return Envelope.from_dict(data.to_dict())
    if isinstance(data, dict):
        return Envelope.from_dict(data)
    return Envelope.parse(data)
