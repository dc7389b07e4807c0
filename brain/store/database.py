"""Engine and session factory. One `Database` per process; sessions are short and per unit of work."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from typing import Any

from psycopg import _queries
from sqlalchemy import event, exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from brain.store.vectors import dump_vectors_on_connect

# A pooled connection idle for longer than this is pinged before it is handed out (a round trip); one that
# worked a moment ago is not. The pings find connections the server dropped while they sat in the pool (a
# restart, an idle timeout on the way), which almost always takes longer than this.
PING_AFTER_IDLE_S = 1.0
_IDLE_SINCE = "companion_idle_since"

# psycopg turns a statement's %(name)s placeholders into $n by a regular-expression pass, remembered for the last 128
# statement texts of up to 4,096 characters. Several of ours are longer (/today's snapshot, recall with a time
# window, the promotion's candidate search), and the pass over one of them cost 0.5-1 ms of CPU on every run. Our
# statements are fixed texts (values are parameters), a few hundred in all, so remembering the longer ones and
# more of them costs some hundred kilobytes.
LONGEST_REMEMBERED_STATEMENT = 65536
STATEMENTS_REMEMBERED = 1024
if _queries.MAX_CACHED_STATEMENT_LENGTH < LONGEST_REMEMBERED_STATEMENT:
    _queries.MAX_CACHED_STATEMENT_LENGTH = LONGEST_REMEMBERED_STATEMENT
    _queries._query2pg = functools.lru_cache(maxsize=STATEMENTS_REMEMBERED)(_queries._query2pg_nocache)


class Database:
    def __init__(self, url: str, *, pool_size: int = 10, echo: bool = False,
                 ping_after_idle: float = PING_AFTER_IDLE_S) -> None:
        self.url = url
        self.ping_after_idle = ping_after_idle
        # Not `pool_pre_ping`, which pings on every checkout: under load that was one round trip in three.
        # At most 2 x `pool_size` connections, all kept once opened: with `pool_size` kept and as many more as
        # overflow, a load that needs a little more than `pool_size` at once (the Telegram adapter's 16 lanes
        # and its sender) opened and closed a connection every 15 messages, and a new server backend costs
        # 3-4 ms of server CPU before its caches are warm. LIFO: a light load reuses the same few connections.
        self.engine: AsyncEngine = create_async_engine(
            url, pool_size=2 * pool_size, max_overflow=0, pool_use_lifo=True, echo=echo
        )
        ping_when_idle(self.engine, ping_after_idle)
        dump_vectors_on_connect(self.engine)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False, class_=AsyncSession)

    def autocommit(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """A pooled connection outside any transaction (see `autocommit`); inside `sharing`, the shared one when
        it is free."""
        shared = _SHARED.get()
        if shared is not None and shared.usable_by(self):
            return shared.lend()
        return autocommit(self.engine)

    @asynccontextmanager
    async def sharing(self) -> AsyncIterator[None]:
        """A scope (one message's handling) whose `autocommit` uses, one after another, share one pooled
        connection: a checkout and its return cost about 50 us of client CPU, and a message makes several
        glances in a row. The connection is taken at the first use and kept until the scope ends or `release`
        gives it back (before a transaction or a long wait, so that the task holds no more connections at once
        than without sharing). A use while another one holds the shared connection (concurrent tasks of the
        scope, or a nested use) gets a connection of its own, as without sharing; so does a use after the
        scope ended (a task it started that outlives it). A use that raises returns the connection to the pool
        instead of keeping it. Scopes do not nest: an inner `sharing` keeps the outer one's connection."""
        outer = _SHARED.get()
        if outer is not None and not outer.closed and outer.engine is self.engine:
            yield
            return
        shared = _Shared(self.engine, asyncio.get_running_loop())
        token = _SHARED.set(shared)
        try:
            yield
        finally:
            _SHARED.reset(token)
            await shared.close()

    @asynccontextmanager
    async def unshared(self) -> AsyncIterator[None]:
        """Suspends the current `sharing` scope (its connection goes back to the pool): for a stretch that waits
        long between uses, such as a language model's turn, which must not keep a connection from the pool."""
        await self.release()
        token = _SHARED.set(None)
        try:
            yield
        finally:
            _SHARED.reset(token)

    async def release(self) -> None:
        """Returns the shared connection of the current `sharing` scope to the pool if no one uses it (the scope
        stays: its next use takes one again). Called before a transaction opens, which has a connection of its
        own."""
        shared = _SHARED.get()
        if shared is not None and shared.usable_by(self):
            await shared.give_back()

    async def dispose(self) -> None:
        await self.engine.dispose()


@asynccontextmanager
async def autocommit(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A pooled connection of `engine` outside any transaction: each statement commits on its own, with no BEGIN
    and COMMIT round trips. It goes back to the pool in transaction mode."""
    async with engine.connect() as connection:
        yield await connection.execution_options(isolation_level="AUTOCOMMIT")


class _Shared:
    """The connection a `Database.sharing` scope lends to its `autocommit` uses, one at a time."""

    __slots__ = ("busy", "closed", "connection", "engine", "loop")

    def __init__(self, engine: AsyncEngine, loop: asyncio.AbstractEventLoop) -> None:
        self.engine = engine
        self.loop = loop
        self.connection: AsyncConnection | None = None
        self.busy = False
        self.closed = False

    def usable_by(self, db: Database) -> bool:
        if self.busy or self.closed or db.engine is not self.engine:
            return False
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    @asynccontextmanager
    async def lend(self) -> AsyncIterator[AsyncConnection]:
        self.busy = True
        try:
            if self.connection is None:
                connection = await self.engine.connect()
                try:
                    self.connection = await connection.execution_options(isolation_level="AUTOCOMMIT")
                except BaseException:
                    await connection.close()
                    raise
            try:
                yield self.connection
            except BaseException:
                self.busy = False
                await self.give_back()  # it may be broken: the pool decides
                raise
        finally:
            self.busy = False
        if self.closed:  # the scope ended while this use ran
            await self.give_back()

    async def give_back(self) -> None:
        if self.busy or self.connection is None:
            return
        connection, self.connection = self.connection, None
        await connection.close()

    async def close(self) -> None:
        self.closed = True
        await self.give_back()


# The `sharing` scope of the running task (tasks started inside it inherit it; `_Shared.busy` keeps them apart).
_SHARED: ContextVar[_Shared | None] = ContextVar("companion_shared_connection", default=None)


def ping_when_idle(engine: AsyncEngine, after: float = PING_AFTER_IDLE_S) -> None:
    """Makes the engine's pool ping a connection before handing it out only if it sat idle for `after` seconds,
    as `pool_pre_ping` does on every checkout: a dead one invalidates the pool (the others are as old) and the
    checkout is retried on a new connection. A connection that went away without idling first fails its
    statement instead; SQLAlchemy then invalidates the pool too, so the next unit of work gets a fresh
    connection."""

    def ping_if_idle(dbapi_connection: Any, record: ConnectionPoolEntry, proxy: Any) -> None:
        idle_since = record.info.get(_IDLE_SINCE)
        if idle_since is None or time.monotonic() - idle_since < after:
            return  # just connected, or used a moment ago
        if not engine.dialect._do_ping_w_event(dbapi_connection):
            raise exc.InvalidatePoolError()

    pool = engine.sync_engine.pool
    event.listen(pool, "checkout", ping_if_idle)
    event.listen(pool, "checkin", _note_idle)


def _note_idle(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    record.info[_IDLE_SINCE] = time.monotonic()
