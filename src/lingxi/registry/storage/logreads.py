"""Reading the transparency log: its size (the version list caches key on), the signed
checkpoint, inclusion and consistency proofs, entries and records. No lock is taken."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select

from lingxi.registry.models.log import sign_head
from lingxi.registry.storage import schema as t
from lingxi.registry.storage import tree
from lingxi.registry.storage.changes import Changes
from lingxi.registry.storage.common import bad, not_found
from lingxi.registry.storage.unit import HEAD, UnitOfWork

_ENTRY = ["seq", "kind", "record_id", "record_sha256", "hash", "time"]


class LogReads:
    """The log as readers see it."""

    def __init__(self, uow: UnitOfWork) -> None:
        self.uow = uow
        self.changes = Changes(uow.reader, uow.postgres, self.version)
        uow.after_commit = self.changes.committed

    def close(self) -> None:
        self.changes.close()

    def version(self) -> int:
        """The log size: it grows with every accepted write, in any server process.

        One statement on an autocommit driver connection (``rawreads``): on SQLite this
        runs for every cached list read, where a pooled read's checkout and transaction
        would cost more than the answer itself."""
        _, rows = self.uow.raw.fetch("SELECT size FROM log_head WHERE id = 1", {})
        return int(rows[0][0])  # log_head always has its one row

    def head(self) -> dict[str, Any]:
        """The signed checkpoint of the tree as it is now."""
        uow = self.uow
        with uow.reader.connect() as conn:
            size = conn.execute(HEAD).one().size
            root = tree.root(conn, size)
        return sign_head(uow.key, uow.origin, size, root, int(uow.clock()))

    def inclusion_proof(self, seq: int, size: int) -> dict[str, Any]:
        """The audit path of entry ``seq`` (1-based) in the tree of ``size`` entries."""
        with self.uow.reader.connect() as conn:
            current = conn.execute(HEAD).one().size
            if not 1 <= seq <= size <= current:
                raise bad(f"need 1 <= seq <= size <= {current} (the log's size)")
            leaf = conn.execute(select(t.log.c.hash).where(t.log.c.seq == seq)).scalar()
            path = tree.inclusion(conn, seq - 1, size)
        return {"seq": seq, "size": size, "leaf": leaf, "path": [h.hex() for h in path]}

    def consistency_proof(self, old: int, new: int) -> dict[str, Any]:
        """The proof that the tree of ``old`` entries is a prefix of the one of ``new``."""
        with self.uow.reader.connect() as conn:
            current = conn.execute(HEAD).one().size
            if not 0 <= old <= new <= current:
                raise bad(f"need 0 <= from <= to <= {current} (the log's size)")
            proof = tree.consistency(conn, old, new)
        return {"from": old, "to": new, "proof": [h.hex() for h in proof]}

    def entries(self, after: int = 0, limit: int = 1000, *, records: bool = False
                ) -> dict[str, Any]:
        """Entries after ``after``; with ``records`` each carries its record (full audits)."""
        if after < 0 or not 1 <= limit <= 1000:
            raise bad("after must be >= 0 and limit 1-1000")
        cols = [t.log.c[k] for k in _ENTRY + (["record"] if records else [])]
        with self.uow.reader.connect() as conn:
            rows = (
                conn.execute(
                    select(*cols).where(t.log.c.seq > after).order_by(t.log.c.seq).limit(limit)
                )
                .mappings()
                .all()
            )
        out = [dict(r) for r in rows]
        if records:
            for item in out:
                item["record"] = json.loads(item["record"])
        return {"entries": out}

    def record(self, seq: int) -> dict[str, Any]:
        with self.uow.reader.connect() as conn:
            text = conn.execute(select(t.log.c.record).where(t.log.c.seq == seq)).scalar()
        if text is None:
            raise not_found("log_entry", str(seq))
        return {"seq": seq, "record": json.loads(text)}

    def counts(self) -> dict[str, int]:
        with self.uow.reader.connect() as conn:
            return {
                "log": conn.execute(select(t.log_head.c.size)).scalar() or 0,
                "protocols": conn.execute(select(func.count()).select_from(t.protocols)).scalar()
                or 0,
            }
