"""Each invitation's browse item, its fixed part stored with the row.

A browse page rendered every item's JSON in its query: a dozen text and time
conversions per row, per page, on every request the list cache misses. The part no
later write moves (the invitation's own facts, its protocol's name and type, its
host's nickname) is rendered once, by the post's ``INSERT``, into ``browse_item``;
the page adds the host's rating, table counts and last heartbeat. Rows already there
that can still be browsed (open or claimed) get theirs here; a row without one is
rendered whole by the page query, as before.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from lingxi.registry.storage.browsing import ITEM, fill_items

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.add_column(sa.Column(ITEM, sa.Text))
    conn = op.get_bind()
    conn.exec_driver_sql(fill_items(conn.dialect.name == "postgresql"))


def downgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column(ITEM)
