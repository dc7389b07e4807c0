"""What an info step shows: a part of the person's day from the day snapshot, their streaks or their goals,
rendered in their language."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from brain.goals.service import goals_progress
from brain.i18n import Percent, Renderer, ntr, tr
from brain.people.local_time import local_date
from brain.people.models import User
from brain.projections.streaks import streak_label, streaks_for
from brain.summaries import goal_line

if TYPE_CHECKING:
    from brain.core import Brain

MAX_EVENTS = 3
MAX_EVENTS_WEEK = 5  # all the day snapshot holds (brain.projections.day_snapshot.MAX_UPCOMING)


async def info_lines(brain: Brain, user: User, source: str, render: Renderer) -> list[str]:
    now = brain.clock.now()
    if source == "streaks":
        async with brain.transactions.read() as session:
            views = await streaks_for(session, user, local_date(user, now))
        running = [render(ntr("{name} {count} day", "{name} {count} days", v.current, name=streak_label(v.streak)))
                   for v in views if v.current > 0]
        return [render(tr("Streaks: {streaks}", streaks=" · ".join(running)))] if running \
            else [render(tr("No streak is running yet."))]
    if source == "goals":
        async with brain.transactions.read() as session:
            goals = [g for g in await goals_progress(session, user, now) if g.status == "active"]
        return [f"• {render(goal_line(g))}" for g in goals] or [render(tr("No goals yet."))]
    s = await brain.snapshots.get(user)
    if source == "tasks_today":
        lines = [render(tr("Tasks: {open} open · {done} done today · {overdue} overdue", open=s.tasks_open,
                           done=s.tasks_done_today, overdue=s.tasks_overdue))]
        if s.tasks_due_today:
            lines.append(render(tr("Due today: {titles}", titles=", ".join(t.title for t in s.tasks_due_today))))
        return lines
    if source == "events_today":
        todays = [e for e in s.upcoming if local_date(user, e.start) <= s.day][:MAX_EVENTS]
        if not todays:
            return [render(tr("Calendar: nothing more today") if s.events_today else tr("Calendar: nothing today"))]
        return [render(tr("Next: {title} (all day)", title=e.title) if e.is_all_day
                       else tr("Next: {title} at {time}", title=e.title, time=e.start.astimezone(render.tz).time()))
                for e in todays]
    if source == "events_week":
        # The weekly review looks ahead: what the coming seven days hold, with their days.
        ahead = [e for e in s.upcoming if local_date(user, e.start) < s.day + timedelta(days=7)][:MAX_EVENTS_WEEK]
        if not ahead:
            return [render(tr("Calendar: nothing in the next 7 days"))]
        return [f"{render.date_of(e.start)} · {e.title}" if e.is_all_day
                else f"{render.date_of(e.start)}, {render.time_of(e.start)} · {e.title}" for e in ahead]
    if source == "drink_progress":
        lines = [render(tr("Water: {ml} ml of {goal} ml ({percent})", ml=s.water_ml, goal=s.water_goal_ml,
                           percent=Percent(s.water_percent)))]
        if s.coffee_count:
            lines.append(render(tr("Coffee: {count}", count=s.coffee_count)))
        return lines
    if source == "nutrition_progress":
        lines = [render(tr("Meals: {count} · {kcal} of {goal} kcal", count=s.meals, kcal=s.kcal, goal=s.kcal_goal))]
        if s.protein_goal:
            lines.append(render(tr("Protein: {g} of {goal} g", g=s.protein, goal=s.protein_goal)))
        return lines
    raise ValueError(f"unknown info source {source!r}")
