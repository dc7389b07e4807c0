"""Applies the Alembic migrations in `migrations/` (on start and by `companion migrate`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    return cfg


def upgrade(url: str, revision: str = "heads") -> None:
    """Synchronous; Alembic's env runs its own event loop, so call it outside a running loop
    (or through `asyncio.to_thread`)."""
    command.upgrade(alembic_config(url), revision)
