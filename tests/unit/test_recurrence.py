"""RRULEs: checked and spelled one way, expanded over wall times so a weekly 9:00 stays 9:00 across DST in Berlin
and New York (a skipped wall time happens after the gap), the next day of a series of days, the phrases people
write in German and English, and the rule named back in their language."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.parsing.recurrence import find_repetition
from brain.i18n import Renderer
from brain.recurrence import RuleError, count_left, describe, first_day, next_after, next_day, normalize, occurrences

BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
TODAY = date(2026, 11, 30)  # a Monday


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize("given_rule, expected", [
    ("rrule:freq=weekly;byday=mo", "FREQ=WEEKLY;BYDAY=MO"),
    ("FREQ=WEEKLY;INTERVAL=1;BYDAY=TU", "FREQ=WEEKLY;BYDAY=TU"),
    ("BYDAY=TU;FREQ=WEEKLY;INTERVAL=2", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"),
    ("FREQ=MONTHLY;BYMONTHDAY=1;COUNT=12", "FREQ=MONTHLY;BYMONTHDAY=1;COUNT=12"),
    ("FREQ=DAILY;UNTIL=20261231", "FREQ=DAILY;UNTIL=20261231T235959"),
])
def test_rules_are_spelled_one_way(given_rule: str, expected: str) -> None:
    assert normalize(given_rule) == expected


@pytest.mark.parametrize("bad", ["", "FREQ=HOURLY", "FREQ=DAILY;COUNT=0", "FREQ=DAILY;COUNT=3;UNTIL=20261231",
                                 "FREQ=WEEKLY;BYDAY=XX", "FREQ=DAILY;BYSECOND=1", "FREQ=DAILY;INTERVAL=500",
                                 "FREQ=MONTHLY;BYMONTHDAY=32", "FREQ=DAILY;UNTIL=tomorrow"])
def test_rules_it_does_not_take_are_refused_with_a_reason(bad: str) -> None:
    with pytest.raises(RuleError):
        normalize(bad)


@pytest.mark.parametrize("zone, switch", [(BERLIN, date(2027, 3, 28)), (NEW_YORK, date(2027, 3, 14))])
def test_a_weekly_series_keeps_its_wall_time_across_the_spring_change(zone: ZoneInfo, switch: date) -> None:
    found = occurrences("FREQ=WEEKLY;BYDAY=MO", datetime(2027, 3, 1, 9, 0), zone, utc(2027, 3, 1), utc(2027, 4, 13))
    local = [o.astimezone(zone) for o in found]
    assert [d.date().isoformat() for d in local] == ["2027-03-01", "2027-03-08", "2027-03-15", "2027-03-22",
                                                      "2027-03-29", "2027-04-05", "2027-04-12"]
    assert {(d.hour, d.minute) for d in local} == {(9, 0)}
    offsets = {d.utcoffset() for d in local if d.date() < switch} | {None}
    assert len(offsets - {None}) == 1 and local[-1].utcoffset() != local[0].utcoffset()


def test_a_skipped_wall_time_happens_after_the_gap_and_a_repeated_one_once() -> None:
    spring = occurrences("FREQ=DAILY", datetime(2027, 3, 27, 2, 30), BERLIN, utc(2027, 3, 26), utc(2027, 3, 29, 12))
    assert [o.astimezone(BERLIN).strftime("%d %H:%M") for o in spring] == ["27 02:30", "28 03:30", "29 02:30"]
    autumn = occurrences("FREQ=DAILY", datetime(2026, 10, 24, 2, 30), BERLIN, utc(2026, 10, 24), utc(2026, 10, 26, 12))
    assert [o.astimezone(BERLIN).strftime("%d %H:%M") for o in autumn] == ["24 02:30", "25 02:30", "26 02:30"]


def test_count_and_until_end_a_series() -> None:
    counted = occurrences("FREQ=DAILY;COUNT=3", datetime(2026, 11, 30, 8), BERLIN, utc(2026, 11, 1), utc(2027, 1, 1))
    assert len(counted) == 3
    assert next_after("FREQ=DAILY;UNTIL=20261201", datetime(2026, 11, 30, 8), BERLIN, utc(2026, 12, 1, 8)) is None


def test_a_series_moved_keeps_the_count_it_has_left() -> None:
    start = datetime(2026, 11, 30, 8, tzinfo=BERLIN)
    # two of five went out (30 Nov, 1 Dec); the one of 2 Dec is the next: three are left
    assert count_left("FREQ=DAILY;COUNT=5", start, BERLIN, datetime(2026, 12, 2, 8, tzinfo=BERLIN)) == \
        "FREQ=DAILY;COUNT=3"
    assert count_left("FREQ=DAILY;COUNT=5", start, BERLIN, start) == "FREQ=DAILY;COUNT=5"  # none went out yet
    assert count_left("FREQ=DAILY;COUNT=2", start, BERLIN, utc(2027, 1, 1)) == "FREQ=DAILY;COUNT=1"  # never below one
    assert count_left("FREQ=WEEKLY;BYDAY=MO", start, BERLIN, utc(2027, 1, 1)) == "FREQ=WEEKLY;BYDAY=MO"


def test_a_series_of_days_goes_to_its_next_day() -> None:
    monthly = "FREQ=MONTHLY;BYMONTHDAY=1"
    assert first_day(monthly, TODAY, TODAY) == date(2026, 12, 1)
    assert next_day(monthly, date(2026, 12, 1), date(2026, 12, 1)) == date(2027, 1, 1)
    assert next_day("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", date(2026, 12, 1), date(2026, 12, 1)) == date(2026, 12, 15)


@pytest.mark.parametrize("text, rule, rest", [
    ("every Monday 9:00 team meeting", "FREQ=WEEKLY;BYDAY=MO", "9:00 team meeting"),
    ("jeden zweiten Dienstag Yoga", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "Yoga"),
    ("daily at 8 pills", "FREQ=DAILY", "at 8 pills"),
    ("monthly on the 1st rent", "FREQ=MONTHLY;BYMONTHDAY=1", "rent"),
    ("Miete monatlich am 1.", "FREQ=MONTHLY;BYMONTHDAY=1", "Miete"),
    ("every 2 weeks on tuesday gym", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "gym"),
    ("werktags 7:00 Laufen", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "7:00 Laufen"),
    ("Mondays and Thursdays gym", "FREQ=WEEKLY;BYDAY=MO,TH", "gym"),
    ("every day at 8 pills until 31.12.", "FREQ=DAILY;UNTIL=20261231T235959", "at 8 pills"),
    ("täglich 8 Uhr Tabletten 10 mal", "FREQ=DAILY;COUNT=10", "8 Uhr Tabletten"),
    ("yoga every 3 days", "FREQ=DAILY;INTERVAL=3", "yoga"),
    # A length: as many times as it says when it counts the series' own steps, else up to its last day
    ("every day for 3 days stretch", "FREQ=DAILY;COUNT=3", "stretch"),
    ("daily for 3 days at 10:00 stretch", "FREQ=DAILY;COUNT=3", "at 10:00 stretch"),
    ("every Monday for 4 weeks yoga", "FREQ=WEEKLY;BYDAY=MO;COUNT=4", "yoga"),
    ("stretch every day at 10 for the next two weeks", "FREQ=DAILY;COUNT=14", "stretch at 10"),
    ("jeden Abend eine Woche lang Tabletten", "FREQ=DAILY;COUNT=7", "Tabletten"),
    ("werktags für 2 Wochen 7:00 Laufen", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;COUNT=10", "7:00 Laufen"),
    ("every day for a month at 9 vitamins", "FREQ=DAILY;UNTIL=20261229T235959", "at 9 vitamins"),
    ("die nächsten 5 Tage jeden Morgen Tabletten", "FREQ=DAILY;COUNT=5", "Tabletten"),
    ("jeden Montag und Donnerstag für 2 Wochen Sport", "FREQ=WEEKLY;BYDAY=MO,TH;COUNT=4", "Sport"),
    ("jeden Montag und Donnerstag für 2 Monate Sport", "FREQ=WEEKLY;BYDAY=MO,TH;UNTIL=20270129T235959", "Sport"),
    ("every 2 days for a month water plants", "FREQ=DAILY;INTERVAL=2;UNTIL=20261229T235959", "water plants"),
])
def test_phrases_in_german_and_english(text: str, rule: str, rest: str) -> None:
    found = find_repetition(text, TODAY)
    assert found is not None and (found.rule, found.cut_from(text)) == (rule, rest)


@pytest.mark.parametrize("text", ["Daily report by Friday", "Weekly review", "Buy milk by Friday",
                                  "Weekly for the team", "Report for 3 days of work",
                                  "Alle Aufgaben erledigen", "call mom at 3pm"])
def test_titles_that_only_sound_like_a_repetition_are_left_alone(text: str) -> None:
    assert find_repetition(text, TODAY) is None


@pytest.mark.parametrize("rule, en, de", [
    ("FREQ=WEEKLY;BYDAY=MO", "every Monday", "jeden Montag"),
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "every 2 weeks on Tuesday", "alle 2 Wochen am Dienstag"),
    ("FREQ=DAILY;COUNT=10", "every day, 10 times", "täglich, 10 Mal"),
    ("FREQ=MONTHLY;BYMONTHDAY=1", "monthly on day 1", "monatlich am 1."),
    ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "every weekday", "jeden Werktag"),
])
def test_a_rule_is_named_in_the_persons_language(rule: str, en: str, de: str) -> None:
    assert describe(rule, Renderer("en")) == en
    assert describe(rule, Renderer("de")) == de


@given(st.text(max_size=60))
def test_any_phrase_gives_a_valid_rule_or_none(text: str) -> None:
    found = find_repetition(text, TODAY)
    if found is not None:
        assert normalize(found.rule) == found.rule
