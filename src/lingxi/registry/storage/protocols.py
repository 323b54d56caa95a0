"""Protocols: the preflight of a draft spec, registering one (near duplicates refused
unless a reason is given), reading one with its bundles and proof, searching, and the
cache of loaded specs that options are checked against."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection

from lingxi.canonical import canonical_json
from lingxi.contract import Spec, SpecError, load_spec
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.convergence import fingerprint
from lingxi.registry.models.records import decode_cursor, encode_cursor, iso
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import proofs
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad, like, not_found, page_limit
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.unit import Change, UnitOfWork

SPEC_CACHE = 256  # loaded specs kept per process


def load_draft(spec: Any) -> Spec:
    """``spec`` (the posted spec.json) loaded, or its findings as a 422."""
    if not isinstance(spec, dict):
        raise bad("spec must be a JSON object (the spec.json)", "registry.bad_spec", 422)
    try:
        return load_spec(spec)
    except SpecError as error:
        raise RegistryError(
            error.code,
            error.message,
            status=422,
            findings=error.findings,
            details={"findings": [f.to_dict() for f in error.findings]},
        ) from None


def near_duplicates(conn: Connection, draft: Spec) -> list[dict[str, Any]]:
    """Known protocols with ``draft``'s fingerprint (same messages and flow) but another id."""
    rows = conn.execute(
        select(t.protocols.c.protocol_id, t.protocols.c.name)
        .where(
            t.protocols.c.fingerprint == fingerprint(draft.raw),
            t.protocols.c.protocol_id != draft.protocol_id,
        )
        .order_by(t.protocols.c.seq)
        .limit(20)
    ).all()
    return [{"protocol_id": r.protocol_id, "name": r.name} for r in rows]


def summary(row: Any) -> dict[str, Any]:
    return {
        "protocol_id": row["protocol_id"],
        "name": row["name"],
        "type": row["type"],
        "spec_version": row["spec_version"],
        "description": row["description"],
        "registered_by": row["registered_by"],
        "created_at": iso(row["created_at"]),
        "reason": row["reason"],
        "near_duplicates": json.loads(row["near_duplicates"] or "[]"),
        "seq": row["seq"],
    }


