"""Nickname skeletons: confusable nicknames (``Alice``/``a1ice``) share one, kept unique.

Existing agents get theirs; when two old nicknames already collide, the later
one keeps a skeleton suffixed with its agent id (it stays, nobody new can
take a third look-alike).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from lingxi.registry.models.records import nickname_skeleton

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        batch.add_column(sa.Column("skeleton", sa.String(64)))
    agents = sa.table("agents", sa.column("agent_id", sa.String), sa.column("nickname", sa.String),
                      sa.column("skeleton", sa.String), sa.column("seq", sa.BigInteger))
    conn = op.get_bind()
    seen: set[str] = set()
    for row in conn.execute(sa.select(agents.c.agent_id, agents.c.nickname)
                            .order_by(agents.c.seq)).all():
        skeleton = nickname_skeleton(row.nickname)
        if skeleton in seen:
            skeleton = f"{skeleton}:{row.agent_id}"[:64]
        seen.add(skeleton)
        conn.execute(agents.update().where(agents.c.agent_id == row.agent_id)
                     .values(skeleton=skeleton))
    with op.batch_alter_table("agents") as batch:
        batch.create_unique_constraint("uq_agents_skeleton", ["skeleton"])


def downgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        batch.drop_constraint("uq_agents_skeleton", type_="unique")
        batch.drop_column("skeleton")
