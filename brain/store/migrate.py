"""Applies the Alembic migrations in `migrations/` (on start and by `companion migrate`), one process at a time:
processes that start together on one database (several `companion run` behind a webhook) wait for each other's
migrations under a PostgreSQL advisory lock instead of racing to create the same tables."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
# The advisory lock's key, a name hashed by PostgreSQL to 64 bits (as the other advisory locks here are named).
MIGRATION_LOCK = "companion:migrations"


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    return cfg


def upgrade(url: str, revision: str = "heads") -> None:
    """Synchronous; call it outside a running event loop (or through `asyncio.to_thread`). Holds the migration
    lock on the connection that migrates: a second process waits for it, then finds the database at the head
    and has nothing left to do. The lock is the session's, so it goes with the connection even if one dies."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(hashtextextended(:key, 0))"), {"key": MIGRATION_LOCK})
            connection.commit()
            cfg = alembic_config(url)
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, revision)
            connection.commit()
            connection.execute(text("SELECT pg_advisory_unlock(hashtextextended(:key, 0))"), {"key": MIGRATION_LOCK})
            connection.commit()
    finally:
        engine.dispose()
