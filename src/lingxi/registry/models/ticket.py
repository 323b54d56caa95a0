"""The single-use join ticket: issued by the registry at a claim, checked by the host.

Format (at most 2048 chars, the contract type ``ticket``)::

    base64url(canonical JSON claims) "." base64url(Ed25519 signature)

signed by the registry's key (published at ``GET /v1/info`` and inside every
signed log head) over ``b"lingxi/registry/ticket/v1|" + claims bytes``. The
claims name the invitation, the host, the guest and its key, an expiry and a
random nonce. :func:`verify_ticket` is pure: the host calls it in its
handshake with the guest key the hello proved, and keeps used nonces
(:class:`UsedTickets`) so a ticket works once.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.registry.errors import TicketRefused
from lingxi.registry.models.keys import ServerKey, agent_id_for, b64url, is_hex, unb64url, verify

DOMAIN = b"lingxi/registry/ticket/v1|"
MAX_LENGTH = 2048
VERSION = 1
FIELDS = ("v", "invitation_id", "session_id", "host_agent_id", "guest_agent_id",
          "guest_public_key", "expires_at", "nonce")


@dataclass(frozen=True)
class TicketClaims:
    invitation_id: str
    session_id: str
    host_agent_id: str
    guest_agent_id: str
    guest_public_key: str
    expires_at: int
    nonce: str

    def to_dict(self) -> dict[str, Any]:
        return {"v": VERSION, "invitation_id": self.invitation_id,
                "session_id": self.session_id, "host_agent_id": self.host_agent_id,
                "guest_agent_id": self.guest_agent_id, "guest_public_key": self.guest_public_key,
                "expires_at": self.expires_at, "nonce": self.nonce}


def issue_ticket(key: ServerKey, *, invitation_id: str, session_id: str, host_agent_id: str,
                 guest_public_key: str, expires_at: int, nonce: str | None = None) -> str:
    """A signed ticket (server side)."""
    claims = TicketClaims(invitation_id, session_id, host_agent_id,
                          agent_id_for(guest_public_key), guest_public_key, int(expires_at),
                          nonce or os.urandom(16).hex())
    payload = canonical_bytes(claims.to_dict())
    return b64url(payload) + "." + b64url(key.sign(DOMAIN + payload))


def _claims(data: Any) -> TicketClaims:
    if not isinstance(data, dict) or set(data) != set(FIELDS):
        raise TicketRefused("the claims are not the expected fields")
    if data["v"] != VERSION:
        raise TicketRefused(f"unknown ticket version {data['v']!r}")
    strings = [k for k in FIELDS if k not in ("v", "expires_at")]
    if any(not isinstance(data[k], str) or not data[k] for k in strings):
        raise TicketRefused("a ticket claim is not a string")
    expires = data["expires_at"]
    if not isinstance(expires, int) or isinstance(expires, bool):
        raise TicketRefused("expires_at is not an integer")
    if not is_hex(data["guest_public_key"], 64) or not is_hex(data["nonce"], 32):
        raise TicketRefused("the guest key or the nonce is malformed")
    return TicketClaims(data["invitation_id"], data["session_id"], data["host_agent_id"],
                        data["guest_agent_id"], data["guest_public_key"], expires, data["nonce"])


def verify_ticket(ticket: Any, *, server_public_key: str, invitation_id: str,
                  host_agent_id: str, guest_public_key: str, now: float) -> TicketClaims:
    """The claims of a valid ticket; raise :class:`TicketRefused` for every failure.

    Checks, in order: shape and length, base64url, the registry's signature,
    the claims' fields, that they name this invitation, this host and the
    guest key the handshake proved (and its agent id), and the expiry.
    Single use is the caller's job (:class:`UsedTickets`).
    """
    if not isinstance(ticket, str) or not 1 <= len(ticket) <= MAX_LENGTH:
        raise TicketRefused(f"a ticket is a string of 1-{MAX_LENGTH} chars")
    parts = ticket.split(".")
    if len(parts) != 2:
        raise TicketRefused("a ticket is two base64url parts joined by '.'")
    try:
        payload, signature = unb64url(parts[0]), unb64url(parts[1])
    except ValueError:
        raise TicketRefused("a ticket part is not base64url") from None
    if not is_hex(server_public_key, 64) or not verify(server_public_key, signature,
                                                       DOMAIN + payload):
        raise TicketRefused("the registry's signature does not verify")
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise TicketRefused("the claims are not JSON") from None
    claims = _claims(data)
    if claims.invitation_id != invitation_id:
        raise TicketRefused("the ticket is for another invitation")
    if claims.host_agent_id != host_agent_id:
        raise TicketRefused("the ticket is for another host")
    if claims.guest_public_key != guest_public_key:
        raise TicketRefused("the ticket was issued to another guest key")
    if claims.guest_agent_id != agent_id_for(claims.guest_public_key):
        raise TicketRefused("the guest agent id does not match the guest key")
    if now >= claims.expires_at:
        raise TicketRefused("the ticket has expired")
    return claims


class UsedTickets:
    """The host's memory of spent ticket nonces (kept until each ticket expires)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def spend(self, claims: TicketClaims, now: float) -> None:
        """Mark ``claims`` used; raise :class:`TicketRefused` if it already was."""
        self._seen = {n: exp for n, exp in self._seen.items() if exp > now}
        if claims.nonce in self._seen:
            raise TicketRefused("the ticket was already used")
        self._seen[claims.nonce] = claims.expires_at
