"""Typed errors of the hooks layer (codes ``hooks.*``)."""

from __future__ import annotations

from lingxi.errors import InputError


class HooksError(InputError):
    """A protocol folder's hooks cannot be used: missing, not local, a skeleton, broken."""
