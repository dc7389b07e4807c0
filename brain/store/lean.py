"""The hottest statements, run on the driver's connection: a Core statement compiled once, then executed by psycopg
alone on the connection SQLAlchemy lent (its transaction, or its autocommit).

SQLAlchemy's execution of a compiled, cached Core statement still costs several times the client CPU of psycopg's
own execution of the same statement (the execution context, the parameter and result machinery, the greenlet hop of
its asyncio layer). Every Telegram message runs half a dozen of
these statements whatever it says (the sender's lookup with the update's take, the reply's enqueue, claim, in-flight
mark and settlement, the events of its writes), so they go this way; everything else stays with SQLAlchemy.

What stays the same: the SQL (SQLAlchemy compiles it, with the bind casts its psycopg dialect writes), the values
bound (SQLAlchemy's bind processors run: JSONB is wrapped as it would wrap it), the rows (attribute access by
column name; result processors run where a type has one), and the errors (a driver error is raised as the
`sqlalchemy.exc` error SQLAlchemy would raise, and a lost connection is invalidated). Listeners of
`before_cursor_execute` and `after_cursor_execute` see these statements too (with no execution context). What is
skipped: SQLAlchemy's other per-execution work and its statement cache (not needed: the text is compiled here
once). What differs on purpose: a lean statement is prepared on the server at its first run on a connection (see
`Lean.__init__`), and all lean statements on a pooled connection share one psycopg cursor."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import psycopg
from psycopg.rows import AsyncRowFactory
from sqlalchemy import exc
from sqlalchemy.dialects.postgresql.psycopg import PGDialectAsync_psycopg
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql import ClauseElement, sqltypes
from sqlalchemy.sql.compiler import SQLCompiler

_DIALECT = PGDialectAsync_psycopg()
_CURSOR = "companion_lean_cursor"


def _type_code(type_: Any) -> int | None:
    """The type code the driver reports for a column of this type, where SQLAlchemy's result processor needs one
    (numbers: whether a value comes as a float or a Decimal); SQLAlchemy reads it from the cursor."""
    if isinstance(type_, sqltypes.Float):
        return 701  # double precision
    if isinstance(type_, sqltypes.Numeric):
        return 1700  # numeric
    return None


async def session_connection(session: AsyncSession) -> AsyncConnection:
    """The session's connection for a lean statement, with the session's pending ORM changes flushed first, as its
    own query would flush them (a lean statement does not)."""
    if session.new or session.dirty or session.deleted:
        await session.flush()
    return await session.connection()


class Lean:
    """One statement, compiled once; `rows`, `first`, `one`, `scalar` and `run` execute it on an `AsyncConnection`
    (a session's: `await session.connection()`). Values are bound by name; every bound parameter of the statement
    must be given unless it carries a value. Unlike `session.execute`, it does not flush the session first: a caller
    with ORM changes pending that the statement must see flushes them."""

    __slots__ = ("_fixed", "_make_rows", "_prepare", "_processors", "_required", "_result", "_returns_rows", "sql")

    def __init__(self, statement: ClauseElement, *, prepare: bool = True) -> None:
        """`prepare`: prepared on the server at its first run on a connection, not at psycopg's sixth (a lean
        statement is a hot one by choice). PostgreSQL then plans it for the values at hand five times and keeps one
        generic plan if that is as cheap: 6 plannings per pooled connection instead of 10, which matters for
        expensive plans such as /today's snapshot. False: psycopg's
        own rule, for a statement whose plan must fit its values."""
        self._prepare: bool | None = True if prepare else None
        compiled = statement.compile(dialect=_DIALECT)
        assert isinstance(compiled, SQLCompiler)
        required = frozenset(compiled.bind_names[bind] for bind in compiled.binds.values() if bind.required)
        expanding = {compiled.bind_names[bind] for bind in compiled.post_compile_params}
        if compiled.positional or required & expanding:
            raise ValueError("a lean statement binds by name; only an IN of fixed values expands")
        # An IN of fixed values is expanded here, once, into one parameter per value.
        state = compiled.construct_expanded_state(dict.fromkeys(required))
        self.sql: str = state.statement
        self._required = required
        self._processors: dict[str, Callable[[Any], Any]] = {}
        for name, process in {**compiled._bind_processors, **state.processors}.items():
            if name in expanding:  # replaced by one per value
                continue
            if not callable(process):  # one per element of a tuple value: not used here
                raise ValueError(f"a lean statement binds no tuples: {name}")
            self._processors[name] = process
        # The fixed values (literals of the statement, an IN's values) are bound once, here.
        self._fixed = {name: self._processors[name](value) if name in self._processors else value
                       for name, value in state.parameters.items() if name not in required}
        processors: list[Callable[[Any], Any] | None] = [
            column[3]._cached_result_processor(_DIALECT, _type_code(column[3])) for column in compiled._result_columns]
        self._result = processors if any(p is not None for p in processors) else None
        # The row type is known here (the columns are the statement's): psycopg's namedtuple rows would read the
        # result's field names and look the type up on every run.
        self._returns_rows = bool(compiled._result_columns)
        row_type = namedtuple("Row", [column[0] for column in compiled._result_columns],  # type: ignore[misc]
                              rename=True)
        self._make_rows: AsyncRowFactory[Any] = lambda cursor: row_type._make

    def _bound(self, params: Mapping[str, Any]) -> dict[str, Any]:
        missing = self._required.difference(params)
        if missing:
            raise exc.ArgumentError(f"values missing for {sorted(missing)} in: {self.sql[:80]}")
        values = dict(self._fixed)
        processors = self._processors
        for name, value in params.items():
            process = processors.get(name)
            values[name] = value if process is None else process(value)
        return values

    async def _execute(self, connection: AsyncConnection, params: Mapping[str, Any],
                       fetch: bool) -> tuple[list[NamedTuple], int]:
        sync = connection.sync_connection
        if sync is None:  # not started: let SQLAlchemy take the pooled connection first
            sync = (await connection.start()).sync_connection
            assert sync is not None
        if not sync.in_transaction():  # begun as SQLAlchemy begins it itself, so the caller's commit() commits
            await connection.begin()
        driver: psycopg.AsyncConnection[Any] = sync.connection.driver_connection  # type: ignore[assignment]
        values = self._bound(params)
        try:
            # One cursor per pooled connection for all lean statements (kept in the connection's `info`, which
            # lives as long as the driver's connection): a new cursor copies the connection's adapters.
            info = sync.connection.info
            cursor: psycopg.AsyncCursor[Any] | None = info.get(_CURSOR)
            if cursor is None or cursor.connection is not driver:
                cursor = info[_CURSOR] = driver.cursor()
            cursor.row_factory = self._make_rows
            events = sync._has_events or sync.engine._has_events
            if events:  # listeners that watch statements (tests count them) see these too
                sync.dispatch.before_cursor_execute(sync, cursor, self.sql, values, None, False)
            await cursor.execute(self.sql, values, prepare=self._prepare)
            rows = await cursor.fetchall() if fetch and self._returns_rows else []
            count = cursor.rowcount
            if events:
                sync.dispatch.after_cursor_execute(sync, cursor, self.sql, values, None, False)
        except psycopg.Error as error:
            dialect = connection.dialect  # the engine's, which knows its driver
            invalidated = dialect.is_disconnect(error, sync.connection.dbapi_connection, None)  # type: ignore[arg-type]
            if invalidated:
                await connection.invalidate(error)
            raise exc.DBAPIError.instance(self.sql, values, error, psycopg.Error,
                                          connection_invalidated=invalidated, dialect=dialect) from error
        if self._result is not None and rows:
            rows = [row._make(value if process is None else process(value)
                              for value, process in zip(row, self._result, strict=True)) for row in rows]
        return rows, count

    async def rows(self, connection: AsyncConnection, params: Mapping[str, Any] | None = None) -> Sequence[Any]:
        return (await self._execute(connection, params or {}, True))[0]

    async def first(self, connection: AsyncConnection, params: Mapping[str, Any] | None = None) -> Any | None:
        found = (await self._execute(connection, params or {}, True))[0]
        return found[0] if found else None

    async def one(self, connection: AsyncConnection, params: Mapping[str, Any] | None = None) -> Any:
        """The first row of a statement that always returns one."""
        found = (await self._execute(connection, params or {}, True))[0]
        if not found:
            raise exc.NoResultFound(f"no row from: {self.sql[:80]}")
        return found[0]

    async def scalar(self, connection: AsyncConnection, params: Mapping[str, Any] | None = None) -> Any | None:
        found = (await self._execute(connection, params or {}, True))[0]
        return found[0][0] if found else None

    async def run(self, connection: AsyncConnection, params: Mapping[str, Any] | None = None) -> int:
        """Executes it without reading rows; the number of rows it affected."""
        return (await self._execute(connection, params or {}, False))[1]
