"""A database migrated to a given revision, for the tests of one migration on a database with memories."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from brain.store.migrate import upgrade

VECTOR = "[" + ",".join(["0.0625"] * 256) + "]"  # an embedding of the schema's 256 dimensions


@contextmanager
def database_at(pg_server: Any, revision: str) -> Iterator[tuple[str, uuid.UUID]]:
    """A new database (its name) migrated to `revision`, the vector extension created first, with one person (their
    id) in it; dropped afterwards."""
    name = pg_server.create_database(template=None)
    try:
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        upgrade(pg_server.url(name), revision)
        person = uuid.uuid4()
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute("INSERT INTO users (id, locale, timezone, quiet_start, quiet_end) "
                         "VALUES (%s, 'en', 'UTC', '22:00', '07:00')", (person,))
        yield name, person
    finally:
        pg_server.drop_database(name)
