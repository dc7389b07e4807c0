"""`companion import FILE`: a person's /export document (brain/data_rights.py) taken back into a database, so a
person can move from one installation to another: into a fresh install, or as one more person of an install
that has others. Everything goes in one transaction, or nothing does.

Rows keep their ids, so a person who moves keeps what refers to them. Integer ids drawn from a sequence (events,
memory nodes, messages, ...) are kept too where they are free; a table whose exported ids are taken here
already gets new ones, and whatever refers to them follows (foreign keys, and the memory's derived rows, which
have none); ids written inside JSON payloads (an event's, a pipeline log row's) stay as they were, like the rest
of that history. What the export leaves out comes back as far as it can: embeddings are computed again from the
texts with this install's embedder, search columns by the database; pictures and files stay out.

An import never merges: a person already here (their id, or one of their chat accounts) is refused, as is a
document made by a newer version whose tables or columns this one does not know."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    Table,
    Time,
    Uuid,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from brain.core import Brain
from brain.data_rights import FORMAT, VERSION, PersonalTable, personal_tables
from brain.i18n import Text, tr
from brain.memory.embedder import Embedder, embedded
from brain.tables import metadata as target_metadata

# Integer columns that hold another table's sequence id without a foreign key: the memory's rows derived from its
# nodes carry none on purpose (brain/memory/models.py), and must follow a node whose id changes all the same.
DERIVED_REFERENCES: dict[tuple[str, str], str] = {
    ("memory_edges", "a_id"): "memory_nodes",
    ("memory_edges", "b_id"): "memory_nodes",
    ("memory_node_entities", "node_id"): "memory_nodes",
    ("memory_node_themes", "node_id"): "memory_nodes",
}
# Columns an earlier version exported that this one dropped, with nothing referring to them: left out on import.
DROPPED_COLUMNS: frozenset[tuple[str, str]] = frozenset({
    ("memory_edges", "id"),  # the pair is the key since migration 0044
})
EMBED_BATCH = 256


class ImportRefused(Exception):
    """The document cannot be imported here; `reason` says why, in one line, to be said in the install's language."""

    def __init__(self, reason: Text) -> None:
        super().__init__(reason.msgid.format(**reason.params))
        self.reason = reason


@dataclass
class ImportReport:
    user_id: uuid.UUID
    rows: dict[str, int] = field(default_factory=dict)
    renumbered: list[str] = field(default_factory=list)  # tables whose sequence ids were taken here already


def read_document(raw: bytes) -> dict[str, Any]:
    try:
        document = json.loads(raw)
    except ValueError as bad:
        raise ImportRefused(tr("not a JSON document: {problem}", problem=str(bad))) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ImportRefused(tr("not a companion export (its format is not {format})", format=FORMAT))
    if document.get("version") != VERSION:
        raise ImportRefused(tr("export version {found}; this install reads version {version}",
                                 found=str(document.get("version")), version=str(VERSION)))
    if not isinstance(document.get("user"), dict) or not isinstance(document.get("tables"), dict):
        raise ImportRefused(tr("the export holds no person"))
    return document


async def import_person(brain: Brain, document: dict[str, Any], embedder: Embedder,
                        progress: Callable[[str, int], None] | None = None) -> ImportReport:
    """Writes the person of `document` (see `read_document`) into the database; `progress(table, rows)` is told
    after each table."""
    # Parents before children: the foreign keys' order, and the memory's derived rows after their nodes.
    derived = {name for name, _ in DERIVED_REFERENCES}
    ordered = sorted(personal_tables(), key=lambda personal: personal.name in derived)
    tables = {personal.name: personal for personal in ordered}
    unknown = sorted(set(document["tables"]) - set(tables))
    if unknown:
        raise ImportRefused(tr("made by a newer version: this install has no table {names}", names=", ".join(unknown)))
    users = target_metadata.tables["users"]
    user = _row_values(users, document["user"])
    report = ImportReport(user_id=user["id"])
    async with brain.transactions.begin() as uow:
        session = uow.session
        await _refuse_people_already_here(session, user["id"], document["tables"].get("identities", []))
        await session.execute(insert(users), [user])
        renumbered: dict[str, dict[int, int]] = {}
        for name, personal in tables.items():
            exported = document["tables"].get(name) or []
            rows = [_row_values(personal.table, row) for row in exported]
            if not rows:
                continue
            _follow(personal.table, rows, renumbered)
            ids = await _keep_or_renumber(session, personal.table, rows)
            if ids:
                renumbered[name] = ids
                report.renumbered.append(name)
            await _embed_again(personal.table, rows, embedder)
            for batch in _parents_first(personal, rows):
                await session.execute(insert(personal.table), batch)
            await _advance_sequences(session, personal.table)
            report.rows[name] = len(rows)
            if progress is not None:
                progress(name, len(rows))
    return report


async def _refuse_people_already_here(session: AsyncSession, user_id: uuid.UUID,
                                      identities: list[dict[str, Any]]) -> None:
    users = target_metadata.tables["users"]
    if await session.scalar(select(users.c.id).where(users.c.id == user_id)) is not None:
        raise ImportRefused(tr("this person ({id}) is here already", id=str(user_id)))
    table = target_metadata.tables["identities"]
    for identity in identities:
        taken = await session.scalar(select(table.c.user_id).where(table.c.platform == identity["platform"],
                                                                   table.c.platform_id == identity["platform_id"]))
        if taken is not None:
            raise ImportRefused(tr("{account} belongs to another person here; erase that person first (/delete_me)",
                                   account=f"{identity['platform']}:{identity['platform_id']}"))


