"""Reminder phrases read without a model: the common English and German forms, a time alone (today's, or tomorrow's
once it has passed), a day alone (its morning, or the part of the day said), relative times, and what is asked back
when something is missing; any text is read or answered, never a crash or a time in the past."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands.reminders import plan_answer_said
from bot.parsing.reminders import (
    ReminderRequest,
    before_event_said,
    free_text_reminder,
    read_reminder,
    reminder_of_nothing,
    reminder_without_when,
)
from brain.i18n import Text

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 30, 8, 30, tzinfo=BERLIN)  # a Monday


def at(day: int, hour: int, minute: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


@pytest.mark.parametrize("text, words, when", [
    ("remind me to call mom at 3pm", "Call mom", at(30, 15)),
    ("remind me at 3pm to call mom", "Call mom", at(30, 15)),
    ("Remind me tomorrow about the dentist", "Dentist", at(1, 9, month=12)),
    ("remind me on friday at 3 to pay the rent", "Pay the rent", at(4, 15, month=12)),
    ("remind me in half an hour to stretch", "Stretch", at(30, 9)),
    ("remind me at 7:00 to run", "Run", at(1, 7, month=12)),  # 7:00 has passed today
    ("in 20 minutes: tea", "Tea", at(30, 8, 50)),
    ("erinnere mich morgen um 9 an den Zahnarzt", "Zahnarzt", at(1, 9, month=12)),
    ("Erinnere mich um 15 Uhr daran, Mama anzurufen", "Mama anrufen", at(30, 15)),
    ("erinnere mich morgen daran, die Blumen zu gießen", "Blumen gießen", at(1, 9, month=12)),
    ("erinnere mich um 18 Uhr, das Paket abzuholen", "Das Paket abholen", at(30, 18)),
    ("erinnere mich um 18 Uhr an den Anzug", "Anzug", at(30, 18)),
    ("erinnere mich in einer Stunde an die Wäsche", "Wäsche", at(30, 9, 30)),
    ("erinnere mich morgen Abend an den Müll", "Müll", at(1, 19, month=12)),
    ("in 20 Minuten: Tee", "Tee", at(30, 8, 50)),
    ("Erinnerung: Blumen gießen um 18 Uhr", "Blumen gießen", at(30, 18)),
    # Asked politely, or with when said first.
    ("can you remind me to call mom at 3pm?", "Call mom", at(30, 15)),
    ("Kannst du mich morgen um 9 an den Zahnarzt erinnern?", "Zahnarzt", at(1, 9, month=12)),
    ("Kannst du mich um 18 Uhr daran erinnern, Mama anzurufen?", "Mama anrufen", at(30, 18)),
    ("tomorrow at 9, remind me to call Anna", "Call Anna", at(1, 9, month=12)),
    ("morgen früh erinnere mich an den Müll", "Müll", at(1, 9, month=12)),
    ("in 20 Minuten erinnere mich an den Tee", "Tee", at(30, 8, 50)),
    ("set a reminder for 5pm: call dad", "Call dad", at(30, 17)),
    # A name that starts like a joining word keeps its letters ("Tom" is no "to m", "Anna" no "an na").
    ("remind me at 3pm: Tom anrufen", "Tom anrufen", at(30, 15)),
    ("erinnere mich morgen um 9 an Anna", "Anna", at(1, 9, month=12)),
    ("remind me at 3pm Forum post", "Forum post", at(30, 15)),
    ("Stell mir eine Erinnerung für 18 Uhr: Mama anrufen", "Mama anrufen", at(30, 18)),
])
def test_free_text_reminders_in_english_and_german(text: str, words: str, when: datetime) -> None:
    found = free_text_reminder(text, NOW)
    assert isinstance(found, ReminderRequest), found
    assert (found.text, found.at) == (words, when)


@pytest.mark.parametrize("text, words, rule, when", [
    ("every day at 8 remind me to take my pills", "Take my pills", "FREQ=DAILY", at(1, 8, month=12)),
    ("jeden Tag um 8 erinnere mich an meine Tabletten", "Tabletten", "FREQ=DAILY", at(1, 8, month=12)),
    ("jeden Montag erinnere mich an den Müll", "Müll", "FREQ=WEEKLY;BYDAY=MO", at(30, 9)),
    # Every morning / evening: daily, an hour alone read in that part of the day, else at its usual hour.
    ("Erinnere mich jeden Abend um 22 Uhr ans Zähneputzen", "Zähneputzen", "FREQ=DAILY", at(30, 22)),
    ("Erinnere mich jeden Abend um 10 ans Zähneputzen", "Zähneputzen", "FREQ=DAILY", at(30, 22)),
    ("remind me every morning at 7 to take my pills", "Take my pills", "FREQ=DAILY", at(1, 7, month=12)),
    ("remind me every evening to stretch", "Stretch", "FREQ=DAILY", at(30, 19)),
    ("jeden Morgen erinnere mich an Tabletten", "Tabletten", "FREQ=DAILY", at(30, 9)),  # 9:00 is still ahead
])
def test_a_repeating_reminder_with_when_said_before_the_request(text: str, words: str, rule: str,
                                                                  when: datetime) -> None:
    found = free_text_reminder(text, NOW)
    assert isinstance(found, ReminderRequest), found
    assert (found.text, found.rule, found.at) == (words, rule, when)


@pytest.mark.parametrize("text", ["Buy milk by Friday", "in 20 minutes I'm home", "250 ml water", "remind",
                                  "I was reminded of it", "todo: call mom",
                                  "I keep forgetting, remind me to water the plants",  # no when before it
                                  "he said remind me tomorrow"])
def test_text_that_asks_for_no_reminder_is_left_alone(text: str) -> None:
    assert free_text_reminder(text, NOW) is None


@pytest.mark.parametrize("phrase, asks", [
    ("call mom", "When should I remind you?"),
    ("15:00", "What should I remind you of?"),
    ("25:00 call mom", "I couldn't read the time"),
    ("today 7:00 sport", "has already passed"),
    ("in 0 minutes tea", "from a minute to five years"),
])
def test_what_is_missing_is_asked(phrase: str, asks: str) -> None:
    found = read_reminder(phrase, NOW)
    assert isinstance(found, Text) and asks in found.msgid


@pytest.mark.parametrize("text, answer", [
    ("remind me to drink water every 2 hours", "I already remind you to drink water"),
    ("erinnere mich alle 30 Minuten ans Trinken", "I already remind you to drink water"),
    ("remind me every hour to stretch", "not every few hours"),
    ("erinnere mich stündlich an die Haltung", "not every few hours"),
    ("remind me every half an hour to stand up", "not every few hours"),
])
def test_a_repetition_within_the_day_is_explained_not_asked_when(text: str, answer: str) -> None:
    found = free_text_reminder(text, NOW)
    assert isinstance(found, Text) and answer in found.msgid


def test_a_time_alone_is_todays_until_it_has_passed() -> None:
    today = read_reminder("9:00 stretch", NOW)
    tomorrow = read_reminder("8:00 stretch", NOW)
    assert isinstance(today, ReminderRequest) and (today.at, today.rolled) == (at(30, 9), False)
    assert isinstance(tomorrow, ReminderRequest) and (tomorrow.at, tomorrow.rolled) == (at(1, 8, month=12), True)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_read_or_answered_and_never_set_in_the_past(text: str) -> None:
    found = read_reminder(text, NOW)
    assert isinstance(found, ReminderRequest | Text)
    if isinstance(found, ReminderRequest):
        assert found.at > NOW and found.text
    free = free_text_reminder(text, NOW)
    assert free is None or isinstance(free, ReminderRequest | Text)


@pytest.mark.parametrize("text, words, when", [
    ("wake me up at 7", "Wake up", at(1, 7, month=12)),  # at 8:30: tomorrow morning, not 19:00 today
    ("wake me up tomorrow at 6:30", "Wake up", at(1, 6, 30, month=12)),
    ("wake me at 6", "Wake up", at(1, 6, month=12)),  # never 18:00
    ("weck mich morgen um 7 auf", "Aufstehen", at(1, 7, month=12)),
    ("Kannst du mich um 6 wecken?", "Aufstehen", at(1, 6, month=12)),
    ("wake me up in 20 minutes", "Wake up", at(30, 8, 50)),
])
def test_a_wake_up_is_a_reminder_in_the_morning(text: str, words: str, when: datetime) -> None:
    found = free_text_reminder(text, NOW)
    assert isinstance(found, ReminderRequest) and (found.text, found.at) == (words, when)


def test_a_wake_up_without_a_time_is_asked_when_and_waking_told_is_no_request() -> None:
    asked = free_text_reminder("wake me up", NOW)
    assert isinstance(asked, Text) and asked.msgid.startswith("When should I wake you?")
    assert free_text_reminder("I woke up at 7", NOW) is None


@pytest.mark.parametrize("text, what", [
    ("remind me to call mom", "Call mom"), ("remind me later to water the plants", "Water the plants"),
    ("remind me to call mom later", "Call mom"), ("remind me sometime to call Anna", "Call Anna"),
    ("erinnere mich später daran, die Pflanzen zu gießen", "Pflanzen gießen"),
    ("erinnere mich nachher an den Müll", "Müll"),
    ("remind me to book the soon-to-open gym", "Book the soon-to-open gym"),
    ("remind me later", None), ("erinnere mich irgendwann", None), ("remind me at 9 to call mom", None),
])
def test_a_when_that_says_no_time_is_not_the_reminders_words(text: str, what: str | None) -> None:
    assert reminder_without_when(text, NOW) == what


def test_a_request_for_a_reminder_of_nothing() -> None:
    assert reminder_of_nothing("remind me later") and reminder_of_nothing("Erinnere mich bitte!")
    assert not reminder_of_nothing("remind me to call mom") and not reminder_of_nothing("call mom later")


@pytest.mark.parametrize("text, make", [
    ("Kalender", "event"), ("in den Kalender, bitte", "event"), ("📅 Calendar", "event"), ("as a reminder", "reminder"),
    ("Erinnerung", "reminder"), ("eine Aufgabe bitte", "task"), ("Task!", "task"),
    ("Kalender morgen", None), ("remind me at 9 to call mom", None), ("ja", None),
])
def test_the_answer_to_the_calendar_reminder_or_task_offer_typed_as_a_word(text: str, make: str | None) -> None:
    assert plan_answer_said(text) == make


@pytest.mark.parametrize("text, lead, what", [
    ("also remind me 10 minutes before", timedelta(minutes=10), None),
    ("remind me an hour before the dentist appointment", timedelta(hours=1), "dentist"),
    ("remind me half an hour before my meeting with Tom", timedelta(minutes=30), "Tom"),
    ("erinnere mich 15 Minuten vorher", timedelta(minutes=15), None),
    ("erinnere mich eine Stunde vor dem Zahnarzt", timedelta(hours=1), "Zahnarzt"),
])
def test_a_reminder_some_time_before_an_appointment(text: str, lead: timedelta, what: str | None) -> None:
    assert before_event_said(text) == (lead, what)


@pytest.mark.parametrize("text", ["remind me 10 minutes before I leave", "remind me in 10 minutes",
                                  "10 minutes before"])
def test_what_is_no_reminder_before_an_appointment(text: str) -> None:
    assert before_event_said(text) is None
