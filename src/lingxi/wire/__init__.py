"""lingxi.wire: Synapse envelopes, signatures, the receive pipeline, transports.

Imports only the stdlib, cryptography, ``lingxi.errors``, ``lingxi.canonical``
and ``lingxi.home``. See docs/wire.md for the API and every error code.

Names are resolved lazily (module ``__getattr__``): ``import lingxi.wire`` and
the envelope-level names load no network module, so an in-memory caller never
pays for asyncio, socket or ssl. Only the transport, handshake, channel and
connection modules import asyncio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "open_envelope": "aead", "seal_envelope": "aead",
    "EnvelopeBuilder": "builder",
    "SecureChannel": "channel", "connect_channel": "channel", "serve_channels": "channel",
    "OneSessionHost": "connection", "PeerInfo": "connection", "connect": "connection",
    "pinned_key": "connection", "serve_one": "connection",
    "abort_payload": "control", "control_kind": "control", "control_payload": "control",
    "is_control": "control",
    "WIRE_VERSION": "envelope", "AgentEndpoint": "envelope", "Envelope": "envelope",
    "EnvelopeError": "errors", "HandshakeError": "errors", "IdentityError": "errors",
    "TransportError": "errors", "WireError": "errors",
    "SessionKeys": "handshake", "client_handshake": "handshake", "server_handshake": "handshake",
    "Identity": "identity",
    "ReceivePipeline": "pipeline", "check_binding": "pipeline",
    "check_expectations": "pipeline", "check_time": "pipeline",
    "ReplayGuard": "replay",
    "ALGORITHMS": "signature", "compute_signature": "signature", "sign_envelope": "signature",
    "signature_content": "signature", "verify_signature": "signature",
    "format_rfc3339": "timefmt", "parse_rfc3339": "timefmt",
    "connect_tcp": "transport", "memory_pair": "transport", "parse_endpoint": "transport",
    "serve_tcp": "transport",
}

__all__ = [  # == sorted(_EXPORTS); a literal so linters see it
    "ALGORITHMS", "AgentEndpoint", "Envelope", "EnvelopeBuilder", "EnvelopeError",
    "HandshakeError", "Identity", "IdentityError", "OneSessionHost", "PeerInfo",
    "ReceivePipeline", "ReplayGuard", "SecureChannel", "SessionKeys", "TransportError",
    "WIRE_VERSION", "WireError", "abort_payload", "check_binding", "check_expectations",
    "check_time", "client_handshake", "compute_signature", "connect", "connect_channel",
    "connect_tcp", "control_kind", "control_payload", "format_rfc3339", "is_control",
    "memory_pair", "open_envelope", "parse_endpoint", "parse_rfc3339", "pinned_key",
    "seal_envelope", "serve_channels", "serve_one", "serve_tcp", "server_handshake",
    "sign_envelope", "signature_content", "verify_signature",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lingxi.wire' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"lingxi.wire.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and IDEs; never executed
    from lingxi.wire.aead import open_envelope, seal_envelope
    from lingxi.wire.builder import EnvelopeBuilder
    from lingxi.wire.channel import SecureChannel, connect_channel, serve_channels
    from lingxi.wire.connection import OneSessionHost, PeerInfo, connect, pinned_key, serve_one
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
