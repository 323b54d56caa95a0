"""An index for browsing open invitations newest first, a page at a time.

Browse reads the open invitations (and the claimed ones whose claim lapsed) in
descending ``seq`` from a cursor. With only ``(status, expires_at)`` to go on, both
databases read every open invitation and sorted them for each page; on
``(status, seq)`` each status is a range read backwards from the cursor that stops
after one page.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_invitations_status_seq", "invitations", ["status", "seq"])


def downgrade() -> None:
    op.drop_index("ix_invitations_status_seq", table_name="invitations")