class Protocols:
    """The ``protocols`` aggregate."""

    def __init__(self, uow: UnitOfWork, identities: Identities) -> None:
        self.uow, self.identities = uow, identities
        self.specs: OrderedDict[str, Spec] = OrderedDict()
        self._spec_lock = threading.Lock()

    def spec(self, protocol_id: str) -> Spec:
        """The registered spec ``protocol_id``, loaded once per process (LRU)."""
        with self._spec_lock:
            cached = self.specs.get(protocol_id)
            if cached is not None:
                self.specs.move_to_end(protocol_id)
                return cached
        with self.uow.reader.connect() as conn:
            text = conn.execute(
                select(t.protocols.c.spec).where(t.protocols.c.protocol_id == protocol_id)
            ).scalar()
        if text is None:
            raise not_found("protocol", protocol_id)
        spec = load_spec(json.loads(text))
        with self._spec_lock:
            self.specs[protocol_id] = spec
            while len(self.specs) > SPEC_CACHE:
                self.specs.popitem(last=False)
        return spec

    def preflight(self, spec: Any) -> dict[str, Any]:
        draft = load_draft(spec)
        with self.uow.reader.connect() as conn:
            exists = (
                conn.execute(
                    select(t.protocols.c.protocol_id).where(
                        t.protocols.c.protocol_id == draft.protocol_id
                    )
                ).first()
                is not None
            )
            near = near_duplicates(conn, draft)
        return {
            "protocol_id": draft.protocol_id,
            "fingerprint": fingerprint(draft.raw),
            "registered": exists,
            "near_duplicates": near,
            "converges": bool(near) and not exists,
        }

    def register(self, signed: SignedRequest, body: dict[str, Any], text: str) -> dict[str, Any]:
        self.identities.authenticate(signed)
        draft = load_draft(body.get("spec"))
        allow_new, reason = body.get("allow_new", False), body.get("reason")
        if not isinstance(allow_new, bool) or (
            reason is not None and (not isinstance(reason, str) or len(reason) > 2000)
        ):
            raise bad("allow_new is a boolean and reason a string of at most 2000 chars")
        if allow_new and not (reason or "").strip():
            raise bad(
                "--allow-new needs --reason: say why a parameter cannot cover it",
                "registry.reason_required",
                422,
            )
        pid = draft.protocol_id

        def decide(conn: Connection, now: float, seq: int) -> Change:
            if (
                conn.execute(
                    select(t.protocols.c.protocol_id).where(t.protocols.c.protocol_id == pid)
                ).first()
                is not None
            ):
                return Change(None, pid, {}, {"protocol_id": pid})
            near = near_duplicates(conn, draft)
            if near and not allow_new:
                raise RegistryError(
                    "registry.near_duplicate",
                    f"{len(near)} known protocol(s) have the same messages and flow once "
                    f"parameter values are set aside (first: {near[0]['name']} "
                    f"{near[0]['protocol_id'][:12]}); add parameters to it instead, or "
                    "register with --allow-new --reason",
                    status=409,
                    details={"near_duplicates": near},
                )
            raw = draft.raw
            conn.execute(
                insert(t.protocols).values(
                    protocol_id=pid,
                    name=draft.name[:200],
                    type=draft.type,
                    spec_version=draft.spec_version,
                    description=draft.description,
                    search=f"{draft.name}\n{draft.description}\n{draft.type or ''}".lower(),
                    fingerprint=fingerprint(raw),
                    spec=canonical_json(raw),
                    registered_by=signed.agent_id,
                    reason=reason if near else None,
                    near_duplicates=json.dumps(near) if near else None,
                    created_at=now,
                    seq=seq,
                )
            )
            return Change(
                "protocol",
                pid,
                {"protocol_id": pid, "fingerprint": fingerprint(raw), "near_duplicates": near},
                {"protocol_id": pid},
            )

        return self.uow.write(signed, text, decide)

    def protocol(self, protocol_id: str) -> dict[str, Any]:
        with self.uow.reader.connect() as conn:
            row = (
                conn.execute(select(t.protocols).where(t.protocols.c.protocol_id == protocol_id))
                .mappings()
                .first()
            )
            if row is None:
                raise not_found("protocol", protocol_id)
            found = (
                conn.execute(
                    select(t.bundles.c.bundle_id, t.bundles.c.size, t.bundles.c.created_by)
                    .where(t.bundles.c.protocol_id == protocol_id)
                    .order_by(t.bundles.c.seq)
                )
                .mappings()
                .all()
            )
            proof = proofs.proof(
                self.uow, conn,
                [row["seq"], *proofs.identity_seqs(conn, [row["registered_by"]])],
            )
        return {
            **summary(row),
            "spec": json.loads(row["spec"]),
            "bundles": [dict(b) for b in found],
            "proof": proof,
        }

    def search(
        self,
        *,
        name: str | None = None,
        type: str | None = None,
        q: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        limit, after = page_limit(limit), decode_cursor(cursor)
        cols = [c for c in t.protocols.c if c.name not in ("spec", "search", "fingerprint")]
        query = select(*cols)
        if name:
            query = query.where(func.lower(t.protocols.c.name).like(like(name), escape="\\"))
        if type:
            query = query.where(t.protocols.c.type == type)
        if q:
            query = query.where(t.protocols.c.search.like(like(q), escape="\\"))
        if after is not None:
            query = query.where(t.protocols.c.seq > after)
        with self.uow.reader.connect() as conn:
            rows = conn.execute(query.order_by(t.protocols.c.seq).limit(limit + 1)).mappings().all()
        items = [summary(r) for r in rows[:limit]]
        return {
            "items": items,
            "next_cursor": encode_cursor(items[-1]["seq"]) if len(rows) > limit else None,
        }
