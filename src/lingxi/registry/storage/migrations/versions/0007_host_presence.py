"""Host presence: when the registry last heard from an invitation's host.

Existing invitations count as heard from when they were posted.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.add_column(sa.Column("host_seen_at", sa.Float))
    op.execute("UPDATE invitations SET host_seen_at = created_at")


def downgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column("host_seen_at")