def _row_values(table: Table, exported: dict[str, Any]) -> dict[str, Any]:
    """One exported row as values for `table`'s columns. Columns the export leaves out (embeddings, search
    columns) are missing here too, and binary ones it replaced by a note are empty."""
    exported = {name: value for name, value in exported.items() if (table.name, name) not in DROPPED_COLUMNS}
    unknown = sorted(set(exported) - set(table.c.keys()))
    if unknown:
        raise ImportRefused(tr("made by a newer version: {table} has no column {names} here", table=table.name,
                                 names=", ".join(unknown)))
    values: dict[str, Any] = {}
    for name, value in exported.items():
        column = table.c[name]
        if column.computed is not None:
            continue
        values[name] = None if isinstance(column.type, LargeBinary) else _value(column.type, value)
    return values


def _value(kind: Any, value: Any) -> Any:
    if value is None or isinstance(kind, JSON):
        return value
    if isinstance(kind, ARRAY):
        return [_value(kind.item_type, item) for item in value]
    if isinstance(kind, DateTime):
        return datetime.fromisoformat(value)
    if isinstance(kind, Date):
        return date.fromisoformat(value)
    if isinstance(kind, Time):
        return time.fromisoformat(value)
    if isinstance(kind, Uuid):
        return uuid.UUID(value)
    if isinstance(kind, Float):
        return float(value)
    if isinstance(kind, Boolean):
        return bool(value)
    if isinstance(kind, Integer):
        return int(value)
    return value


def _follow(table: Table, rows: list[dict[str, Any]], renumbered: dict[str, dict[int, int]]) -> None:
    """Points the rows' references at the new ids of parents that were renumbered."""
    references = {(column.name, fk.column.table.name) for column in table.columns for fk in column.foreign_keys
                  if fk.column.table.name in renumbered and fk.column.primary_key}
    references |= {(column, parent) for (name, column), parent in DERIVED_REFERENCES.items()
                   if name == table.name and parent in renumbered}
    for column, parent in references:
        ids = renumbered[parent]
        for row in rows:
            if row.get(column) is not None:
                row[column] = ids.get(row[column], row[column])


def _sequence_key(table: Table) -> str | None:
    """The name of the table's primary key column if it is an integer drawn from a sequence."""
    keys = list(table.primary_key.columns)
    if len(keys) == 1 and isinstance(keys[0].type, Integer) and keys[0].autoincrement in (True, "auto"):
        return keys[0].name
    return None


async def _keep_or_renumber(session: AsyncSession, table: Table, rows: list[dict[str, Any]]) -> dict[int, int]:
    """Keeps the exported sequence ids if none is taken here; otherwise gives every row a new one from the
    sequence and returns old -> new (empty when the ids were kept)."""
    key = _sequence_key(table)
    if key is None:
        return {}
    column = table.c[key]
    exported = [row[key] for row in rows]
    if not await session.scalar(select(func.count()).select_from(table).where(column.in_(exported))):
        return {}
    sequence = await session.scalar(select(func.pg_get_serial_sequence(table.name, key)))
    fresh = (await session.scalars(select(func.nextval(sequence)).select_from(
        func.generate_series(1, len(rows))))).all()
    ids = dict(zip(exported, fresh, strict=True))
    for row in rows:
        row[key] = ids[row[key]]
    return ids


async def _advance_sequences(session: AsyncSession, table: Table) -> None:
    """Ids kept from the export must not be handed out again by the sequence."""
    key = _sequence_key(table)
    if key is None:
        return
    sequence = await session.scalar(select(func.pg_get_serial_sequence(table.name, key)))
    highest = await session.scalar(select(func.max(table.c[key])))
    last = await session.scalar(text("SELECT pg_sequence_last_value(CAST(:sequence AS regclass))"),
                                {"sequence": sequence})
    if highest is not None and highest > (last or 0):
        await session.execute(select(func.setval(sequence, highest)))


async def _embed_again(table: Table, rows: list[dict[str, Any]], embedder: Embedder) -> None:
    """Embeddings left out of the export, computed again from each row's text (as capture computes them)."""
    vectors = [column.name for column in table.columns if isinstance(column.type, Vector)]
    if not vectors or "text" not in table.c:
        return
    texts = [str(row.get("text") or "").strip() for row in rows]
    computed: list[list[float]] = []
    for start in range(0, len(texts), EMBED_BATCH):
        computed.extend(await embedded(embedder, texts[start:start + EMBED_BATCH]))
    for row, vector in zip(rows, computed, strict=True):
        for name in vectors:
            row[name] = vector


def _parents_first(personal: PersonalTable, rows: list[dict[str, Any]]) -> list[Sequence[dict[str, Any]]]:
    """The rows in batches such that a row referring to another of the same table (a subtask to its task) comes
    after it."""
    table = personal.table
    own = [(column.name, fk.column.name) for column in table.columns for fk in column.foreign_keys
           if fk.column.table is table]
    if not own:
        return [rows]
    batches: list[Sequence[dict[str, Any]]] = []
    placed: set[Any] = set()
    waiting = rows
    while waiting:
        pending = {row[key] for row in waiting for _, key in own}
        ready = [row for row in waiting
                 if all(row.get(column) is None or row[column] in placed or row[column] not in pending
                        for column, _ in own)]
        if not ready:
            raise ImportRefused(tr("{table} refers to itself in a circle", table=table.name))
        batches.append(ready)
        placed |= {row[key] for row in ready for _, key in own}
        chosen = {id(row) for row in ready}
        waiting = [row for row in waiting if id(row) not in chosen]
    return batches
