"""Finding or creating the person behind a platform identity; their language and time zone."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from sqlalchemy import Select, bindparam, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import make_transient_to_detached

from brain.errors import DomainError
from brain.i18n import SUPPORTED_LOCALES, normalize_locale, tr
from brain.people.models import Identity, User
from brain.pulse.activity import note_inbound_of
from brain.store.lean import Lean
from brain.store.unit_of_work import UnitOfWork

# The sender's row, by the bound `platform` and `platform_id`: every message starts here.
IDENTITY_LOOKUP: Select[Any] = select(*User.__table__.columns).join(Identity, Identity.user_id == User.id).where(
    Identity.platform == bindparam("platform"), Identity.platform_id == bindparam("platform_id"))
_USER_FIELDS = tuple(column.key for column in User.__table__.columns)


def _found_and_noted() -> Any:
    """`IDENTITY_LOOKUP` with the found person's message noted for the idle hold (`note_inbound_of`, at the bound
    `now`) in the same statement: one round trip for both."""
    lookup = IDENTITY_LOOKUP.cte("found")
    return select(lookup).add_cte(note_inbound_of(select(lookup.c.id.label("user_id")).cte("sender")))


# Built once and run lean (`Lean`); the values are bound.
_FIND = Lean(IDENTITY_LOOKUP)
_FIND_AND_NOTE = Lean(_found_and_noted())


def detached_user(row: Any) -> User:
    """The user from a row that has `IDENTITY_LOOKUP`'s columns (and maybe more): detached, as a session that
    loaded them and closed would leave them (a unit of work that changes them adds them to its session)."""
    user = User(**{field: getattr(row, field) for field in _USER_FIELDS})
    make_transient_to_detached(user)
    return user


async def find_identity(connection: AsyncConnection, platform: str, platform_id: str, *,
                        noting: datetime | None = None) -> User | None:
    """The user behind (platform, platform_id), if known (`detached_user`). Every message starts here, so the row
    is read lean (`Lean`) and the user built from it, not loaded through a session (the ORM's load costs more
    than the statement). `noting`: a known sender's message is noted at that time (`note_inbound_in`) in the same
    statement."""
    params: dict[str, Any] = {"platform": platform, "platform_id": platform_id}
    if noting is None:
        row = await _FIND.first(connection, params)
    else:
        row = await _FIND_AND_NOTE.first(connection, {**params, "now": noting})
    return None if row is None else detached_user(row)


async def resolve_identity(
    session: AsyncSession,
    platform: str,
    platform_id: str,
    *,
    default_locale: str,
    default_timezone: str,
    display_name: str | None = None,
) -> User:
    """The user behind (platform, platform_id); created on first contact. Safe under concurrency:
    two first messages at once end with one user."""
    found = await find_identity(await session.connection(), platform, platform_id)
    if found is not None:
        return found
    user = User(
        id=uuid.uuid4(), locale=normalize_locale(default_locale) or "en", timezone=default_timezone,
        display_name=display_name,
    )
    session.add(user)
    await session.flush()
    inserted = await session.scalar(
        insert(Identity)
        .values(id=uuid.uuid4(), user_id=user.id, platform=platform, platform_id=platform_id)
        .on_conflict_do_nothing(index_elements=["platform", "platform_id"])
        .returning(Identity.user_id)
    )
    if inserted is None:  # another transaction created it first; drop ours
        await session.delete(user)
        winner = await find_identity(await session.connection(), platform, platform_id)
        assert winner is not None
        return winner
    return user


async def get_user(session: AsyncSession, user_id: uuid.UUID) -> User:
    user = await session.get(User, user_id)
    if user is None:
        raise DomainError(tr("I don't know you yet. Send /start first."), code="not_found")
    return user


def parse_timezone(name: str) -> str:
    """Validate an IANA zone name (case-insensitive); returns its canonical spelling."""
    candidate = name.strip()
    if not candidate or len(candidate) > 64:
        raise DomainError(tr("Unknown time zone: {name}. Use a name like Europe/Berlin.", name=candidate[:64]),
                          code="invalid_timezone")
    lookup = {z.lower(): z for z in _zones()}
    canonical = lookup.get(candidate.lower().replace(" ", "_"))
    if canonical is None:
        raise DomainError(tr("Unknown time zone: {name}. Use a name like Europe/Berlin.", name=candidate),
                          code="invalid_timezone")
    try:
        ZoneInfo(canonical)
    except (ZoneInfoNotFoundError, ValueError):
        raise DomainError(tr("Unknown time zone: {name}. Use a name like Europe/Berlin.", name=candidate),
                          code="invalid_timezone") from None
    return canonical


async def set_locale(uow: UnitOfWork, user_id: uuid.UUID, locale: str, *, chosen: bool) -> bool:
    """Sets the person's language. `chosen`: they chose it (and keep it whatever they write); otherwise it follows
    what they write and is only changed while they have not chosen one. True if it was changed."""
    mine = update(User).where(User.id == user_id)
    statement = (mine.values(locale=locale, locale_chosen=True) if chosen
                 else mine.where(User.locale_chosen.is_(False)).values(locale=locale))
    if await uow.session.scalar(statement.returning(User.id)) is None:
        return False
    from brain.goals.service import retitle  # goals build on people, not back

    await retitle(uow, user_id, locale)  # "Höchstens 2 Kaffee pro Tag" reads "At most 2 coffees a day" now
    return True


async def set_display_name(uow: UnitOfWork, user_id: uuid.UUID, name: str) -> None:
    """The name the person asked to be called by (a greeting uses it)."""
    await uow.session.execute(update(User).where(User.id == user_id).values(display_name=name[:128]))


async def set_timezone(uow: UnitOfWork, user_id: uuid.UUID, zone: str) -> User:
    """Sets the person's time zone (a canonical name, see `parse_timezone`) and keeps their all-day events on their
    dates, in one transaction."""
    user = await get_user(uow.session, user_id)
    old = user.timezone
    user.timezone = zone
    if old != zone:
        from brain.modules.calendar.service import keep_all_day_dates  # the calendar builds on people, not back

        await keep_all_day_dates(uow, user_id, old, zone)
    return user


_ZONES: set[str] | None = None


def _zones() -> set[str]:
    global _ZONES
    if _ZONES is None:
        _ZONES = available_timezones() | {"UTC"}
    return _ZONES


def parse_locale(value: str) -> str:
    lang = normalize_locale(value)
    if lang is None:
        raise DomainError(tr("Unknown language: {value}. Choose one of: {choices}.", value=value[:16],
                             choices=", ".join(SUPPORTED_LOCALES)), code="invalid_locale")
    return lang
