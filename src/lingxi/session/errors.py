"""Typed errors and the reason codes a session ends with.

A violation never raises out of a machine: it becomes an ``abort`` control
envelope to the peer (code + evidence), a local ``violation`` event, and a
``Finish`` with status ``aborted``. :class:`SessionError` is for the CLI and
drivers (bad arguments, unusable state folders).
"""

from __future__ import annotations

from lingxi.errors import CheckFailed, InputError


class SessionError(InputError):
    """A session cannot start or a state folder cannot be used (exit 2)."""


class SessionFailed(CheckFailed):
    """A session ran but did not complete, or a transcript failed verification (exit 1)."""


# Codes a peer's behaviour can cause (besides the contract's message.* and the wire's
# envelope.* / transport.* codes, which pass through unchanged).
OUT_OF_PHASE = "session.out_of_phase"
COMMIT_MISMATCH = "session.commit_mismatch"
BAD_NONCE = "session.bad_nonce"
WRONG_ROUND = "session.wrong_round"
NOT_IN_CHOICES = "session.value_not_in_choices"
RESULT_MISMATCH = "session.result_mismatch"
BALANCE_MISMATCH = "session.balance_mismatch"
TIMEOUT = "session.timeout"
IDLE_TIMEOUT = "session.idle_timeout"
PROTOCOL_MISMATCH = "session.protocol_mismatch"
BAD_OPTIONS = "session.bad_options"
BAD_CORRELATION = "session.bad_correlation"
BAD_CONTROL = "session.bad_control"
TOO_LONG = "session.too_long"
TOO_LARGE = "session.too_large"  # a per-session byte limit (peer traffic or state) was reached
PEER_CLOSED = "session.peer_closed"
DECISION_TIMEOUT = "decision.timeout"
ABORTED_LOCALLY = "session.aborted_locally"  # the local participant ended it (abort, Ctrl-C)
# Codes our own hooks can cause (the peer is told too, so it never waits forever).
HOOKS_ERROR = "hooks.error"
HOOKS_NOT_IMPLEMENTED = "hooks.not_implemented"
HOOKS_INVALID_MESSAGE = "hooks.invalid_message"
HOOKS_OUT_OF_PHASE = "hooks.out_of_phase"
HOOKS_NO_RESPONSE = "hooks.no_response"
HOOKS_ABORT = "hooks.abort"
HOOKS_BAD_RESULT = "hooks.bad_result"
