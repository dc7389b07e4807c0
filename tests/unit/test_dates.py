"""Date, time and duration phrases: month names (English and German), US month/day, spoken and named clock times,
parts of the day, and decimal durations; what is left of the text is the clean title."""

from __future__ import annotations

from datetime import date, time, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.parsing.dates import (
    cut,
    find_clockish,
    find_date,
    find_dateish,
    find_duration_minutes,
    find_time,
    find_time_at_edge,
    next_day_at,
)

MONDAY = date(2026, 11, 30)
TUESDAY = date(2026, 12, 1)
ENGLISH_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                  "November", "December")
GERMAN_MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
                 "November", "Dezember")


@pytest.mark.parametrize("text, expected, rest", [
    ("D 5 Dec 15:00", date(2026, 12, 5), "D 15:00"),
    ("E December 5 at 3pm", date(2026, 12, 5), "E at 3pm"),
    ("X 5. Dezember 15:00", date(2026, 12, 5), "X 15:00"),
    ("Y 24. Dez 10 Uhr", date(2026, 12, 24), "Y 10 Uhr"),
    ("Y 24. Dez. 10 Uhr", date(2026, 12, 24), "Y 10 Uhr"),
    ("Party December 5th", date(2026, 12, 5), "Party"),
    ("Party on the 5th of December", date(2026, 12, 5), "Party"),
    ("Steuer bis 5. Dezember", date(2026, 12, 5), "Steuer"),
    ("Wedding 12 June 2027", date(2027, 6, 12), "Wedding"),
    ("Wedding June 12, 2027", date(2027, 6, 12), "Wedding"),
    ("Launch 3 März", date(2027, 3, 3), "Launch"),
    ("Launch 3 Mär. 9:00", date(2027, 3, 3), "Launch 9:00"),
    ("Feier Do., 24. Dez.", date(2026, 12, 24), "Feier"),
    ("Holiday Thu, Dec 24", date(2026, 12, 24), "Holiday"),
    ("F 12/24 10:00", date(2026, 12, 24), "F 10:00"),
    ("F 12/24/2027", date(2027, 12, 24), "F"),
    ("Kino vorgestern", date(2026, 11, 28), "Kino"),
    ("the day before yesterday", date(2026, 11, 28), "the"),  # not yesterday, as "yesterday" alone in it said
])
def test_dates_with_month_names_and_us_month_day(text: str, expected: date, rest: str) -> None:
    found = find_date(text, MONDAY)
    assert found is not None and found.value == expected
    assert cut(text, found.start, found.end) == rest


@pytest.mark.parametrize("text, expected", [
    ("Nov 30", date(2026, 11, 30)), ("30.11.", date(2026, 11, 30)),
    # Last week is last week (a task already overdue), not next year.
    ("Nov 29", date(2026, 11, 29)), ("29.11.", date(2026, 11, 29)), ("23.11.", date(2026, 11, 23)),
    ("23. November", date(2026, 11, 23)), ("11/23", date(2026, 11, 23)),
    # Up to a month back it is that one; further back the one ahead (tasks and events are mostly planned).
    ("1.11.", date(2026, 11, 1)), ("Oct 29", date(2027, 10, 29)), ("Oct 31", date(2026, 10, 31)),
    ("1.6.", date(2027, 6, 1)),
    ("June 1", date(2027, 6, 1)), ("31. Mai", date(2027, 5, 31)), ("am 3.1.", date(2027, 1, 3)),
    ("29. Februar", date(2028, 2, 29)), ("29.2.", date(2028, 2, 29)),
])
def test_a_date_without_a_year_is_the_one_just_gone_or_the_next_however_written(text: str, expected: date) -> None:
    assert find_date(text, MONDAY).value == expected  # type: ignore[union-attr]


def test_a_date_early_in_the_year_said_in_january_may_be_last_december() -> None:
    assert find_date("28.12.", date(2027, 1, 3)).value == date(2026, 12, 28)  # type: ignore[union-attr]


@given(st.dates(min_value=date(2000, 1, 1), max_value=date(2199, 12, 31)),
       st.sampled_from(["{d} {M}", "{d}. {G}", "{m3} {d}", "{M} {d}th", "{d}. {g3}.", "{d} {m3} {y}"]))
