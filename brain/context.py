"""The context document: what the language model is told about the person at each companion call —
today, goals, streaks, known patterns, correlations and pending proposals — in their language, kept
within a token budget by dropping the least important lines first (whole lines, never half of one)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from brain.i18n import N_, Percent, Renderer, Text, ntr, tr
from brain.people.local_time import local_date
from brain.people.models import User

if TYPE_CHECKING:
    from brain.kernel import Kernel
    from brain.projections.correlations import Correlation
    from brain.projections.day_snapshot import DaySnapshot, EventSummary
    from brain.projections.streaks import StreakView

DEFAULT_BUDGET_TOKENS = 500
MAX_CORRELATIONS = 3
MAX_UPCOMING = 4
GOAL_PERIODS: dict[str, str] = {"day": N_("today"), "week": N_("this week"), "month": N_("this month")}


class Importance(IntEnum):
    """Lower is kept longer. Pending proposals rank right after goals (the model must not forget what
    waits for an answer); active streaks after the next events; broken streaks with the details."""

    TODAY = 0
    AT_RISK = 1
    GOALS = 2
    PROPOSALS = 3
    NEXT_EVENTS = 4
    STREAKS = 5
    CORRELATIONS = 6
    PATTERNS = 7
    DETAILS = 8


@dataclass(frozen=True)
class GoalLine:
    title: str
    value: float
    target: float
    comparison: str  # ">=", "<=" or "="
    period: str  # "day", "week" or "month"
    reached: bool


@dataclass(frozen=True)
class _Line:
    importance: Importance
    text: str


def estimate_tokens(text: str) -> int:
    """A rough count for budgeting: about four characters per token."""
    return math.ceil(len(text) / 4)


def build_context_document(
    render: Renderer,
    snapshot: DaySnapshot,
    *,
    goals: Sequence[GoalLine] = (),
    streaks: Sequence[StreakView] = (),
    patterns: Sequence[str] = (),
    correlations: Sequence[Correlation] = (),
    proposals: Sequence[str] = (),
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    sensitive: bool = True,
) -> str:
    """`sensitive=False` leaves out what `brain.companion.privacy` counts as sensitive: meals and nutrition,
    places and location tracking, and correlations that involve food or places (for a remote model the
    person did not allow to see them). Pass `patterns` only when they may be sent as well."""
    title = "## " + render(tr("About the person, {date}", date=render.long_date_of(snapshot.day)))
    if not sensitive:
        from brain.companion.privacy import is_sensitive, module_class

        correlations = [c for c in correlations
                        if not (is_sensitive(module_class(c.module_a)) or is_sensitive(module_class(c.module_b)))]
    sections: list[tuple[str, list[_Line]]] = [
        (render(tr("Today")), _today(render, snapshot, sensitive=sensitive)),
        (render(tr("Goals")), [_Line(Importance.GOALS, "- " + _goal(render, g)) for g in goals]),
        (render(tr("Streaks")), _streaks(render, streaks)),
        (render(tr("Known patterns")), [_Line(Importance.PATTERNS, f"- {p}") for p in patterns if p.strip()]),
        (render(tr("Correlations")), [
            _Line(Importance.CORRELATIONS, "- " + render(tr("{sentence} (r = {r})", sentence=c.sentence,
                                                            r=round(c.r, 2))))
            for c in correlations[:MAX_CORRELATIONS]
        ]),
        (render(tr("Pending proposals")), [_Line(Importance.PROPOSALS, f"- {p}") for p in proposals if p.strip()]),
    ]
    return fit_to_budget(title, sections, budget_tokens)


def fit_to_budget(title: str, sections: Sequence[tuple[str, Sequence[_Line]]], budget_tokens: int) -> str:
    """The document with as many lines as fit: lines leave least important first, and within one
    importance the later ones first (sections are listed in their order of relevance). A section whose
    lines are all gone loses its header too. The title always stays."""
    kept = {(s, i) for s, (_, lines) in enumerate(sections) for i in range(len(lines))}
    drop_order = sorted(kept, key=lambda key: (-sections[key[0]][1][key[1]].importance, -key[0], -key[1]))

    def render_kept() -> str:
        parts = [title]
        for s, (header, lines) in enumerate(sections):
            body = [line.text for i, line in enumerate(lines) if (s, i) in kept]
            if body:
                parts.append(f"### {header}")
                parts.extend(body)
        return "\n".join(parts)

    text = render_kept()
    for key in drop_order:
        if estimate_tokens(text) <= budget_tokens:
            break
        kept.discard(key)
        text = render_kept()
    return text


def _today(render: Renderer, s: DaySnapshot, *, sensitive: bool = True) -> list[_Line]:
    lines = [
        _Line(Importance.TODAY, "- " + render(tr("Tasks: {open} open · {done} done today · {overdue} overdue",
                                                 open=s.tasks_open, done=s.tasks_done_today,
                                                 overdue=s.tasks_overdue))),
        _Line(Importance.TODAY, "- " + render(
            ntr("Calendar: {count} event today", "Calendar: {count} events today", s.events_today)
            if s.events_today else tr("Calendar: nothing today"))),
        _Line(Importance.TODAY, "- " + render(tr("Water: {ml} ml of {goal} ml ({percent})", ml=s.water_ml,
                                                 goal=s.water_goal_ml, percent=Percent(s.water_percent)))),
    ]
    if s.coffee_count:
        lines.append(_Line(Importance.TODAY, "- " + render(tr("Coffee: {count}", count=s.coffee_count))))
    if sensitive:
        lines.append(_Line(Importance.TODAY, "- " + render(tr("Meals: {count} · {kcal} of {goal} kcal",
                                                              count=s.meals, kcal=s.kcal, goal=s.kcal_goal))))
    if s.protein_goal and sensitive:
        lines.append(_Line(Importance.TODAY, "- " + render(tr("Protein: {g} of {goal} g", g=s.protein,
                                                              goal=s.protein_goal))))
    if s.places_visited and sensitive:
        lines.append(_Line(Importance.TODAY, "- " + render(tr("Places today: {names}",
                                                              names=", ".join(s.places_visited)))))
    for index, event in enumerate(s.upcoming[:MAX_UPCOMING]):
        when = _when(render, s, event)
        text = (tr("Next event: {title}, {when}", title=event.title, when=when) if index == 0
                else tr("Later: {title}, {when}", title=event.title, when=when))
        lines.append(_Line(Importance.NEXT_EVENTS, "- " + render(text)))
    for task in s.tasks_due_today:
        text = (tr("Due today: {title} (priority {priority})", title=task.title, priority=task.priority)
                if task.priority else tr("Due today: {title}", title=task.title))
        lines.append(_Line(Importance.DETAILS, "- " + render(text)))
    if s.tracking and sensitive:
        lines.append(_Line(Importance.DETAILS, "- " + render(tr("Location tracking is on"))))
    return lines


def _when(render: Renderer, s: DaySnapshot, event: EventSummary) -> str:
    on_day = event.start.astimezone(render.tz).date() == s.day
    if event.is_all_day:
        return render(tr("all day")) if on_day else render.date_of(event.start)
    if on_day:
        return render(tr("{start}–{end}", start=render.time_of(event.start), end=render.time_of(event.end)))
    return render.format_value(event.start)


def _goal(render: Renderer, g: GoalLine) -> str:
    """The state is read from value and target: a limit goal ("<=") is only "reached" once its period is
    over, but the model needs to know now whether the person is still within it."""
    period = tr(GOAL_PERIODS.get(g.period, g.period))
    state: Text | None
    if g.comparison == "<=":
        main = tr("{title}: {value}, at most {target} {period}", title=g.title, value=g.value, target=g.target,
                  period=period)
        state = tr("within the limit") if g.value <= g.target else tr("over the limit")
    elif g.comparison == "=":
        main = tr("{title}: {value}, exactly {target} {period}", title=g.title, value=g.value, target=g.target,
                  period=period)
        state = tr("reached") if g.value == g.target else None
    else:
        main = tr("{title}: {value} of {target} {period}", title=g.title, value=g.value, target=g.target,
                  period=period)
        state = tr("reached") if g.reached or g.value >= g.target else None
    return render(main) + (f" — {render(state)}" if state is not None else "")


def _streak_name(streak: str) -> Text:
    from brain.projections.streaks import streak_label

    return streak_label(streak)


def _streaks(render: Renderer, streaks: Sequence[StreakView]) -> list[_Line]:
    at_risk, active, broken = [], [], []
    for v in streaks:
        name = _streak_name(v.streak)
        if v.status == "at_risk" and v.skipped_today:
            # A skip day keeps the streak alive: nothing is at risk today.
            active.append(_Line(Importance.STREAKS, "- " + render(ntr(
                "{streak}: {count} day in a row (today is a skip day)",
                "{streak}: {count} days in a row (today is a skip day)", v.current, streak=name))))
        elif v.status == "at_risk":
            at_risk.append(_Line(Importance.AT_RISK, "- ⚠ " + render(ntr(
                "{streak}: {count} day in a row — AT RISK, not done yet today",
                "{streak}: {count} days in a row — AT RISK, not done yet today", v.current, streak=name))))
        elif v.status == "active":
            active.append(_Line(Importance.STREAKS, "- " + render(ntr(
                "{streak}: {count} day in a row", "{streak}: {count} days in a row", v.current, streak=name))))
        elif v.longest > 0:
            broken.append(_Line(Importance.DETAILS, "- " + render(ntr(
                "{streak}: broken (record: {count} day)", "{streak}: broken (record: {count} days)", v.longest,
                streak=name))))
    return at_risk + active + broken


@dataclass(frozen=True)
class ContextSources:
    """What the document is built from, read from the database (the slow part); rendering it is cheap, so a
    caller that keeps these (e.g. until the person's next event) can build fresh documents without reading."""

    snapshot: DaySnapshot
    goals: Sequence[GoalLine]
    streaks: Sequence[StreakView]
    correlations: Sequence[Correlation]


async def read_context_sources(brain: Kernel, user: User) -> ContextSources:
    """Today's snapshot, goals, streaks and correlations of `user`, in one read session."""
    from brain.projections.correlations import correlations as find_correlations
    from brain.projections.day_snapshot import day_snapshot
    from brain.projections.streaks import streaks_for

    now = brain.clock.now()
    today = local_date(user, now)
    async with brain.transactions.read() as session:
        snapshot = await day_snapshot(session, user, now)
        streaks = await streaks_for(session, user, today)
        goals = await _goal_lines(session, user, now)
        found = await find_correlations(session, user, today)
    return ContextSources(snapshot, goals, streaks, found)


def render_context_document(
    user: User,
    sources: ContextSources,
    *,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    patterns: Sequence[str] = (),
    proposals: Sequence[str] = (),
    sensitive: bool = True,
) -> str:
    return build_context_document(
        Renderer(user.locale, user.timezone), sources.snapshot, goals=sources.goals, streaks=sources.streaks,
        patterns=patterns, correlations=sources.correlations, proposals=proposals, budget_tokens=budget_tokens,
        sensitive=sensitive,
    )


async def context_document(
    brain: Kernel,
    user: User,
    *,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    patterns: Sequence[str] = (),
    proposals: Sequence[str] = (),
    sensitive: bool = True,
) -> str:
    """Reads today's snapshot, goals, streaks and correlations for `user` and builds the document.
    `sensitive=False`: without meals, places and their correlations (see `build_context_document`)."""
    return render_context_document(user, await read_context_sources(brain, user), budget_tokens=budget_tokens,
                                   patterns=patterns, proposals=proposals, sensitive=sensitive)


async def _goal_lines(session: AsyncSession, user: User, now: datetime) -> list[GoalLine]:
    from brain.goals.service import goals_progress

    progress = await goals_progress(session, user, now)
    return [
        GoalLine(title=g.title, value=g.value, target=g.target, comparison=g.comparison, period=g.period,
                 reached=g.reached)
        for g in progress if getattr(g, "status", "active") == "active"
    ]
