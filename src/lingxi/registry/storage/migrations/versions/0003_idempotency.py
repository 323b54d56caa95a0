"""Idempotency keys: the first answer of each (agent, key) write, kept 24 hours.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("idempotency",
                    sa.Column("agent_id", sa.String(32), primary_key=True),
                    sa.Column("key", sa.String(128), primary_key=True),
                    sa.Column("request_sha256", sa.String(64), nullable=False),
                    sa.Column("response", sa.Text, nullable=False),
                    sa.Column("ts", sa.BigInteger, nullable=False))
    op.create_index("ix_idempotency_ts", "idempotency", ["ts"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_ts", "idempotency")
    op.drop_table("idempotency")
