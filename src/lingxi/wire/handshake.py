"""The two-envelope handshake that opens a session (DESIGN.md "Sessions on the wire").

1. Guest → host ``p2p:handshake.hello``: its Ed25519 identity key, a fresh
   X25519 ephemeral key, a nonce, the host key it expects (or ""), and
   ``proof`` = Ed25519 signature over those and the envelope's sender and
   timestamp. The envelope HMAC uses the public constant ``HANDSHAKE_KEY``
   (integrity only; authenticity comes from the proof).
2. Host → guest ``p2p:handshake.welcome``: its identity key, ephemeral key,
   nonce and ``proof`` = Ed25519 signature over the transcript hash. This
   envelope is already HMAC-signed with the host→guest session key.

transcript = SHA-256("lingxi/wire/transcript/v1" ‖ len ‖ hello frame ‖ canonical(welcome core));
keys = HKDF-SHA256(X25519 shared secret, salt=transcript, info="lingxi/wire/keys/v1", 96 bytes)
→ guest→host HMAC key, host→guest HMAC key, ChaCha20-Poly1305 key.
session id = first 32 hex of SHA-256("lingxi/wire/session/v1" ‖ transcript).

Each side refuses a peer whose identity key differs from the expected one
before it reads anything else. The host keeps a replay guard over hello proofs
inside the timestamp window; a replayed hello could not use the session anyway
(it lacks the ephemeral private key), but it is refused outright.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from lingxi.canonical import canonical_bytes
from lingxi.wire.builder import EnvelopeBuilder, random_id
from lingxi.wire.envelope import AgentEndpoint, Envelope
from lingxi.wire.errors import HANDSHAKE_CODES, EnvelopeError, HandshakeError, TransportError
from lingxi.wire.identity import Identity, verify_ed25519
from lingxi.wire.pipeline import DEFAULT_WINDOW_SECONDS, ReceivePipeline
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.signature import sign_envelope
from lingxi.wire.timefmt import format_rfc3339
from lingxi.wire.transport import FrameTransport

HANDSHAKE_KEY = b"lingxi/wire/handshake/v1"
HELLO = "handshake.hello"
WELCOME = "handshake.welcome"
REFUSED = "handshake.refused"
DEFAULT_HANDSHAKE_TIMEOUT = 10.0
_KEY_HEX = re.compile(r"[0-9a-f]{64}")
_NONCE_HEX = re.compile(r"[0-9a-f]{32}")
_SIG_HEX = re.compile(r"[0-9a-f]{128}")
UNKNOWN_PEER = "unknown-peer"


@dataclass(frozen=True)
class SessionKeys:
    """What a finished handshake gives each side."""

    role: str                 # "guest" (client) or "host" (server)
    session_id: str           # use as conversation_id
    send_key: bytes           # HMAC key for what this side sends
    recv_key: bytes           # HMAC key for what the peer sends
    aead_key: bytes           # ChaCha20-Poly1305 key for encrypt: true
    local: AgentEndpoint
    peer: AgentEndpoint
    local_identity: str       # Ed25519 public key, hex
    peer_identity: str        # Ed25519 public key, hex
    transcript_hash: str      # hex


def _failed(message: str, code: str = "handshake.failed", **details: Any) -> HandshakeError:
    return HandshakeError(code, message, details=details or None)


def _ephemeral_hex(key: X25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw,
                                         serialization.PublicFormat.Raw).hex()


def _shared(private: X25519PrivateKey, peer_hex: str) -> bytes:
    try:
        return private.exchange(X25519PublicKey.from_public_bytes(bytes.fromhex(peer_hex)))
    except ValueError:
        raise _failed("peer's ephemeral key gives no usable shared secret") from None


def _hello_proof_content(env: Envelope, payload: dict[str, Any]) -> bytes:
    core = {k: payload[k] for k in ("identity_key", "ephemeral_key", "nonce", "expected_key")}
    core["sender"] = env.sender.to_dict()
    core["timestamp"] = env.timestamp
    return b"lingxi/wire/hello/v1|" + canonical_bytes(core)


def _transcript(hello_frame: bytes, welcome_core: dict[str, Any]) -> bytes:
    digest = hashlib.sha256(b"lingxi/wire/transcript/v1")
    digest.update(len(hello_frame).to_bytes(4, "big") + hello_frame)
    digest.update(canonical_bytes(welcome_core))
    return digest.digest()


def _derive(shared: bytes, transcript: bytes) -> tuple[bytes, bytes, bytes, str]:
    material = HKDF(algorithm=hashes.SHA256(), length=96, salt=transcript,
                    info=b"lingxi/wire/keys/v1").derive(shared)
    session_id = hashlib.sha256(b"lingxi/wire/session/v1" + transcript).hexdigest()[:32]
    return material[:32], material[32:64], material[64:], session_id


def _check_fields(payload: dict[str, Any], action: str) -> None:
    if payload.get("action") != action:
        raise _failed(f"expected {action}, got {str(payload.get('action'))[:40]!r}")
    for name, pattern in (("identity_key", _KEY_HEX), ("ephemeral_key", _KEY_HEX),
                          ("nonce", _NONCE_HEX), ("proof", _SIG_HEX)):
        value = payload.get(name)
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise _failed(f"{action} has no valid {name}")


def _check_guest_expectation(body: dict[str, Any], identity: Identity) -> None:
    """The guest named the host key it wants; an honest host with another key stops here."""
    expected_key = body.get("expected_key")
    if not isinstance(expected_key, str) or expected_key not in ("", identity.public_hex):
        raise _failed("the guest expects another host key", "handshake.identity_mismatch")


def _closing_on_failure(handshake):
    """Close the transport when a handshake is refused, so nothing more is read."""

    @functools.wraps(handshake)
    async def run(transport: FrameTransport, *args: Any, **kwargs: Any) -> SessionKeys:
        try:
            return await handshake(transport, *args, **kwargs)
        except HandshakeError:
            await transport.close()
            raise

    return run


async def _refuse(transport: FrameTransport, local: AgentEndpoint, hello: Envelope,
                  error: HandshakeError, clock: Callable[[], float],
                  id_factory: Callable[[], str]) -> None:
    """Tell the guest why (unauthenticated, informational), best effort, before closing."""
    payload = {"action": REFUSED, "reason": error.code, "message": error.message[:200]}
    builder = EnvelopeBuilder(local, hello.sender, HANDSHAKE_KEY, clock=clock,
                              id_factory=id_factory)
    with contextlib.suppress(TransportError):
        await transport.send(builder.build(payload, reply_to=hello.id).to_bytes())


async def _recv_envelope(transport: FrameTransport, timeout: float) -> tuple[bytes, Envelope]:
    frame = await transport.recv(idle_timeout=timeout)
    try:
        return frame, Envelope.parse(frame)
    except EnvelopeError as error:
        raise _failed(f"handshake envelope rejected: {error}", envelope_code=error.code) from None


@_closing_on_failure
async def client_handshake(transport: FrameTransport, identity: Identity, local: AgentEndpoint,
                           *, expected_peer_key: str | None = None,
                           peer: AgentEndpoint | None = None, clock: Callable[[], float],
                           id_factory: Callable[[], str] = random_id,
                           rng: Callable[[int], bytes] = os.urandom,
                           window_seconds: float = DEFAULT_WINDOW_SECONDS,
                           timeout: float = DEFAULT_HANDSHAKE_TIMEOUT) -> SessionKeys:
    """Open a session as the guest. ``expected_peer_key``: the host's Ed25519 key (hex)."""
    ephemeral = X25519PrivateKey.from_private_bytes(rng(32))
    receiver = peer or AgentEndpoint(UNKNOWN_PEER, "", transport.peer)
    payload: dict[str, Any] = {
        "action": HELLO, "identity_key": identity.public_hex,
        "ephemeral_key": _ephemeral_hex(ephemeral), "nonce": rng(16).hex(),
        "expected_key": expected_peer_key or "",
    }
    hello = Envelope(id=id_factory(), type=f"p2p:{HELLO}", sender=local, receiver=receiver,
                     payload=payload, timestamp=format_rfc3339(clock()))
    payload["proof"] = identity.sign(_hello_proof_content(hello, payload)).hex()
    hello = sign_envelope(hello.replace(payload=payload), HANDSHAKE_KEY)
    hello_frame = hello.to_bytes()
    await transport.send(hello_frame)

    _, welcome = await _recv_envelope(transport, timeout)
    body = welcome.payload
    if body.get("action") == REFUSED:
        reason = body.get("reason")
        code = reason if reason in HANDSHAKE_CODES else "handshake.failed"
        raise _failed(f"the host refused the handshake: {str(body.get('message'))[:200]}", code)
    _check_fields(body, WELCOME)
    if expected_peer_key is not None and body["identity_key"] != expected_peer_key:
        raise _failed("the host's identity key is not the one expected",
                      "handshake.identity_mismatch", expected=expected_peer_key,
                      presented=body["identity_key"])
    core = {"identity_key": body["identity_key"], "ephemeral_key": body["ephemeral_key"],
            "nonce": body["nonce"], "sender": welcome.sender.to_dict()}
    transcript = _transcript(hello_frame, core)
    if not verify_ed25519(body["identity_key"], bytes.fromhex(body["proof"]),
                          b"lingxi/wire/welcome/v1|" + transcript):
        raise _failed("the host's proof does not verify", "handshake.bad_signature")
    guest_to_host, host_to_guest, aead_key, session_id = _derive(
        _shared(ephemeral, body["ephemeral_key"]), transcript)
    pipeline = ReceivePipeline(host_to_guest, clock=clock, window_seconds=window_seconds,
                               expect_conversation_id=session_id, expect_receiver=local)
    try:
        pipeline.accept(welcome, expect_reply_to=hello.id)
    except EnvelopeError as error:
        raise _failed(f"welcome envelope rejected: {error}", envelope_code=error.code) from None
    return SessionKeys("guest", session_id, guest_to_host, host_to_guest, aead_key, local,
                       welcome.sender, identity.public_hex, body["identity_key"],
                       transcript.hex())