def test_every_month_name_date_reads_as_itself(day: date, form: str) -> None:
    text = "Termin " + form.format(d=day.day, M=ENGLISH_MONTHS[day.month - 1], G=GERMAN_MONTHS[day.month - 1],
                                   m3=ENGLISH_MONTHS[day.month - 1][:3], g3=GERMAN_MONTHS[day.month - 1][:3],
                                   y=day.year)
    found = find_date(text, MONDAY)
    assert found is not None and (found.value.month, found.value.day) == (day.month, day.day)
    assert found.value == day if "{y}" in form else found.value >= MONDAY - timedelta(days=31)
    assert cut(text, found.start, found.end) == "Termin"


@pytest.mark.parametrize("text, expected", [
    ("this monday", MONDAY), ("diesen Montag", MONDAY), ("bis dieser Montag", MONDAY), ("an diesem Montag", MONDAY),
    ("this tuesday", TUESDAY), ("monday", date(2026, 12, 7)), ("Montag", date(2026, 12, 7)),
    ("next monday", date(2026, 12, 7)), ("nächsten Montag", date(2026, 12, 7)),
])
def test_this_weekday_said_on_that_day_is_today_and_the_plain_weekday_next_week(text: str, expected: date) -> None:
    found = find_date(f"Report {text}", MONDAY)
    assert found is not None and found.value == expected
    assert cut(f"Report {text}", found.start, found.end) == "Report"


@pytest.mark.parametrize("text", ["Call Jan 5pm", "Lunch with Jan 12:30", "May the force", "Marathon 10 km",
                                  "Mais 2 kg", "Release May 2026"])
def test_month_words_without_a_day_next_to_them_are_no_date(text: str) -> None:
    assert find_date(text, MONDAY) is None


@pytest.mark.parametrize("text, bad", [
    ("Feier 31 November", "31 November"), ("Call Feb 30", "Feb 30"), ("Party 30. Februar", "30. Februar"),
    ("Talk bis 3/4", "3/4"), ("Support 24/7", None), ("Bake 1/2 cake", None), ("Party 5 Dec", None),
])
def test_month_name_and_slashed_dates_that_are_none_are_noticed(text: str, bad: str | None) -> None:
    assert find_dateish(text, MONDAY) == bad


@pytest.mark.parametrize("text, bad", [("Meeting 3/4", "3/4"), ("Hotline 24/7", "24/7"), ("Q 12/24", None)])
def test_where_a_date_is_expected_any_slashed_pair_is_one(text: str, bad: str | None) -> None:
    assert find_dateish(text, MONDAY, slashed=True) == bad


@pytest.mark.parametrize("text, expected, rest", [
    ("I noon", time(12, 0), "I"),
    ("I at noon", time(12, 0), "I"),
    ("I 12 noon", time(12, 0), "I"),
    ("Party until midnight", time(0, 0), "Party until"),
    ("Essen mittags", time(12, 0), "Essen"),
    ("Silvester um Mitternacht", time(0, 0), "Silvester"),
    ("Essen halb acht", time(7, 30), "Essen"),
    ("Essen halb 8", time(7, 30), "Essen"),
    ("Essen um halb acht", time(7, 30), "Essen"),
    ("Essen halb acht abends", time(19, 30), "Essen"),
    ("Essen abends um halb acht", time(19, 30), "Essen"),
    ("Essen halb eins", time(12, 30), "Essen"),
    ("Zug viertel nach neun", time(9, 15), "Zug"),
    ("Zug viertel vor neun", time(8, 45), "Zug"),
    ("Zug dreiviertel neun", time(8, 45), "Zug"),
    ("Train quarter to seven", time(6, 45), "Train"),
    ("Dinner half past seven in the evening", time(19, 30), "Dinner"),
    ("Kino um 8 Uhr abends", time(20, 0), "Kino"),
    ("Essen 1 Uhr mittags", time(13, 0), "Essen"),
    ("Essen mittags um 1", time(13, 0), "Essen"),
    ("Nachtzug 11 Uhr nachts", time(23, 0), "Nachtzug"),
    ("Arzt früh um 8", time(8, 0), "Arzt"),
])
def test_spoken_and_named_clock_times(text: str, expected: time, rest: str) -> None:
    found = find_time(text)
    assert found is not None and found.value == expected
    assert cut(text, found.start, found.end) == rest


