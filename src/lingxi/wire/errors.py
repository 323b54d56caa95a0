"""Typed failures of the wire layer, each with a stable dotted code.

A receiver rejecting an envelope raises :class:`EnvelopeError` (CLI exit 1: the
checked thing failed); a broken connection raises :class:`TransportError`; a
refused handshake raises :class:`HandshakeError`. The codes are listed in
``docs/wire.md`` and never change meaning.
"""

from __future__ import annotations

from lingxi.errors import CheckFailed, LingxiError

ENVELOPE_CODES = (
    "envelope.malformed",        # not JSON, not an object, a field of the wrong type
    "envelope.missing_field",    # a required field is absent
    "envelope.unknown_field",    # a field this version does not define (same or older minor)
    "envelope.bad_version",      # not MAJOR.MINOR.PATCH, or another major version
    "envelope.bad_type",         # type is not "<prefix>:<name>" with a known prefix
    "envelope.bad_timestamp",    # timestamp is not RFC 3339
    "envelope.bad_signature",    # signature absent, not lowercase hex, or does not match
    "envelope.unknown_algorithm",
    "envelope.type_mismatch",    # type != "<prefix>:<payload.action>", or wrong prefix
    "envelope.stale",            # timestamp outside the receiver's window
    "envelope.expired",          # timestamp + ttl is in the past
    "envelope.replay",           # this signature was already accepted
    "envelope.replay_capacity",  # the replay guard is full of live entries (fail closed)
    "envelope.bad_reply_to",
    "envelope.bad_correlation",
    "envelope.bad_conversation",
    "envelope.bad_sender",
    "envelope.bad_receiver",
    "envelope.bad_group",
    "envelope.decrypt_failed",
    "envelope.not_sealed",       # a plaintext payload in a session that agreed to seal
)

TRANSPORT_CODES = (
    "transport.frame_too_large",
    "transport.timeout",
    "transport.closed",
    "transport.peer_silent",
    "transport.connect_failed",
    "transport.bad_endpoint",
    "transport.busy",            # the host's one session is taken, or its handshake slots are full
    # a sealed channel's frame stream (docs/wire.md, "Sealed frames"): each ends the channel
    "transport.frame_forged",    # a frame that does not open with the peer's frame key
    "transport.frame_lost",      # a frame never came (a gap in the peer's frame counter)
    "transport.frame_duplicated",  # a frame that was already delivered came again
    "transport.frame_reordered",   # frames came out of the order they were sent in
    "transport.frame_delayed",   # a frame came later than the channel's max_delay
    # the relay path (docs/wire.md, "The relay")
    "transport.relay_unreachable",  # no relay server answers
    "transport.relay_refused",   # the relay refused the credential (none, expired, not this session's)
    "transport.relay_no_answer",  # the host did not answer on the relay in time
    "transport.flood",           # the peer sent more than the relay transport's rate limit
)

HANDSHAKE_CODES = (
    "handshake.failed",
    "handshake.identity_mismatch",
    "handshake.bad_signature",
    "handshake.replay",          # a hello not made for this connection's challenge, or seen before
    "handshake.unsupported_version",  # the peer speaks another handshake version
    "handshake.ticket_refused",  # the host's authoriser refused the hello's ticket
    "handshake.sealing_refused",  # one side wants sealing off (a debug choice), the other not
)

IDENTITY_CODES = (
    "identity.missing",
    "identity.corrupt",
    "identity.insecure_permissions",
)


class WireError(LingxiError):
    """Base of every wire failure."""


class EnvelopeError(CheckFailed, WireError):
    """An envelope was read but is not acceptable (exit 1)."""


class TransportError(WireError):
    """The connection failed: closed, timed out, silent peer, oversized frame."""

    exit_code = 1


class HandshakeError(WireError):
    """The peer could not be authenticated; nothing after the handshake was read."""

    exit_code = 1


class IdentityError(WireError):
    """The local identity key is missing, unreadable or exposed (exit 2)."""
