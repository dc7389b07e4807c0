"""Row counts of every personal table (each table of the app with a `user_id`, and `users`), to show that something
changed nothing in the database: a stranger, a refused update, a group chat, another account's button press."""

from __future__ import annotations

from sqlalchemy import func, select

import app.tables  # noqa: F401  (every table, the chat layer's included)
from brain.core import Brain
from brain.tables import metadata


def personal_tables() -> list[str]:
    return sorted(t.name for t in metadata.tables.values() if "user_id" in t.c or t.name == "users")


async def personal_row_counts(brain: Brain) -> dict[str, int]:
    """table name -> number of rows, for `users` and every table that holds a person's rows."""
    counts: dict[str, int] = {}
    async with brain.db.engine.connect() as connection:
        for name in personal_tables():
            counts[name] = int(await connection.scalar(select(func.count()).select_from(metadata.tables[name])) or 0)
    return counts


personal_rows = personal_row_counts
