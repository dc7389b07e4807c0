"""A fact's confidence from its evidence: the Wilson lower bound of the share of observations that support it, and
the counts the extractors give it (days, weeks, occurrences, answers)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.learning.outcomes import Answer, answer_findings
from brain.memory.facts import Activity, evidence_confidence, frequency_findings, window_findings
from brain.memory.settings import MemorySettings

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 2)
CONTEXT_MIN = MemorySettings().fact_context_min


def coffee(day: int, hour: int) -> Activity:
    return Activity("drink:coffee", "drinks coffee", datetime.combine(MONDAY + timedelta(days=day), time(hour),
                                                                       tzinfo=BERLIN))


def test_a_pattern_seen_every_day_of_a_week_is_confident_and_one_seen_half_the_time_never_is() -> None:
    assert evidence_confidence(7, 7) >= CONTEXT_MIN
    assert evidence_confidence(4, 7) < CONTEXT_MIN
    assert evidence_confidence(14, 28) < CONTEXT_MIN
    assert evidence_confidence(500, 1000) < CONTEXT_MIN  # however much evidence: half is not "mostly"
    assert evidence_confidence(0, 0) == 0.0


@given(st.integers(min_value=1, max_value=500), st.data())
def test_the_bound_lies_below_the_share_and_rises_with_more_of_the_same_evidence(trials: int,
                                                                                 data: st.DataObject) -> None:
    support = data.draw(st.integers(min_value=0, max_value=trials))
    bound = evidence_confidence(support, trials)
    assert 0.0 <= bound <= support / trials + 1e-12
    assert evidence_confidence(2 * support, 2 * trials) >= bound - 1e-12
    if support < trials:
        assert evidence_confidence(support + 1, trials) > bound


def test_the_extractors_count_their_observations() -> None:
    week = [coffee(day, 7) for day in range(7)]
    [morning] = [f for f in window_findings(week) if f.holds]
    assert (morning.key, morning.support, morning.trials) == ("window:drink:coffee:morning", 7, 7)
    # Today is not over: the rate counts the seven days before it, each one observation.
    [daily] = frequency_findings([*week, coffee(7, 7), coffee(7, 8)], today=MONDAY + timedelta(days=7))
    assert (daily.key, daily.support, daily.trials) == ("frequency:drink:coffee:1/day", 7, 7)
    # Twice on a day and none the next: neither day says "once a day".
    uneven = [*week[:5], coffee(5, 7), coffee(5, 9)]
    [rate] = frequency_findings([*uneven, *(coffee(day, 7) for day in range(7, 9))], today=MONDAY + timedelta(days=9))
    assert (rate.support, rate.trials) == (7, 9)
    # Fewer occurrences than a week's days are no evidence yet, however they fall.
    assert window_findings(week[:6]) == []


def test_answers_count_each_nudge_before_the_cut_off() -> None:
    answers = [Answer("water", hour >= 10, hour, day % 7) for day in range(7) for hour in (8, 9, 14)]
    found = {f.key: f for f in answer_findings(answers, {"water": "Water reminder"})}
    ignored = found["nudge:water:ignored-before:10"]
    assert ignored.holds and (ignored.support, ignored.trials) == (14, 14)
    assert evidence_confidence(ignored.support, ignored.trials) == pytest.approx(14 / (14 + 1.645 ** 2))
