"""Registry storage: SQLAlchemy 2 Core tables, Alembic migrations, atomic writes.

SQLite under ``$LINGXI_HOME/registry/registry.db`` by default, PostgreSQL when
``LINGXI_DATABASE_URL`` (or ``--database-url``) names one. Every write runs
in one transaction that first takes the log head (``BEGIN IMMEDIATE`` on
SQLite, ``SELECT … FOR UPDATE`` on PostgreSQL), so several server processes
on one database act as one registry: claims cannot both win and the log stays
one chain.
"""
