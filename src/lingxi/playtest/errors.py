"""Typed errors of the play harness."""

from __future__ import annotations

from lingxi.errors import InputError, LingxiError


class PlayError(LingxiError):
    """A play run could not be set up or carried on (browser missing, game unreachable…)."""


class PlayInputError(InputError):
    """A bad argument to ``lingxi play``: game path, brief file, out folder (exit 2)."""


class SelectionRejected(LingxiError):
    """The actor's selection is not acceptable; becomes a protocol error in the next view."""
