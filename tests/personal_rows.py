"""Row counts of every personal table (each table of the app with a `user_id`, and `users`): what a stranger, a
refused update or a foreign press must leave as it was."""

from __future__ import annotations

from sqlalchemy import func, select

import app.tables  # noqa: F401  (every table, the chat layer's included)
from brain.core import Brain
from brain.tables import metadata


def personal_tables() -> list[str]:
    return sorted(t.name for t in metadata.tables.values() if "user_id" in t.c or t.name == "users")


async def personal_row_counts(brain: Brain) -> dict[str, int]:
    counts: dict[str, int] = {}
    async with brain.db.autocommit() as connection:
        for name in personal_tables():
            counts[name] = int(await connection.scalar(select(func.count()).select_from(metadata.tables[name])) or 0)
    return counts
