"""Habit strength against Loop Habit Tracker's own golden values (ScoreTest.kt) and its documented
behaviour: a daily habit halves in 13 days unchecked, about 31 perfect days reach 80 %, skips change nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.projections.habit_strength import decayed, multiplier, next_score, score_over

E = 1e-6


@pytest.mark.parametrize("previous, checked, expected", [
    (0.0, True, 0.051922), (0.5, True, 0.525961), (0.75, True, 0.762981),
    (0.0, False, 0.0), (0.5, False, 0.474039), (0.75, False, 0.711058),
])
def test_daily_habit_matches_loops_golden_values(previous: float, checked: bool, expected: float) -> None:
    assert next_score(previous, checked) == pytest.approx(expected, abs=E)


@pytest.mark.parametrize("previous, checked, expected", [
    (0.0, True, 0.030314), (0.5, True, 0.515157), (0.75, True, 0.757578),
    (0.5, False, 0.484842), (0.75, False, 0.727263),
])
def test_three_times_a_week_habit_matches_loops_golden_values(previous: float, checked: bool, expected: float) -> None:
    assert next_score(previous, checked, frequency=1 / 3) == pytest.approx(expected, abs=E)


def test_one_check_in_from_zero_gives_0_051922() -> None:
    assert round(score_over([True]), 6) == 0.051922


def test_a_daily_habit_halves_in_13_days_without_check_ins() -> None:
    start = 0.6
    assert score_over([False] * 13, start) == pytest.approx(start / 2, abs=1e-12)
    assert multiplier(1.0) ** 13 == pytest.approx(0.5, abs=1e-12)


def test_31_perfect_days_from_zero_reach_about_80_percent() -> None:
    score = score_over([True] * 31)
    # Exactly 1 - 0.5 ** (31 / 13) = 0.808504...
    assert 0.79 < score < 0.81
    assert score == pytest.approx(0.808504, abs=E)
    assert score_over([True] * 30) < 0.8 < score


def test_skipped_days_leave_the_score_unchanged() -> None:
    base = score_over([True, True, False, True])
    assert score_over([True, True, None, None, False, None, True]) == pytest.approx(base, abs=1e-15)
    assert score_over([None] * 50, 0.42) == 0.42


def test_decay_in_one_step_equals_day_by_day_decay() -> None:
    assert decayed(0.7, 9) == pytest.approx(score_over([False] * 9, 0.7), abs=1e-12)
    assert decayed(0.7, 0) == 0.7


@given(st.lists(st.one_of(st.none(), st.booleans()), max_size=400), st.floats(min_value=0.0, max_value=1.0))
def test_score_stays_within_zero_and_one_for_any_sequence(days: list[bool | None], start: float) -> None:
    assert 0.0 <= score_over(days, start) <= 1.0


@given(st.lists(st.booleans(), max_size=200))
def test_a_check_in_never_lowers_the_score_and_a_miss_never_raises_it(days: list[bool]) -> None:
    before = score_over(days)
    assert next_score(before, True) >= before >= next_score(before, False)
