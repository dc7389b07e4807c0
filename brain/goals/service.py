"""Goal mutations (each emits its event in the same unit of work), the lookup of a goal by a short
reference, and the reads: current progress of each goal and the history of past periods."""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from brain.errors import DomainError
from brain.events.catalog import ActorT, GoalAbandoned, GoalCreated, GoalPaused, GoalResumed
from brain.events.store import EventRecord, query_events
from brain.goals.models import Goal, GoalPeriod
from brain.goals.periods import PERIODS, local_date_at, period_bounds, period_instants
from brain.goals.templates import TEMPLATE_IDS, TEMPLATES, goal_title, measure_key, measure_of, most_for
from brain.goals.tracker import (
    EVENT_SOURCES,
    REACHED_ON_THE_WAY,
    REVERSALS,
    STREAK_SOURCES,
    GoalMetric,
    current_streak,
    is_met,
    open_period,
    reach,
    replay,
)
from brain.i18n import N_, SUPPORTED_LOCALES, Renderer, tr
from brain.modules.drink import service as drink
from brain.modules.food import service as food
from brain.modules.food.models import NutritionGoal
from brain.people.models import User
from brain.projections.streaks import streaks_for
from brain.store.unit_of_work import UnitOfWork

METRICS: tuple[str, ...] = ("event_count", "event_sum", "streak_days")
COMPARISONS: tuple[str, ...] = (">=", "<=", "=")
# Words people and models use for the comparisons, all meaning one of the three.
COMPARISON_ALIASES: dict[str, str] = {
    ">=": ">=", "gte": ">=", "at_least": ">=", "min": ">=", "<=": "<=", "lte": "<=", "at_most": "<=",
    "max": "<=", "=": "=", "==": "=", "eq": "=", "exactly": "=",
}
STATUSES: tuple[str, ...] = ("active", "paused", "abandoned")
LISTED_STATUSES: tuple[str, ...] = ("active", "paused")
MAX_TITLE = 200
MAX_FILTER_VALUE = 100
MAX_TARGET = 1_000_000
MAX_GOALS = 20  # active and paused together
MAX_HISTORY = 100
_POSITION_RE = re.compile(r"#?\s*(\d{1,4})\.?")
_OUT_OF_RANGE: dict[str, str] = {
    "day": N_("That is out of range for a goal: {least} to {most} a day."),
    "week": N_("That is out of range for a goal: {least} to {most} a week."),
    "month": N_("That is out of range for a goal: {least} to {most} a month."),
}


@dataclass(frozen=True)
class GoalProgress:
    goal_id: uuid.UUID
    title: str
    metric: str
    period: str
    comparison: str
    target: float
    value: float
    reached: bool  # GoalReached was emitted for this period (for `<=` goals: only once a period is over)
    period_start: date
    period_end: date  # exclusive: the first day after the period
    status: str
    template: str | None
    measures: str = ""  # templates.measure_key


@dataclass(frozen=True)
class GoalPeriodView:
    goal_id: uuid.UUID
    period_start: date
    period_end: date  # exclusive
    value: float
    target: float
    comparison: str
    reached: bool
    reached_at: datetime | None
    closed: bool
    paused: bool = False  # closed unreached, mostly on vacation


@dataclass(frozen=True)
class ListedGoal:
    goal: Goal
    position: int | None  # in the goal list (active and paused); None for an abandoned goal


# ---- validation ---------------------------------------------------------------------------------


def _clean_title(title: str) -> str:
    text = " ".join((title or "").split())
    if not text:
        raise DomainError(tr("A goal needs a title."), code="empty")
    if len(text) > MAX_TITLE:
        raise DomainError(tr("A goal title can be at most {max} characters.", max=MAX_TITLE), code="too_long")
    return text


def _comparison(value: str) -> str:
    canonical = COMPARISON_ALIASES.get(str(value).strip().lower())
    if canonical is None:
        raise DomainError(tr("Unknown comparison: {name}. Known: {choices}.", name=str(value)[:32],
                             choices=", ".join(COMPARISONS)), code="bad_enum")
    return canonical


