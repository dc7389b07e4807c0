"""Migrations under the advisory lock: two processes that start together on one empty database (webhook scale-out)
both finish, and the database ends at the head with the schema the models describe."""

from __future__ import annotations

import multiprocessing

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from app.tables import target_metadata
from brain.store.migrate import alembic_config, upgrade


def _upgrade_after(start: multiprocessing.synchronize.Barrier, url: str) -> None:
    start.wait()
    upgrade(url)


@pytest.mark.slow
def test_two_processes_migrating_one_empty_database_at_once_both_succeed(pg_server) -> None:
    name = pg_server.create_database(template=None)
    url = pg_server.url(name)
    try:
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        # Forked: two processes with connections of their own, without paying twice for importing the project.
        fork = multiprocessing.get_context("fork")
        start = fork.Barrier(2)
        workers = [fork.Process(target=_upgrade_after, args=(start, url)) for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
        assert [worker.exitcode for worker in workers] == [0, 0]

        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                context = MigrationContext.configure(conn, opts={"compare_type": True})
                assert compare_metadata(context, target_metadata) == []
                heads = set(context.get_current_heads())
        finally:
            engine.dispose()
        assert heads == set(ScriptDirectory.from_config(alembic_config(url)).get_heads())
    finally:
        pg_server.drop_database(name)
