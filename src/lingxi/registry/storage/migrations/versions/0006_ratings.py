"""Reputation: Elo ratings per (agent, protocol) and the sessions that counted.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("agent_id", sa.String(32), primary_key=True),
        sa.Column("protocol_id", sa.String(64), primary_key=True),
        sa.Column("rating", sa.Integer, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_ratings_protocol", "ratings", ["protocol_id", "rating"])
    op.create_table(
        "rated_sessions",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("run", sa.String(64), nullable=False, unique=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rated_sessions")
    op.drop_index("ix_ratings_protocol", "ratings")
    op.drop_table("ratings")