def _target(target: float, comparison: str) -> float:
    if isinstance(target, bool) or not isinstance(target, int | float) or not math.isfinite(target):
        raise DomainError(tr("A goal's target must be a number."), code="bad_type")
    if target < 0 or (target == 0 and comparison != "<="):
        raise DomainError(tr("A goal's target must be a positive number."), code="out_of_range")
    if target > MAX_TARGET:
        raise DomainError(tr("A goal's target can be at most {max}.", max=MAX_TARGET), code="out_of_range")
    return float(target)


def _blank_to_none(value: str | None) -> str | None:
    text = (value or "").strip()
    return text or None


@dataclass(frozen=True)
class _Definition:
    metric: str
    event_type: str
    field: str | None
    filter_field: str | None
    filter_value: str | None


def _definition(
    metric: str, event_type: str, field: str | None, filter_field: str | None, filter_value: str | None,
    comparison: str,
) -> _Definition:
    """What the goal counts, checked against the events goals can follow."""
    if metric not in METRICS:
        raise DomainError(tr("Unknown goal metric: {name}. Known: {choices}.", name=str(metric)[:32],
                             choices=", ".join(METRICS)), code="bad_enum")
    field, filter_field = _blank_to_none(field), _blank_to_none(filter_field)
    filter_value = _blank_to_none(filter_value)
    if metric == "streak_days":
        # The streak is named by `field`, or follows from its event ("DrinkLogged" feeds the water streak).
        streak = field or next((s for s, source in STREAK_SOURCES.items() if source == event_type), None)
        if streak is None or streak not in STREAK_SOURCES:
            raise DomainError(tr("Unknown streak: {name}. Known: {choices}.", name=str(field or event_type)[:32],
                                 choices=", ".join(STREAK_SOURCES)), code="bad_enum")
        if filter_field is not None or filter_value is not None:
            raise DomainError(tr("A streak goal cannot have a filter."), code="bad_filter")
        if comparison != ">=":
            raise DomainError(tr("A streak goal can only be reached with at least a number of days."),
                              code="bad_comparison")
        return _Definition(metric, STREAK_SOURCES[streak], streak, None, None)
    source = EVENT_SOURCES.get(event_type)
    if source is None:
        raise DomainError(tr("Goals cannot follow {name}. They can follow: {choices}.", name=str(event_type)[:64],
                             choices=", ".join(EVENT_SOURCES)), code="bad_enum")
    if metric == "event_sum":
        if field not in source.sum_fields:
            raise DomainError(tr("A sum goal over {event} adds up one of: {choices}.", event=event_type,
                                 choices=", ".join(source.sum_fields) or "-"), code="bad_field")
    elif field is not None:
        raise DomainError(tr("A count goal counts events; it takes no field to add up."), code="bad_field")
    if (filter_field is None) != (filter_value is None):
        raise DomainError(tr("A filter needs both a field and a value."), code="bad_filter")
    if filter_field is not None:
        if filter_field not in source.filter_fields:
            raise DomainError(tr("{event} can be filtered by: {choices}.", event=event_type,
                                 choices=", ".join(source.filter_fields) or "-"), code="bad_filter")
        if len(filter_value or "") > MAX_FILTER_VALUE:
            raise DomainError(tr("A filter value can be at most {max} characters.", max=MAX_FILTER_VALUE),
                              code="too_long")
    return _Definition(metric, event_type, field, filter_field, filter_value)


def _within_measure(definition: _Definition, target: float, comparison: str, period: str) -> None:
    """A target its measure cannot mean ("1000000 glasses of water a day") is refused, naming the range."""
    measure = measure_of(definition.metric, definition.event_type, definition.field, definition.filter_field,
                         definition.filter_value)
    if measure is None:
        return
    most = most_for(measure, period)
    if target > most:
        least = 0 if comparison == "<=" else 1
        raise DomainError(tr(_OUT_OF_RANGE[period], least=measure.amount(least), most=measure.amount(most)),
                          code="out_of_range")


# ---- mutations ----------------------------------------------------------------------------------


