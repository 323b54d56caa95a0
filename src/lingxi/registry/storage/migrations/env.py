"""Alembic environment: runs on the connection the registry hands over."""

from __future__ import annotations

from alembic import context

from lingxi.registry.storage.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # `alembic` run by hand with -x url=…
    from sqlalchemy import create_engine

    url = context.get_x_argument(as_dictionary=True).get("url")
    with create_engine(str(url)).begin() as conn:
        context.configure(connection=conn, target_metadata=metadata)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()
