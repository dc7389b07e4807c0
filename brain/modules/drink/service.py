"""Drink mutations (each emits its event in the same unit of work) and the day's progress."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from sqlalchemy import Date, bindparam, delete, func, literal, select, true
from sqlalchemy.dialects.postgresql import UUID, insert

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    DrinkEntryDeleted,
    DrinkEntryUndone,
    DrinkGoalReached,
    DrinkGoalSet,
    DrinkLogged,
)
from brain.events.store import EventRecord
from brain.i18n import N_, Text, tr
from brain.modules.drink.models import DrinkEntry, DrinkGoal, DrinkPreset
from brain.people.local_time import local_date, local_now
from brain.people.models import User
from brain.store.lean import Lean, session_connection
from brain.store.unit_of_work import UnitOfWork

DRINK_TYPES: tuple[str, ...] = ("water", "coffee", "tea", "juice", "alcohol", "smoothie", "soda", "other")
DRINK_LABELS: dict[str, str] = {
    "water": N_("water"), "coffee": N_("coffee"), "tea": N_("tea"), "juice": N_("juice"),
    "alcohol": N_("alcohol"), "smoothie": N_("smoothie"), "soda": N_("soda"), "other": N_("drink"),
}
DEFAULT_GOALS_ML: dict[str, int] = {"water": 2000}
MIN_ML, MAX_ML = 1, 5000
MAX_AT_ONCE = 10  # drinks of one kind logged in one go ("zwei Kaffee", /coffee 3)
MIN_GOAL_ML, MAX_GOAL_ML = 250, 10000
DEFAULT_PORTION_ML: dict[str, int] = {"water": 250, "coffee": 150, "tea": 250, "juice": 200, "alcohol": 330,
                                      "smoothie": 300, "soda": 330, "other": 250}


# Built once and run lean (`Lean`: every logged drink); the values are bound.
_ENTRY_COLUMNS = ("id", "user_id", "drink_type", "name", "quantity_ml", "preset_id", "logged_at", "local_date")
_ADD_ENTRY = Lean(insert(DrinkEntry).values({name: bindparam(name) for name in _ENTRY_COLUMNS}))


def drink_label(drink_type: str) -> Text:
    return tr(DRINK_LABELS.get(drink_type, DRINK_LABELS["other"]))


@dataclass(frozen=True)
class DrinkProgress:
    day: date
    water_ml: int
    water_goal_ml: int
    coffee_count: int
    coffee_ml: int
    other_ml: int
    total_ml: int
    total_count: int

    @property
    def water_percent(self) -> int:
        # Half up, as people read percentages (250 of 2000 is 13 %, not banker's 12 %).
        return int(self.water_ml * 100 / self.water_goal_ml + 0.5) if self.water_goal_ml else 0


def _check_type(drink_type: str) -> None:
    if drink_type not in DRINK_TYPES:
        raise DomainError(tr("Unknown drink: {name}. Known: {choices}.", name=drink_type[:32],
                             choices=", ".join(DRINK_TYPES)), code="bad_enum")


def _check_amount(ml: int) -> None:
    if not MIN_ML <= ml <= MAX_ML:
        raise DomainError(tr("A drink must be between {min} and {max} ml.", min=MIN_ML, max=MAX_ML),
                          code="out_of_range")


async def log_drink(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    drink_type: str,
    quantity_ml: int,
    *,
    name: str | None = None,
    preset_id: uuid.UUID | None = None,
    entry_id: uuid.UUID | None = None,
    log_entry_ids: Sequence[uuid.UUID] = (),
) -> tuple[DrinkEntry, DrinkProgress]:
    """One drink. `entry_id` and `log_entry_ids`: its id, and those of all drinks of the one log it is part of
    (several cups at once), for DrinkLogged."""
    _check_type(drink_type)
    _check_amount(quantity_ml)
    day = local_date(user, uow.now)
    before = await day_progress(uow, user, day)
    values = {"id": entry_id or uuid.uuid4(), "user_id": user.id, "drink_type": drink_type,
              "name": (name or drink_type)[:100], "quantity_ml": quantity_ml, "preset_id": preset_id,
              "logged_at": uow.now, "local_date": day}
    # Core on the session's connection (the ORM's unit of work costs more than the insert); the entry handed
    # back is not tracked by the session.
    await _ADD_ENTRY.run(await uow.session.connection(), values)
    entry = DrinkEntry(**values)
    uow.emit(
        DrinkLogged(
            entry_id=entry.id, drink_type=drink_type, quantity_ml=quantity_ml, name=entry.name, date=day,
            time=local_now(user, uow.now).strftime("%H:%M"), from_preset=preset_id is not None,
            log_entry_ids=list(log_entry_ids),
        ),
        user_id=user.id, record_id=entry.id, actor=actor,
    )
    # The day after this drink: the totals before it plus the drink (no second read of the day).
    after = _plus(before, drink_type, quantity_ml)
    if drink_type == "water" and before.water_ml < before.water_goal_ml <= after.water_ml:
        uow.emit(DrinkGoalReached(date=day, goal_ml=before.water_goal_ml, actual_ml=after.water_ml),
                 user_id=user.id, record_id=f"water:{day.isoformat()}", actor=actor)
    return entry, after


def _plus(progress: DrinkProgress, drink_type: str, quantity_ml: int) -> DrinkProgress:
    """`progress` with one more drink of `drink_type` counted."""
    water_ml, coffee_ml, coffee_count, other_ml = progress.water_ml, progress.coffee_ml, progress.coffee_count, \
        progress.other_ml
    if drink_type == "water":
        water_ml += quantity_ml
    elif drink_type == "coffee":
        coffee_ml, coffee_count = coffee_ml + quantity_ml, coffee_count + 1
    else:
        other_ml += quantity_ml
    return replace(progress, water_ml=water_ml, coffee_ml=coffee_ml, coffee_count=coffee_count, other_ml=other_ml,
                   total_ml=progress.total_ml + quantity_ml, total_count=progress.total_count + 1)


async def undo_last_drink(uow: UnitOfWork, user: User, actor: ActorT, drink_type: str | None = None) -> DrinkEntry:
    """Removes the person's most recent drink of their local today (of `drink_type` if given: "delete the last
    coffee" after a water removes the coffee)."""
    day = local_date(user, uow.now)
    query = select(DrinkEntry).where(DrinkEntry.user_id == user.id, DrinkEntry.local_date == day)
    if drink_type is not None:
        _check_type(drink_type)
        query = query.where(DrinkEntry.drink_type == drink_type)
    entry = await uow.session.scalar(
        query.order_by(DrinkEntry.logged_at.desc(), DrinkEntry.created_at.desc()).limit(1).with_for_update())
    if entry is None:
        if drink_type is not None:
            raise DomainError(tr("There is no {drink} from today to undo.", drink=drink_label(drink_type)),
                              code="nothing_to_undo")
        raise DomainError(tr("There is no drink from today to undo."), code="nothing_to_undo")
    await _take_back(uow, user, actor, [entry])
    return entry


