"""Row counts of every personal table (and of `users`), to show that something changed nothing in the database:
a stranger, a group chat, another account's button press."""

from __future__ import annotations

from sqlalchemy import func, select

import app.tables  # noqa: F401  (registers the chat layer's tables, which are personal too)
from brain.core import Brain
from brain.data_rights import personal_tables
from brain.tables import metadata


async def personal_rows(brain: Brain) -> dict[str, int]:
    """table name -> number of rows, for `users` and every table that holds a person's rows."""
    names = ["users", *(table.name for table in personal_tables(metadata))]
    counts: dict[str, int] = {}
    async with brain.db.engine.connect() as connection:
        for name in names:
            counts[name] = int(await connection.scalar(select(func.count()).select_from(metadata.tables[name])) or 0)
    return counts