@_closing_on_failure
async def server_handshake(transport: FrameTransport, identity: Identity, local: AgentEndpoint,
                           *, expected_peer_key: str | None = None, clock: Callable[[], float],
                           id_factory: Callable[[], str] = random_id,
                           rng: Callable[[int], bytes] = os.urandom,
                           hello_guard: ReplayGuard | None = None,
                           window_seconds: float = DEFAULT_WINDOW_SECONDS,
                           timeout: float = DEFAULT_HANDSHAKE_TIMEOUT) -> SessionKeys:
    """Accept a session as the host. ``expected_peer_key``: the guest's key, if known.

    Pass one ``hello_guard`` for all connections of a server so a replayed hello
    is refused across connections.
    """
    hello_frame, hello = await _recv_envelope(transport, timeout)
    body = hello.payload
    guard = hello_guard if hello_guard is not None else ReplayGuard(16)
    try:
        ReceivePipeline(HANDSHAKE_KEY, clock=clock, window_seconds=window_seconds,
                        replay_guard=guard).accept(hello)
    except EnvelopeError as error:
        code = "handshake.replay" if error.code == "envelope.replay" else "handshake.failed"
        raise _failed(f"hello rejected: {error}", code, envelope_code=error.code) from None
    try:
        _check_fields(body, HELLO)
        if expected_peer_key is not None and body["identity_key"] != expected_peer_key:
            raise _failed("the guest's identity key is not the one expected",
                          "handshake.identity_mismatch", expected=expected_peer_key,
                          presented=body["identity_key"])
        _check_guest_expectation(body, identity)
        if not verify_ed25519(body["identity_key"], bytes.fromhex(body["proof"]),
                              _hello_proof_content(hello, body)):
            raise _failed("the guest's proof does not verify", "handshake.bad_signature")
    except HandshakeError as error:
        await _refuse(transport, local, hello, error, clock, id_factory)
        raise

    ephemeral = X25519PrivateKey.from_private_bytes(rng(32))
    core = {"identity_key": identity.public_hex, "ephemeral_key": _ephemeral_hex(ephemeral),
            "nonce": rng(16).hex(), "sender": local.to_dict()}
    transcript = _transcript(hello_frame, core)
    guest_to_host, host_to_guest, aead_key, session_id = _derive(
        _shared(ephemeral, body["ephemeral_key"]), transcript)
    proof = identity.sign(b"lingxi/wire/welcome/v1|" + transcript).hex()
    payload = {"action": WELCOME, "identity_key": core["identity_key"],
               "ephemeral_key": core["ephemeral_key"], "nonce": core["nonce"], "proof": proof}
    builder = EnvelopeBuilder(local, hello.sender, host_to_guest, clock=clock,
                              id_factory=id_factory, conversation_id=session_id)
    await transport.send(builder.build(payload, reply_to=hello.id).to_bytes())
    return SessionKeys("host", session_id, host_to_guest, guest_to_host, aead_key, local,
                       hello.sender, identity.public_hex, body["identity_key"], transcript.hex())