@pytest.mark.parametrize("text, expected, part, rest", [
    ("Kino morgen Abend um 8", TUESDAY, "evening", "Kino um 8"),
    ("Kino heute am Abend", MONDAY, "evening", "Kino"),
    ("Zug morgen früh", TUESDAY, "morning", "Zug"),
    ("Treffen Freitag morgen 9:00", date(2026, 12, 4), "morning", "Treffen 9:00"),
    ("Yoga Freitagabend", date(2026, 12, 4), "evening", "Yoga"),
    ("Party Samstag Nacht", date(2026, 12, 5), "night", "Party"),
    ("Drinks tomorrow night 9", TUESDAY, "night", "Drinks 9"),
    ("Tea friday in the afternoon", date(2026, 12, 4), "afternoon", "Tea"),
    ("Dinner this evening", MONDAY, "evening", "Dinner"),
    ("Dinner tonight", MONDAY, "evening", "Dinner"),
    ("Kino morgen", TUESDAY, None, "Kino"),
    ("Essen morgen mittags", TUESDAY, None, "Essen mittags"),  # noon, a time: find_time reads it
])
def test_a_part_of_the_day_right_after_the_day_is_read_with_it(text: str, expected: date, part: str | None,
                                                               rest: str) -> None:
    found = find_date(text, MONDAY)
    assert found is not None and (found.value, found.part) == (expected, part)
    assert cut(text, found.start, found.end) == rest


@pytest.mark.parametrize("text, is_open", [("at 7", True), ("7:30", True), ("halb acht", True), ("19:00", False),
                                           ("07:30", False), ("7pm", False), ("um 7 abends", False), ("noon", False)])
def test_an_hour_naming_no_half_of_the_day_is_open_to_the_evening(text: str, is_open: bool) -> None:
    found = find_time(text)
    assert found is not None and found.open_meridiem is is_open


@pytest.mark.parametrize("text", ["Mittagessen mit Anna", "Nachmittagskaffee", "Halbmarathon", "halbe Sachen",
                                  "actually make that 2", "Datum 3", "Platz im Zentrum 9"])  # "at", "um" in a word
def test_words_containing_time_words_are_no_time(text: str) -> None:
    assert find_time(text) is None


@pytest.mark.parametrize("text", ["halb 13", "viertel nach dreizehn", "quarter past noonish"])
def test_spoken_times_that_are_none_are_noticed(text: str) -> None:
    assert find_time(text) is None
    assert find_clockish(f"Essen {text}") is not None


@pytest.mark.parametrize("text, minutes, rest", [
    ("Workout 1.5h", 90, "Workout"), ("Workout 1,5h", 90, "Workout"), ("Workout 1,5 h", 90, "Workout"),
    ("Call for 1 hour", 60, "Call"), ("Call 20 mins", 20, "Call"), ("Call 20 min.", 20, "Call"),
    ("Treffen 1 Stunde", 60, "Treffen"), ("Treffen für 2 Stunden", 120, "Treffen"), ("Treffen 1 Std.", 60, "Treffen"),
    ("Treffen 30 Min.", 30, "Treffen"), ("Treffen 1 Std. 30 Min.", 90, "Treffen"), ("Talk 1 h 15 m", 75, "Talk"),
    ("Talk 2 hrs", 120, "Talk"), ("Talk 1.25 hours", 75, "Talk"), ("Call for an hour", 60, "Call"),
    ("Call half an hour", 30, "Call"), ("Pause eine halbe Stunde", 30, "Pause"), ("Standup 15m", 15, "Standup"),
])
def test_durations_with_decimals_and_words(text: str, minutes: int, rest: str) -> None:
    found = find_duration_minutes(text)
    assert found is not None and found[0] == minutes
    assert cut(text, found[1], found[2]) == rest


