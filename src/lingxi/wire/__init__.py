"""lingxi.wire: Synapse envelopes, signatures, the receive pipeline, transports.

Imports only the stdlib, cryptography, ``lingxi.errors``, ``lingxi.canonical``
and ``lingxi.home``. See docs/wire.md for the API and every error code.
"""

from lingxi.wire.aead import open_envelope, seal_envelope
from lingxi.wire.builder import EnvelopeBuilder
from lingxi.wire.channel import SecureChannel, connect_channel, serve_channels
from lingxi.wire.control import abort_payload, control_kind, control_payload, is_control
from lingxi.wire.envelope import WIRE_VERSION, AgentEndpoint, Envelope
from lingxi.wire.errors import (
    EnvelopeError,
    HandshakeError,
    IdentityError,
    TransportError,
    WireError,
)
from lingxi.wire.handshake import SessionKeys, client_handshake, server_handshake
from lingxi.wire.identity import Identity
from lingxi.wire.pipeline import (
    ReceivePipeline,
    check_binding,
    check_expectations,
    check_time,
)
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.signature import (
    ALGORITHMS,
    compute_signature,
    sign_envelope,
    signature_content,
    verify_signature,
)
from lingxi.wire.timefmt import format_rfc3339, parse_rfc3339
from lingxi.wire.transport import connect_tcp, memory_pair, parse_endpoint, serve_tcp

__all__ = [
    "ALGORITHMS", "WIRE_VERSION", "AgentEndpoint", "Envelope", "EnvelopeBuilder",
    "EnvelopeError", "HandshakeError", "IdentityError", "ReceivePipeline", "ReplayGuard",
    "TransportError", "WireError", "abort_payload", "check_binding", "check_expectations",
    "check_time", "compute_signature", "control_kind", "control_payload", "format_rfc3339",
    "is_control", "open_envelope", "parse_rfc3339", "seal_envelope", "sign_envelope",
    "signature_content", "verify_signature", "SecureChannel", "connect_channel",
    "serve_channels", "SessionKeys", "client_handshake", "server_handshake", "Identity",
    "connect_tcp", "memory_pair", "parse_endpoint", "serve_tcp",
]