async def create_goal(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    *,
    title: str,
    metric: str,
    event_type: str,
    field: str | None = None,
    filter_field: str | None = None,
    filter_value: str | None = None,
    target: float,
    period: str,
    comparison: str,
    template: str | None = None,
) -> Goal:
    """A new active goal. Its current period starts with what was already logged in it (so a goal made
    in the afternoon counts the morning's water), and is reached at once if that already suffices."""
    clean_title = _clean_title(title)
    clean_comparison = _comparison(comparison)
    if period not in PERIODS:
        raise DomainError(tr("Unknown goal period: {name}. Known: {choices}.", name=str(period)[:32],
                             choices=", ".join(PERIODS)), code="bad_enum")
    clean_target = _target(target, clean_comparison)
    definition = _definition(metric, event_type, field, filter_field, filter_value, clean_comparison)
    _within_measure(definition, clean_target, clean_comparison, period)
    if template is not None and template not in TEMPLATES:
        raise _unknown_template(template)
    # The person's row lock serialises goal creation per person, so the duplicate and count checks hold.
    await uow.session.execute(select(User.id).where(User.id == user.id).with_for_update())
    listed = list((await uow.session.scalars(
        select(Goal).where(Goal.user_id == user.id, Goal.status.in_(LISTED_STATUSES))
    )).all())
    if len(listed) >= MAX_GOALS:
        raise DomainError(tr("You can have at most {max} goals. Stop one with /goal stop first.", max=MAX_GOALS),
                          code="too_many")
    for other in listed:
        # The same title, the same template, or the same measure in the same direction over the same period: two
        # such goals would disagree ("at least 2 l" and "at least 1.5 l" of water a day; /today measures one).
        same_measure = (other.metric, other.event_type, other.field, other.filter_field, other.filter_value,
                        other.period, other.comparison) == (
            definition.metric, definition.event_type, definition.field, definition.filter_field,
            definition.filter_value, period, clean_comparison)
        if other.title.casefold() == clean_title.casefold() or (template is not None and other.template == template):
            raise DomainError(tr("You already have the goal {title}.", title=other.title), code="duplicate")
        if same_measure:  # most likely a change of mind ("1.5 l, not 2 l"): say how
            raise DomainError(tr("You already have a goal on this: {title}. Stop it first with /goal stop, then set "
                                 "the new one.", title=other.title), code="duplicate")
    goal = Goal(
        id=uuid.uuid4(), user_id=user.id, title=clean_title, metric=definition.metric,
        event_type=definition.event_type, field=definition.field, filter_field=definition.filter_field,
        filter_value=definition.filter_value, target=clean_target, period=period, comparison=clean_comparison,
        status="active", template=template, updated_at=uow.now,
    )
    uow.session.add(goal)
    await _keep_daily_target(uow, user, actor, goal)
    created = uow.emit(
        GoalCreated(goal_id=goal.id, title=goal.title, metric=goal.metric, target=goal.target,
                    comparison=goal.comparison, period=goal.period, template=template),
        user_id=user.id, record_id=goal.id, actor=actor,
    )
    await uow.session.flush()
    today = local_date_at(uow.now, user.timezone)
    await open_period(uow, user, goal, today, await _value_so_far(uow, user, goal, today))
    start, _ = period_bounds(goal.period, today)
    value = await uow.session.scalar(select(GoalPeriod.value).where(
        GoalPeriod.user_id == user.id, GoalPeriod.goal_id == goal.id, GoalPeriod.period_start == start))
    if value and goal.comparison in REACHED_ON_THE_WAY and is_met(goal.comparison, value, goal.target):
        await reach(uow, user, goal, start, created.meta.id)
    return goal


def _daily_target(goal: Goal) -> str | None:
    """Which day's target the goal is also (see `_keep_daily_target`): "kcal", "water" or None."""
    if goal.period != "day" or goal.metric != "event_sum":
        return None
    if goal.event_type == "MealLogged" and goal.field == "calories" and goal.filter_field is None:
        return "kcal"
    if (goal.event_type == "DrinkLogged" and goal.field == "quantity_ml" and goal.filter_field == "drink_type"
            and goal.filter_value == "water"):
        return "water"
    return None