async def _take_back(uow: UnitOfWork, user: User, actor: ActorT, entries: Sequence[DrinkEntry]) -> None:
    """Removes the entries, each DrinkEntryUndone caused by the entry's own DrinkLogged: so every drink of a log
    undone whole counts as undone (brain.undo), not only the one an undo was started from."""
    logged = await _logged_events(uow, user, entries)
    for entry in entries:
        await uow.session.delete(entry)
        uow.emit(DrinkEntryUndone(entry_id=entry.id, drink_type=entry.drink_type, quantity_ml=entry.quantity_ml),
                 user_id=user.id, record_id=entry.id, actor=actor, caused_by=logged.get(entry.id))


async def _logged_events(uow: UnitOfWork, user: User, entries: Sequence[DrinkEntry]) -> dict[uuid.UUID, uuid.UUID]:
    """The DrinkLogged event of each entry, by entry id, where the store still has it (written at the entry's
    `logged_at`, which finds it by index)."""
    rows = await uow.session.execute(select(EventRecord.record_id, EventRecord.id).where(
        EventRecord.user_id == user.id, EventRecord.type == "DrinkLogged",
        EventRecord.occurred_at.in_({entry.logged_at for entry in entries}),
        EventRecord.record_id.in_([str(entry.id) for entry in entries])))
    return {uuid.UUID(record_id): event_id for record_id, event_id in rows}


