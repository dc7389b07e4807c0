"""The person's last seven local days as numbers (water against the goal, tasks done, calories against
the goal, streak lengths) and as a 2x2 PNG chart for /week, drawn with matplotlib's object API (no
pyplot state, so it can render in a worker thread)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.i18n import Renderer, tr
from brain.modules.drink.models import DrinkGoal
from brain.modules.drink.service import DEFAULT_GOALS_ML
from brain.modules.food.models import NutritionGoal
from brain.modules.food.service import DEFAULT_CALORIE_GOAL
from brain.people.models import User
from brain.projections.daily_metrics import daily_metrics
from brain.projections.models import StreakSkip
from brain.projections.streaks import NO_PROGRESS, STREAKS, advance, streak_label, view_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes

WEEK_DAYS = 7
# Streak lengths are replayed from the daily numbers this far back; a longer streak shows as this long.
STREAK_LOOKBACK_DAYS = 120
# Which daily metric makes a day count for each streak (the same events the streak subscriber counts).
STREAK_METRICS: dict[str, str] = {"water": "water_ml", "tasks": "tasks_done", "meals": "meals"}
CHART_SIZE_INCHES = (10.0, 7.0)
CHART_DPI = 100

_BLUE, _GREEN, _ORANGE, _GREY = "#4C8BF5", "#34A853", "#F29900", "#5F6368"
_STREAK_COLOURS = {"water": _BLUE, "tasks": _GREEN, "meals": _ORANGE}


@dataclass(frozen=True)
class WeekSeries:
    days: tuple[date, ...]  # oldest first, the last one is today
    water_ml: tuple[int, ...]
    water_goal_ml: int
    tasks_done: tuple[int, ...]
    kcal: tuple[int, ...]
    kcal_goal: int
    # Streak -> its length at the end of each day (today: so far, an unbroken streak still counts).
    streaks: Mapping[str, tuple[int, ...]]
    coffee: tuple[int, ...] = (0,) * WEEK_DAYS  # cups per day


async def week_series(session: AsyncSession, user: User, today: date) -> WeekSeries:
    """Three statements for the numbers (drinks, meals, tasks), one for the goals, one for skip days."""
    start = today - timedelta(days=WEEK_DAYS - 1)
    since = start - timedelta(days=STREAK_LOOKBACK_DAYS)
    metrics = await daily_metrics(session, user, since, today, modules=("todo", "drink", "food"))
    water_goal = select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == user.id, DrinkGoal.drink_type == "water")
    kcal_goal = select(NutritionGoal.daily_calories).where(NutritionGoal.user_id == user.id)
    goals = (await session.execute(select(water_goal.scalar_subquery(), kcal_goal.scalar_subquery()))).one()
    skips = (await session.execute(
        select(StreakSkip.streak, StreakSkip.day)
        .where(StreakSkip.user_id == user.id, StreakSkip.day >= since, StreakSkip.day <= today)
    )).all()
    skipped: dict[str, set[date]] = {streak: set() for streak in STREAKS}
    for streak, day in skips:
        skipped.setdefault(streak, set()).add(day)

    days = tuple(start + timedelta(days=i) for i in range(WEEK_DAYS))

    def week_of(metric: str) -> tuple[int, ...]:
        values = metrics.get(metric, {})
        return tuple(round(values.get(day, 0.0)) for day in days)

    all_days = [since + timedelta(days=i) for i in range((today - since).days + 1)]
    streaks = {
        streak: streak_lengths(
            [day for day in all_days if metrics.get(STREAK_METRICS[streak], {}).get(day, 0.0) > 0],
            skipped.get(streak, set()), streak, days)
        for streak in STREAKS if streak in STREAK_METRICS
    }
    return WeekSeries(
        days=days, water_ml=week_of("water_ml"),
        water_goal_ml=goals[0] if goals[0] is not None else DEFAULT_GOALS_ML["water"],
        tasks_done=week_of("tasks_done"), kcal=week_of("kcal"),
        kcal_goal=goals[1] if goals[1] is not None else DEFAULT_CALORIE_GOAL, streaks=streaks,
        coffee=week_of("coffee_count"),
    )


def streak_lengths(
    active_days: Sequence[date], skipped: set[date], streak: str, days: Sequence[date],
) -> tuple[int, ...]:
    """A streak's length as it stood at the end of each of `days`, replayed with the streak rules: a
    past day neither done nor skipped breaks it (seen from the next morning), while the last day —
    today, not over yet — still shows the streak it can continue."""
    progress = NO_PROGRESS
    pending = sorted(active_days)
    lengths = []
    index = 0
    for position, day in enumerate(days):
        while index < len(pending) and pending[index] <= day:
            progress = advance(progress, pending[index], skipped)
            index += 1
        seen_on = day if position == len(days) - 1 else day + timedelta(days=1)
        lengths.append(view_of(streak, progress, seen_on, skipped).current)
    return tuple(lengths)


def render_week_chart(series: WeekSeries, render: Renderer) -> bytes:
    """A 1000 x 700 px PNG: water vs goal, tasks done, calories vs goal, streaks; localized labels."""
    # Imported here: matplotlib costs a noticeable start-up time and only /week needs it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=CHART_SIZE_INCHES, dpi=CHART_DPI)
    FigureCanvasAgg(figure)
    (water, tasks), (kcal, streaks) = figure.subplots(2, 2)
    labels = [render.date_of(day, "EEE d") for day in series.days]

    reached = [_GREEN if v >= series.water_goal_ml else _BLUE for v in series.water_ml]
    _bars(water, series.water_ml, reached, render)
    _goal_line(water, series.water_goal_ml, series.water_ml, render)
    _style(water, render(tr("Water (ml)")), labels, render)

    _bars(tasks, series.tasks_done, [_GREEN] * len(labels), render)
    tasks.set_ylim(0, max(1, *series.tasks_done) * 1.18)
    _style(tasks, render(tr("Tasks done")), labels, render, whole_numbers=True)

    over = [_ORANGE if v > series.kcal_goal else _BLUE for v in series.kcal]
    _bars(kcal, series.kcal, over, render)
    _goal_line(kcal, series.kcal_goal, series.kcal, render)
    _style(kcal, render(tr("Calories (kcal)")), labels, render)

    highest = 1
    for streak, lengths in series.streaks.items():
        streaks.plot(range(len(labels)), lengths, marker="o", linewidth=2, markersize=5,
                     color=_STREAK_COLOURS.get(streak, _GREY), label=render(streak_label(streak)), clip_on=False)
        highest = max(highest, *lengths)
    streaks.set_ylim(0, highest * 1.25)
    streaks.legend(loc="upper left", fontsize=8, frameon=False, ncols=3)
    _style(streaks, render(tr("Streaks (days in a row)")), labels, render, whole_numbers=True)

    figure.suptitle(render(tr("Your last 7 days")), fontsize=15, fontweight="bold")
    # tight_layout arranges the panels inside the fixed figure size; bbox_inches="tight" would change it.
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=CHART_DPI)
    return out.getvalue()


def _bars(axes: Axes, values: Sequence[int], colours: Sequence[str], render: Renderer) -> None:
    drawn = axes.bar(range(len(values)), values, color=colours, width=0.65)
    axes.bar_label(drawn, labels=[render.format_value(v) if v else "" for v in values], fontsize=8, padding=2,
                   color=_GREY)


def _goal_line(axes: Axes, goal: int, values: Sequence[int], render: Renderer) -> None:
    axes.axhline(goal, color=_GREY, linestyle="--", linewidth=1.2, label=render(tr("Goal: {value}", value=goal)))
    # Room above the goal line and the tallest bar for its value label and the legend.
    axes.set_ylim(0, max([goal, *values]) * 1.18)
    axes.legend(loc="upper left", fontsize=8, frameon=False)


def _style(axes: Axes, title: str, labels: Sequence[str], render: Renderer, *, whole_numbers: bool = False) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axes.set_title(title, fontsize=12, loc="left")
    axes.set_xticks(range(len(labels)), labels, fontsize=9)
    if whole_numbers:
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    # Axis numbers in the person's locale ("2,000" / "2.000").
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: render.format_value(round(value))))
    axes.tick_params(axis="y", labelsize=8)
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
