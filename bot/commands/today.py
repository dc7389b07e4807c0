"""/today: the day at a glance — tasks, calendar, drinks, meals, places and streaks — rendered from the
day snapshot (kept fresh by events) in the person's language and zone."""

from __future__ import annotations

from datetime import date

from bot.commands import Command
from bot.commands.streaks import load_streaks, streak_summary
from bot.turn import Turn
from brain.i18n import N_, Percent, tr
from brain.people.local_time import local_date
from brain.projections.day_snapshot import DaySnapshot, EventSummary


def _when(turn: Turn, event: EventSummary, day: date) -> str:
    if event.is_all_day:
        return turn.t(tr("all day"))
    if local_date(turn.user, event.start) < day:
        # Begun before today's midnight ("23:00-01:00" at 0:30): its start would read as tonight, so its end is said.
        ends = event.end
        end = turn.render.time_of(ends) if local_date(turn.user, ends) == day else turn.render.format_value(ends)
        return turn.t(tr("until {end}", end=end))
    return turn.render.time_of(event.start)


def _calendar_lines(turn: Turn, snap: DaySnapshot) -> list[str]:
    # What is going on now, then what is still ahead today (an event that began at 10:00 is today's at 10:55).
    todays = [*snap.running, *(e for e in snap.upcoming if local_date(turn.user, e.start) <= snap.day)]
    if todays:
        events = " · ".join(f"{_when(turn, e, snap.day)} {e.title}" for e in todays)
        lines = [turn.t(tr("Calendar: {events}", events=events))]
    elif snap.events_today:
        lines = [turn.t(tr("Calendar: nothing more today"))]
    else:
        lines = [turn.t(tr("Calendar: nothing today"))]
    following = snap.next_event
    if following is not None and following not in todays:
        lines.append("  " + turn.t(tr("Next: {title}, {when}", title=following.title,
                                      when=turn.render.date_of(following.start) if following.is_all_day
                                      else following.start)))
    return lines


async def today(turn: Turn, args: str) -> None:
    snap = await turn.brain.snapshots.get(turn.user)
    lines = [turn.t(tr("Today, {date}", date=turn.render.long_date_of(snap.day)))]

    lines.append(turn.t(tr("Tasks: {open} open · {done} done today · {overdue} overdue", open=snap.tasks_open,
                           done=snap.tasks_done_today, overdue=snap.tasks_overdue)))
    if snap.tasks_due_today:
        lines.append("  " + turn.t(tr("Due today: {titles}", titles=", ".join(t.title for t in snap.tasks_due_today))))

    lines.extend(_calendar_lines(turn, snap))

    water = turn.t(tr("Water: {ml} ml of {goal} ml ({percent})", ml=snap.water_ml, goal=snap.water_goal_ml,
                      percent=Percent(snap.water_percent)))
    if snap.coffee_count:
        water += " · " + turn.t(tr("Coffee: {count}", count=snap.coffee_count))
    if snap.other_ml:  # tea, beer, juice: what was drunk besides, so a logged beer is seen in the day
        water += " · " + turn.t(tr("Other drinks: {ml} ml", ml=snap.other_ml))
    lines.append(water)

    if snap.meals and not snap.kcal:  # "0 of 2,000 kcal" would read as if nothing was eaten
        meals = turn.t(tr("Meals: {count} · no calories given", count=snap.meals))
    else:
        meals = turn.t(tr("Meals: {count} · {kcal} of {goal} kcal", count=snap.meals, kcal=snap.kcal,
                          goal=snap.kcal_goal))
    if snap.protein_goal:
        meals += " · " + turn.t(tr("Protein: {g} of {goal} g", g=snap.protein, goal=snap.protein_goal))
    lines.append(meals)

    if snap.places_visited:
        lines.append(turn.t(tr("Places today: {names}", names=", ".join(snap.places_visited))))
    if snap.tracking:
        lines.append(turn.t(tr("Location tracking is on.")))

    summary = streak_summary(turn.render, await load_streaks(turn))
    if summary is not None:
        lines.append(summary)

    turn.say("\n".join(lines), buttons=[[turn.tool_button(tr("+250 ml water"), "log_drink", drink_type="water",
                                                          quantity_ml=250),
                                         turn.button(tr("Tasks"), "command", text="/tasks")]])


COMMANDS = (Command("today", "/today", N_("Your day at a glance"), today, aliases=("heute",)),)
