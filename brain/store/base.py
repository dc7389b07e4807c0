"""Declarative base with a naming convention, so Alembic autogenerate names constraints stably."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ColumnElement, DateTime, MetaData, String, func, literal_column
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: DateTime(timezone=True), uuid.UUID: UUID(as_uuid=True)}


def uuid_pk() -> Mapped[uuid.UUID]:
    return mapped_column(primary_key=True, default=uuid.uuid4)


def created_at() -> Mapped[datetime]:
    return mapped_column(server_default=func.now())


def constant(value: str) -> ColumnElement[str]:
    """A fixed string (a status, a platform name) written into a statement as a literal instead of a bound
    parameter. PostgreSQL plans a prepared statement once (a generic plan) only where that plan is as cheap as one
    made for the values at hand. A partial index (`WHERE status = 'pending'`) matches a literal but never a
    parameter, so a parameter there makes every run of a hot statement plan anew. So every status compared where a
    partial index names it (the outbox's 'pending', a ritual run's 'running', a Matrix message's 'open') goes through
    here. Only for constants of our own code: the value is quoted, not escaped for input from outside."""
    if "'" in value or "\\" in value:
        raise ValueError(f"not a plain constant: {value!r}")
    return literal_column(f"'{value}'", String())