async def undo_drinks(uow: UnitOfWork, user: User, actor: ActorT, entry_ids: Sequence[uuid.UUID]) -> list[DrinkEntry]:
    """Removes exactly these drinks of the person (those one logging made, for its Undo button), all or none: a
    button pressed after one of them was removed in another way changes nothing."""
    wanted = set(entry_ids)
    entries = list((await uow.session.scalars(
        select(DrinkEntry).where(DrinkEntry.user_id == user.id, DrinkEntry.id.in_(wanted))
        .order_by(DrinkEntry.logged_at, DrinkEntry.created_at).with_for_update()
    )).all())
    if not wanted or len(entries) != len(wanted):
        raise DomainError(tr("No such drink entry."), code="not_found")
    await _take_back(uow, user, actor, entries)
    return entries


async def delete_drink(uow: UnitOfWork, user: User, actor: ActorT, entry_id: uuid.UUID) -> DrinkEntry:
    entry = await uow.session.scalar(
        select(DrinkEntry).where(DrinkEntry.user_id == user.id, DrinkEntry.id == entry_id).with_for_update()
    )
    if entry is None:
        raise DomainError(tr("No such drink entry."), code="not_found")
    await uow.session.delete(entry)
    uow.emit(DrinkEntryDeleted(entry_id=entry.id, drink_type=entry.drink_type, quantity_ml=entry.quantity_ml),
             user_id=user.id, record_id=entry.id, actor=actor)
    return entry


async def set_goal(uow: UnitOfWork, user: User, actor: ActorT, daily_ml: int, drink_type: str = "water", *,
                   caused_by: uuid.UUID | None = None) -> int:
    _check_type(drink_type)
    if not MIN_GOAL_ML <= daily_ml <= MAX_GOAL_ML:
        raise DomainError(tr("A daily goal must be between {min} and {max} ml.", min=MIN_GOAL_ML, max=MAX_GOAL_ML),
                          code="out_of_range")
    previous = await uow.session.scalar(  # carried by the event, so an undo can set it back
        select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == user.id, DrinkGoal.drink_type == drink_type)
        .with_for_update()
    )
    await uow.session.execute(
        insert(DrinkGoal).values(user_id=user.id, drink_type=drink_type, daily_ml=daily_ml)
        .on_conflict_do_update(index_elements=["user_id", "drink_type"], set_={"daily_ml": daily_ml})
    )
    uow.emit(DrinkGoalSet(drink_type=drink_type, daily_ml=daily_ml, previous_ml=previous), user_id=user.id,
             record_id=f"{user.id}:{drink_type}", actor=actor, caused_by=caused_by)
    return daily_ml


async def restore_goal(uow: UnitOfWork, user: User, actor: ActorT, daily_ml: int | None, drink_type: str = "water",
                       *, caused_by: uuid.UUID) -> int:
    """Sets the daily goal back to `daily_ml`, or removes it when that is None, so that the default applies again
    (no tool does that: it is how a goal that set the target takes it back). `caused_by`: the DrinkGoalSet this
    reverts, which then counts as undone."""
    if daily_ml is not None:
        return await set_goal(uow, user, actor, daily_ml, drink_type, caused_by=caused_by)
    _check_type(drink_type)
    previous = await uow.session.scalar(
        delete(DrinkGoal).where(DrinkGoal.user_id == user.id, DrinkGoal.drink_type == drink_type)
        .returning(DrinkGoal.daily_ml)
    )
    restored = _goal_or_default(None, drink_type)
    uow.emit(DrinkGoalSet(drink_type=drink_type, daily_ml=restored, previous_ml=previous), user_id=user.id,
             record_id=f"{user.id}:{drink_type}", actor=actor, caused_by=caused_by)
    return restored


