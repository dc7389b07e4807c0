"""Each pulse rule's decision as a pure function over plain data (no database), the slot calendar of
the engine (local times, DST, keys) and the quiet-hours and snooze arithmetic."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from brain.events.catalog import DrinkLogged, GoalReached
from brain.i18n import Percent, Renderer, tr
from brain.projections.correlations import Correlation
from brain.projections.day_snapshot import DaySnapshot, EventSummary, TaskSummary
from brain.projections.streaks import StreakView
from brain.pulse.activity import in_quiet_hours, quiet_hours_end
from brain.pulse.nudges import HIGH, LOW, MEDIUM, NudgeDraft, content_from_json, content_to_json, snooze_until
from rules import DailyAt, RuleContext
from rules.engine import ALL_RULES, slots_between, slots_on
from rules.evening_reflection import EVENING_REFLECTION
from rules.goal_reached import GOAL_REACHED
from rules.meals import DINNER, LUNCH, MEALS
from rules.morning_summary import MORNING_SUMMARY
from rules.overdue_tasks import OVERDUE_TASKS
from rules.streak_at_risk import STREAK_AT_RISK
from rules.water import WATER
from rules.weekly_insight import WEEKLY_INSIGHT, insight_key

BERLIN = ZoneInfo("Europe/Berlin")
EN = Renderer("en", "Europe/Berlin")
DAY = date(2026, 11, 30)


def snapshot(**changes: object) -> DaySnapshot:
    base = DaySnapshot(
        day=DAY, tasks_open=0, tasks_done_today=0, tasks_overdue=0, tasks_due_today=[], events_today=0,
        upcoming=[], next_event=None, water_ml=0, water_goal_ml=2000, water_percent=0, coffee_count=0, coffee_ml=0,
        other_ml=0, meals=0, kcal=0, kcal_goal=2000, kcal_percent=0, protein=0, protein_goal=None,
        places_visited=[], tracking=False,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def ctx(hour: int, minute: int = 0, *, snap: DaySnapshot | None = None, **extra: object) -> RuleContext:
    return RuleContext(local_now=datetime(2026, 11, 30, hour, minute, tzinfo=BERLIN), snapshot=snap or snapshot(),
                       slot="2026-11-30", **extra)  # type: ignore[arg-type]


def text(draft: NudgeDraft) -> str:
    return "\n".join([EN(draft.title), EN(draft.body), *(EN(d) for d in draft.details)])


def streak(name: str, current: int, status: str = "at_risk", skipped_today: bool = False) -> StreakView:
    return StreakView(streak=name, current=current, longest=current, last_active=DAY - timedelta(days=1),
                      status=status, strength=0.3, skipped_today=skipped_today)  # type: ignore[arg-type]


# ---- water ---------------------------------------------------------------------------------------------
def test_water_behind_pro_rata_gives_ml_to_go_and_per_hour_and_a_log_button() -> None:
    draft = WATER.decide(ctx(9, 30, snap=snapshot(water_ml=0)))
    assert draft is not None
    # 2,000 ml to go in the 11.5 hours until 21:00 -> 174 ml per hour, in steps of 50 ml.
    assert "Still 2,000 ml to your goal today, about 200 ml per hour." in text(draft)
    assert draft.priority == MEDIUM
    assert draft.expires_after == timedelta(minutes=90)
    (act,) = draft.actions
    assert act.tool == "log_drink" and dict(act.args) == {"drink_type": "water", "quantity_ml": 250}


def test_water_pace_never_asks_more_than_a_comfortable_amount_and_says_when_the_goal_is_out_of_reach() -> None:
    late = WATER.decide(ctx(20, 7, snap=snapshot(water_ml=250, water_percent=12)))
    assert late is not None
    assert EN(late.body) == ("Still 1,750 ml to your goal today: more than you can comfortably drink in the hours "
                             "left. A glass now still helps.")
    assert "per hour" not in EN(late.body)
    assert "mehr, als du in den restlichen Stunden gut trinken kannst" in Renderer("de")(late.body)
    afternoon = WATER.decide(ctx(17, snap=snapshot(water_ml=500, water_percent=25)))
    assert afternoon is not None  # 1,500 ml in 4 hours
    assert EN(afternoon.body) == "Still 1,500 ml to your goal today, about 400 ml per hour."
    for hour in range(8, 21):
        for minute in (0, 30, 59):
            draft = WATER.decide(ctx(hour, minute, snap=snapshot(water_ml=0)))
            assert draft is None or "per hour" not in EN(draft.body) or \
                int(EN(draft.body).split("about ")[1].split(" ml")[0].replace(",", "")) <= 500


def test_water_on_track_or_goal_reached_or_outside_the_window_gives_nothing() -> None:
    # At 14:00, 6/13 of the day's window has passed: 923 ml is pro rata.
    assert WATER.decide(ctx(14, snap=snapshot(water_ml=1000, water_percent=50))) is None
    assert WATER.decide(ctx(14, snap=snapshot(water_ml=900, water_percent=45))) is not None
    assert WATER.decide(ctx(20, snap=snapshot(water_ml=2000, water_percent=100))) is None
    assert WATER.decide(ctx(7, snap=snapshot(water_ml=0))) is None
    assert WATER.decide(ctx(22, snap=snapshot(water_ml=0))) is None


def test_on_the_day_a_person_arrives_the_water_pace_starts_then_and_waits_for_a_glass_to_be_due() -> None:
    arrived = datetime(2026, 11, 30, 10, 27, tzinfo=BERLIN)
    assert WATER.decide(ctx(10, 30, snap=snapshot(water_ml=0), arrived=arrived)) is None  # just said hello
    assert WATER.decide(ctx(11, 0, snap=snapshot(water_ml=0), arrived=arrived)) is None  # 85 ml due: not a glass
    later = WATER.decide(ctx(12, 30, snap=snapshot(water_ml=0), arrived=arrived))  # 315 ml due since 10:27
    assert later is not None and "Still 2,000 ml" in text(later)
    assert WATER.decide(ctx(12, 30, snap=snapshot(water_ml=250), arrived=arrived)) is None  # a glass since: on pace
    # Someone who came the day before, or before the window opened, has the day's usual pace.
    assert WATER.decide(ctx(10, 30, snap=snapshot(water_ml=0), arrived=arrived - timedelta(days=1))) is not None
    assert WATER.decide(ctx(10, 30, snap=snapshot(water_ml=0), arrived=arrived.replace(hour=7))) is not None


def test_water_priority_is_low_past_half_the_goal() -> None:
    draft = WATER.decide(ctx(20, snap=snapshot(water_ml=1200, water_percent=60)))
    assert draft is not None and draft.priority == LOW
    # 800 ml in the one hour left is more than a comfortable pace: said plainly, no per-hour figure
    assert "more than you can comfortably drink in the hours left" in text(draft)


# ---- streak at risk ------------------------------------------------------------------------------------
def test_streak_at_risk_names_the_longest_at_risk_streak_with_its_action_and_skip() -> None:
    draft = STREAK_AT_RISK.decide(ctx(18, streaks=(streak("water", 3), streak("tasks", 9),
                                                   streak("meals", 12, status="active"))))
    assert draft is not None
    assert "Your tasks streak is at risk" in text(draft)
    assert "9 days in a row so far" in text(draft)
    assert draft.priority == HIGH
    assert [a.command or a.tool for a in draft.actions] == ["/tasks", "skip_streak_day"]
    assert dict(draft.actions[1].args) == {"streak": "tasks"}


def test_streak_at_risk_says_nothing_when_active_broken_or_skipped_today() -> None:
    assert STREAK_AT_RISK.decide(ctx(18, streaks=(streak("water", 4, status="active"),))) is None
    assert STREAK_AT_RISK.decide(ctx(18, streaks=(streak("water", 0, status="broken"),))) is None
    assert STREAK_AT_RISK.decide(ctx(18, streaks=(streak("water", 4, skipped_today=True),))) is None


def test_short_water_streak_at_risk_is_medium_and_offers_a_glass() -> None:
    draft = STREAK_AT_RISK.decide(ctx(18, streaks=(streak("water", 2),)))
    assert draft is not None and draft.priority == MEDIUM
    assert draft.actions[0].tool == "log_drink"


# ---- morning summary -----------------------------------------------------------------------------------
def test_morning_summary_lists_due_tasks_overdue_appointments_and_the_water_goal() -> None:
    start = datetime(2026, 11, 30, 9, 15, tzinfo=BERLIN).astimezone(UTC)
    event = EventSummary(id="e", title="Standup", start=start, end=start + timedelta(minutes=15), is_all_day=False)
    snap = snapshot(tasks_due_today=[TaskSummary("1", "Taxes", DAY, 0), TaskSummary("2", "Call Mum", DAY, 0)],
                    tasks_overdue=2, events_today=1, next_event=event, upcoming=[event])
    draft = MORNING_SUMMARY.decide(ctx(8, snap=snap))
    assert draft is not None
    body = text(draft)
    assert "Good morning!" in body and "Here is your day." in body
    assert "Due today: Taxes, Call Mum" in body
    assert "2 overdue tasks" in body
    assert "1 appointment today" in body
    assert "Next: Standup at 9:15" in body
    assert "Water goal: 2,000 ml" in body
    assert draft.priority == MEDIUM
    assert draft.actions[0].command == "/today"


def test_morning_summary_gives_the_next_appointments_day_when_it_is_not_today() -> None:
    def said(start: datetime, all_day: bool = False) -> str:
        event = EventSummary(id="e", title="Dentist", start=start.astimezone(UTC),
                             end=start.astimezone(UTC) + timedelta(hours=1), is_all_day=all_day)
        draft = MORNING_SUMMARY.decide(ctx(8, snap=snapshot(next_event=event, upcoming=[event])))
        assert draft is not None
        return text(draft)

    assert "Next: Dentist, tomorrow at 10:00" in said(datetime(2026, 12, 1, 10, tzinfo=BERLIN))
    assert "Next: Dentist, Fri, Dec 4, 10:00" in said(datetime(2026, 12, 4, 10, tzinfo=BERLIN))
    assert "Next: Dentist, Fri, Dec 4 (all day)" in said(datetime(2026, 12, 4, tzinfo=BERLIN), all_day=True)


def test_morning_summary_on_an_empty_day_says_free_day() -> None:
    draft = MORNING_SUMMARY.decide(ctx(8))
    assert draft is not None and draft.priority == LOW
    assert "a free day" in text(draft)


# ---- evening reflection --------------------------------------------------------------------------------
def test_evening_reflection_asks_what_went_well_with_the_days_numbers() -> None:
    draft = EVENING_REFLECTION.decide(ctx(21, snap=snapshot(tasks_done_today=3, water_ml=1500, meals=2)))
    assert draft is not None
    body = text(draft)
    assert "What went well today?" in body
    assert "3 tasks done" in body and "Water: 1,500 of 2,000 ml" in body and "2 meals logged" in body


# ---- overdue tasks -------------------------------------------------------------------------------------
def test_overdue_tasks_only_when_there_are_some() -> None:
    assert OVERDUE_TASKS.decide(ctx(10)) is None
    one = OVERDUE_TASKS.decide(ctx(10, snap=snapshot(tasks_overdue=1)))
    many = OVERDUE_TASKS.decide(ctx(15, snap=snapshot(tasks_overdue=4)))
    assert one is not None and "1 overdue task" in text(one) and one.priority == MEDIUM
    assert many is not None and "4 overdue tasks" in text(many) and many.priority == HIGH
    assert one.actions[0].command == "/tasks"


# ---- meals ---------------------------------------------------------------------------------------------
def test_lunch_reminder_only_without_any_meal() -> None:
    assert MEALS.decide(ctx(12, trigger=LUNCH, snap=snapshot(meals=1))) is None
    draft = MEALS.decide(ctx(12, trigger=LUNCH))
    assert draft is not None and "No meal logged today yet." in text(draft)
    assert draft.actions[0].command == "/meal"


def test_dinner_reminder_with_fewer_than_two_meals() -> None:
    assert MEALS.decide(ctx(19, trigger=DINNER, snap=snapshot(meals=2))) is None
    draft = MEALS.decide(ctx(19, trigger=DINNER, snap=snapshot(meals=1, kcal=650)))
    assert draft is not None and "Only 1 meal logged today (650 kcal)." in text(draft)


# ---- goal reached --------------------------------------------------------------------------------------
def test_goal_reached_congratulates_on_the_event_only() -> None:
    event = GoalReached(goal_id=uuid.uuid4(), title="8 glasses of water", value=8, target=8, period="day")
    draft = GOAL_REACHED.decide(ctx(11, event=event))
    assert draft is not None
    assert "You reached your goal “8 glasses of water”: 8 of 8." in text(draft)
    other = DrinkLogged(entry_id=uuid.uuid4(), drink_type="water", quantity_ml=250, name="water", date=DAY,
                        time="11:00", from_preset=False)
    assert GOAL_REACHED.decide(ctx(11, event=other)) is None
    assert GOAL_REACHED.decide(ctx(11)) is None


# ---- weekly insight ------------------------------------------------------------------------------------
def correlation(a: str, b: str, r: float) -> Correlation:
    return Correlation(metric_a=a, metric_b=b, module_a="drink", module_b="food", r=r, p=0.001, n=30,
                       direction="positive" if r > 0 else "negative", effect_percent=30,
                       sentence=tr("On days with more {a} you have {percent} more {b}.", a=a, b=b,
                                    percent=Percent(30)))


def test_weekly_insight_tells_the_strongest_new_correlation_once() -> None:
    found = (correlation("water_ml", "kcal", 0.55), correlation("coffee_count", "meals", -0.7),
             correlation("water_ml", "meals", 0.4))
    draft = WEEKLY_INSIGHT.decide(ctx(18, correlations=found))
    assert draft is not None
    assert "coffee_count" in text(draft) and "r = -0.7" in text(draft)
    assert draft.data["insight"] == insight_key("meals", "coffee_count")
    told = frozenset({insight_key("coffee_count", "meals")})
    second = WEEKLY_INSIGHT.decide(ctx(18, correlations=found, told_insights=told))
    assert second is not None and second.data["insight"] == insight_key("kcal", "water_ml")
    everything = told | {insight_key("water_ml", "kcal")}
    assert WEEKLY_INSIGHT.decide(ctx(18, correlations=found, told_insights=everything)) is None


def test_a_stored_insight_writes_its_percentage_the_persons_way() -> None:
    draft = WEEKLY_INSIGHT.decide(ctx(18, correlations=(correlation("water_ml", "kcal", 0.55),)))
    assert draft is not None
    stored = content_from_json(content_to_json(draft))
    assert EN(stored.body) == "On days with more water_ml you have 30% more kcal."
    assert Renderer("de", "Europe/Berlin")(stored.body) == \
        "An Tagen, an denen du mehr water_ml hast, hast du 30\u00a0% mehr kcal."


# ---- stored drafts -------------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.name not in {"goal_reached", "weekly_insight"}])
def test_a_stored_draft_renders_exactly_like_the_fresh_one(rule) -> None:
    snap = snapshot(tasks_overdue=2, tasks_due_today=[TaskSummary("1", "Taxes", DAY, 0)], water_ml=100)
    draft = rule.decide(ctx(19, snap=snap, trigger=DINNER, streaks=(streak("water", 3),), goals=(goal(5.5),)))
    assert draft is not None
    stored = content_from_json(content_to_json(draft))
    assert EN(stored.title) == EN(draft.title) and EN(stored.body) == EN(draft.body)
    assert [EN(d) for d in stored.details] == [EN(d) for d in draft.details]
    assert [(EN(a.label), a.tool, dict(a.args), a.command) for a in stored.actions] == [
        (EN(a.label), a.tool, dict(a.args), a.command) for a in draft.actions]


# ---- the slot calendar ---------------------------------------------------------------------------------
def test_morning_slot_is_eight_local_across_the_dst_change() -> None:
    instants = [next(slots_on(MORNING_SUMMARY, d, BERLIN)).at for d in
                (date(2026, 10, 24), date(2026, 10, 25), date(2026, 10, 26))]
    assert instants == [datetime(2026, 10, 24, 6, tzinfo=UTC), datetime(2026, 10, 25, 7, tzinfo=UTC),
                        datetime(2026, 10, 26, 7, tzinfo=UTC)]


def test_slot_keys_per_kind_of_trigger() -> None:
    assert [s.key for s in slots_on(MORNING_SUMMARY, DAY, BERLIN)] == ["2026-11-30"]
    assert [s.key for s in slots_on(OVERDUE_TASKS, DAY, BERLIN)] == ["2026-11-30T10", "2026-11-30T15"]
    water = [s.key for s in slots_on(WATER, DAY, BERLIN)]
    assert water[:3] == ["2026-11-30T08:00", "2026-11-30T09:30", "2026-11-30T11:00"]
    assert water[-1] == "2026-11-30T20:00" and len(water) == 9
    assert list(slots_on(WEEKLY_INSIGHT, DAY, BERLIN)) == []  # a Monday
    (sunday,) = slots_on(WEEKLY_INSIGHT, date(2026, 11, 29), BERLIN)
    assert sunday.key == "2026-W48" and sunday.local.hour == 18


def test_learned_offset_moves_the_time_but_keeps_the_key() -> None:
    (slot,) = slots_on(STREAK_AT_RISK, DAY, BERLIN, offset_minutes=60)
    assert slot.key == "2026-11-30" and slot.local.time() == time(19, 0)


def test_slots_between_is_half_open_and_ordered() -> None:
    eight = datetime(2026, 11, 30, 7, tzinfo=UTC)
    assert slots_between(MORNING_SUMMARY, BERLIN, eight, eight + timedelta(hours=1)) == []
    (slot,) = slots_between(MORNING_SUMMARY, BERLIN, eight - timedelta(minutes=1), eight)
    assert slot.at == eight
    day_long = slots_between(WATER, BERLIN, eight - timedelta(hours=2), eight + timedelta(hours=14))
    assert [s.at for s in day_long] == sorted(s.at for s in day_long) and len(day_long) == 9


# ---- quiet hours and snoozing --------------------------------------------------------------------------
@pytest.mark.parametrize("at, quiet", [
    (time(22, 0), True), (time(23, 59), True), (time(0, 30), True), (time(6, 59), True), (time(7, 0), False),
    (time(12, 0), False), (time(21, 59), False),
])
def test_default_quiet_hours_span_midnight(at: time, quiet: bool) -> None:
    assert in_quiet_hours(at, time(22), time(7)) is quiet


def test_quiet_hours_within_a_day_and_none_when_equal() -> None:
    assert in_quiet_hours(time(13, 30), time(13), time(15))
    assert not in_quiet_hours(time(15), time(13), time(15))
    assert not in_quiet_hours(time(3), time(0), time(0))


def test_end_of_quiet_hours_is_the_next_end_time() -> None:
    late = datetime(2026, 11, 30, 23, 10, tzinfo=BERLIN)
    assert quiet_hours_end(late, time(22), time(7)) == datetime(2026, 12, 1, 7, tzinfo=BERLIN)
    early = datetime(2026, 11, 30, 5, 0, tzinfo=BERLIN)
    assert quiet_hours_end(early, time(22), time(7)) == datetime(2026, 11, 30, 7, tzinfo=BERLIN)


def test_snooze_times() -> None:
    quiet = (time(22), time(7))
    now = datetime(2026, 11, 30, 9, 30, tzinfo=BERLIN)
    assert snooze_until(now, minutes=15, quiet=quiet) == now + timedelta(minutes=15)
    assert snooze_until(now, minutes=None, quiet=quiet) == datetime(2026, 12, 1, 9, 30, tzinfo=BERLIN)
    late = datetime(2026, 11, 30, 21, 30, tzinfo=BERLIN)
    assert snooze_until(late, minutes=60, quiet=quiet) == datetime(2026, 12, 1, 7, tzinfo=BERLIN)


def test_every_rule_has_a_distinct_name_and_a_trigger() -> None:
    names = [r.name for r in ALL_RULES]
    assert len(names) == len(set(names)) == 9
    assert all(r.triggers for r in ALL_RULES)
    assert isinstance(MEALS.triggers[0], DailyAt)


# ---- goal progress -------------------------------------------------------------------------------------
def goal(value: float, target: float = 8, *, period: str = "day", start: date = DAY, days: int = 1,
         comparison: str = ">=", metric: str = "event_count", reached: bool = False) -> object:
    from brain.goals.service import GoalProgress

    return GoalProgress(goal_id=uuid.uuid4(), title="8 glasses of water a day", metric=metric, period=period,
                        comparison=comparison, target=target, value=value, reached=reached, period_start=start,
                        period_end=start + timedelta(days=days), status="active", template=None)


def test_goal_progress_speaks_when_half_way_with_most_of_the_period_gone() -> None:
    from rules.goal_progress import GOAL_PROGRESS

    draft = GOAL_PROGRESS.decide(ctx(17, goals=(goal(5),)))
    assert draft is not None and draft.type == "goal_progress"
    assert text(draft) == "Half-way there: 8 glasses of water a day\n5 of 8 so far; 3 to go before the period ends."
    assert GOAL_PROGRESS.decide(ctx(12, goals=(goal(5),))) is None  # half of the day is left
    assert GOAL_PROGRESS.decide(ctx(17, goals=(goal(3),))) is None  # not half-way
    assert GOAL_PROGRESS.decide(ctx(17, goals=(goal(8, reached=True),))) is None
    assert GOAL_PROGRESS.decide(ctx(17, goals=(goal(2, 3, comparison="<="),))) is None  # a limit
    assert GOAL_PROGRESS.decide(ctx(17, goals=(goal(4, 7, metric="streak_days"),))) is None
    # A week from Monday: on Wednesday too early, on Saturday (five of seven days gone) it speaks.
    weekly = goal(12, 20, period="week", days=7)
    assert GOAL_PROGRESS.decide(ctx(17, goals=(weekly,))) is None
    saturday = RuleContext(local_now=datetime(2026, 12, 5, 17, tzinfo=BERLIN), snapshot=snapshot(), slot="s",
                           goals=(weekly,))  # type: ignore[arg-type]
    assert GOAL_PROGRESS.decide(saturday) is not None
