"""Each invitation's browse item, its fixed part stored with the row.

A browse page rendered every item's JSON in its query: a dozen text and time
conversions per row, per page, on every request the list cache misses. The part no
later write moves (the invitation's own facts, its protocol's name and type, its
host's nickname) is rendered once, by the post's ``INSERT``, into ``browse_item``;
the page adds the host's rating, table counts and last heartbeat. The rows already
there get theirs here, rendered from the row, its protocol's and its host's (every
row, so one released back to ``open`` later has it too).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from lingxi.registry.storage.browsing import ITEM, item_sql

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.add_column(sa.Column(ITEM, sa.Text))
    conn = op.get_bind()
    conn.exec_driver_sql(
        f"UPDATE invitations SET {ITEM} = {item_sql(conn.dialect.name == 'postgresql')}"
    )
    with op.batch_alter_table("invitations") as batch:
        batch.alter_column(ITEM, existing_type=sa.Text, nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column(ITEM)
