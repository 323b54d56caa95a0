"""UI bundles: immutable sets of static files a protocol's registrant publishes for it
(content-addressed, checked by :mod:`lingxi.registry.models.bundle`), and reading one."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from lingxi.registry.errors import RegistryError
from lingxi.registry.models import bundle as bundles_model
from lingxi.registry.models.records import iso
from lingxi.registry.models.signing import SignedRequest
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad, not_found
from lingxi.registry.storage.identities import Identities
from lingxi.registry.storage.unit import Change, UnitOfWork


def decode_files(raw_files: Any) -> dict[str, bytes]:
    """``[{path, content_base64}]`` as ``{path: bytes}``; a bad shape, bad base64 or a path
    given twice is a 400."""
    if not isinstance(raw_files, list) or not all(
        isinstance(f, dict)
        and isinstance(f.get("path"), str)
        and isinstance(f.get("content_base64"), str)
        for f in raw_files
    ):
        raise bad("files must be a list of {path, content_base64}")
    files: dict[str, bytes] = {}
    for item in raw_files:
        try:
            files[item["path"]] = base64.b64decode(item["content_base64"], validate=True)
        except (binascii.Error, ValueError):
            raise bad(f"{item['path']}: content_base64 is not base64") from None
    if len(files) != len(raw_files):
        raise bad("a path appears twice in the bundle")
    return files


class Bundles:
    """The ``bundles`` aggregate (and the files they share by content)."""

    def __init__(self, uow: UnitOfWork, identities: Identities) -> None:
        self.uow, self.identities = uow, identities

    def publish(
        self, signed: SignedRequest, protocol_id: str, body: dict[str, Any], text: str
    ) -> dict[str, Any]:
        self.identities.authenticate(signed)
        files = decode_files(body.get("files"))
        manifest = bundles_model.check_files(files)
        bid = manifest["bundle_id"]

        def decide(conn: Connection, now: float, seq: int) -> Change:
            registrant = conn.execute(
                select(t.protocols.c.registered_by).where(t.protocols.c.protocol_id == protocol_id)
            ).scalar()
            if registrant is None:
                raise not_found("protocol", protocol_id)
            if registrant != signed.agent_id:  # a page runs beside the person's session
                raise RegistryError(
                    "registry.not_registrant",
                    "only the agent that registered this protocol may publish UI bundles for it",
                    status=403,
                )
            answer = {"protocol_id": protocol_id, **manifest}
            if (
                conn.execute(
                    select(t.bundles.c.bundle_id).where(
                        t.bundles.c.protocol_id == protocol_id, t.bundles.c.bundle_id == bid
                    )
                ).first()
                is not None
            ):
                return Change(None, bid, {}, answer)
            stored = {
                r[0]
                for r in conn.execute(
                    select(t.bundle_files.c.path).where(t.bundle_files.c.bundle_id == bid)
                )
            }
            for path, content in files.items():
                if path not in stored:
                    conn.execute(
                        insert(t.bundle_files).values(bundle_id=bid, path=path, content=content)
                    )
            conn.execute(
                insert(t.bundles).values(
                    protocol_id=protocol_id,
                    bundle_id=bid,
                    size=manifest["size"],
                    manifest=json.dumps(manifest["files"], sort_keys=True),
                    created_by=signed.agent_id,
                    created_at=now,
                    seq=seq,
                )
            )
            return Change(
                "bundle", f"{protocol_id}:{bid}", {"protocol_id": protocol_id, **manifest}, answer
            )

        return self.uow.write(signed, text, decide)

    def bundle(self, protocol_id: str, bundle_id: str) -> dict[str, Any]:
        with self.uow.reader.connect() as conn:
            row = (
                conn.execute(
                    select(t.bundles).where(
                        t.bundles.c.protocol_id == protocol_id, t.bundles.c.bundle_id == bundle_id
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                raise not_found("bundle", bundle_id)
            files = conn.execute(
                select(t.bundle_files.c.path, t.bundle_files.c.content)
                .where(t.bundle_files.c.bundle_id == bundle_id)
                .order_by(t.bundle_files.c.path)
            ).all()
        return {
            "protocol_id": protocol_id,
            "bundle_id": bundle_id,
            "size": row["size"],
            "created_by": row["created_by"],
            "created_at": iso(row["created_at"]),
            "files": [
                {"path": f.path, "content_base64": base64.b64encode(f.content).decode()}
                for f in files
            ],
        }
