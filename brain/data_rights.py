"""A person's data rights: everything stored about them as one JSON document (/export), and all of it erased
(/delete_me). Knows no chat platform: the bot turns the export into a file and the goodbye into a message.

The tables are discovered from the metadata of every model (`brain.tables`), so a table added later is exported
and erased without code changes: a table is personal when it has a `user_id` column, or a foreign key to a
personal table (its rows are the person's through that parent); the `events` store has `user_id` without a
foreign key. A few personal
tables are left out of the export on purpose (EXPORT_EXCLUDED, each with its reason); they are erased all the
same.

The goodbye after an erasure must still reach the chat, yet every outbox row belongs to a `users` row and
goes with it. So the erasure keeps exactly one thing: the bare `users` row (display name cleared; locale and
time zone only), carrying one outbox row of kind `farewell` addressed to the chat the person wrote from.
Everything else goes in the same transaction, their identities too, so a message written after it starts a
new person. When a sender settles the farewell (sent, or failed for good), a deferred trigger on `outbox`
(migration 0014) deletes that bare `users` row (and any event written for it meanwhile) at the commit of the
sender's transaction: every adapter, present or future, cleans up without knowing about it, and nothing stays
behind once the goodbye is out. Enqueueing the goodbye in the erasing transaction makes both one step: a crash
leaves either everything, or the bare row with its goodbye still to send."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import JSON, Column, LargeBinary, MetaData, Select, Table, delete, select, text, update
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.ext.asyncio import AsyncSession

from brain.core import Brain
from brain.i18n import N_, Renderer, tr
from brain.memory.promotion import hold_promotion
from brain.outbox.models import Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.local_time import local_date
from brain.people.models import User
from brain.tables import metadata as known_tables

FORMAT = "companion-export"
VERSION = 1
FAREWELL_KIND = "farewell"
EXPORT_INTERVAL_S = 60  # one export per person per minute: a loop cannot fill the outbox with files

# Personal tables that are erased but not exported, and why. A new table with a user_id column must be either
# exported (the default) or listed here; tests/reliability/test_data_rights.py checks that.
EXPORT_EXCLUDED: dict[str, str] = {
    # secrets: a button token acts for the person when pressed; exporting them hands out live keys
    "action_tokens": N_("button tokens (secrets that act for you when pressed)"),
    # secrets: hashes of one-time codes that join a second chat app
    "link_codes": N_("hashes of one-time link codes (secrets)"),
    # bookkeeping: which Telegram update ids were already handled (only numbers, kept a few days)
    "telegram_updates": N_("ids of handled Telegram updates (bookkeeping)"),
    # bookkeeping: the retry state of a message being sent
    "telegram_deliveries": N_("retry state of messages being sent (bookkeeping)"),
    # bookkeeping of sent Matrix messages: their text is in `outbox`; they hold button tokens (secrets)
    "matrix_messages": N_("Matrix message ids and their button tokens (bookkeeping; the texts are in outbox)"),
    # bookkeeping of sent Telegram messages with buttons: their text is in `outbox`; they hold button tokens
    "keyboard_messages": N_("Telegram message ids and their button tokens (bookkeeping; the texts are in outbox)"),
}
NOTES = (
    N_("Times are ISO 8601 in UTC (ending in +00:00), inside event payloads too; a date or a time of day alone (a "
       "day's date, quiet hours, a drink's time) is in your time zone. Ids are strings."),
    N_("Embedding vectors and search indexes are left out: they are computed from your texts, which are included."),
    N_("Pictures and files I sent you (e.g. /week charts, earlier exports) are left out; their messages are "
       "included."),
)


@dataclass(frozen=True)
class PersonalTable:
    """A table holding the person's rows: `user_id` directly, or `via` a foreign key column to a personal
    parent (`parent` names the parent, whose own scope applies recursively)."""

    table: Table
    via: Column[Any] | None = None
    parent: PersonalTable | None = None

    @property
    def name(self) -> str:
        return self.table.name

    def rows_of(self, user_id: uuid.UUID) -> Select[Any]:
        return select(self.table).where(self.scope(user_id))

    def scope(self, user_id: uuid.UUID) -> Any:
        if self.via is None:
            return self.table.c.user_id == user_id
        assert self.parent is not None
        (fk,) = [fk for fk in self.via.foreign_keys if fk.column.table is self.parent.table]
        return self.via.in_(select(fk.column).where(self.parent.scope(user_id)))


def personal_tables(metadata: MetaData = known_tables) -> list[PersonalTable]:
    """Every table of the metadata that holds a person's rows, parents before children (the `users` table
    itself is not among them)."""
    found: dict[str, PersonalTable] = {}
    for table in metadata.sorted_tables:
        if table.name == "users":
            continue
        if "user_id" in table.c:
            found[table.name] = PersonalTable(table)
            continue
        for fk in table.foreign_keys:
            parent = found.get(fk.column.table.name)
            if parent is not None:
                found[table.name] = PersonalTable(table, via=fk.parent, parent=parent)
                break
    return list(found.values())


def export_file_name(day: date) -> str:
    return f"companion-export-{day.isoformat()}.json"


# ---- export ------------------------------------------------------------------------------------------------

async def export_person(brain: Brain, user_id: uuid.UUID) -> tuple[bytes, str]:
    """The person's data as a JSON document and its file name. Read in one REPEATABLE READ, read-only
    transaction, so every table shows the same moment."""
    async with brain.db.sessions() as session:
        await session.connection(execution_options={"isolation_level": "REPEATABLE READ",
                                                    "postgresql_readonly": True})
        document = await _collect(session, user_id, brain.clock.now())
        await session.rollback()
    user = document["user"]
    day = local_date(User(timezone=user["timezone"]), brain.clock.now()) if user else brain.clock.now().date()
    body = json.dumps(document, ensure_ascii=False, indent=1, sort_keys=False).encode()
    return body, export_file_name(day)


async def _collect(session: AsyncSession, user_id: uuid.UUID, now: datetime) -> dict[str, Any]:
    users = known_tables.tables["users"]
    user_row = (await session.execute(select(users).where(users.c.id == user_id))).mappings().first()
    render = Renderer(user_row["locale"], user_row["timezone"]) if user_row is not None else Renderer("en")
    tables: dict[str, list[dict[str, Any]]] = {}
    for personal in personal_tables():
        if personal.name in EXPORT_EXCLUDED:
            continue
        stmt = personal.rows_of(user_id).order_by(*personal.table.primary_key.columns)
        rows = (await session.execute(stmt)).mappings().all()
        tables[personal.name] = [_row(personal.table, row, render) for row in rows]
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _utc(now),
        "user": _row(users, user_row, render) if user_row is not None else None,
        "tables": tables,
        # Said in the person's language, like everything the companion tells them.
        "notes": [render.gettext(note) for note in NOTES],
        "not_exported": {name: render.gettext(reason) for name, reason in EXPORT_EXCLUDED.items()},
    }


def _row(table: Table, row: Any, render: Renderer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column in table.columns:
        if isinstance(column.type, Vector | TSVECTOR):
            continue  # derived from the texts (see NOTES)
        value = row[column.name]
        if isinstance(column.type, LargeBinary) and value is not None:
            out[column.name] = render(tr("(left out: {count} bytes)", count=len(value)))
            continue
        out[column.name] = _json(value, moments=isinstance(column.type, JSON))
    return out


# A moment written with its offset, as the event payloads, tool arguments and message parameters keep them
# ("2026-12-01T14:00:00+01:00"); a date or a time of day alone has no offset and is local on purpose.
_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([+-]\d{2}:?\d{2}|Z)")


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _json(value: Any, *, moments: bool = False) -> Any:
    """`value` as JSON, every moment in UTC (NOTES says so): a timestamp column's and, with `moments` (a JSON
    column), one written as a string with its offset."""
    if isinstance(value, str) and moments and _MOMENT.fullmatch(value):
        try:
            return _utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime) and value.tzinfo is not None:
        return _utc(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {str(k): _json(v, moments=moments) for k, v in value.items()}
    if isinstance(value, Iterable):
        return [_json(v, moments=moments) for v in value]
    return str(value)


async def exported_recently(session: AsyncSession, user_id: uuid.UUID) -> bool:
    """Whether an export was queued for the person within the last EXPORT_INTERVAL_S seconds (by the
    database's clock, which also stamped the outbox row)."""
    found = await session.scalar(
        select(OutboxMessage.id).where(
            OutboxMessage.user_id == user_id, OutboxMessage.document_name.like("companion-export-%"),
            OutboxMessage.created_at > text(f"now() - interval '{EXPORT_INTERVAL_S} seconds'"),
        ).limit(1)
    )
    return found is not None


# ---- erasure -----------------------------------------------------------------------------------------------

# What the caller erases with the person, in the same transaction: given the person's accounts (platform, id), read
# before their identities went (the bot drops their access grants with them).
AccountsErased = Callable[[AsyncSession, Sequence[tuple[str, str]]], Awaitable[None]]


async def erase_person(brain: Brain, user_id: uuid.UUID, goodbye: str, *, platform: str, chat_id: str,
                       slot: str, with_accounts: AccountsErased | None = None) -> None:
    """Deletes everything of the person but the bare `users` row, which carries the `goodbye` to
    (platform, chat_id) and is removed once that is settled (see the module docstring). `with_accounts`: what the
    caller erases along with the person's accounts, in the same transaction."""
    memory = brain.memory
    log = memory.log if memory is not None else None
    if log is not None:
        log.discard(user_id)  # buffered pipeline log rows must not come back after the erasure
    users = known_tables.tables["users"]
    async with brain.transactions.begin() as uow:
        session = uow.session
        # Locked first: a concurrent erasure of the same person waits here and then finds nothing to do.
        if await session.scalar(select(users.c.id).where(users.c.id == user_id).with_for_update()) is None:
            return
        # Memory edges have no foreign keys: a promotion running now must finish (or not start) first.
        await hold_promotion(session, user_id)
        if with_accounts is not None:
            identities = known_tables.tables["identities"]
            accounts = (await session.execute(select(identities.c.platform, identities.c.platform_id)
                                              .where(identities.c.user_id == user_id))).all()
            await with_accounts(session, [(str(p), str(a)) for p, a in accounts])
        for personal in reversed(personal_tables()):
            await session.execute(delete(personal.table).where(personal.scope(user_id)))
        await session.execute(update(users).where(users.c.id == user_id).values(display_name=None))
        await enqueue(session, user_id, Outbound(text=goodbye), kind=FAREWELL_KIND, slot=slot[:128],
                      platform=platform, chat_id=chat_id)
    if memory is not None:
        await memory.forget_everything(user_id, step=False)  # its in-memory state (the tables are empty already)
    if log is not None:
        log.discard(user_id)

