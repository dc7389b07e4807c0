"""Food mutations (each emits its event in the same unit of work) and the day's nutrition summary.
A meal without a type gets one from the person's local time of day."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime, time

from sqlalchemy import delete, func, select, true
from sqlalchemy.dialects.postgresql import insert

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    DailyCalorieGoalReached,
    MealDeleted,
    MealFromPhotoLogged,
    MealLogged,
    NutritionGoalSet,
)
from brain.i18n import N_, Text, tr
from brain.modules.food.models import Meal, NutritionGoal
from brain.people.local_time import local_date, local_now
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork

MEAL_TYPES: tuple[str, ...] = ("breakfast", "lunch", "dinner", "snack")
MEAL_LABELS: dict[str, str] = {
    "breakfast": N_("breakfast"), "lunch": N_("lunch"), "dinner": N_("dinner"), "snack": N_("snack"),
}
NUTRIENT_LABELS: dict[str, str] = {"protein": N_("Protein"), "carbs": N_("Carbs"), "fat": N_("Fat")}
DEFAULT_CALORIE_GOAL = 2000
MAX_DESCRIPTION = 500
MIN_KCAL, MAX_KCAL = 0, 5000
MIN_GRAMS, MAX_GRAMS = 0, 500
MIN_GOAL_KCAL, MAX_GOAL_KCAL = 500, 10000
MIN_GOAL_GRAMS, MAX_GOAL_GRAMS = 1, 1000
LAST = "last"

# Local-time windows for a meal logged without a type; the gaps (15:00-17:00, after 21:30) are snacks.
_BREAKFAST_UNTIL = time(10, 30)
_LUNCH_UNTIL = time(15, 0)
_DINNER_FROM, _DINNER_UNTIL = time(17, 0), time(21, 30)


def meal_label(meal_type: str) -> Text:
    return tr(MEAL_LABELS.get(meal_type, MEAL_LABELS["snack"]))


def infer_meal_type(local: time) -> str:
    if local < _BREAKFAST_UNTIL:
        return "breakfast"
    if local < _LUNCH_UNTIL:
        return "lunch"
    if _DINNER_FROM <= local < _DINNER_UNTIL:
        return "dinner"
    return "snack"


@dataclass(frozen=True)
class DayTotals:
    day: date
    meal_count: int
    calories: int
    protein: int
    carbs: int
    fat: int
    calorie_goal: int
    protein_goal: int | None
    carbs_goal: int | None
    fat_goal: int | None

    @property
    def calorie_percent(self) -> int:
        return round(self.calories * 100 / self.calorie_goal) if self.calorie_goal else 0


@dataclass(frozen=True)
class DaySummary:
    totals: DayTotals
    meals: tuple[Meal, ...]


def _check_type(meal_type: str) -> None:
    if meal_type not in MEAL_TYPES:
        raise DomainError(tr("Unknown meal type: {name}. Known: {choices}.", name=meal_type[:32],
                             choices=", ".join(MEAL_TYPES)), code="bad_enum")


def _check_kcal(kcal: int | None) -> None:
    if kcal is not None and not MIN_KCAL <= kcal <= MAX_KCAL:
        raise DomainError(tr("A meal must have between {min} and {max} kcal.", min=MIN_KCAL, max=MAX_KCAL),
                          code="out_of_range")


def _check_grams(nutrient: str, grams: int | None, low: int, high: int) -> None:
    if grams is not None and not low <= grams <= high:
        raise DomainError(tr("{nutrient} must be between {min} and {max} g.", nutrient=tr(NUTRIENT_LABELS[nutrient]),
                             min=low, max=high), code="out_of_range")


def _clean_description(description: str) -> str:
    text = description.strip()
    if not text:
        raise DomainError(tr("Please describe the meal."), code="empty")
    if len(text) > MAX_DESCRIPTION:
        raise DomainError(tr("A meal description can be at most {max} characters.", max=MAX_DESCRIPTION),
                          code="too_long")
    return text


async def log_meal(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    description: str,
    *,
    meal_type: str | None = None,
    kcal: int | None = None,
    protein: int | None = None,
    carbs: int | None = None,
    fat: int | None = None,
) -> tuple[Meal, DayTotals]:
    text = _clean_description(description)
    _check_kcal(kcal)
    for nutrient, grams in (("protein", protein), ("carbs", carbs), ("fat", fat)):
        _check_grams(nutrient, grams, MIN_GRAMS, MAX_GRAMS)
    local = local_now(user, uow.now)
    kind = meal_type or infer_meal_type(local.time())
    _check_type(kind)
    meal = Meal(
        id=uuid.uuid4(), user_id=user.id, meal_type=kind, input_type="text", description=text, calories=kcal,
        protein=protein, carbs=carbs, fat=fat, logged_at=uow.now, local_date=local.date(),
    )
    event = MealLogged(meal_id=meal.id, meal_type=kind, input_type="text", description=text, calories=kcal,
                       protein=protein, carbs=carbs, fat=fat, date=meal.local_date)
    return meal, await _add_meal(uow, user, actor, meal, event)


async def log_meal_from_photo(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    description: str,
    *,
    meal_id: uuid.UUID,
    meal_type: str,
    kcal: int | None,
    confidence: float,
    photo_media_id: str,
    foods: list[str] | None = None,
) -> tuple[Meal, DayTotals]:
    """A meal the person approved after a vision model looked at their photo (the photo itself is not kept;
    `photo_media_id` is the platform's id of it). `meal_id` is fixed when the proposal is made, so approving the
    same proposal twice is refused instead of logging the meal twice."""
    text = _clean_description(description)
    _check_kcal(kcal)
    _check_type(meal_type)
    if await uow.session.scalar(select(Meal.id).where(Meal.user_id == user.id, Meal.id == meal_id)) is not None:
        raise DomainError(tr("That meal is already logged."), code="duplicate")
    local = local_now(user, uow.now)
    meal = Meal(id=meal_id, user_id=user.id, meal_type=meal_type, input_type="photo", description=text,
                calories=kcal, logged_at=uow.now, local_date=local.date())
    event = MealFromPhotoLogged(meal_id=meal.id, meal_type=meal_type, photo_media_id=photo_media_id[:200],
                                confidence=min(max(confidence, 0.0), 1.0), calories=kcal, foods=(foods or [])[:20])
    return meal, await _add_meal(uow, user, actor, meal, event)


async def _add_meal(uow: UnitOfWork, user: User, actor: ActorT, meal: Meal,
                    event: MealLogged | MealFromPhotoLogged) -> DayTotals:
    """Stores the meal with its event; the day's totals after it (and the calorie goal reached, once a day)."""
    day = meal.local_date
    before = await day_totals(uow, user, day)
    uow.session.add(meal)
    uow.emit(event, user_id=user.id, record_id=meal.id, actor=actor)
    kcal, protein, carbs, fat = meal.calories, meal.protein, meal.carbs, meal.fat
    after = DayTotals(
        day=day, meal_count=before.meal_count + 1, calories=before.calories + (kcal or 0),
        protein=before.protein + (protein or 0), carbs=before.carbs + (carbs or 0), fat=before.fat + (fat or 0),
        calorie_goal=before.calorie_goal, protein_goal=before.protein_goal, carbs_goal=before.carbs_goal,
        fat_goal=before.fat_goal,
    )
    # Only the meal that carries the day across the goal announces it, so it fires once a day.
    if before.calories < before.calorie_goal <= after.calories:
        uow.emit(DailyCalorieGoalReached(date=day, goal=before.calorie_goal, actual=after.calories),
                 user_id=user.id, record_id=f"calories:{day.isoformat()}", actor=actor)
    return after


async def delete_meal(uow: UnitOfWork, user: User, actor: ActorT, meal_ref: uuid.UUID | str) -> Meal:
    """Deletes one meal by id, or with "last" the person's most recent meal of their local today."""
    query = select(Meal).where(Meal.user_id == user.id)
    if isinstance(meal_ref, str) and meal_ref.strip().lower() == LAST:
        query = query.where(Meal.local_date == local_date(user, uow.now)).order_by(
            Meal.logged_at.desc(), Meal.created_at.desc()).limit(1)
        missing = tr("There is no meal from today to delete.")
    else:
        try:
            meal_id = meal_ref if isinstance(meal_ref, uuid.UUID) else uuid.UUID(meal_ref.strip())
        except ValueError:
            raise DomainError(tr("No such meal."), code="not_found") from None
        query = query.where(Meal.id == meal_id)
        missing = tr("No such meal.")
    meal = await uow.session.scalar(query.with_for_update())
    if meal is None:
        raise DomainError(missing, code="not_found")
    await uow.session.delete(meal)
    uow.emit(MealDeleted(meal_id=meal.id, meal_type=meal.meal_type), user_id=user.id, record_id=meal.id, actor=actor)
    return meal


async def set_nutrition_goal(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    daily_kcal: int,
    *,
    protein: int | None = None,
    carbs: int | None = None,
    fat: int | None = None,
    caused_by: uuid.UUID | None = None,
) -> NutritionGoal:
    """Replaces the person's one goal as a whole: macros left out are cleared, not kept."""
    if not MIN_GOAL_KCAL <= daily_kcal <= MAX_GOAL_KCAL:
        raise DomainError(tr("A daily calorie goal must be between {min} and {max} kcal.", min=MIN_GOAL_KCAL,
                             max=MAX_GOAL_KCAL), code="out_of_range")
    for nutrient, grams in (("protein", protein), ("carbs", carbs), ("fat", fat)):
        _check_grams(nutrient, grams, MIN_GOAL_GRAMS, MAX_GOAL_GRAMS)
    values = {"daily_calories": daily_kcal, "daily_protein": protein, "daily_carbs": carbs, "daily_fat": fat}
    old = (await uow.session.execute(  # carried by the event, so an undo can set it back
        select(*(getattr(NutritionGoal, name) for name in values)).where(NutritionGoal.user_id == user.id)
        .with_for_update()
    )).first()
    previous = None if old is None else dict(zip(values, old, strict=True))
    goal_id = await uow.session.scalar(
        insert(NutritionGoal).values(id=uuid.uuid4(), user_id=user.id, **values)
        .on_conflict_do_update(index_elements=["user_id"], set_={**values, "updated_at": func.now()})
        .returning(NutritionGoal.id)
    )
    assert goal_id is not None
    uow.emit(NutritionGoalSet(goal_id=goal_id, daily_calories=daily_kcal, daily_protein=protein, daily_carbs=carbs,
                              daily_fat=fat, previous=previous), user_id=user.id, record_id=goal_id, actor=actor,
             caused_by=caused_by)
    return NutritionGoal(id=goal_id, user_id=user.id, **values)


async def restore_nutrition_goal(
    uow: UnitOfWork, user: User, actor: ActorT, previous: dict[str, int | None] | None, *, caused_by: uuid.UUID
) -> None:
    """Sets the goal back to `previous` (a NutritionGoalSet's), or removes it when that is None, so that the default
    applies again (no tool does that: it is how a goal that set the target takes it back). `caused_by`: the
    NutritionGoalSet this reverts, which then counts as undone."""
    if previous is not None and previous.get("daily_calories") is not None:
        await set_nutrition_goal(uow, user, actor, int(previous["daily_calories"] or 0),
                                 protein=previous.get("daily_protein"), carbs=previous.get("daily_carbs"),
                                 fat=previous.get("daily_fat"), caused_by=caused_by)
        return
    removed = (await uow.session.execute(
        delete(NutritionGoal).where(NutritionGoal.user_id == user.id)
        .returning(NutritionGoal.id, NutritionGoal.daily_calories, NutritionGoal.daily_protein,
                   NutritionGoal.daily_carbs, NutritionGoal.daily_fat)
    )).first()
    if removed is None:
        return
    goal_id, *old = removed
    uow.emit(NutritionGoalSet(goal_id=goal_id, daily_calories=DEFAULT_CALORIE_GOAL,
                              previous=dict(zip(("daily_calories", "daily_protein", "daily_carbs", "daily_fat"), old,
                                                strict=True))),
             user_id=user.id, record_id=goal_id, actor=actor, caused_by=caused_by)


async def day_totals(uow: UnitOfWork, user: User, day: date | None = None) -> DayTotals:
    """Counts and sums of one local day together with the goal, in a single statement."""
    day = day or local_date(user, uow.now)
    totals = (
        select(
            func.count(Meal.id).label("meals"), func.coalesce(func.sum(Meal.calories), 0).label("calories"),
            func.coalesce(func.sum(Meal.protein), 0).label("protein"),
            func.coalesce(func.sum(Meal.carbs), 0).label("carbs"), func.coalesce(func.sum(Meal.fat), 0).label("fat"),
        )
        .where(Meal.user_id == user.id, Meal.local_date == day)
        .subquery()
    )
    goal = select(NutritionGoal).where(NutritionGoal.user_id == user.id).subquery()
    row = (await uow.session.execute(
        select(totals, goal.c.daily_calories, goal.c.daily_protein, goal.c.daily_carbs, goal.c.daily_fat)
        .select_from(totals.outerjoin(goal, true()))
    )).one()
    return DayTotals(
        day=day, meal_count=int(row.meals), calories=int(row.calories), protein=int(row.protein),
        carbs=int(row.carbs), fat=int(row.fat),
        calorie_goal=row.daily_calories if row.daily_calories is not None else DEFAULT_CALORIE_GOAL,
        protein_goal=row.daily_protein, carbs_goal=row.daily_carbs, fat_goal=row.daily_fat,
    )


async def day_summary(uow: UnitOfWork, user: User, day: date | None = None, *, flush: bool = False) -> DaySummary:
    """The day's totals against the goal plus its meals: two queries, whatever the number of meals."""
    if flush:
        await uow.session.flush()
    day = day or local_date(user, uow.now)
    totals = await day_totals(uow, user, day)
    meals = (await uow.session.scalars(
        select(Meal).where(Meal.user_id == user.id, Meal.local_date == day)
        .order_by(Meal.logged_at, Meal.created_at)
    )).all()
    return DaySummary(totals=totals, meals=tuple(meals))


def local_time_of(user: User, at: datetime) -> str:
    return local_now(user, at).strftime("%H:%M")
