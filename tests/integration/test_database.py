"""The connection pool and connections the server dropped: a connection that sat idle is pinged before use
and replaced when dead; one that goes away without idling fails one statement, after which the pool
reconnects by itself. A connection used a moment ago is handed out without a ping. A glance (autocommit)
hands its connection back in transaction mode. Connections opened for a burst are kept for the next one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from brain.clock import SystemClock
from brain.events.bus import EventBus
from brain.store.database import Database
from brain.store.unit_of_work import Transactions
from tests.conftest import PgServer


def terminate(pg_server: PgServer, pid: int) -> None:
    with pg_server.admin() as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


async def backend_pid(db: Database) -> int:
    async with db.engine.connect() as connection:
        return int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())


def count_pings(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    ping: Callable[[Any], bool] = db.engine.dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        pings.append(1)
        return ping(dbapi_connection)

    monkeypatch.setattr(db.engine.dialect, "do_ping", counted)
    return pings


async def test_a_connection_dropped_while_idle_is_replaced_before_use(
        database_url: str, pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> None:
    db = Database(database_url, pool_size=1, ping_after_idle=0.0)  # every reused connection counts as idle
    try:
        pings = count_pings(db, monkeypatch)
        dead = await backend_pid(db)
        terminate(pg_server, dead)
        # The ping finds the dead connection; the unit of work runs on a new one, without an error.
        async with db.sessions() as session, session.begin():
            assert await session.scalar(text("SELECT 1")) == 1
        assert pings == [1]
        assert await backend_pid(db) != dead
    finally:
        await db.dispose()


async def test_a_connection_used_a_moment_ago_is_not_pinged(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    db = Database(database_url, pool_size=1, ping_after_idle=3600.0)
    try:
        pings = count_pings(db, monkeypatch)
        first = await backend_pid(db)
        for _ in range(3):
            assert await backend_pid(db) == first  # the same pooled connection each time
        assert pings == []
    finally:
        await db.dispose()


async def test_connections_opened_beyond_pool_size_are_kept_for_the_next_burst(database_url: str) -> None:
    """A new server backend costs milliseconds of server CPU before its caches are warm: a load that needs more
    than `pool_size` connections at once must not open (and close) them again each time it does."""
    db = Database(database_url, pool_size=2, ping_after_idle=3600.0)

    async def burst() -> set[int]:
        connections = [await db.engine.connect() for _ in range(4)]
        try:
            return {int((await c.execute(text("SELECT pg_backend_pid()"))).scalar_one()) for c in connections}
        finally:
            for connection in connections:
                await connection.close()

    try:
        first = await burst()
        assert len(first) == 4
        assert await burst() == first  # the same four backends: none was closed and reopened
    finally:
        await db.dispose()


async def test_a_connection_dropped_without_idling_fails_once_then_the_pool_reconnects(
        database_url: str, pg_server: PgServer) -> None:
    db = Database(database_url, pool_size=2, ping_after_idle=3600.0)
    try:
        dead = await backend_pid(db)
        terminate(pg_server, dead)
        with pytest.raises(DBAPIError) as failed:
            async with db.sessions() as session, session.begin():
                await session.scalar(text("SELECT 1"))
        assert failed.value.connection_invalidated
        assert isinstance(failed.value.orig, psycopg.OperationalError)
        # Nothing else to do: the next unit of work gets a fresh connection.
        async with db.sessions() as session, session.begin():
            assert await session.scalar(text("SELECT 1")) == 1
        assert await backend_pid(db) != dead
    finally:
        await db.dispose()


async def test_a_glance_leaves_its_pooled_connection_transactional(database_url: str) -> None:
    """`glance` runs in autocommit; the same pooled connection must be back in transactions afterwards, or a
    failing unit of work would keep half its writes."""
    db = Database(database_url, pool_size=1)
    transactions = Transactions(db, EventBus(), SystemClock())
    try:
        async with db.engine.begin() as connection:
            await connection.execute(text("CREATE TABLE glance_probe (n int)"))
        async with transactions.glance() as session:
            assert await session.scalar(text("SELECT count(*) FROM glance_probe")) == 0
        with pytest.raises(RuntimeError):
            async with transactions.begin() as uow:
                await uow.session.execute(text("INSERT INTO glance_probe VALUES (1)"))
                raise RuntimeError("the unit of work fails after its write")
        async with transactions.read() as session:
            assert await session.scalar(text("SELECT count(*) FROM glance_probe")) == 0
    finally:
        await db.dispose()
