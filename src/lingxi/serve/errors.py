"""Coded refusals of a served protocol, and the HTTP status each code answers with.

Every refusal a caller can cause is one :class:`~lingxi.errors.LingxiError`
code in the JSON body ``{"ok": false, "error": {"code", "message"}}`` and a
4xx status. The wire's own ``envelope.*`` codes, the contract's
``message.*`` codes and the session machine's ``session.*``/``hooks.*`` codes
are passed through unchanged (one fact in one place); only what the HTTP
edge itself refuses has a ``caller.*`` code. The table is in docs/callers.md.
"""

from __future__ import annotations

from lingxi.errors import InputError, LingxiError

# Refusals at the HTTP edge, before the envelope is read.
BODY_TOO_LARGE = "caller.body_too_large"
TOO_DEEP = "caller.too_deep"
BAD_CONTENT_TYPE = "caller.bad_content_type"
NOT_FOUND = "caller.not_found"
BAD_METHOD = "caller.bad_method"
TIMEOUT = "caller.timeout"
INTERNAL = "caller.internal"  # a bug in the server; no request is meant to reach it

# The status of every code the edge knows; anything else falls back by namespace.
STATUS: dict[str, int] = {
    BODY_TOO_LARGE: 413, TOO_DEEP: 400, BAD_CONTENT_TYPE: 415, NOT_FOUND: 404,
    BAD_METHOD: 405, TIMEOUT: 408, INTERNAL: 500,
    # not authenticated: no valid signature by a registered caller, in time
    "envelope.bad_signature": 401, "envelope.bad_sender": 401, "envelope.stale": 401,
    "envelope.expired": 401,
    # authenticated, but not for us / already seen / guard full
    "envelope.bad_receiver": 403, "envelope.replay": 409, "envelope.replay_capacity": 429,
}
_BY_NAMESPACE = {"envelope": 400, "caller": 400}
UNPROCESSABLE = 422  # the contract, the flow or the served hooks refused the request


def status_for(code: str) -> int:
    """The HTTP status a refusal with ``code`` is sent with (always 4xx but for INTERNAL)."""
    known = STATUS.get(code)
    if known is not None:
        return known
    return _BY_NAMESPACE.get(code.partition(".")[0], UNPROCESSABLE)


class CallerRefused(LingxiError):
    """A request refused with a code; ``status`` is its HTTP status."""

    exit_code = 1

    def __init__(self, code: str, message: str, **kwargs: object) -> None:
        super().__init__(code, message, **kwargs)  # type: ignore[arg-type]
        self.status = status_for(code)


class ServeError(InputError):
    """The operator's setup is unusable: a bad address, callers file or protocol (exit 2)."""