async def _keep_daily_target(uow: UnitOfWork, user: User, actor: ActorT, goal: Goal) -> None:
    """A daily goal on calories or on millilitres of water is also the day's target that /today and the log replies
    measure against ("650 of 1,800 kcal"): one number, not two that disagree. Set before the goal's own event, in
    its unit of work (`_release_daily_target` finds it so). A target the log's own goal cannot take leaves it as it
    was."""
    target = _daily_target(goal)
    if target == "kcal":
        if not food.MIN_GOAL_KCAL <= goal.target <= food.MAX_GOAL_KCAL:
            return
        macros = (await uow.session.execute(
            select(NutritionGoal.daily_protein, NutritionGoal.daily_carbs, NutritionGoal.daily_fat)
            .where(NutritionGoal.user_id == user.id))).first()
        protein, carbs, fat = macros if macros is not None else (None, None, None)
        await food.set_nutrition_goal(uow, user, actor, round(goal.target), protein=protein, carbs=carbs, fat=fat)
    elif target == "water":
        if not drink.MIN_GOAL_ML <= goal.target <= drink.MAX_GOAL_ML:
            return
        await drink.set_goal(uow, user, actor, round(goal.target))


async def _release_daily_target(uow: UnitOfWork, user: User, actor: ActorT, goal: Goal) -> None:
    """The other half of `_keep_daily_target`: a goal stopped or undone puts the day's target back to what it was
    before the goal set it (none: the default), unless it was changed since. The target's event is named as the
    cause, so that /undo counts it as taken back with the goal instead of stopping at it."""
    target = _daily_target(goal)
    if target is None:
        return
    created = await uow.session.scalar(select(EventRecord).where(
        EventRecord.user_id == user.id, EventRecord.type == "GoalCreated", EventRecord.record_id == str(goal.id)))
    if created is None:
        return
    # The target the goal set: in the goal's unit of work (its instant), just before the goal's own event.
    set_type, field = ("NutritionGoalSet", "daily_calories") if target == "kcal" else ("DrinkGoalSet", "daily_ml")
    target_set = await uow.session.scalar(
        select(EventRecord).where(EventRecord.user_id == user.id, EventRecord.type == set_type,
                                  EventRecord.occurred_at == created.occurred_at, EventRecord.seq < created.seq)
        .order_by(EventRecord.seq.desc()).limit(1))
    if target_set is None or target_set.payload.get(field) != round(goal.target):
        return
    if target == "kcal":
        if (await food.day_totals(uow, user)).calorie_goal != round(goal.target):
            return
        await food.restore_nutrition_goal(uow, user, actor, target_set.payload.get("previous"),
                                          caused_by=target_set.id)
    else:
        if await drink.goal_ml(uow, user) != round(goal.target):
            return
        await drink.restore_goal(uow, user, actor, target_set.payload.get("previous_ml"), caused_by=target_set.id)


async def _value_so_far(uow: UnitOfWork, user: User, goal: Goal, today: date) -> float:
    """The current period's value from the event store (bounded: one period's events of one type)."""
    if goal.metric == "streak_days":
        return float(await current_streak(uow.session, user, goal.field or "", today))
    since, until = period_instants(goal.period, today, user.timezone)
    reversals = [name for name, original in REVERSALS.items() if original == goal.event_type]
    events = await query_events(uow.session, user.id, types=[goal.event_type, *reversals], since=since,
                                until=until, limit=1000)
    return replay(GoalMetric.of(goal), (
        (e.type, e.meta.record_id, e.payload.model_dump(mode="json")) for e in reversed(events)
    ))


async def retitle(uow: UnitOfWork, user_id: uuid.UUID, locale: str) -> int:
    """The person's goals whose title this code wrote in one language (a template's, or one made from a phrase or the
    flow) titled in `locale` now, so a goal made in German reads in English after a switch. A title they or the
    model chose stays. The number retitled."""
    changed = 0
    for goal in (await uow.session.scalars(select(Goal).where(Goal.user_id == user_id).with_for_update())).all():
        candidates = []
        if goal.template in TEMPLATES:
            candidates.append(TEMPLATES[goal.template].title_text)
        measure = measure_of(goal.metric, goal.event_type, goal.field, goal.filter_field, goal.filter_value)
        if measure is not None:
            candidates.append(goal_title(measure, goal.comparison, goal.target, goal.period))
        for text in candidates:
            if any(Renderer(other)(text) == goal.title for other in SUPPORTED_LOCALES if other != locale):
                goal.title = Renderer(locale)(text)[:200]
                changed += 1
                break
    return changed


