"""The registry's tables (SQLAlchemy Core). Migrations in ``migrations/`` create them.

The ``log`` table is the source of truth: it holds every accepted record in
order with its Merkle leaf hash (``merkle_nodes`` holds the tree above them,
``log_head`` its size and root). The other tables are indexes over the same facts
that queries need (open invitations, protocol search, session status).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

log_head = Table(
    "log_head",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("size", BigInteger, nullable=False),
    Column("head", String(64), nullable=False),
)

log = Table(
    "log",
    metadata,
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(32), nullable=False),
    Column("record_id", String(160), nullable=False),
    Column("record_sha256", String(64), nullable=False),
    Column("hash", String(64), nullable=False),  # the entry's Merkle leaf hash
    Column("time", BigInteger, nullable=False),
    Column("record", Text, nullable=False),
    Index("ix_log_kind", "kind", "seq"),
    Index("ix_log_record", "record_id"),
)

# One hash per perfect subtree of the log's Merkle tree: id = level << 48 | index.
merkle_nodes = Table(
    "merkle_nodes",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("hash", String(64), nullable=False),
)

nonces = Table(
    "nonces",
    metadata,
    Column("agent_id", String(32), primary_key=True),
    Column("nonce", String(64), primary_key=True),
    Column("ts", BigInteger, nullable=False),
    Index("ix_nonces_ts", "ts"),
)

idempotency = Table(
    "idempotency",
    metadata,
    Column("agent_id", String(32), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("request_sha256", String(64), nullable=False),
    Column("response", Text, nullable=False),
    Column("ts", BigInteger, nullable=False),
    Index("ix_idempotency_ts", "ts"),
)

agents = Table(
    "agents",
    metadata,
    Column("agent_id", String(32), primary_key=True),
    Column("nickname", String(64), nullable=False, unique=True),
    # records.nickname_skeleton: confusable nicknames share it (unique)
    Column("skeleton", String(64)),
    Column("public_key", String(64), nullable=False, unique=True),
    Column("created_at", Float, nullable=False),
    Column("seq", BigInteger, nullable=False),
    UniqueConstraint("skeleton", name="uq_agents_skeleton"),
)

protocols = Table(
    "protocols",
    metadata,
    Column("protocol_id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("type", String(64)),
    Column("spec_version", String(16), nullable=False),
    Column("description", Text, nullable=False),
    Column("search", Text, nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("spec", Text, nullable=False),
    Column("registered_by", String(32), nullable=False),
    Column("reason", Text),
    Column("near_duplicates", Text),
    Column("created_at", Float, nullable=False),
    Column("seq", BigInteger, nullable=False, unique=True),
    Index("ix_protocols_fingerprint", "fingerprint"),
)

bundles = Table(
    "bundles",
    metadata,
    Column("protocol_id", String(64), primary_key=True),
    Column("bundle_id", String(64), primary_key=True),
    Column("size", Integer, nullable=False),
    Column("manifest", Text, nullable=False),
    Column("created_by", String(32), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("seq", BigInteger, nullable=False),
)

bundle_files = Table(
    "bundle_files",
    metadata,
    Column("bundle_id", String(64), primary_key=True),
    Column("path", String(200), primary_key=True),
    Column("content", LargeBinary, nullable=False),
)

invitations = Table(
    "invitations",
    metadata,
    Column("invitation_id", String(64), primary_key=True),
    Column("protocol_id", String(64), nullable=False),
    Column("host_agent_id", String(32), nullable=False),
    Column("host_public_key", String(64), nullable=False),
    Column("endpoint", String(300), nullable=False),
    Column("options", Text, nullable=False),
    Column("note", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("session_id", String(64)),
    Column("guest_agent_id", String(32)),
    Column("claim_deadline", Float),
    Column("refused", Text),  # JSON list of guests the host refused
    Column("host_seen_at", Float),  # the host's last heartbeat (or the post)
    Column("seq", BigInteger, nullable=False, unique=True),
    # a browse item's fixed part as JSON text, rendered with the row (storage.browsing; 0011)
    Column("browse_item", Text, nullable=False),
    # covers the per-host count of open invitations every post makes (0008; its prefix
    # serves the lists by host)
    Index("ix_invitations_host_open", "host_agent_id", "status", "expires_at", "host_seen_at",
          "claim_deadline"),
    Index("ix_invitations_open", "status", "expires_at"),
    # browse: each status read newest first from the cursor, one page (0010)
    Index("ix_invitations_status_seq", "status", "seq"),
    Index("ix_invitations_protocol", "protocol_id"),
)

sessions = Table(
    "sessions",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("invitation_id", String(64), nullable=False),
    Column("protocol_id", String(64), nullable=False),
    Column("host_agent_id", String(32), nullable=False),
    Column("guest_agent_id", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("claim_deadline", Float, nullable=False),
    Column("host_receipt", Text),
    Column("guest_receipt", Text),
    Column("outcome", Text),
    Column("verified", Boolean),
    Column("seq", BigInteger, nullable=False, unique=True),
    Index("ix_sessions_invitation", "invitation_id"),
    Index("ix_sessions_status", "status"),
    Index("ix_sessions_guest", "guest_agent_id", "status"),
)

# Reputation (models.rating): an index over the ``rating`` log records, which are the truth.
ratings = Table(
    "ratings",
    metadata,
    Column("agent_id", String(32), primary_key=True),
    Column("protocol_id", String(64), primary_key=True),
    Column("rating", Integer, nullable=False),
    Column("games", Integer, nullable=False),
    Column("seq", BigInteger, nullable=False),  # the last rating record
    Index("ix_ratings_protocol", "protocol_id", "rating"),
)

# One row per counted session; ``run`` (the receipts' wire session and handshake) is unique,
# so one played run never counts twice, even posted again under another registry session.
rated_sessions = Table(
    "rated_sessions",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("run", String(64), nullable=False, unique=True),
    Column("seq", BigInteger, nullable=False),
)

# Posted tables (models.rating, "Tables"): an index over the ``group_receipt`` log records,
# which are the truth: how many tables each agent ended seated (completed), left or was
# timed out of, per protocol; ``seq`` is its last group receipt record.
table_standings = Table(
    "table_standings",
    metadata,
    Column("agent_id", String(32), primary_key=True),
    Column("protocol_id", String(64), primary_key=True),
    Column("completed", Integer, nullable=False),
    Column("left", Integer, nullable=False),
    Column("timed_out", Integer, nullable=False),
    Column("seq", BigInteger, nullable=False),
)
