"""What a pulse pass costs: day snapshot + streaks + the decisions of every time-triggered rule for many
people with months of history, our batched way against a naive per-day re-scan, on an embedded
PostgreSQL of its own.

    python -m benchmarks.pulse [--users 1000] [--days 90] [--sample 50] [--rounds 3] [--quick] [--database-url URL]

History (not timed): N people in mixed time zones with D days of drinks, meals and tasks, bulk-loaded with
COPY, plus the streak state rows the incremental projection keeps (folded from the same days), then ANALYZE.
  ours   `RuleEngine.evaluate(users, now)`: `day_snapshots` and `streaks_for_users` for everyone at once
         (a constant number of statements), then every rule's pure decision per person. A dry run: nothing
         is stored or sent (the real `tick` adds its writes only for slots that are due; shown for reference).
  naive  per person, the last D days re-scanned day by day: one query per day and module (drinks, meals,
         tasks done) to rebuild streaks and habit strength, plus today's snapshot queries, then the same
         decisions. Measured on a sample of people and extrapolated per person (it is that slow).

Last line: `RESULT users_per_s=<ours> baseline=<naive> ratio=<ours / naive>` (people per second).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time as clock
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import psycopg
from sqlalchemy import and_, func, or_, select

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from brain.clock import FixedClock
from brain.core import Brain
from brain.modules.calendar.models import CalendarEvent
from brain.modules.drink.models import DrinkEntry, DrinkGoal
from brain.modules.food.models import Meal, NutritionGoal
from brain.modules.places.models import Place, PlaceVisit, TrackingSession
from brain.modules.todo.models import Task
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.projections.day_snapshot import DEFAULT_WATER_GOAL_ML, DaySnapshot, EventSummary, TaskSummary, percent
from brain.projections.streaks import NO_PROGRESS, STREAKS, StreakProgress, StreakView, advance, view_of
from brain.pulse.nudges import NudgeDraft
from brain.store.database import Database
from rules import RuleContext
from rules.engine import RuleEngine
from rules.wiring import build_brain

DATABASE = "pulse_bench"
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC", "Australia/Sydney", "America/Los_Angeles",
         "Asia/Kolkata", "Europe/London")
NOW = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
DEFAULT_KCAL_GOAL = 2000
QUICK = {"users": 24, "days": 7, "sample": 3, "rounds": 1}


# ---- history (not timed) --------------------------------------------------------------------------------
@dataclass
class History:
    users: int = 0
    drinks: int = 0
    meals: int = 0
    tasks: int = 0
    events: int = 0
    active: dict[tuple[uuid.UUID, str], set[date]] = field(default_factory=lambda: defaultdict(set))


def _at(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=zone).astimezone(UTC)


def generate(conn: psycopg.Connection, n_users: int, n_days: int, seed: int = 7) -> History:
    """Bulk-load people and their history with COPY; returns counts and each streak's active days."""
    rng = random.Random(seed)
    history = History(users=n_users)
    people = [(uuid.uuid4(), ZONES[i % len(ZONES)]) for i in range(n_users)]
    users = [(user_id, f"bench {i}", "en" if i % 3 else "de", zone, time(22), time(7))
             for i, (user_id, zone) in enumerate(people)]
    drinks: list[tuple[object, ...]] = []
    meals: list[tuple[object, ...]] = []
    tasks: list[tuple[object, ...]] = []
    events: list[tuple[object, ...]] = []
    for user_id, zone_name in people:
        zone = ZoneInfo(zone_name)
        today = NOW.astimezone(zone).date()
        now_hour = NOW.astimezone(zone).hour
        p_water, p_meal, p_task = rng.uniform(0.5, 0.97), rng.uniform(0.4, 0.95), rng.uniform(0.3, 0.95)
        for back in range(n_days - 1, -1, -1):
            day = today - timedelta(days=back)
            last_hour = now_hour if back == 0 else 21  # today only up to now
            if last_hour > 8 and rng.random() < p_water:
                for _ in range(rng.randint(1, 7)):
                    drinks.append((uuid.uuid4(), user_id, "water", "water", rng.choice((250, 330, 500)),
                                   _at(day, rng.randint(7, last_hour - 1), rng.randint(0, 59), zone), day))
                history.active[(user_id, "water")].add(day)
            if last_hour > 8:
                for _ in range(rng.randint(0, 3)):
                    drinks.append((uuid.uuid4(), user_id, "coffee", "coffee", 150,
                                   _at(day, rng.randint(7, last_hour - 1), rng.randint(0, 59), zone), day))
            if last_hour > 9 and rng.random() < p_meal:
                for _ in range(rng.randint(1, 3)):
                    meals.append((uuid.uuid4(), user_id, "snack", "text", "bench meal", rng.randint(250, 900),
                                  rng.randint(5, 40), _at(day, rng.randint(7, last_hour - 1), rng.randint(0, 59), zone),
                                  day))
                history.active[(user_id, "meals")].add(day)
            for _ in range(rng.randint(0, 2)):
                done = rng.random() < p_task and (back > 0 or now_hour > 9)
                completed = _at(day, rng.randint(8, 21 if back else now_hour - 1), 0, zone) if done else None
                tasks.append((uuid.uuid4(), user_id, "bench task", day, rng.randint(0, 3), completed, NOW))
                if done:
                    history.active[(user_id, "tasks")].add(day)
        for _ in range(rng.randint(0, 3)):
            start = _at(today, rng.randint(8, 19), rng.choice((0, 30)), zone)
            events.append((uuid.uuid4(), user_id, "default", "bench event", start, start + timedelta(minutes=45),
                           False, False, NOW))
    # The streak rows the incremental projection would hold after seeing these events in order.
    states = []
    for user_id, _ in people:
        for streak in STREAKS:
            progress = _fold(history.active.get((user_id, streak), set()))
            if progress.last_active is not None:
                states.append((user_id, streak, progress.current, progress.longest, progress.last_active,
                               progress.strength, progress.strength_date))
    history.drinks, history.meals, history.tasks, history.events = len(drinks), len(meals), len(tasks), len(events)
    # One COPY at a time: a connection carries a single COPY stream.
    for statement, rows in (
        ("COPY users (id, display_name, locale, timezone, quiet_start, quiet_end) FROM STDIN", users),
        ("COPY drink_entries (id, user_id, drink_type, name, quantity_ml, logged_at, local_date) FROM STDIN", drinks),
        ("COPY meals (id, user_id, meal_type, input_type, description, calories, protein, logged_at, local_date) "
         "FROM STDIN", meals),
        ("COPY tasks (id, user_id, title, due_date, priority, completed_at, updated_at) FROM STDIN", tasks),
        ("COPY calendar_events (id, user_id, calendar_id, title, start_time, end_time, is_all_day, is_recurring, "
         "updated_at) FROM STDIN", events),
        ("COPY streak_states (user_id, streak, current, longest, last_active, strength, strength_date) FROM STDIN",
         states),
    ):
        with conn.cursor() as cur, cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    conn.commit()
    conn.autocommit = True
    conn.execute("ANALYZE")
    return history


