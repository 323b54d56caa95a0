"""Posted tables: each agent's table outcomes per protocol, from logged group receipts.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "table_standings",
        sa.Column("agent_id", sa.String(32), primary_key=True),
        sa.Column("protocol_id", sa.String(64), primary_key=True),
        sa.Column("completed", sa.Integer, nullable=False),
        sa.Column("left", sa.Integer, nullable=False),
        sa.Column("timed_out", sa.Integer, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("table_standings")
