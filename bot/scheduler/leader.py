"""Which process runs the jobs: the one holding a PostgreSQL advisory lock on a dedicated connection. The lock
lives as long as that connection, so when the holder dies (or loses the database) the server frees it and the
next process to ask gets it, within one poll interval."""

from __future__ import annotations

import logging

import psycopg

from brain.store.embedded import to_libpq_url

log = logging.getLogger(__name__)

# pg_try_advisory_lock takes a signed 64-bit key; this one spells "compSchd". Advisory locks are per database,
# so schedulers of different databases on one server do not see each other.
LOCK_KEY = int.from_bytes(b"compSchd", "big")


class Leadership:
    def __init__(self, database_url: str, key: int = LOCK_KEY) -> None:
        self.uri = to_libpq_url(database_url)
        self.key = key
        self._conn: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    async def poll(self) -> bool:
        """True while this process holds the lock: takes it if free, and checks that the connection holding it
        is still alive. Any database error counts as not holding it (the server frees the lock with the
        connection, so nobody holds it twice)."""
        try:
            if self._conn is None or self._conn.closed:
                self._held = False
                self._conn = await psycopg.AsyncConnection.connect(self.uri, autocommit=True,
                                                                   application_name="companion-scheduler")
            if self._held:
                await self._conn.execute("SELECT 1")
            else:
                cursor = await self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))
                row = await cursor.fetchone()
                self._held = bool(row and row[0])
        except psycopg.Error as problem:
            if self._held:
                log.warning("scheduler lost its database connection: %s", problem)
            await self.release()
        return self._held

    async def release(self) -> None:
        """Closing the connection frees the lock."""
        self._held = False
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            try:
                await conn.close()
            except psycopg.Error:
                log.debug("closing the scheduler's lock connection failed", exc_info=True)
