"""Dates and months without a year follow the tense of their clause: a past reading takes the latest occurrence
up to the message's day, a future reading the first one from that day on, and a clause that says neither (or
both) keeps the nearest occurrence."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.memory.timeline import MONTHS, find_time_anchor, find_time_anchors

BERLIN = ZoneInfo("Europe/Berlin")
# Sunday 29 November 2026, 11:00 in Berlin: March is nearer ahead (4 months) than behind (8 months).
NOVEMBER = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
# Saturday 2 January 2027, 11:00 in Berlin: December is nearer behind.
JANUARY = datetime(2027, 1, 2, 10, 0, tzinfo=UTC)
# Sunday 15 March 2026: October is nearer behind (5 months) than ahead (7 months).
MARCH = datetime(2026, 3, 15, 10, 0, tzinfo=UTC)


def span(text: str, at: datetime = NOVEMBER) -> tuple[str, date]:
    anchor = find_time_anchor(text, at, BERLIN)
    assert anchor is not None, text
    return anchor.precision, anchor.start.astimezone(BERLIN).date()


@pytest.mark.parametrize("text", [
    "I went to Lisbon in March",
    "What did I do in March?",
    "We were in Lisbon in March",
    "I have visited Lisbon in March",
    "In March, we went to Lisbon",
    "Im März war ich in Lissabon",
    "Ich bin im März nach Lissabon geflogen",
    "Was habe ich im März gemacht?",
    "Ich möchte wissen, was ich im März gemacht habe",
    "Seit März gehe ich joggen",
])
def test_a_past_reading_takes_the_latest_month_so_far(text: str) -> None:
    assert span(text) == ("month", date(2026, 3, 1))


@pytest.mark.parametrize("text", [
    "I will move in June",
    "I'm going to move in June",
    "We plan to move in June",
    "Im Juni werde ich umziehen",
    "Ich habe im Juni vor, umzuziehen",
    "Was wirst du im Juni machen?",
])
def test_a_future_reading_takes_the_next_month(text: str) -> None:
    # June 2026 is nearer (5 months back) than June 2027 (7 months ahead).
    assert span(text) == ("month", date(2027, 6, 1))


def test_a_future_reading_goes_ahead_even_when_the_past_is_nearer() -> None:
    assert span("I am going to visit Anna in October", MARCH) == ("month", date(2026, 10, 1))
    assert span("in October", MARCH) == ("month", date(2025, 10, 1))


@pytest.mark.parametrize(("text", "expected"), [
    ("im März", date(2027, 3, 1)),
    ("Ich fliege im März nach Rom", date(2027, 3, 1)),
    ("in June", date(2026, 6, 1)),
    ("Was machst du im März?", date(2027, 3, 1)),  # German "was" is "what", not a past
    ("The war documentary comes out in March", date(2027, 3, 1)),  # English "war" is not German "war"
    ("Last year was hard. In March I start a new job.", date(2027, 3, 1)),  # another sentence's tense stays there
])
def test_a_clause_without_tense_keeps_the_nearest_month(text: str, expected: date) -> None:
    assert span(text) == ("month", expected)


@pytest.mark.parametrize(("text", "expected"), [
    ("Anna visited me on December 20", date(2025, 12, 20)),
    ("We met on the 20th of December", date(2025, 12, 20)),
    ("Ich war am 20.12. beim Arzt", date(2025, 12, 20)),
    ("Am 3. Juni werde ich umziehen", date(2027, 6, 3)),
    ("I will fly to Rome on 3.6.", date(2027, 6, 3)),
    ("Der Umzug ist für den 3. Juni geplant", date(2027, 6, 3)),
    ("Am 29.2. war ich krank", date(2024, 2, 29)),  # the latest 29 February, two years back
])
def test_day_and_month_follow_the_tense(text: str, expected: date) -> None:
    assert span(text) == ("day", expected)


def test_day_and_month_without_tense_stay_nearest() -> None:
    assert span("am 3.6.") == ("day", date(2026, 6, 3))  # 179 days back, 186 ahead
    assert span("December 20") == ("day", date(2026, 12, 20))


def test_the_current_month_and_day_count_for_both_directions() -> None:
    assert span("In November we went to Paris") == ("month", date(2026, 11, 1))
    assert span("In November we will go to Paris") == ("month", date(2026, 11, 1))
    assert span("Im November war ich in Paris") == ("month", date(2026, 11, 1))
    assert span("I will be in Rome on 29 November") == ("day", date(2026, 11, 29))
    assert span("I was in Rome on 29 November") == ("day", date(2026, 11, 29))
    assert span("We met on 28 November") == ("day", date(2026, 11, 28))
    assert span("I will see her on 28 November") == ("day", date(2027, 11, 28))


@pytest.mark.parametrize(("text", "expected"), [
    ("I was in Rome in December", date(2026, 12, 1)),
    ("Im Dezember war ich in Rom", date(2026, 12, 1)),
    ("I will be in Rome in December", date(2027, 12, 1)),
    ("Im Dezember werde ich in Rom sein", date(2027, 12, 1)),
    ("in December", date(2026, 12, 1)),
])
def test_year_boundary(text: str, expected: date) -> None:
    assert span(text, JANUARY) == ("month", expected)


def test_each_clause_reads_its_own_tense() -> None:
    anchors = find_time_anchors("I was in Rome in March and will go to Paris in May", NOVEMBER, BERLIN)
    starts = [(a.phrase, a.start.astimezone(BERLIN).date()) for a in anchors]
    # May is six months either way: nearest would take the past one.
    assert starts == [("in March", date(2026, 3, 1)), ("in May", date(2027, 5, 1))]


def test_a_mixed_clause_keeps_the_nearest() -> None:
    assert span("Did you know that she will come in March?") == ("month", date(2027, 3, 1))
    assert span("Hattest du gedacht dass sie im Juni kommen wird") == ("month", date(2026, 6, 1))


def test_explicit_last_this_next_still_decide() -> None:
    assert span("I will tell you about last March") == ("month", date(2026, 3, 1))
    assert span("We talked about next May") == ("month", date(2027, 5, 1))
    assert span("Nächsten Mai waren wir noch nicht dort") == ("month", date(2027, 5, 1))
    assert span("This March we went skiing") == ("month", date(2026, 3, 1))


@given(st.dates(date(2001, 1, 1), date(2098, 12, 31)), st.sampled_from(sorted(set(MONTHS.values()))))
def test_past_and_future_months_land_within_a_year_on_their_side(today: date, month: int) -> None:
    name = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
            "November", "December"][month - 1]
    at = datetime(today.year, today.month, today.day, 12, tzinfo=UTC)
    here = today.year * 12 + today.month
    past = find_time_anchor(f"I went there in {name}", at, "UTC")
    future = find_time_anchor(f"I will go there in {name}", at, "UTC")
    assert past is not None and future is not None
    assert 0 <= here - (past.start.year * 12 + past.start.month) < 12
    assert 0 <= (future.start.year * 12 + future.start.month) - here < 12
    assert past.start.month == future.start.month == month