def _fold(days: set[date]) -> StreakProgress:
    progress = NO_PROGRESS
    for day in sorted(days):
        progress = advance(progress, day, ())
    return progress


# ---- our way ------------------------------------------------------------------------------------------
async def ours(brain: Brain, users: Sequence[User]) -> tuple[float, dict[uuid.UUID, list[tuple[str, NudgeDraft]]]]:
    engine = RuleEngine(brain)
    start = clock.perf_counter()
    decided = await engine.evaluate(users, NOW)
    return clock.perf_counter() - start, decided


# ---- the naive way --------------------------------------------------------------------------------------
@dataclass
class Naive:
    brain: Brain
    days: int
    queries: int = 0

    async def evaluate(self, user: User) -> list[tuple[str, NudgeDraft]]:
        """Rebuild today's snapshot and the streaks from a day-by-day scan, then decide like the engine."""
        today = local_date(user, NOW)
        active: dict[str, set[date]] = {s: set() for s in STREAKS}
        per_day: dict[date, dict[str, int]] = {}
        async with self.brain.transactions.read() as session:
            for back in range(self.days - 1, -1, -1):
                day = today - timedelta(days=back)
                start, end = day_bounds(user, day)
                drinks = (await session.execute(
                    select(DrinkEntry.drink_type, func.sum(DrinkEntry.quantity_ml), func.count())
                    .where(DrinkEntry.user_id == user.id, DrinkEntry.local_date == day).group_by(DrinkEntry.drink_type)
                )).all()
                meal_count, kcal, protein = (await session.execute(
                    select(func.count(), func.coalesce(func.sum(Meal.calories), 0),
                           func.coalesce(func.sum(Meal.protein), 0))
                    .where(Meal.user_id == user.id, Meal.local_date == day)
                )).one()
                done = int(await session.scalar(select(func.count()).where(
                    Task.user_id == user.id, Task.completed_at >= start, Task.completed_at < end)) or 0)
                self.queries += 3
                by_type = {t: (int(ml), int(n)) for t, ml, n in drinks}
                if by_type.get("water", (0, 0))[1]:
                    active["water"].add(day)
                if meal_count:
                    active["meals"].add(day)
                if done:
                    active["tasks"].add(day)
                per_day[day] = {"water_ml": by_type.get("water", (0, 0))[0],
                                "coffee_ml": by_type.get("coffee", (0, 0))[0],
                                "coffee_count": by_type.get("coffee", (0, 0))[1],
                                "total_ml": sum(ml for ml, _ in by_type.values()), "meals": int(meal_count or 0),
                                "kcal": int(kcal or 0), "protein": int(protein or 0), "done": done}
            snapshot = await self._today(session, user, today, per_day[today])
        streaks = [view_of(s, _fold(active[s]), today, ()) for s in STREAKS]
        return decide_all(user, snapshot, streaks)

    async def _today(self, session: object, user: User, today: date, totals: dict[str, int]) -> DaySnapshot:
        from sqlalchemy.ext.asyncio import AsyncSession

        assert isinstance(session, AsyncSession)
        start, end = day_bounds(user, today)
        is_open = Task.completed_at.is_(None)
        open_count, overdue = (await session.execute(select(
            func.count().filter(is_open), func.count().filter(and_(is_open, Task.due_date < today)),
        ).where(Task.user_id == user.id))).one()
        due = (await session.execute(
            select(Task.id, Task.title, Task.due_date, Task.priority).where(
                Task.user_id == user.id, is_open, Task.due_date == today)
            .order_by(Task.priority.desc(), Task.created_at, Task.id).limit(5)
        )).all()
        events_today = await session.scalar(select(func.count()).where(
            CalendarEvent.user_id == user.id, CalendarEvent.start_time < end, CalendarEvent.end_time > start))
        upcoming = (await session.execute(
            select(CalendarEvent).where(CalendarEvent.user_id == user.id, CalendarEvent.end_time > NOW,
                                        or_(CalendarEvent.start_time >= NOW, CalendarEvent.is_all_day))
            .order_by(CalendarEvent.start_time, CalendarEvent.end_time, CalendarEvent.created_at).limit(5)
        )).scalars().all()
        places = (await session.execute(
            select(Place.name).join(PlaceVisit, PlaceVisit.place_id == Place.id)
            .where(PlaceVisit.user_id == user.id, PlaceVisit.local_date == today)
        )).scalars().all()
        tracking = await session.scalar(select(func.count()).where(
            TrackingSession.user_id == user.id, TrackingSession.stopped_at.is_(None)))
        water_goal = await session.scalar(select(DrinkGoal.daily_ml).where(
            DrinkGoal.user_id == user.id, DrinkGoal.drink_type == "water")) or DEFAULT_WATER_GOAL_ML
        goal = (await session.execute(select(NutritionGoal.daily_calories, NutritionGoal.daily_protein)
                                      .where(NutritionGoal.user_id == user.id))).first()
        self.queries += 8
        kcal_goal = goal[0] if goal else DEFAULT_KCAL_GOAL
        ups = [EventSummary(id=str(e.id), title=e.title, start=e.start_time, end=e.end_time, is_all_day=e.is_all_day)
               for e in upcoming]
        water = totals["water_ml"]
        return DaySnapshot(
            day=today, tasks_open=int(open_count), tasks_done_today=totals["done"], tasks_overdue=int(overdue),
            tasks_due_today=[TaskSummary(str(i), t, d, p) for i, t, d, p in due], events_today=int(events_today or 0),
            upcoming=ups, next_event=ups[0] if ups else None, water_ml=water, water_goal_ml=water_goal,
            water_percent=percent(water, water_goal), coffee_count=totals["coffee_count"],
            coffee_ml=totals["coffee_ml"], other_ml=totals["total_ml"] - water - totals["coffee_ml"],
            meals=totals["meals"], kcal=totals["kcal"], kcal_goal=kcal_goal,
            kcal_percent=percent(totals["kcal"], kcal_goal), protein=totals["protein"],
            protein_goal=goal[1] if goal else None, places_visited=list(places), tracking=bool(tracking),
        )


