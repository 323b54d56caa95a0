"""Agents: registering an identity (nickname and Ed25519 key), reading it with its proof,
and the key a signed request is checked against — the one its logged identity record
proves, never a mutable row."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, or_, select
from sqlalchemy.engine import Connection

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import agent_id_for, is_hex
from lingxi.registry.models.records import NICKNAME, iso, nickname_skeleton
from lingxi.registry.models.signing import SignedRequest, check_signature
from lingxi.registry.storage import proofs
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.common import bad, not_found
from lingxi.registry.storage.keylog import logged_identity_key
from lingxi.registry.storage.unit import Change, UnitOfWork


class Identities:
    """The ``agents`` aggregate, with this process's cache of proven keys."""

    def __init__(self, uow: UnitOfWork) -> None:
        self.uow = uow
        self.keys: dict[str, str] = {}

    def public_key_of(self, agent_id: str) -> str | None:
        """The key of ``agent_id``'s identity *record in the log*, never a mutable row: the
        ``agents`` row only says where the record is, and a record that is not that
        agent's self-signed identity (an edited row) counts as no key at all."""
        key = self.keys.get(agent_id)
        if key is None:
            with self.uow.reader.connect() as conn:
                text = conn.execute(
                    select(t.log.c.record)
                    .join(t.agents, t.agents.c.seq == t.log.c.seq)
                    .where(
                        t.agents.c.agent_id == agent_id,
                        t.log.c.kind == "identity",
                        t.log.c.record_id == agent_id,
                    )
                ).scalar()
            key = logged_identity_key(text, agent_id)
            if key is not None:
                self.keys[agent_id] = key
        return key

    def authenticate(self, signed: SignedRequest) -> str:
        """The signer's public key once its signature verifies (before any lock)."""
        key = self.public_key_of(signed.agent_id)
        if key is None:
            raise RegistryError(
                "registry.unknown_agent",
                f"{signed.agent_id} is not registered; run `lingxi register`",
                status=401,
            )
        check_signature(signed, key)
        self.uow.charge_writes(signed)
        return key

    def register(self, signed: SignedRequest, body: dict[str, Any], text: str) -> dict[str, Any]:
        nickname, public_key = body.get("nickname"), body.get("public_key")
        if not isinstance(nickname, str) or not NICKNAME.match(nickname):
            raise bad(
                "nickname must be 1-64 ASCII letters, digits, '_', '.' or '-'",
                "registry.bad_nickname",
                422,
            )
        if not is_hex(public_key, 64):
            raise bad(
                "public_key must be 64 lowercase hex chars (Ed25519)", "registry.bad_key", 422
            )
        if agent_id_for(public_key) != signed.agent_id:
            raise RegistryError(
                "registry.signature_invalid",
                "the signing agent id is not the one of this public key",
                status=401,
            )
        check_signature(signed, public_key)  # proof of possession of the key
        self.uow.charge_writes(signed)
        skeleton = nickname_skeleton(nickname)

        def decide(conn: Connection, now: float, seq: int) -> Change:
            mine = (
                conn.execute(select(t.agents).where(t.agents.c.agent_id == signed.agent_id))
                .mappings()
                .first()
            )
            answer = {"agent_id": signed.agent_id, "nickname": nickname, "public_key": public_key}
            if mine is not None:
                if mine["nickname"] != nickname:
                    raise RegistryError(
                        "registry.identity_exists",
                        f"this key is registered as {mine['nickname']!r}",
                        status=409,
                    )
                return Change(None, signed.agent_id, {}, answer)
            taken = conn.execute(
                select(t.agents.c.nickname).where(
                    or_(t.agents.c.nickname == nickname, t.agents.c.skeleton == skeleton)
                )
            ).first()
            if taken is not None and taken.nickname == nickname:
                raise RegistryError(
                    "registry.nickname_taken",
                    f"the nickname {nickname!r} belongs to another key",
                    status=409,
                )
            if taken is not None:
                raise RegistryError(
                    "registry.nickname_confusable",
                    f"{nickname!r} reads like the registered nickname "
                    f"{taken.nickname!r}; choose another",
                    status=409,
                )
            conn.execute(
                insert(t.agents).values(
                    agent_id=signed.agent_id,
                    nickname=nickname,
                    skeleton=skeleton,
                    public_key=public_key,
                    created_at=now,
                    seq=seq,
                )
            )
            return Change(
                "identity",
                signed.agent_id,
                {"agent_id": signed.agent_id, "created_at": iso(now)},
                answer,
            )

        return self.uow.write(signed, text, decide)

    def identity(self, agent_id: str) -> dict[str, Any]:
        """The agent's nickname and key, with the proof of its identity record."""
        with self.uow.reader.connect() as conn:
            row = (
                conn.execute(select(t.agents).where(t.agents.c.agent_id == agent_id))
                .mappings()
                .first()
            )
            if row is None:
                raise not_found("identity", agent_id)
            proof = proofs.proof(self.uow, conn, [row["seq"]])
        return {
            "agent_id": row["agent_id"],
            "nickname": row["nickname"],
            "public_key": row["public_key"],
            "created_at": iso(row["created_at"]),
            "seq": row["seq"],
            "proof": proof,
        }
