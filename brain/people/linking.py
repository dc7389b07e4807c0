"""Linking two platform identities to one person (`/link`): a one-time code asked for in one chat app and
entered in the other. The rule that keeps data safe: at most one of the two users may hold data of their
own. The one without data is absorbed (its identities move over, its bookkeeping rows go); when both
hold data the link is refused, because merging two life logs could mix or lose entries."""

from __future__ import annotations

import hashlib
import logging
import secrets
import uuid
from datetime import datetime, timedelta

from sqlalchemy import Table, delete, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from brain.errors import DomainError
from brain.events.store import EventRecord
from brain.i18n import tr
from brain.people.models import Identity, LinkCode, User
from brain.tables import metadata

log = logging.getLogger(__name__)

LINK_CODE_TTL = timedelta(minutes=10)
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off one screen, typed on another
CODE_LENGTH = 8  # 40 bits: guessing one within ten minutes, one chat message per guess, is hopeless

# Tables whose rows are about reaching and reminding a person, not the person's own entries. A user who
# has rows only here (and pulse events) counts as empty. Adapters mark their own such tables with
# `info={"bookkeeping": True}` (e.g. the Matrix rooms), so this module needs no platform names.
BOOKKEEPING_TABLES = frozenset({
    "users", "identities", "outbox", "action_tokens", "link_codes", "pulse_states", "pipeline_log",
    "tool_calls", "nudges", "nudge_outcomes", "rule_adaptations",
})
BOOKKEEPING_EVENT_MODULES = ("pulse",)  # reminders sent to the person and their answers


def format_code(code: str) -> str:
    return f"{code[:4]}-{code[4:]}"


def normalize_code(text: str) -> str | None:
    """' abcd-efgh ' -> 'ABCDEFGH'; None when it cannot be a code."""
    code = "".join(text.split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


async def create_link_code(session: AsyncSession, user_id: uuid.UUID, platform: str, *, now: datetime) -> str:
    """A new code for `user_id` (formatted 'ABCD-EFGH'); earlier unused codes of this person stop working."""
    await session.execute(delete(LinkCode).where(LinkCode.user_id == user_id, LinkCode.used_at.is_(None)))
    code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    session.add(LinkCode(code_hash=_hash(code), user_id=user_id, platform=platform, created_at=now,
                         expires_at=now + LINK_CODE_TTL))
    return format_code(code)


def _personal_tables() -> list[Table]:
    return [t for t in metadata.sorted_tables
            if "user_id" in t.c and t.name not in BOOKKEEPING_TABLES and not t.info.get("bookkeeping")]


def _bookkeeping_tables() -> list[Table]:
    """Children before parents, so deleting in this order never trips a foreign key."""
    return [t for t in reversed(metadata.sorted_tables)
            if "user_id" in t.c and t.name not in ("users", "identities")
            and (t.name in BOOKKEEPING_TABLES or t.info.get("bookkeeping"))]


async def holds_data(session: AsyncSession, user_id: uuid.UUID) -> bool:
    """True when the person has entries of their own: any row in a personal table, or any event apart from
    the pulse's reminders."""
    for table in _personal_tables():
        if table.name == EventRecord.__tablename__:
            continue
        if await session.scalar(select(exists().where(table.c.user_id == user_id))):
            return True
    return bool(await session.scalar(select(exists().where(
        EventRecord.user_id == user_id, EventRecord.module.not_in(BOOKKEEPING_EVENT_MODULES)))))


async def link_with_code(session: AsyncSession, entered: str, user_id: uuid.UUID, *, now: datetime) -> User:
    """Join the person `user_id` (who typed the code) and the person who asked for it. Returns the user both
    identities now belong to. Raises DomainError when the code is not valid, when both are already one
    person, or when both hold data."""
    code = normalize_code(entered)
    row = None if code is None else await session.scalar(
        select(LinkCode).where(LinkCode.code_hash == _hash(code)).with_for_update())
    if row is None or row.used_at is not None or row.expires_at <= now:
        raise DomainError(tr("That link code is not valid or has expired. Send /link in your other chat app "
                             "for a new one."), code="invalid_link_code")
    if row.user_id == user_id:
        raise DomainError(tr("This chat already belongs to that account; there is nothing to link."),
                          code="already_linked")
    # Lock both people in id order, so two links racing each other cannot deadlock.
    users = {u.id: u for u in (await session.scalars(
        select(User).where(User.id.in_([row.user_id, user_id])).order_by(User.id).with_for_update())).all()}
    issuer, entering = users.get(row.user_id), users.get(user_id)
    if issuer is None or entering is None:
        raise DomainError(tr("That link code is not valid or has expired. Send /link in your other chat app "
                             "for a new one."), code="invalid_link_code")
    if not await holds_data(session, entering.id):
        survivor, absorbed = issuer, entering
    elif not await holds_data(session, issuer.id):
        survivor, absorbed = entering, issuer
    else:
        raise DomainError(tr("Both accounts already have entries of their own, and I won't mix or drop them. "
                             "I can link a chat app that has no entries yet: send /link there first thing, "
                             "or enter the code there."), code="both_hold_data")
    row.used_at = now
    await session.flush()  # before the bulk deletes below, which may remove this row with the absorbed user
    await _absorb(session, survivor.id, absorbed.id)
    log.info("linked user %s into %s", absorbed.id, survivor.id)
    return survivor


async def _absorb(session: AsyncSession, survivor: uuid.UUID, absorbed: uuid.UUID) -> None:
    """Move every identity of `absorbed` to `survivor` and remove what is left of `absorbed` (bookkeeping
    only: the caller made sure it holds no data)."""
    await session.execute(update(Identity).where(Identity.user_id == absorbed).values(user_id=survivor))
    for table in _bookkeeping_tables():
        await session.execute(delete(table).where(table.c.user_id == absorbed))
    await session.execute(delete(EventRecord).where(EventRecord.user_id == absorbed))
    await session.execute(delete(User).where(User.id == absorbed))
