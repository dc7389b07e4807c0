"""Migration 0043: people who were there before keep the language they have (as chosen: what they write does not
change it), people who come after start with none chosen; the downgrade drops the column."""

from __future__ import annotations

import uuid

import psycopg
from alembic import command

from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import database_at


def test_0043_keeps_the_language_of_people_there_before_and_new_people_follow_what_they_write(pg_server) -> None:
    with database_at(pg_server, "0042") as (name, person):
        upgrade(pg_server.url(name))
        newcomer = uuid.uuid4()
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute("INSERT INTO users (id, locale, timezone, quiet_start, quiet_end) "
                         "VALUES (%s, 'en', 'UTC', '22:00', '07:00')", (newcomer,))
            chosen = dict(conn.execute("SELECT id, locale_chosen FROM users").fetchall())
        assert chosen == {person: True, newcomer: False}

        command.downgrade(alembic_config(pg_server.url(name)), "0042")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            columns = {row[0] for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'users'").fetchall()}
        assert "locale_chosen" not in columns and "locale" in columns
        upgrade(pg_server.url(name))
