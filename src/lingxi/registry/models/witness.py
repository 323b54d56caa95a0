"""A witness: follows one log, cosigns only checkpoints consistent with all it saw.

Pure and sans-IO: :meth:`Witness.observe` takes the log's signed note and the
consistency proof from the last checkpoint this witness cosigned, and returns
the note with the witness's cosignature (c2sp.org/tlog-cosignature), or
raises :class:`Fork` holding both signed checkpoints — the evidence that the
log showed two histories. Its state (the last cosigned checkpoint per
origin) is a small JSON object the caller keeps on disk.

A client that requires N cosignatures from witnesses it names can only be
shown a history those N witnesses also saw; a log that forks must fork every
witness's view too, and any witness or client shown both sides holds proof.
"""

from __future__ import annotations

from typing import Any

from lingxi.errors import EXIT_FAILED
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.checkpoint import (
    CheckpointError,
    cosign,
    cosignatures,
    open_checkpoint,
)
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.merkle import verify_consistency


class Fork(RegistryError):
    """Two signed checkpoints of one log that cannot both be true (``registry.fork``)."""

    def __init__(self, reason: str, evidence: list[str]) -> None:
        super().__init__("registry.fork", reason, status=409, exit_code=EXIT_FAILED,
                         details={"evidence": evidence})
        self.evidence = evidence


def consistent(old_note: str, new_note: str, proof: list[bytes], log_key: str) -> str | None:
    """Why ``new_note`` cannot extend ``old_note`` (both by ``log_key``), or None."""
    old, new = open_checkpoint(old_note, log_key), open_checkpoint(new_note, log_key)
    if old.origin != new.origin:
        return "the checkpoints are of two logs"
    if new.size < old.size:
        return f"the log shrank from {old.size} to {new.size}"
    if not verify_consistency(old.size, new.size, old.root, new.root, proof):
        return (f"the checkpoint of size {new.size} does not extend the one of size "
                f"{old.size}: the log forked")
    return None


class Witness:
    """One witness key and what it has cosigned (``state``: origin -> note)."""

    def __init__(self, key: ServerKey, name: str, state: dict[str, Any] | None = None) -> None:
        self.key, self.name = key, name
        self.state: dict[str, Any] = dict(state or {})

    def last(self, origin: str) -> str | None:
        note = self.state.get(origin)
        return note if isinstance(note, str) else None

    def observe(self, note: str, proof: list[bytes], *, log_key: str, now: int) -> str:
        """Cosign ``note`` when it extends the last checkpoint cosigned for its log."""
        point = open_checkpoint(note, log_key)
        last = self.last(point.origin)
        if last is not None:
            problem = consistent(last, note, proof, log_key)
            if problem:
                raise Fork(problem, [last, note])
        signed = cosign(self.key, self.name, note, now)
        self.state[point.origin] = note
        return signed


def require_cosignatures(note: str, witnesses: dict[str, str], needed: int, *,
                         now: float, max_age: int = 3600) -> dict[str, int]:
    """The fresh cosignatures on ``note`` from ``witnesses``; raises when fewer than
    ``needed`` (``registry.not_witnessed``)."""
    try:
        found = cosignatures(note, witnesses)
    except CheckpointError:
        found = {}
    fresh = {name: ts for name, ts in found.items() if abs(now - ts) <= max_age}
    if len(fresh) < needed:
        raise RegistryError("registry.not_witnessed",
                            f"the checkpoint carries {len(fresh)} fresh cosignature(s) of the "
                            f"{needed} required from the witnesses named", status=502,
                            exit_code=EXIT_FAILED)
    return fresh
