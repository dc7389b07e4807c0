"""Goal periods in the person's zone (day, week from Monday, calendar month, DST weeks in
Europe/Berlin), and the pure tracking rules: filters, amounts, comparisons and replay."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.goals.periods import local_date_at, next_period_start, period_bounds, period_instants
from brain.goals.tracker import GoalMetric, is_met, replay


@pytest.mark.parametrize(("period", "day", "start", "end"), [
    ("day", date(2026, 11, 30), date(2026, 11, 30), date(2026, 12, 1)),
    ("day", date(2026, 12, 31), date(2026, 12, 31), date(2027, 1, 1)),
    ("week", date(2026, 11, 30), date(2026, 11, 30), date(2026, 12, 7)),  # a Monday starts its own week
    ("week", date(2026, 12, 6), date(2026, 11, 30), date(2026, 12, 7)),  # Sunday is the last day
    ("week", date(2027, 1, 1), date(2026, 12, 28), date(2027, 1, 4)),  # a week across the new year
    ("month", date(2026, 11, 30), date(2026, 11, 1), date(2026, 12, 1)),
    ("month", date(2026, 12, 15), date(2026, 12, 1), date(2027, 1, 1)),
    ("month", date(2028, 2, 29), date(2028, 2, 1), date(2028, 3, 1)),
])
def test_period_bounds(period: str, day: date, start: date, end: date) -> None:
    assert period_bounds(period, day) == (start, end)


def test_unknown_period_is_refused() -> None:
    with pytest.raises(ValueError):
        period_bounds("year", date(2026, 1, 1))


@given(st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 12, 31)), st.sampled_from(["day", "week", "month"]))
def test_every_day_lies_in_its_period_and_periods_follow_each_other(day: date, period: str) -> None:
    start, end = period_bounds(period, day)
    assert start <= day < end
    assert period_bounds(period, end)[0] == end == next_period_start(period, start)
    assert period_bounds(period, end - timedelta(days=1)) == (start, end)
    if period == "week":
        assert start.weekday() == 0 and (end - start).days == 7


def test_the_week_with_the_autumn_switch_has_169_hours_in_berlin() -> None:
    # DST ends on the last Sunday of October 2026, the 25th: that Sunday closes the week of Monday the 19th.
    start, end = period_instants("week", date(2026, 10, 25), "Europe/Berlin")
    assert start == datetime(2026, 10, 18, 22, 0, tzinfo=UTC)  # Monday 00:00 CEST
    assert end == datetime(2026, 10, 25, 23, 0, tzinfo=UTC)  # Monday 00:00 CET
    assert end - start == timedelta(hours=169)
    following = period_instants("week", date(2026, 10, 26), "Europe/Berlin")
    assert following[0] == end and following[1] - following[0] == timedelta(hours=168)


def test_the_week_with_the_spring_switch_has_167_hours_in_berlin() -> None:
    start, end = period_instants("week", date(2026, 3, 29), "Europe/Berlin")
    assert end - start == timedelta(hours=167)


def test_a_late_sunday_evening_belongs_to_the_week_of_the_switch_not_to_the_next() -> None:
    sunday_late = datetime(2026, 10, 25, 22, 30, tzinfo=UTC)  # 23:30 CET on Sunday
    monday_early = datetime(2026, 10, 25, 23, 30, tzinfo=UTC)  # 00:30 CET on Monday
    assert period_bounds("week", local_date_at(sunday_late, "Europe/Berlin"))[0] == date(2026, 10, 19)
    assert period_bounds("week", local_date_at(monday_early, "Europe/Berlin"))[0] == date(2026, 10, 26)
    # In UTC both instants fall on Sunday the 25th: the person's zone is what decides.
    assert monday_early.date() == date(2026, 10, 25)


def test_the_day_of_the_switch_is_25_hours_and_the_month_too_is_an_hour_longer() -> None:
    day = period_instants("day", date(2026, 10, 25), "Europe/Berlin")
    assert day[1] - day[0] == timedelta(hours=25)
    month = period_instants("month", date(2026, 10, 1), "Europe/Berlin")
    assert month[1] - month[0] == timedelta(days=31, hours=1)


def test_a_day_in_new_york_ends_later_than_in_berlin() -> None:
    berlin = period_instants("day", date(2026, 11, 30), "Europe/Berlin")
    new_york = period_instants("day", date(2026, 11, 30), "America/New_York")
    assert new_york[0] - berlin[0] == timedelta(hours=6)


WATER = GoalMetric("event_count", filter_field="drink_type", filter_value="water")
KCAL = GoalMetric("event_sum", field="calories")


def test_a_filter_counts_only_matching_events_and_ignores_case() -> None:
    assert WATER.counts({"drink_type": "water"}) and WATER.counts({"drink_type": "Water"})
    assert not WATER.counts({"drink_type": "coffee"}) and not WATER.counts({})
    assert GoalMetric("event_count").counts({"anything": 1})


def test_a_sum_adds_the_field_and_a_missing_number_adds_nothing() -> None:
    assert KCAL.amount({"calories": 650}) == 650
    assert KCAL.amount({"calories": None}) == 0 and KCAL.amount({}) == 0 and KCAL.amount({"calories": True}) == 0
    assert WATER.amount({"drink_type": "water", "quantity_ml": 500}) == 1


@pytest.mark.parametrize(("comparison", "value", "target", "met"), [
    (">=", 8, 8, True), (">=", 7, 8, False), ("<=", 3, 3, True), ("<=", 4, 3, False), ("<=", 0, 3, True),
    ("=", 5, 5, True), ("=", 6, 5, False), ("=", 0.1 + 0.2, 0.3, True),
])
def test_comparisons(comparison: str, value: float, target: float, met: bool) -> None:
    assert is_met(comparison, value, target) is met


def test_replay_takes_back_what_a_reversal_undoes_and_nothing_more() -> None:
    events = [
        ("MealLogged", "a", {"calories": 500}),
        ("MealLogged", "b", {"calories": 700}),
        ("MealDeleted", "a", {}),
        ("MealDeleted", "a", {}),  # a second delete of the same record takes nothing twice
        ("MealDeleted", "zzz", {}),  # a record logged before the period: not counted, not taken back
    ]
    assert replay(KCAL, events) == 700


def test_replay_counts_a_task_again_after_it_was_reopened_and_done_again() -> None:
    tasks = GoalMetric("event_count")
    events = [("TaskCompleted", "t", {}), ("TaskUncompleted", "t", {}), ("TaskCompleted", "t", {})]
    assert replay(tasks, events) == 1
