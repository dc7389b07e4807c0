"""Alembic environment: async engine over psycopg 3, metadata of every model of the project."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from app.tables import target_metadata

config = context.config


# The HNSW index of a vector space other than the default one is made by the running memory when an installation
# changes its embedder (brain.memory.space.ensure_index), not by a migration.
_RUNTIME_INDEX_PREFIX = "ix_memory_nodes_hnsw_"


def include_object(obj, name, type_, reflected, compare_to):  # type: ignore[no-untyped-def]
    # The alembic version table and pgvector's own objects are not ours to compare.
    if type_ == "index" and reflected and compare_to is None and str(name).startswith(_RUNTIME_INDEX_PREFIX):
        return False
    return not (type_ == "table" and name == "alembic_version")


def do_run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_object=include_object,
        compare_type=True,
        compare_server_default=False,
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    engine = create_async_engine(config.get_main_option("sqlalchemy.url") or "", poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(do_run_migrations)
    await engine.dispose()


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
    else:
        asyncio.run(run_async_migrations())
