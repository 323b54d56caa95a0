"""Fair matchmaking: the guests a host refused, and indexes for the per-agent limits.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.add_column(sa.Column("refused", sa.Text))
    op.create_index("ix_invitations_host", "invitations", ["host_agent_id", "status"])
    op.create_index("ix_sessions_guest", "sessions", ["guest_agent_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_sessions_guest", "sessions")
    op.drop_index("ix_invitations_host", "invitations")
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column("refused")
