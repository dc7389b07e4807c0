"""Drink mutations (each emits its event in the same unit of work) and the day's progress."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import date

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    DrinkEntryDeleted,
    DrinkEntryUndone,
    DrinkGoalReached,
    DrinkGoalSet,
    DrinkLogged,
)
from brain.i18n import N_, Text, tr
from brain.modules.drink.models import DrinkEntry, DrinkGoal, DrinkPreset
from brain.people.local_time import local_date, local_now
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork

DRINK_TYPES: tuple[str, ...] = ("water", "coffee", "tea", "juice", "alcohol", "smoothie", "soda", "other")
DRINK_LABELS: dict[str, str] = {
    "water": N_("water"), "coffee": N_("coffee"), "tea": N_("tea"), "juice": N_("juice"),
    "alcohol": N_("alcohol"), "smoothie": N_("smoothie"), "soda": N_("soda"), "other": N_("drink"),
}
DEFAULT_GOALS_ML: dict[str, int] = {"water": 2000}
MIN_ML, MAX_ML = 1, 5000
MIN_GOAL_ML, MAX_GOAL_ML = 250, 10000
DEFAULT_PORTION_ML: dict[str, int] = {"water": 250, "coffee": 150, "tea": 250, "juice": 200, "alcohol": 330,
                                      "smoothie": 300, "soda": 330, "other": 250}


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
) -> tuple[DrinkEntry, DrinkProgress]:
    _check_type(drink_type)
    _check_amount(quantity_ml)
    day = local_date(user, uow.now)
    before = await day_progress(uow, user, day)
    entry = DrinkEntry(
        id=uuid.uuid4(), user_id=user.id, drink_type=drink_type, name=(name or drink_type)[:100],
        quantity_ml=quantity_ml, preset_id=preset_id, logged_at=uow.now, local_date=day,
    )
    uow.session.add(entry)
    uow.emit(
        DrinkLogged(
            entry_id=entry.id, drink_type=drink_type, quantity_ml=quantity_ml, name=entry.name, date=day,
            time=local_now(user, uow.now).strftime("%H:%M"), from_preset=preset_id is not None,
        ),
        user_id=user.id, record_id=entry.id, actor=actor,
    )
    after = before
    if drink_type == "water":
        after = replace(before, water_ml=before.water_ml + quantity_ml, total_ml=before.total_ml + quantity_ml,
                        total_count=before.total_count + 1)
        if before.water_ml < before.water_goal_ml <= after.water_ml:
            uow.emit(DrinkGoalReached(date=day, goal_ml=before.water_goal_ml, actual_ml=after.water_ml),
                     user_id=user.id, record_id=f"water:{day.isoformat()}", actor=actor)
    else:
        after = await day_progress(uow, user, day, flush=True)
    return entry, after


async def undo_last_drink(uow: UnitOfWork, user: User, actor: ActorT) -> DrinkEntry:
    """Removes the person's most recent drink of their local today."""
    day = local_date(user, uow.now)
    entry = await uow.session.scalar(
        select(DrinkEntry).where(DrinkEntry.user_id == user.id, DrinkEntry.local_date == day)
        .order_by(DrinkEntry.logged_at.desc(), DrinkEntry.created_at.desc()).limit(1).with_for_update()
    )
    if entry is None:
        raise DomainError(tr("There is no drink from today to undo."), code="nothing_to_undo")
    await uow.session.delete(entry)
    uow.emit(DrinkEntryUndone(entry_id=entry.id, drink_type=entry.drink_type, quantity_ml=entry.quantity_ml),
             user_id=user.id, record_id=entry.id, actor=actor)
    return entry


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


async def set_goal(uow: UnitOfWork, user: User, actor: ActorT, daily_ml: int, drink_type: str = "water") -> int:
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
             record_id=f"{user.id}:{drink_type}", actor=actor)
    return daily_ml


async def goal_ml(uow: UnitOfWork, user: User, drink_type: str = "water") -> int:
    stored = await uow.session.scalar(
        select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == user.id, DrinkGoal.drink_type == drink_type)
    )
    return stored if stored is not None else DEFAULT_GOALS_ML.get(drink_type, 0)


async def day_progress(uow: UnitOfWork, user: User, day: date | None = None, *, flush: bool = False) -> DrinkProgress:
    """Totals of one local day in a single grouped query."""
    if flush:
        await uow.session.flush()
    day = day or local_date(user, uow.now)
    rows = (await uow.session.execute(
        select(DrinkEntry.drink_type, func.coalesce(func.sum(DrinkEntry.quantity_ml), 0), func.count())
        .where(DrinkEntry.user_id == user.id, DrinkEntry.local_date == day)
        .group_by(DrinkEntry.drink_type)
    )).all()
    by_type = {t: (int(ml), int(n)) for t, ml, n in rows}
    water = by_type.get("water", (0, 0))
    coffee = by_type.get("coffee", (0, 0))
    total_ml = sum(ml for ml, _ in by_type.values())
    return DrinkProgress(
        day=day, water_ml=water[0], water_goal_ml=await goal_ml(uow, user), coffee_count=coffee[1],
        coffee_ml=coffee[0], other_ml=total_ml - water[0] - coffee[0], total_ml=total_ml,
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