def _unknown_template(template_id: str) -> DomainError:
    return DomainError(tr("Unknown goal template: {name}. Known: {choices}.", name=str(template_id)[:32],
                          choices=", ".join(TEMPLATE_IDS)), code="bad_enum")


async def create_from_template(uow: UnitOfWork, user: User, actor: ActorT, template_id: str) -> Goal:
    """The template's goal, titled in the person's language."""
    template = TEMPLATES.get(template_id)
    if template is None:
        raise _unknown_template(template_id)
    title = Renderer(user.locale, user.timezone)(template.title_text)
    return await create_goal(
        uow, user, actor, title=title, metric=template.metric, event_type=template.event_type, field=template.field,
        filter_field=template.filter_field, filter_value=template.filter_value, target=template.target,
        period=template.period, comparison=template.comparison, template=template.id,
    )


async def _locked(uow: UnitOfWork, user: User, goal_ref: str) -> Goal:
    found = await find_goal(uow.session, user, goal_ref)
    goal = await uow.session.scalar(
        select(Goal).where(Goal.user_id == user.id, Goal.id == found.goal.id).with_for_update()
        .execution_options(populate_existing=True)
    )
    if goal is None:
        raise DomainError(tr("No such goal."), code="not_found")
    return goal


async def pause_goal(uow: UnitOfWork, user: User, actor: ActorT, goal_ref: str) -> Goal:
    """Stops tracking until resumed; events in between do not count."""
    goal = await _locked(uow, user, goal_ref)
    if goal.status != "active":
        raise DomainError(tr("{title} is not active, so it cannot be paused.", title=goal.title), code="not_active")
    goal.status, goal.updated_at = "paused", uow.now
    uow.emit(GoalPaused(goal_id=goal.id), user_id=user.id, record_id=goal.id, actor=actor)
    return goal


async def resume_goal(uow: UnitOfWork, user: User, actor: ActorT, goal_ref: str) -> Goal:
    """Tracks again from now on, in the current period (which is opened if it is not yet)."""
    goal = await _locked(uow, user, goal_ref)
    if goal.status != "paused":
        raise DomainError(tr("{title} is not paused.", title=goal.title), code="not_paused")
    goal.status, goal.updated_at = "active", uow.now
    uow.emit(GoalResumed(goal_id=goal.id), user_id=user.id, record_id=goal.id, actor=actor)
    await uow.session.flush()
    await open_period(uow, user, goal, local_date_at(uow.now, user.timezone))
    return goal


async def abandon_goal(uow: UnitOfWork, user: User, actor: ActorT, goal_ref: str) -> Goal:
    """Ends the goal for good; its past periods stay as history, the open one is closed as it stands."""
    goal = await _locked(uow, user, goal_ref)
    if goal.status == "abandoned":
        raise DomainError(tr("{title} was already stopped.", title=goal.title), code="already_abandoned")
    goal.status, goal.updated_at = "abandoned", uow.now
    uow.emit(GoalAbandoned(goal_id=goal.id), user_id=user.id, record_id=goal.id, actor=actor)
    await _release_daily_target(uow, user, actor, goal)
    open_rows = (await uow.session.scalars(
        select(GoalPeriod).where(GoalPeriod.user_id == user.id, GoalPeriod.goal_id == goal.id,
                                 GoalPeriod.closed_at.is_(None)).with_for_update()
    )).all()
    for row in open_rows:
        row.closed_at = uow.now
    return goal


# ---- reading ------------------------------------------------------------------------------------


_ORDER = (Goal.created_at, Goal.id)


async def list_goals(session: AsyncSession, user: User) -> list[ListedGoal]:
    """Active and paused goals in list order (oldest first); positions are what "/goal pause 2" means."""
    goals = (await session.scalars(
        select(Goal).where(Goal.user_id == user.id, Goal.status.in_(LISTED_STATUSES)).order_by(*_ORDER).limit(MAX_GOALS)
    )).all()
    return [ListedGoal(goal, position) for position, goal in enumerate(goals, start=1)]


