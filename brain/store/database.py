"""Engine and session factory. One `Database` per process; sessions are short and per unit of work."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

# A pooled connection idle for longer than this is pinged before it is handed out (a round trip); one that
# worked a moment ago is not. The pings find connections the server dropped while they sat in the pool (a
# restart, an idle timeout on the way), which almost always takes longer than this.
PING_AFTER_IDLE_S = 1.0
_IDLE_SINCE = "companion_idle_since"


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
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False, class_=AsyncSession)

    def autocommit(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """A pooled connection outside any transaction (see `autocommit`)."""
        return autocommit(self.engine)

    async def dispose(self) -> None:
        await self.engine.dispose()


@asynccontextmanager
async def autocommit(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A pooled connection of `engine` outside any transaction: each statement commits on its own, with no BEGIN
    and COMMIT round trips. It goes back to the pool in transaction mode."""
    async with engine.connect() as connection:
        yield await connection.execution_options(isolation_level="AUTOCOMMIT")


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
