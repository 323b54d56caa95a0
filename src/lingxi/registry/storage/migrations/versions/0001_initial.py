"""The first registry schema: log, identities, protocols, bundles, invitations, sessions.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("meta",
                    sa.Column("key", sa.String(64), primary_key=True),
                    sa.Column("value", sa.Text, nullable=False))
    op.create_table("log_head",
                    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                    sa.Column("size", sa.BigInteger, nullable=False),
                    sa.Column("head", sa.String(64), nullable=False))
    op.create_table("log",
                    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
                    sa.Column("kind", sa.String(32), nullable=False),
                    sa.Column("record_id", sa.String(160), nullable=False),
                    sa.Column("record_sha256", sa.String(64), nullable=False),
                    sa.Column("prev", sa.String(64), nullable=False),
                    sa.Column("hash", sa.String(64), nullable=False),
                    sa.Column("time", sa.BigInteger, nullable=False),
                    sa.Column("record", sa.Text, nullable=False))
    op.create_table("nonces",
                    sa.Column("agent_id", sa.String(32), primary_key=True),
                    sa.Column("nonce", sa.String(64), primary_key=True),
                    sa.Column("ts", sa.BigInteger, nullable=False))
    op.create_index("ix_nonces_ts", "nonces", ["ts"])
    op.create_table("agents",
                    sa.Column("agent_id", sa.String(32), primary_key=True),
                    sa.Column("nickname", sa.String(64), nullable=False, unique=True),
                    sa.Column("public_key", sa.String(64), nullable=False, unique=True),
                    sa.Column("created_at", sa.Float, nullable=False),
                    sa.Column("seq", sa.BigInteger, nullable=False))
    op.create_table("protocols",
                    sa.Column("protocol_id", sa.String(64), primary_key=True),
                    sa.Column("name", sa.String(200), nullable=False),
                    sa.Column("type", sa.String(64)),
                    sa.Column("spec_version", sa.String(16), nullable=False),
                    sa.Column("description", sa.Text, nullable=False),
                    sa.Column("search", sa.Text, nullable=False),
                    sa.Column("fingerprint", sa.String(64), nullable=False),
                    sa.Column("spec", sa.Text, nullable=False),
                    sa.Column("registered_by", sa.String(32), nullable=False),
                    sa.Column("reason", sa.Text),
                    sa.Column("near_duplicates", sa.Text),
                    sa.Column("created_at", sa.Float, nullable=False),
                    sa.Column("seq", sa.BigInteger, nullable=False, unique=True))
    op.create_index("ix_protocols_fingerprint", "protocols", ["fingerprint"])
    op.create_table("bundles",
                    sa.Column("protocol_id", sa.String(64), primary_key=True),
                    sa.Column("bundle_id", sa.String(64), primary_key=True),
                    sa.Column("size", sa.Integer, nullable=False),
                    sa.Column("manifest", sa.Text, nullable=False),
                    sa.Column("created_by", sa.String(32), nullable=False),
                    sa.Column("created_at", sa.Float, nullable=False),
                    sa.Column("seq", sa.BigInteger, nullable=False))
    op.create_table("bundle_files",
                    sa.Column("bundle_id", sa.String(64), primary_key=True),
                    sa.Column("path", sa.String(200), primary_key=True),
                    sa.Column("content", sa.LargeBinary, nullable=False))
    op.create_table("invitations",
                    sa.Column("invitation_id", sa.String(64), primary_key=True),
                    sa.Column("protocol_id", sa.String(64), nullable=False),
                    sa.Column("host_agent_id", sa.String(32), nullable=False),
                    sa.Column("host_public_key", sa.String(64), nullable=False),
                    sa.Column("endpoint", sa.String(300), nullable=False),
                    sa.Column("options", sa.Text, nullable=False),
                    sa.Column("note", sa.Text, nullable=False),
                    sa.Column("status", sa.String(16), nullable=False),
                    sa.Column("created_at", sa.Float, nullable=False),
                    sa.Column("expires_at", sa.Float, nullable=False),
                    sa.Column("session_id", sa.String(64)),
                    sa.Column("guest_agent_id", sa.String(32)),
                    sa.Column("claim_deadline", sa.Float),
                    sa.Column("seq", sa.BigInteger, nullable=False, unique=True))
    op.create_index("ix_invitations_open", "invitations", ["status", "expires_at"])
    op.create_index("ix_invitations_protocol", "invitations", ["protocol_id"])
    op.create_table("sessions",
                    sa.Column("session_id", sa.String(64), primary_key=True),
                    sa.Column("invitation_id", sa.String(64), nullable=False),
                    sa.Column("protocol_id", sa.String(64), nullable=False),
                    sa.Column("host_agent_id", sa.String(32), nullable=False),
                    sa.Column("guest_agent_id", sa.String(32), nullable=False),
                    sa.Column("status", sa.String(16), nullable=False),
                    sa.Column("created_at", sa.Float, nullable=False),
                    sa.Column("updated_at", sa.Float, nullable=False),
                    sa.Column("claim_deadline", sa.Float, nullable=False),
                    sa.Column("host_receipt", sa.Text),
                    sa.Column("guest_receipt", sa.Text),
                    sa.Column("outcome", sa.Text),
                    sa.Column("verified", sa.Boolean),
                    sa.Column("seq", sa.BigInteger, nullable=False, unique=True))
    op.create_index("ix_sessions_invitation", "sessions", ["invitation_id"])
    op.create_index("ix_sessions_status", "sessions", ["status"])
    op.bulk_insert(sa.table("log_head", sa.column("id", sa.Integer),
                            sa.column("size", sa.BigInteger), sa.column("head", sa.String)),
                   [{"id": 1, "size": 0, "head": "0" * 64}])


def downgrade() -> None:
    for name in ("sessions", "invitations", "bundle_files", "bundles", "protocols", "agents",
                 "nonces", "log", "log_head", "meta"):
        op.drop_table(name)
