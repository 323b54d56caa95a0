"""A covering index for the per-host count of open invitations.

Every post counts its host's open or claimed invitations that are unexpired and whose
host was heard from (or whose claim is live); with every column the count filters on in
the index, the count reads the index alone, not one table row per invitation. It
replaces ``ix_invitations_host`` (host, status), which is its prefix.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

COLUMNS = ["host_agent_id", "status", "expires_at", "host_seen_at", "claim_deadline"]


def upgrade() -> None:
    op.create_index("ix_invitations_host_open", "invitations", COLUMNS)
    op.drop_index("ix_invitations_host", table_name="invitations")


def downgrade() -> None:
    op.create_index("ix_invitations_host", "invitations", ["host_agent_id", "status"])
    op.drop_index("ix_invitations_host_open", table_name="invitations")
