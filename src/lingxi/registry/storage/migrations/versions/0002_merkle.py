"""The log becomes an RFC 9162 Merkle tree: one stored hash per perfect subtree.

``merkle_nodes.id`` is ``level << 48 | index``; ``log.hash`` becomes the
entry's leaf hash and ``log_head.head`` the tree's root; the old hash chain
(``log.prev``) goes. Existing entries are re-hashed into leaves and the tree
is built from them, so an upgraded registry keeps its history.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from lingxi.registry.models.log import entry_leaf
from lingxi.registry.models.merkle import MemoryTree

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def node_id(level: int, index: int) -> int:
    return level << 48 | index


def upgrade() -> None:
    nodes = op.create_table("merkle_nodes",
                            sa.Column("id", sa.BigInteger, primary_key=True,
                                      autoincrement=False),
                            sa.Column("hash", sa.String(64), nullable=False))
    conn = op.get_bind()
    log = sa.table("log", sa.column("seq", sa.BigInteger), sa.column("kind", sa.String),
                   sa.column("record_id", sa.String), sa.column("record_sha256", sa.String),
                   sa.column("time", sa.BigInteger), sa.column("hash", sa.String))
    tree = MemoryTree()
    rows = conn.execute(sa.select(log.c.seq, log.c.kind, log.c.record_id, log.c.record_sha256,
                                  log.c.time).order_by(log.c.seq)).mappings().all()
    for row in rows:
        leaf = entry_leaf(dict(row))
        tree.append(leaf)
        conn.execute(log.update().where(log.c.seq == row["seq"]).values(hash=leaf.hex()))
    if tree.nodes:
        op.bulk_insert(nodes, [{"id": node_id(level, index), "hash": value.hex()}
                               for (level, index), value in tree.nodes.items()])
    head = sa.table("log_head", sa.column("id", sa.Integer), sa.column("size", sa.BigInteger),
                    sa.column("head", sa.String))
    conn.execute(head.update().where(head.c.id == 1).values(size=tree.size,
                                                           head=tree.root().hex()))
    with op.batch_alter_table("log") as batch:
        batch.drop_column("prev")
    op.create_index("ix_log_kind", "log", ["kind", "seq"])
    op.create_index("ix_log_record", "log", ["record_id"])


def downgrade() -> None:
    op.drop_index("ix_log_record", "log")
    op.drop_index("ix_log_kind", "log")
    with op.batch_alter_table("log") as batch:
        batch.add_column(sa.Column("prev", sa.String(64), nullable=False, server_default=""))
    op.drop_table("merkle_nodes")