def decide_all(user: User, snapshot: DaySnapshot, streaks: Sequence[StreakView]) -> list[tuple[str, NudgeDraft]]:
    """The same decisions `RuleEngine.evaluate` makes, over the naively rebuilt data."""
    from rules.engine import ALL_RULES

    local = NOW.astimezone(ZoneInfo(user.timezone))
    decided = []
    for rule in ALL_RULES:
        for trigger in rule.time_triggers:
            draft = rule.decide(RuleContext(local_now=local, snapshot=snapshot, slot="dry-run", trigger=trigger,
                                            streaks=tuple(streaks)))
            if draft is not None:
                decided.append((rule.name, draft))
    return decided


# ---- running --------------------------------------------------------------------------------------------
@dataclass
class Results:
    history: History
    load_s: float
    ours_s: list[float]
    ours_users: int
    naive_s: float
    naive_users: int
    naive_queries: int
    tick_s: float
    tick_sent: int
    agree: int


async def measure(url: str, history: History, load_s: float, sample: int, rounds: int, days: int) -> Results:
    brain = build_brain(Database(url, pool_size=2), clock=FixedClock(NOW))
    try:
        async with brain.transactions.read() as session:
            users = list((await session.scalars(select(User).order_by(User.id))).all())
        await ours(brain, users[:20])  # warm the pool and the statement caches
        ours_s: list[float] = []
        decided: dict[uuid.UUID, list[tuple[str, NudgeDraft]]] = {}
        for _ in range(rounds):
            seconds, decided = await ours(brain, users)
            ours_s.append(seconds)
        picked = random.Random(11).sample(users, min(sample, len(users)))
        naive = Naive(brain, days)
        await naive.evaluate(picked[0])  # warm-up, not counted
        naive.queries = 0
        start = clock.perf_counter()
        agree = 0
        for user in picked:
            mine = await naive.evaluate(user)
            agree += [r for r, _ in mine] == [r for r, _ in decided[user.id]]
        naive_s = clock.perf_counter() - start
        # For reference: a real tick (stores and sends the nudges of the slots due at NOW).
        start = clock.perf_counter()
        report = await RuleEngine(brain).tick(NOW)
        tick_s = clock.perf_counter() - start
        return Results(history, load_s, ours_s, len(users), naive_s, len(picked), naive.queries, tick_s, report.sent,
                       agree)
    finally:
        await brain.close()


