"""lingxi.wire: Synapse envelopes, signatures, sealing, the receive pipeline.

Imports only the stdlib, cryptography, ``lingxi.errors``, ``lingxi.canonical``
and ``lingxi.home``. See docs/wire.md for the API and every error code.

This surface holds the envelope-level names, imported plainly (the layer contracts
see every edge), and loads no network module: an in-memory caller never pays for
asyncio, socket or ssl. The byte movers are imported from their own modules:
:mod:`lingxi.wire.transport` (frames over TCP or memory), :mod:`lingxi.wire.handshake`,
:mod:`lingxi.wire.connection` (one session per host) and :mod:`lingxi.wire.channel`.
"""

from __future__ import annotations

from lingxi.wire.aead import open_envelope, seal_envelope
from lingxi.wire.builder import EnvelopeBuilder
from lingxi.wire.control import abort_payload, control_kind, control_payload, is_control
from lingxi.wire.envelope import WIRE_VERSION, AgentEndpoint, Envelope
from lingxi.wire.errors import (
    EnvelopeError,
    HandshakeError,
    IdentityError,
    TransportError,
    WireError,
)
from lingxi.wire.identity import Identity
from lingxi.wire.pipeline import ReceivePipeline, check_binding, check_expectations, check_time
from lingxi.wire.replay import ReplayGuard
from lingxi.wire.signature import (
    ALGORITHMS,
    compute_signature,
    sign_envelope,
    signature_content,
    verify_signature,
)
from lingxi.wire.timefmt import format_rfc3339, parse_rfc3339

__all__ = [
    "ALGORITHMS", "AgentEndpoint", "Envelope", "EnvelopeBuilder", "EnvelopeError",
    "HandshakeError", "Identity", "IdentityError", "ReceivePipeline", "ReplayGuard",
    "TransportError", "WIRE_VERSION", "WireError", "abort_payload", "check_binding",
    "check_expectations", "check_time", "compute_signature", "control_kind",
    "control_payload", "format_rfc3339", "is_control", "open_envelope", "parse_rfc3339",
    "seal_envelope", "sign_envelope", "signature_content", "verify_signature",
]
