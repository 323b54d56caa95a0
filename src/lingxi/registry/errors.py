"""Typed registry errors: a stable dotted code, one line, and an HTTP status.

The server turns any :class:`RegistryError` into ``{"error": {...}}`` with its
status; the client turns such a body back into the same error, so a CLI user
sees the server's code and message and the matching exit status.
"""

from __future__ import annotations

from typing import Any

from lingxi.errors import EXIT_FAILED, EXIT_USAGE, LingxiError


class RegistryError(LingxiError):
    """A refused registry request (4xx) or an unreachable registry."""

    spend_nonce = False  # set when a refused signed request must still use up its nonce

    def __init__(self, code: str, message: str, *, status: int = 400,
                 details: dict[str, Any] | None = None, exit_code: int | None = None,
                 findings: list | None = None) -> None:
        if exit_code is None:
            exit_code = EXIT_USAGE if status in (400, 413, 422) else EXIT_FAILED
        super().__init__(code, message, details=details, exit_code=exit_code,
                         findings=findings)
        self.status = status


class TicketRefused(LingxiError):
    """A join ticket that the host's handshake must refuse (always ``handshake.ticket_refused``)."""

    exit_code = EXIT_FAILED

    def __init__(self, reason: str) -> None:
        super().__init__("handshake.ticket_refused", f"ticket refused: {reason}")
        self.reason = reason