@given(st.text(max_size=200))
def test_the_finders_never_crash(text: str) -> None:
    find_date(text, TUESDAY)
    find_time(text)
    find_duration_minutes(text)
    find_dateish(text, TUESDAY, slashed=True)
    find_clockish(text)
    find_time_at_edge(text)


@pytest.mark.parametrize("text, expected, said", [
    ("Report friday next week", date(2026, 12, 11), "friday next week"),
    ("Bericht Freitag nächste Woche", date(2026, 12, 11), "Freitag nächste Woche"),
    ("Bericht am Freitag nächster Woche", date(2026, 12, 11), "am Freitag nächster Woche"),
    ("Bericht nächste Woche Freitag", date(2026, 12, 11), "nächste Woche Freitag"),
    ("Sunday of next week", date(2026, 12, 13), "Sunday of next week"),
    ("Report next week", date(2026, 12, 7), "next week"),  # alone: the week's Monday, so it shows up in time
    ("Bericht bis nächste Woche", date(2026, 12, 7), "bis nächste Woche"),
    ("Bericht kommende Woche", date(2026, 12, 7), "kommende Woche"),
])
def test_next_week_and_a_day_of_it(text: str, expected: date, said: str) -> None:
    found = find_date(text, MONDAY)
    assert found is not None and found.value == expected and text[found.start:found.end] == said


@pytest.mark.parametrize("text, rest", [
    ("Report at 3pm", "Report"), ("Report 15:00.", "Report"), ("Bericht um 15 Uhr", "Bericht"),
    ("3pm call Anna", "call Anna"), (" 3pm call Anna", "call Anna"),
    ("Book the 9am train at 5pm", "Book the 9am train"), ("Book the 9am train", None), ("Release 1.10", None),
    ("Release 1.10.", None), ("Read chapter 3", None), ("Report", None),
])
def test_a_time_at_either_end_of_a_text_is_found_and_one_inside_is_not(text: str, rest: str | None) -> None:
    found = find_time_at_edge(text)
    assert (cut(text, found.start, found.end) if found is not None else None) == rest


@pytest.mark.parametrize("text, now, day, meant", [
    ("at 3pm", time(8, 30), MONDAY, time(15)),
    ("at 3pm", time(15, 30), TUESDAY, time(15)),
    ("at 3", time(8, 30), MONDAY, time(15)),  # 3 at night is gone, 3 in the afternoon still ahead
    ("at 3", time(2), MONDAY, time(15)),  # in the night too: an hour before 7 is the afternoon's, as tomorrow's is
    ("at 5", time(0, 30), MONDAY, time(17)),
    ("at 8", time(0, 30), MONDAY, time(8)),
    ("at 3", time(16), TUESDAY, time(15)),
    # Both gone: tomorrow's, as "morgen um 7" would be: a morning hour from 7 on, the afternoon's before.
    ("weck mich um 7", time(23, 45), TUESDAY, time(7)),
    ("at 8", time(21), TUESDAY, time(8)),
    ("at 11", time(23, 30), TUESDAY, time(11)),
    ("at 6", time(20), TUESDAY, time(18)),
    ("7:00", time(8, 30), TUESDAY, time(7)),  # written as a clock: seven in the morning
    ("at 15:00", time(15), TUESDAY, time(15)),  # the very minute has begun
])
def test_the_next_such_time_is_today_while_it_is_ahead(text: str, now: time, day: date, meant: time) -> None:
    found = find_time(text)
    assert found is not None and next_day_at(text, found, MONDAY, now) == (day, meant)


@given(st.times(), st.times())
def test_a_time_of_the_clock_is_due_today_exactly_while_it_is_ahead(said: time, now: time) -> None:
    text = f"{said.hour:02d}:{said.minute:02d}"
    found = find_time(text)
    assert found is not None
    day, meant = next_day_at(text, found, MONDAY, now.replace(second=0, microsecond=0))
    assert meant == said.replace(second=0, microsecond=0)
    assert (day == MONDAY) == (meant > now.replace(second=0, microsecond=0)) and day in (MONDAY, TUESDAY)