async def find_goal(session: AsyncSession, user: User, goal_ref: str) -> ListedGoal:
    """One of the person's goals by its list position ("2", "#2"), its id, or a case-insensitive
    fragment of its title (among active and paused goals; several matches are refused as ambiguous)."""
    text = str(goal_ref or "").strip()
    if not text:
        raise DomainError(tr("Which goal do you mean?"), code="missing_reference")
    if match := _POSITION_RE.fullmatch(text):
        number = int(match.group(1))
        listed = await list_goals(session, user)
        if not 1 <= number <= len(listed):
            raise DomainError(tr("There is no goal number {number}.", number=number), code="not_found")
        return listed[number - 1]
    try:
        goal_id: uuid.UUID | None = uuid.UUID(text)
    except ValueError:
        goal_id = None
    if goal_id is not None:
        goal = await session.scalar(select(Goal).where(Goal.user_id == user.id, Goal.id == goal_id))
        if goal is None:
            raise DomainError(tr("No such goal."), code="not_found")
        listed = await list_goals(session, user)
        return next((g for g in listed if g.goal.id == goal.id), ListedGoal(goal, None))
    listed = await list_goals(session, user)
    needle = text.casefold()
    matches = [g for g in listed if needle in g.goal.title.casefold()]
    exact = [g for g in matches if g.goal.title.casefold() == needle]
    if len(exact) == 1:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise DomainError(tr("I found no goal matching {reference}.", reference=text[:100]), code="not_found")
    choices = ", ".join(f"{g.position}. {g.goal.title[:60]}" for g in matches[:5])
    raise DomainError(tr("{reference} matches several goals: {choices}. Which one do you mean?",
                         reference=text[:100], choices=choices), code="ambiguous")


async def goals_progress(session: AsyncSession, user: User, now: datetime) -> list[GoalProgress]:
    """Each active and paused goal with its current period, in list order. A fixed number of queries
    however many goals: the goals, their current period rows, and the streaks if a goal follows one."""
    goals = [g.goal for g in await list_goals(session, user)]
    if not goals:
        return []
    today = local_date_at(now, user.timezone)
    bounds = {goal.id: period_bounds(goal.period, today) for goal in goals}
    rows = {row.goal_id: row for row in (await session.scalars(
        select(GoalPeriod).where(
            GoalPeriod.user_id == user.id,
            tuple_(GoalPeriod.goal_id, GoalPeriod.period_start).in_([(g.id, bounds[g.id][0]) for g in goals]),
        )
    )).all()}
    streak_values: dict[str, int] = {}
    if any(goal.metric == "streak_days" for goal in goals):
        streak_values = {v.streak: (v.current if v.status != "broken" else 0)
                         for v in await streaks_for(session, user, today)}
    progress = []
    for goal in goals:
        row = rows.get(goal.id)
        value = row.value if row is not None else 0.0
        if goal.metric == "streak_days" and goal.field in streak_values:
            value = float(streak_values[goal.field or ""])  # a streak can break without any event
        start, end = bounds[goal.id]
        progress.append(GoalProgress(
            goal_id=goal.id, title=goal.title, metric=goal.metric, period=goal.period, comparison=goal.comparison,
            target=goal.target, value=value, reached=row is not None and row.reached_at is not None,
            period_start=start, period_end=end, status=goal.status, template=goal.template,
            measures=measure_key(goal.metric, goal.event_type, goal.field, goal.filter_field, goal.filter_value,
                                 goal.period),
        ))
    return progress


async def goal_history(
    session: AsyncSession, user: User, goal_id: uuid.UUID, limit: int = 12
) -> list[GoalPeriodView]:
    """The goal's periods, newest first (the current one included while it is open)."""
    goal = await session.scalar(select(Goal).where(Goal.user_id == user.id, Goal.id == goal_id))
    if goal is None:
        raise DomainError(tr("No such goal."), code="not_found")
    rows = (await session.scalars(
        select(GoalPeriod).where(GoalPeriod.user_id == user.id, GoalPeriod.goal_id == goal_id)
        .order_by(GoalPeriod.period_start.desc()).limit(max(1, min(limit, MAX_HISTORY)))
    )).all()
    return [GoalPeriodView(
        goal_id=goal_id, period_start=row.period_start, period_end=row.period_end, value=row.value,
        target=goal.target, comparison=goal.comparison, reached=row.reached_at is not None,
        reached_at=row.reached_at, closed=row.closed_at is not None, paused=row.paused,
    ) for row in rows]
