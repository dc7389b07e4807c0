"""pgvector values on the wire: each pooled connection learns the `vector` type's oid once, and vectors passed as
parameters (numpy arrays or `pgvector.Vector`) go through pgvector's psycopg dumpers, in binary. Only the dumpers:
vectors read back keep coming through the SQLAlchemy column type, as before."""

from __future__ import annotations

from typing import Any

import psycopg
from pgvector.psycopg.vector import VectorBinaryDumper, VectorDumper
from psycopg.types import TypeInfo
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


async def register_vector_dumpers(connection: psycopg.AsyncConnection[Any]) -> None:
    """Registers pgvector's dumpers on one connection; a database without the extension (before its first
    migration) is left as it is."""
    info = await TypeInfo.fetch(connection, "vector")
    if info is None:
        return
    info.register(connection)
    adapters = connection.adapters
    for base in (VectorDumper, VectorBinaryDumper):
        dumper = type(base.__name__, (base,), {"oid": info.oid})
        adapters.register_dumper("numpy.ndarray", dumper)
        adapters.register_dumper("pgvector.vector.Vector", dumper)


def dump_vectors_on_connect(engine: AsyncEngine) -> None:
    """Every new connection of the engine registers the dumpers (one round trip, once per connection)."""

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.run_async(register_vector_dumpers)

    event.listen(engine.sync_engine, "connect", on_connect)
