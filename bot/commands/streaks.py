"""/streaks: each streak with its status and habit strength, and buttons to skip a day that would
otherwise break it. Also renders the one-line streak summary that /today shows."""

from __future__ import annotations

from datetime import date, timedelta

from bot.commands import Command
from bot.turn import PendingButton, Turn
from brain.i18n import N_, Percent, Renderer, Text, ntr, tr
from brain.projections.streaks import StreakView, streak_label, streaks_for

STREAK_TITLES: dict[str, str] = {"water": N_("Water"), "tasks": N_("Tasks"), "meals": N_("Meals")}


async def load_streaks(turn: Turn) -> list[StreakView]:
    async with turn.brain.transactions.glance() as session:  # one read: no transaction needed
        return await streaks_for(session, turn.user, turn.today)


def strength_percent(view: StreakView) -> int:
    return int(view.strength * 100 + 0.5)


def streak_summary(render: Renderer, views: list[StreakView]) -> str | None:
    """"Streaks: water 5 days · tasks 2 days (at risk: log one today)", or None when none is running."""
    parts: list[str] = []
    for view in views:
        if view.current <= 0:
            continue
        part = ntr("{name} {count} day", "{name} {count} days", view.current, name=streak_label(view.streak))
        if view.skipped_today:
            part = tr("{streak} (skipped today)", streak=part)
        elif view.status == "at_risk":
            part = tr("{streak} (at risk: log one today)", streak=part)
        parts.append(render(part))
    return render(tr("Streaks: {streaks}", streaks=" · ".join(parts))) if parts else None


def _status(view: StreakView) -> Text:
    if view.status == "active":  # done today, even on a day first marked as skipped
        return tr("done today")
    if view.skipped_today:
        return tr("skipped today")
    if view.status == "at_risk":
        return tr("at risk: log one today")
    return tr("not running")


def _line(view: StreakView) -> Text:
    return tr("{name}: {days}, {status} · best {longest} · strength {strength}",
              name=tr(STREAK_TITLES.get(view.streak, view.streak)),
              days=ntr("{count} day", "{count} days", view.current), status=_status(view),
              longest=view.longest, strength=Percent(strength_percent(view)))


def _skip_button(turn: Turn, view: StreakView, today: date) -> PendingButton | None:
    label = streak_label(view.streak)
    if view.status == "at_risk" and not view.skipped_today:
        return turn.tool_button(tr("Skip today ({streak})", streak=label), "skip_streak_day", streak=view.streak)
    # A streak broken by yesterday alone can still be saved by skipping yesterday; skipping today
    # would not bring it back.
    yesterday = today - timedelta(days=1)
    if view.status == "broken" and view.last_active == yesterday - timedelta(days=1):
        return turn.tool_button(tr("Skip yesterday ({streak})", streak=label), "skip_streak_day",
                                streak=view.streak, date=yesterday.isoformat())
    return None


async def streaks(turn: Turn, args: str) -> None:
    views = await load_streaks(turn)
    lines: list[Text] = [tr("Your streaks:"), *(_line(v) for v in views),
                         tr("Strength grows with each day you keep a habit and fades slowly when you don't; "
                            "a skip day (at most 2 in 7 days) changes neither.")]
    buttons = [b for v in views if (b := _skip_button(turn, v, turn.today)) is not None]
    turn.say(*lines, buttons=[buttons] if buttons else None)


COMMANDS = (Command("streaks", "/streaks", N_("Your streaks, their strength, and skip days"), streaks,
                    aliases=("streak", "serien")),)