def report(r: Results, days: int) -> str:
    ours_s = statistics.median(r.ours_s)
    ours_rate = r.ours_users / ours_s
    naive_rate = r.naive_users / r.naive_s
    h = r.history
    lines = [
        f"history: {h.users} people x {days} days: {h.drinks} drinks, {h.meals} meals, {h.tasks} tasks, "
        f"{h.events} events (loaded in {r.load_s:.1f} s, not timed)",
        f"{'way':<34} {'people':>7} {'seconds':>8} {'people/s':>10} {'ms/person':>10}",
        f"{'ours: evaluate (median of ' + str(len(r.ours_s)) + ')':<34} {r.ours_users:>7} {ours_s:>8.3f} "
        f"{ours_rate:>10.1f} {ours_s * 1000 / r.ours_users:>10.3f}",
        f"{'naive: per-day re-scan (sample)':<34} {r.naive_users:>7} {r.naive_s:>8.3f} {naive_rate:>10.1f} "
        f"{r.naive_s * 1000 / r.naive_users:>10.3f}",
        f"{'ours: tick with delivery (ref.)':<34} {r.ours_users:>7} {r.tick_s:>8.3f} "
        f"{r.ours_users / r.tick_s:>10.1f} {r.tick_s * 1000 / r.ours_users:>10.3f}  ({r.tick_sent} nudges sent)",
        f"naive: {r.naive_queries / r.naive_users:.0f} queries per person; measured on a sample of {r.naive_users} "
        f"and extrapolated per person: {r.ours_users} people would take about "
        f"{r.ours_users / naive_rate:.0f} s",
        f"same decisions (rule by rule) for {r.agree} of {r.naive_users} sampled people",
        f"RESULT users_per_s={ours_rate:.1f} baseline={naive_rate:.1f} ratio={ours_rate / naive_rate:.1f}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pulse", description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1000, help="people with history (default 1000)")
    parser.add_argument("--days", type=int, default=90, help="days of history each (default 90)")
    parser.add_argument("--sample", type=int, default=50, help="people the naive way is measured on (default 50)")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes of our way (median; default 3)")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if min(args.users, args.days, args.sample, args.rounds) < 1:
        parser.error("--users, --days, --sample and --rounds must be at least 1")
    with bench_database(DATABASE, prefix="cbp", url=args.database_url) as database:
        start = clock.perf_counter()
        with psycopg.connect(database.libpq_uri) as conn:
            history = generate(conn, args.users, args.days)
        load_s = clock.perf_counter() - start
        results = asyncio.run(measure(database.url, history, load_s, args.sample, args.rounds, args.days))
    print(report(results, args.days))
    return 0


if __name__ == "__main__":
    sys.exit(main())