async def goal_ml(uow: UnitOfWork, user: User, drink_type: str = "water") -> int:
    stored = await uow.session.scalar(
        select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == user.id, DrinkGoal.drink_type == drink_type)
    )
    return _goal_or_default(stored, drink_type)


def _goal_or_default(stored: int | None, drink_type: str) -> int:
    """The person's daily goal for a drink type, or the default where they set none."""
    return stored if stored is not None else DEFAULT_GOALS_ML.get(drink_type, 0)


def _day_totals_statement() -> Any:
    """The day's totals per drink type and the water goal in one statement (built once: every logged drink
    reads it). Always at least one row, which carries the goal; a day without drinks has a NULL type in it."""
    person, day = bindparam("person", type_=UUID(as_uuid=True)), bindparam("day", type_=Date())
    goal = (select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == person, DrinkGoal.drink_type == "water")
            .scalar_subquery())
    totals = (
        select(DrinkEntry.drink_type, func.coalesce(func.sum(DrinkEntry.quantity_ml), 0).label("ml"),
               func.count().label("n"))
        .where(DrinkEntry.user_id == person, DrinkEntry.local_date == day)
        .group_by(DrinkEntry.drink_type)
        .subquery("totals")
    )
    one = select(literal(1).label("one")).subquery("one")
    return (select(goal.label("goal"), totals.c.drink_type, totals.c.ml, totals.c.n)
            .select_from(one.outerjoin(totals, true())))


_DAY_TOTALS = Lean(_day_totals_statement())


async def day_progress(uow: UnitOfWork, user: User, day: date | None = None) -> DrinkProgress:
    """Totals of one local day and the water goal in a single query, with the unit's changes so far
    (`session_connection`)."""
    day = day or local_date(user, uow.now)
    rows = await _DAY_TOTALS.rows(await session_connection(uow.session), {"person": user.id, "day": day})
    by_type = {t: (int(ml), int(n)) for _, t, ml, n in rows if t is not None}
    water = by_type.get("water", (0, 0))
    coffee = by_type.get("coffee", (0, 0))
    total_ml = sum(ml for ml, _ in by_type.values())
    return DrinkProgress(
        day=day, water_ml=water[0],
        water_goal_ml=_goal_or_default(rows[0].goal, "water"),
        coffee_count=coffee[1], coffee_ml=coffee[0], other_ml=total_ml - water[0] - coffee[0], total_ml=total_ml,
        total_count=sum(n for _, n in by_type.values()),
    )


async def create_preset(uow: UnitOfWork, user: User, name: str, drink_type: str, quantity_ml: int) -> DrinkPreset:
    _check_type(drink_type)
    _check_amount(quantity_ml)
    existing = await uow.session.scalar(
        select(DrinkPreset).where(DrinkPreset.user_id == user.id, func.lower(DrinkPreset.name) == name.lower())
    )
    if existing is not None:
        existing.drink_type, existing.quantity_ml = drink_type, quantity_ml
        return existing
    preset = DrinkPreset(id=uuid.uuid4(), user_id=user.id, name=name[:100], drink_type=drink_type,
                         quantity_ml=quantity_ml)
    uow.session.add(preset)
    return preset


async def list_presets(uow: UnitOfWork, user: User) -> list[DrinkPreset]:
    return list((await uow.session.scalars(
        select(DrinkPreset).where(DrinkPreset.user_id == user.id).order_by(DrinkPreset.name)
    )).all())


async def find_preset(uow: UnitOfWork, user: User, name: str) -> DrinkPreset:
    preset = await uow.session.scalar(
        select(DrinkPreset).where(DrinkPreset.user_id == user.id, func.lower(DrinkPreset.name) == name.lower())
    )
    if preset is None:
        raise DomainError(tr("No drink preset called {name}.", name=name[:100]), code="not_found")
    return preset
