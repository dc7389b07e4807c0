"""The rule-based parsers: examples in both languages, and properties (never crash, never
produce a call outside what the tools accept)."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.inbound import split_command
from bot.parsing.amounts import parse_volume_ml
from bot.parsing.dates import find_clockish, find_date, find_dateish, find_duration_minutes, find_time
from bot.parsing.freetext import (
    ReminderMove,
    ToolCall,
    amount_alone,
    delete_target,
    done_said,
    drink_corrected,
    event_moved,
    less_coffee_wished,
    meal_corrected,
    more_water_wished,
    parse_free_text,
    past_day_log_said,
    place_said,
    reminder_moved,
    water_goal_said,
)
from bot.parsing.questions import (
    View,
    about_me_asked,
    asked_about,
    asks_plainly,
    command_prefixed,
    command_word,
    name_asked,
    untracked_said,
)

MONDAY = date(2026, 11, 30)


@pytest.mark.parametrize("text, calls", [
    ("250 ml water", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250})]),
    ("250ml Wasser", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250})]),
    ("ein Glas Wasser", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250})]),
    ("0,5l Wasser", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 500})]),
    ("zwei Kaffee", [ToolCall("log_drink", {"drink_type": "coffee", "count": 2})]),
    ("3 glasses of water", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250, "count": 3})]),
    ("I had a coffee", [ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("I’ve had 2 glasses of water", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250, "count": 2})]),
    ("Ich habe heute 2 Kaffee getrunken", [ToolCall("log_drink", {"drink_type": "coffee", "count": 2})]),
    ("had a tea just now", [ToolCall("log_drink", {"drink_type": "tea"})]),
    ("hab vorhin schon 0,5l Wasser getrunken", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 500})]),
    ("abends ein Glas Wein", [ToolCall("log_drink", {"drink_type": "alcohol", "name": "Wein", "quantity_ml": 250})]),
    ("a beer tonight", [ToolCall("log_drink", {"drink_type": "alcohol", "name": "beer"})]),
    ("green tea please", [ToolCall("log_drink", {"drink_type": "tea"})]),
    ("Ich trinke gerade einen Tee", [ToolCall("log_drink", {"drink_type": "tea"})]),
    ("I'm drinking a coffee", [ToolCall("log_drink", {"drink_type": "coffee"})]),  # how it came: no other kind or size
    ("Kaffee mit Hafermilch", [ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("Kaffee mit Anna", None),  # a meeting
    # Where and when it was had change nothing of it; a person's place is a visit, not a drink.
    ("I drank a glass of water at the office", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250})]),
    ("ein Glas Wasser im Büro getrunken", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250})]),
    ("drank 2 glasses of water this morning",
     [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250, "count": 2})]),
    ("heute morgen zwei Kaffee", [ToolCall("log_drink", {"drink_type": "coffee", "count": 2})]),
    ("a beer at the pub", [ToolCall("log_drink", {"drink_type": "alcohol", "name": "beer"})]),
    ("Kaffee bei Anna", None),
    # A food with the meal it was, or the meal first; a plan, a visit or no food named is no meal.
    ("pizza for dinner", [ToolCall("log_meal", {"meal_type": "dinner", "description": "pizza"})]),
    ("2 slices of pizza for dinner",
     [ToolCall("log_meal", {"meal_type": "dinner", "description": "2 slices of pizza"})]),
    ("Müsli zum Frühstück", [ToolCall("log_meal", {"meal_type": "breakfast", "description": "Müsli"})]),
    ("for lunch I had a salad", [ToolCall("log_meal", {"meal_type": "lunch", "description": "salad"})]),
    ("zum Frühstück Müsli mit Obst",
     [ToolCall("log_meal", {"meal_type": "breakfast", "description": "Müsli mit Obst"})]),
    ("time for lunch", None), ("Anna kommt zum Abendessen", None), ("meet Tom for lunch", None),
    ("zum Abendessen mit Anna", None), ("Reservierung zum Abendessen", None),
    ("book a table for dinner", [ToolCall("create_task", {"title": "Book a table for dinner"})]),
    # Cancelling a reminder takes it back; cancelling anything else is an errand (an appointment too: see below).
    ("cancel the vitamins reminder", [ToolCall("delete_reminder", {"reminder": "vitamins"})]),
    ("cancel my gym membership", [ToolCall("create_task", {"title": "Cancel my gym membership"})]),
    ("cancel all my reminders", None), ("cancel every reminder", None),
    # The last drink (of a kind) taken back in words.
    ("lösche den letzten Kaffee", [ToolCall("undo_last_drink", {"drink_type": "coffee"})]),
    ("das letzte Wasser löschen", [ToolCall("undo_last_drink", {"drink_type": "water"})]),
    ("delete the last coffee", [ToolCall("undo_last_drink", {"drink_type": "coffee"})]),
    ("remove my last drink", [ToolCall("undo_last_drink", {})]),
    ("Lösche das letzte Getränk", [ToolCall("undo_last_drink", {})]),
    ("a beer at the pub with Tom", None),
    ("ein Glas Milch", [ToolCall("log_drink", {"drink_type": "other", "name": "Milch", "quantity_ml": 250})]),
    ("Milch kaufen", [ToolCall("create_task", {"title": "Milch kaufen"})]),
    ("morgen ein Bier", None),  # tomorrow's is no drink had
    ("2 Kaffee und ein Wasser", [ToolCall("log_drink", {"drink_type": "coffee", "count": 2}),
                                 ToolCall("log_drink", {"drink_type": "water"})]),
    ("0,5 l Wasser und 1 Kaffee", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 500}),
                                   ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("Kaffee und Kuchen", None),  # every part must be a drink
    # A meal of an earlier day is not logged as today's ("Reste von gestern" after "Abendessen:" is today's)
    ("gestern Abend Pizza gegessen", None), ("yesterday I had pizza for dinner", None),
    ("Abendessen: Reste von gestern", [ToolCall("log_meal", {"meal_type": "dinner",
                                                              "description": "Reste von gestern"})]),
    # A snack named as such: the meal it was, not part of what was eaten
    ("ich hatte einen Apfel als Snack", [ToolCall("log_meal", {"meal_type": "snack", "description": "Apfel"})]),
    ("chips as a snack", [ToolCall("log_meal", {"meal_type": "snack", "description": "chips"})]),
    ("had a banana for a snack", [ToolCall("log_meal", {"meal_type": "snack", "description": "banana"})]),
    # A drink added after one just logged
    ("und einen Kaffee", [ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("and a tea", [ToolCall("log_drink", {"drink_type": "tea"})]),
    ("und noch 2 Wasser", [ToolCall("log_drink", {"drink_type": "water", "count": 2})]),
    ("und dann?", None),
    ("Tee 300ml", [ToolCall("log_drink", {"drink_type": "tea", "quantity_ml": 300})]),
    ("Einkaufen bis Freitag", [ToolCall("create_task", {"title": "Einkaufen", "due_date": "2026-12-04"})]),
    ("Kaffee kaufen bis morgen", [ToolCall("create_task", {"title": "Kaffee kaufen", "due_date": "2026-12-01"})]),
    ("Report until next monday", [ToolCall("create_task", {"title": "Report", "due_date": "2026-12-07"})]),
    ("Steuer bis 15.12.", [ToolCall("create_task", {"title": "Steuer", "due_date": "2026-12-15"})]),
    ("todo: call mom", [ToolCall("create_task", {"title": "Call mom"})]),
    ("lunch: pasta 650 kcal", [ToolCall("log_meal", {"meal_type": "lunch", "kcal": 650, "description": "pasta"})]),
    ("Müsli 400 kcal 20g Protein", [ToolCall("log_meal", {"kcal": 400, "protein": 20, "description": "Müsli"})]),
    ("I had pasta 650 kcal", [ToolCall("log_meal", {"kcal": 650, "description": "pasta"})]),
    ("Frühstück Müsli mit Banane",
     [ToolCall("log_meal", {"meal_type": "breakfast", "description": "Müsli mit Banane"})]),
    # A meal named inside a sentence that says it was eaten:
    ("Ich habe heute Mittag Pizza gegessen", [ToolCall("log_meal", {"meal_type": "lunch", "description": "Pizza"})]),
    ("had pizza for lunch", [ToolCall("log_meal", {"meal_type": "lunch", "description": "pizza"})]),
    ("zu Abend Suppe gegessen", [ToolCall("log_meal", {"meal_type": "dinner", "description": "Suppe"})]),
    ("ate pasta for lunch 650 kcal",
     [ToolCall("log_meal", {"meal_type": "lunch", "kcal": 650, "description": "pasta"})]),
    ("I had a meeting at lunch", None), ("I had a call for lunch break", None), ("Ich hatte heute Abend Besuch", None),
    ("I have plans for dinner", None),
    # About meals, calories or how things are, not something eaten or to do:
    ("I burned 300 kcal running", None), ("Mein Ziel sind 1800 kcal", None), ("Lunch was great", None),
    ("Dinner with Anna tomorrow at 19:00", None), ("Frühstück morgen mit Oma", None),
    ("I am on vacation until Friday", None), ("Ich bin bis Freitag weg", None),
    ("Im Garten Unkraut jäten bis Freitag", [ToolCall("create_task", {"title": "Im Garten Unkraut jäten",
                                                                     "due_date": "2026-12-04"})]),
    ("Einkaufen bis Freitag 18 Uhr", [ToolCall("create_task", {"title": "Einkaufen", "due_date": "2026-12-04",
                                                                "due_time": "18:00"})]),
    ("hello there", None),
    ("wie geht es dir?", None),
    ("Freitag", None),
    # An entry with the verb that asks to log it; what is not a drink or a meal is not read as one.
    ("log 500ml water", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 500})]),
    ("please track two coffees", [ToolCall("log_drink", {"drink_type": "coffee", "count": 2})]),
    ("trag mir bitte einen Tee ein", [ToolCall("log_drink", {"drink_type": "tea"})]),
    ("notiere Pizza zum Mittag", [ToolCall("log_meal", {"meal_type": "lunch", "description": "Pizza"})]),
    ("log lunch: pasta", [ToolCall("log_meal", {"meal_type": "lunch", "description": "pasta"})]),
    ("note the meeting notes", None),
    # Calories said after the meal, as an estimate: the meal as read without them, the estimate words dropped.
    ("Ich hatte ein Brötchen mit Käse zum Frühstück, ca. 350 kcal",
     [ToolCall("log_meal", {"meal_type": "breakfast", "description": "Brötchen mit Käse", "kcal": 350})]),
    ("pasta for lunch, about 600 kcal",
     [ToolCall("log_meal", {"meal_type": "lunch", "description": "pasta", "kcal": 600})]),
    ("lunch: pasta ~650 kcal", [ToolCall("log_meal", {"meal_type": "lunch", "description": "pasta", "kcal": 650})]),
    ("I had a burger for dinner, roughly 800 calories",
     [ToolCall("log_meal", {"meal_type": "dinner", "description": "burger", "kcal": 800})]),
    ("Pizza gegessen (ca. 900 kcal)", [ToolCall("log_meal", {"description": "Pizza", "kcal": 900})]),
    ("I burned about 300 kcal", None),
    # A shopping list said as one is one to-do holding it, with its deadline if it says one.
    ("Einkaufen: Milch, Eier, Brot", [ToolCall("create_task", {"title": "Einkaufen: Milch, Eier, Brot"})]),
    ("shopping list: milk, eggs", [ToolCall("create_task", {"title": "Shopping list: milk, eggs"})]),
    ("Einkaufen: Milch bis Freitag", [ToolCall("create_task", {"title": "Einkaufen: Milch",
                                                               "due_date": "2026-12-04"})]),
    # A to-do put on the list in words.
    ("add call the plumber to my list", [ToolCall("create_task", {"title": "Call the plumber"})]),
    ("add the report to my tasks by Friday", [ToolCall("create_task", {"title": "The report",
                                                                       "due_date": "2026-12-04"})]),
    ("Setz Milch auf meine Liste", [ToolCall("create_task", {"title": "Milch"})]),
    ("add Anna to the guest list", None), ("put the kettle on", None),
    # A task renamed by its number or its words.
    ("rename task 1 to call the electrician",
     [ToolCall("update_task", {"task": "1", "title": "Call the electrician"})]),
    ("rename the plumber task to electrician", [ToolCall("update_task", {"task": "plumber", "title": "Electrician"})]),
    ("benenne Aufgabe 2 um in Steuer machen", [ToolCall("update_task", {"task": "2", "title": "Steuer machen"})]),
    ("Aufgabe Steuer umbenennen in Steuererklärung",
     [ToolCall("update_task", {"task": "Steuer", "title": "Steuererklärung"})]),
    ("rename the file to x", None),
    # A litre or half of one said in words; colloquial articles; more drinks by name.
    ("Ein Liter Wasser", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 1000})]),
    ("ein halber Liter Wasser", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 500})]),
    ("half a liter of water", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 500})]),
    # "liters" after a number was read as one litre each ("2 liters" as 2 × 1,000 ml; "1.5 liters" not at all).
    ("drank 1.5 liters of water today", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 1500})]),
    ("2 liters of water", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 2000})]),
    ("half a cup of coffee", None),
    ("ne Cola", [ToolCall("log_drink", {"drink_type": "soda", "name": "Cola"})]),
    ("eine Apfelschorle", [ToolCall("log_drink", {"drink_type": "juice", "name": "Apfelschorle"})]),
    # "had" a food (from a list of common foods) is a meal of the time of day; "had" anything else is not.
    ("I had a sandwich", [ToolCall("log_meal", {"description": "sandwich"})]),
    ("Ich hatte ein Brötchen", [ToolCall("log_meal", {"description": "Brötchen"})]),
    ("breakfast was oatmeal with berries",
     [ToolCall("log_meal", {"meal_type": "breakfast", "description": "oatmeal with berries"})]),
    ("I had a bad day", None), ("I had a meeting about the cake", None), ("I had pizza yesterday", None),
    ("lunch was with Anna", None),
])
def test_free_text_examples(text: str, calls: list[ToolCall] | None) -> None:
    assert parse_free_text(text, MONDAY) == calls


@pytest.mark.parametrize("text, title, due", [
    ("todo: Report at 3pm", "Report", "2026-11-30"),  # still ahead at 8:30
    ("todo: report 7:00", "Report", "2026-12-01"),  # gone: tomorrow's
    ("Aufgabe: Bericht um 15 Uhr", "Bericht", "2026-11-30"),
    ("task: 3pm call Anna", "Call Anna", "2026-11-30"),
    ("todo: Book the 9am train", "Book the 9am train", None),  # a time inside the title stays, as with /task
    ("todo: Release 1.10", "Release 1.10", None),
])
def test_a_to_do_with_a_time_and_no_day_is_due_on_the_day_of_the_next_such_time(
        text: str, title: str, due: str | None) -> None:
    [call] = parse_free_text(text, MONDAY, now=time(8, 30)) or []
    assert (call.name, call.args.get("title"), call.args.get("due_date")) == ("create_task", title, due)
    assert (call.at_time is None) == (due is None)
    said = text.split(":", 1)[1].strip()
    # Without the time of day it cannot be placed on a day, and stays in the title.
    assert parse_free_text(text, MONDAY) == [ToolCall("create_task", {"title": said[:1].upper() + said[1:]})]
    assert parse_free_text(said, MONDAY, now=time(8, 30)) is None  # not written as a to-do: no task


@pytest.mark.parametrize("text, expected", [
    ("heute", date(2026, 11, 30)), ("morgen", date(2026, 12, 1)), ("übermorgen", date(2026, 12, 2)),
    ("Freitag", date(2026, 12, 4)), ("next friday", date(2026, 12, 4)), ("Montag", date(2026, 12, 7)),
    ("am 3.1.", date(2027, 1, 3)), ("2026-12-24", date(2026, 12, 24)), ("in 3 Tagen", date(2026, 12, 3)),
    ("in 2 weeks", date(2026, 12, 14)), ("24.12.2026", date(2026, 12, 24)),
    ("Team 11.12.2026", date(2026, 12, 11)),  # "am" inside "Team" is no prefix
])
def test_date_phrases(text: str, expected: date) -> None:
    found = find_date(text, MONDAY)
    assert found is not None and found.value == expected


@pytest.mark.parametrize("text, expected", [
    ("um 14 Uhr", time(14, 0)), ("14:30", time(14, 30)), ("at 9", time(9, 0)), ("7.15", time(7, 15)),
    ("20 Uhr", time(20, 0)), ("3pm", time(15, 0)), ("at 3:30 p.m.", time(15, 30)), ("12 am", time(0, 0)),
    ("12pm", time(12, 0)),
])
def test_time_phrases(text: str, expected: time) -> None:
    found = find_time(text)
    assert found is not None and found.value == expected


@pytest.mark.parametrize("text", ["Buy sun cream", "sat down with Anna", "Sun", "wed"])
def test_weekday_abbreviations_that_are_words_need_a_cue(text: str) -> None:
    assert find_date(text, MONDAY) is None


@pytest.mark.parametrize("text, expected", [("due sun", date(2026, 12, 6)), ("next wed", date(2026, 12, 2)),
                                            ("by sat", date(2026, 12, 5)), ("mon", date(2026, 12, 7))])
def test_weekday_abbreviations_with_a_cue(text: str, expected: date) -> None:
    found = find_date(text, MONDAY)
    assert found is not None and found.value == expected


@pytest.mark.parametrize("text, bad", [("Dentist 2026-02-30", "2026-02-30"), ("Prep 31.02.", "31.02."),
                                       ("Call 3.12. and 45.13.", "45.13."), ("v1.2.3 release", None),
                                       ("Version 2.0", None), ("Report 3.12. for 5.12.", None)])
def test_dates_that_are_none_are_noticed(text: str, bad: str | None) -> None:
    assert find_dateish(text, MONDAY) == bad


@pytest.mark.parametrize("text", ["25:00", "14:60", "13pm", "10 Uhr"])
def test_clock_times_are_noticed_even_when_unreadable(text: str) -> None:
    assert find_clockish(f"Party {text} later") is not None


def test_durations() -> None:
    assert find_duration_minutes("Standup 15m")[0] == 15  # type: ignore[index]
    assert find_duration_minutes("Workshop 2h")[0] == 120  # type: ignore[index]


@pytest.mark.parametrize("text, ml", [("250", 250), ("250ml", 250), ("0,5 l", 500), ("1.5L", 1500), ("33cl", 330),
                                      ("lots", None), ("-5", None)])
def test_volumes(text: str, ml: int | None) -> None:
    assert parse_volume_ml(text) == ml


def test_split_command_strips_bot_name_and_case() -> None:
    assert split_command("/Water@CompanionBot 250 ml") == ("water", "250 ml")


@given(st.text(max_size=300))
def test_free_text_never_crashes_and_only_calls_known_tools(text: str) -> None:
    calls = parse_free_text(text, MONDAY)
    if calls is not None:
        assert 1 <= len(calls) <= 10
        assert {c.name for c in calls} <= {"log_drink", "log_meal", "create_task", "complete_task", "undo_last_drink",
                                           "delete_task", "delete_event", "delete_reminder"}


@given(st.text(max_size=300))
def test_the_other_readers_never_crash_and_stay_in_bounds(text: str) -> None:
    asked = asked_about(text, MONDAY)
    assert asked is None or asked.day is None or asked.day > MONDAY  # a coming day's agenda only
    place = place_said(text)
    assert place is None or 1 <= len(place.split()) <= 4
    goal = water_goal_said(text)
    assert goal is None or goal >= 0
    command_word(text)


@pytest.mark.parametrize("text", [
    "mach das rückgängig", "Mach es bitte rückgängig!", "das rückgängig machen", "nimm das zurück", "undo that",
    "take that back", "Please undo the last entry.", "letzten Eintrag löschen", "lösche den letzten Eintrag",
    "delete my last entry",
])
def test_taking_the_last_entry_back_in_words_is_undo(text: str) -> None:
    assert command_word(text) == "undo"


@pytest.mark.parametrize("text, command", [
    ("show my week", "week"), ("zeig mir meine Aufgaben", "tasks"), ("list my reminders, please", "remind"),
    ("Zeig mal meine Termine", "event"), ("please show me my places", "place"), ("show me the money", None),
    ("zeig mir den Weg", None),
    # Everything of a kind cancelled at once: the list, with a delete button on each (nothing deleted in one go).
    ("cancel all my reminders", "remind"), ("lösche alle meine Aufgaben", "tasks"),
    ("delete all appointments", "event"),
    ("Kalender", "event"), ("zeig mir meinen Kalender", "event"), ("Einstellungen", "settings"),
    ("show my shopping list", "tasks"), ("Zeig mir meine Einkaufsliste", "tasks"), ("my to-do list", "tasks"),
])
def test_asking_to_be_shown_a_view_by_its_word_runs_its_command(text: str, command: str | None) -> None:
    assert command_word(text) == command


@pytest.mark.parametrize("text", ["mach das Licht aus", "undo the laundry", "take the dog out"])
def test_sentences_near_undo_are_not_undo(text: str) -> None:
    assert command_word(text) is None


@given(st.text(max_size=200))
def test_date_and_time_finders_never_crash(text: str) -> None:
    find_date(text, MONDAY)
    find_time(text)
    find_duration_minutes(text)


@pytest.mark.parametrize("text, calls", [
    # A question logs nothing, however much it names a drink or a meal; an explicit to-do stays one.
    ("Hab ich heute schon Wasser getrunken?", None),
    ("Kaffee getrunken?", None),
    ("Ich habe heute Mittag Pizza gegessen?", None),
    ("todo: frag Anna?", [ToolCall("create_task", {"title": "Frag Anna?"})]),
    # A to-do said as a bare verb phrase; a day with it is its due day.
    ("Milch kaufen", [ToolCall("create_task", {"title": "Milch kaufen"})]),
    ("call mom.", [ToolCall("create_task", {"title": "Call mom"})]),
    ("morgen Milch kaufen", [ToolCall("create_task", {"title": "Milch kaufen", "due_date": "2026-12-01"})]),
    ("pay rent on Friday", [ToolCall("create_task", {"title": "Pay rent", "due_date": "2026-12-04"})]),
    ("text Anna about Saturday", None),  # the day is what it is about
    ("Milch kaufen gestern", None),
    ("wir waren einkaufen", None),
    # What the speaker has to do, when the rest is an errand said plainly.
    ("ich muss noch Milch kaufen", [ToolCall("create_task", {"title": "Milch kaufen"})]),
    ("I need to call the bank tomorrow", [ToolCall("create_task", {"title": "Call the bank",
                                                                    "due_date": "2026-12-01"})]),
    ("I need to sleep", None),
    # ... or where they have to go (home, bed, work and school are no errand); an errand verb alone.
    ("ich muss morgen zum Arzt", [ToolCall("create_task", {"title": "Zum Arzt", "due_date": "2026-12-01"})]),
    ("Ich muss heute noch zur Post", [ToolCall("create_task", {"title": "Zur Post", "due_date": "2026-11-30"})]),
    ("I need to go to the bank", [ToolCall("create_task", {"title": "Go to the bank"})]),
    ("ich muss noch einkaufen", [ToolCall("create_task", {"title": "Einkaufen"})]),
    # "machen" / "tun" / "erledigen" make a to-do only with a thing to do.
    ("Ich muss bis Freitag die Steuererklärung machen", [ToolCall("create_task", {"title": "Steuererklärung machen",
                                                                                  "due_date": "2026-12-04"})]),
    ("Hausaufgaben machen", [ToolCall("create_task", {"title": "Hausaufgaben machen"})]),
    ("ich muss das machen", None), ("ich muss das noch erledigen", None), ("mal was tun", None),
    ("Feierabend machen", None),
    ("ich muss zur Arbeit", None),
    ("Steuererklärung bis Ende des Monats", [ToolCall("create_task", {"title": "Steuererklärung",
                                                                      "due_date": "2026-11-30"})]),
    ("finish the report by the end of the month", [ToolCall("create_task", {"title": "Finish the report",
                                                                             "due_date": "2026-11-30"})]),
    ("Ich muss noch die Miete überweisen", [ToolCall("create_task", {"title": "Miete überweisen"})]),
    ("I need to go to sleep", None),
    ("ich muss nach Hause", None),
    ("ich muss los", None),
    ("I should really call mom more often", None),
    ("I must call you later", None),  # said to someone, no errand
    # A task said done with "done with" / "fertig mit".
    ("done with groceries", [ToolCall("complete_task", {"task": "groceries"})]),
    ("fertig mit der Steuer", [ToolCall("complete_task", {"task": "Steuer"})]),
    ("ich bin fertig", None),
    ("Ich habe die Steuer erledigt", [ToolCall("complete_task", {"task": "Steuer"})]),
    ("I finished the report", [ToolCall("complete_task", {"task": "report"})]),
    ("ich habe alles erledigt", None),
    # A meal said as a sentence of its own; eaten now, its kind is the time of day's (the tool's).
    ("lunch was a chicken salad", [ToolCall("log_meal", {"meal_type": "lunch", "description": "chicken salad"})]),
    ("Lunch was great", None),
    ("zum Abendessen gab es Pasta", [ToolCall("log_meal", {"meal_type": "dinner", "description": "Pasta"})]),
    ("ich esse gerade einen Apfel", [ToolCall("log_meal", {"description": "Apfel"})]),
    ("I'm eating an apple", [ToolCall("log_meal", {"description": "apple"})]),
    ("ich esse gerne Pizza", None),
    # Something said eaten with no meal named: the time of day's meal; how much, with whom or another day is no food.
    ("Schokolade gegessen", [ToolCall("log_meal", {"description": "Schokolade"})]),
    ("I ate an apple", [ToolCall("log_meal", {"description": "apple"})]),
    # A common food named alone, as a drink named alone: eaten now (the reply has Undo).
    ("Pizza", [ToolCall("log_meal", {"description": "Pizza"})]),
    ("a banana", [ToolCall("log_meal", {"description": "banana"})]),
    ("2 Brötchen", [ToolCall("log_meal", {"description": "2 Brötchen"})]), ("pizza tonight", None),
    ("Pizza is great", None),
    ("Ich habe zu viel gegessen", None),
    ("ich habe mit Anna gegessen", None),
    ("Ich habe gestern Pizza gegessen", None),
    ("I ate too much", None),
    ("Kaffee schwarz", [ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("a large coffee", [ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("Get well soon", None),
    ("cancel the reminder", None),  # said to the companion about its own entry
    ("cancel my last entry", None),
    ("call me later", None),
    ("cancel the dentist appointment", [ToolCall("create_task", {"title": "Cancel the dentist appointment"})]),
    # "Don't forget" makes a task of what follows (or comes before "nicht vergessen").
    ("nicht vergessen: Müll rausbringen", [ToolCall("create_task", {"title": "Müll rausbringen"})]),
    ("Müll rausbringen nicht vergessen", [ToolCall("create_task", {"title": "Müll rausbringen"})]),
    ("Vergiss nicht, den Müll rauszubringen", [ToolCall("create_task", {"title": "Den Müll rausbringen"})]),
    ("don't forget to buy milk", [ToolCall("create_task", {"title": "Buy milk"})]),
    ("add task buy milk", [ToolCall("create_task", {"title": "Buy milk"})]),
    ("new todo: call Anna", [ToolCall("create_task", {"title": "Call Anna"})]),
    ("Please create a task pay the rent", [ToolCall("create_task", {"title": "Pay the rent"})]),
    ("neue Aufgabe Milch kaufen", [ToolCall("create_task", {"title": "Milch kaufen"})]),
    ("remember to call Anna tomorrow", [ToolCall("create_task", {"title": "Call Anna", "due_date": "2026-12-01"})]),
    # A reminder taken back by its words (the tool finds it, or says it found none or several).
    ("delete the reminder about the dentist", [ToolCall("delete_reminder", {"reminder": "dentist"})]),
    ("lösche die Erinnerung an den Zahnarzt", [ToolCall("delete_reminder", {"reminder": "Zahnarzt"})]),
    ("Erinnerung an den Zahnarzt löschen", [ToolCall("delete_reminder", {"reminder": "Zahnarzt"})]),
    ("cancel my reminder to call mom please", [ToolCall("delete_reminder", {"reminder": "call mom"})]),
    ("Lösche die Aufgabe Milch kaufen", [ToolCall("delete_task", {"task": "Milch kaufen"})]),  # not a task to make
    ("delete the task buy milk", [ToolCall("delete_task", {"task": "buy milk"})]),
    ("Termin beim Zahnarzt absagen", [ToolCall("delete_event", {"event": "Zahnarzt"})]),
    ("Lösche den Friseurtermin", [ToolCall("delete_event", {"event": "Friseur"})]),
    ("Zahnarzttermin absagen", [ToolCall("delete_event", {"event": "Zahnarzt"})]),
    ("den Arzt-Termin löschen", [ToolCall("delete_event", {"event": "Arzt"})]),
    # An appointment named by what it is and with whom.
    ("delete the meeting with Tom", [ToolCall("delete_event", {"event": "meeting with Tom"})]),
    ("lösche das Treffen mit Anna", [ToolCall("delete_event", {"event": "Treffen mit Anna"})]),
    ("Mittagessen mit Ben löschen", [ToolCall("delete_event", {"event": "Mittagessen mit Ben"})]),
    ("remove the dentist appointment", [ToolCall("delete_event", {"event": "dentist"})]),
    ("Lösche die Aufgabe", None),
    ("Termin vereinbaren", [ToolCall("create_task", {"title": "Termin vereinbaren"})]),
    ("read a good book", None),
    ("Mama morgen um 15 Uhr anrufen", None),  # a day and a time: offered as appointment, reminder or task
    # A task said done by its title.
    ("erledigt: Milch kaufen", [ToolCall("complete_task", {"task": "Milch kaufen"})]),
    ("done buy milk", [ToolCall("complete_task", {"task": "buy milk"})]),
    ("erledigt Milch kaufen", [ToolCall("complete_task", {"task": "Milch kaufen"})]),
    ("done for today", None),
    ("done already", None),
    ("Zahnarzt anrufen ist erledigt!", [ToolCall("complete_task", {"task": "Zahnarzt anrufen"})]),
    ("call mom done", [ToolCall("complete_task", {"task": "call mom"})]),
    # A drink with a time that has passed today (it is 12:00) is today's drink; one still ahead is a plan.
    ("I had a coffee at 7", [ToolCall("log_drink", {"drink_type": "coffee"})]),
    ("um 8 Uhr ein Glas Wasser getrunken", [ToolCall("log_drink", {"drink_type": "water", "quantity_ml": 250})]),
    ("Kaffee um 15 Uhr", None), ("Kaffee mit Anna um 9", None),
    ("alles erledigt", None),
    ("Ich bin erledigt", None),
    # Marked done in words; "mark" alone marks nothing.
    ("mark the plumber as done", [ToolCall("complete_task", {"task": "plumber"})]),
    ("hake die Steuer ab", [ToolCall("complete_task", {"task": "Steuer"})]),
    ("check off groceries", [ToolCall("complete_task", {"task": "groceries"})]),
    ("mark my words", None),
])
def test_questions_bare_to_dos_and_tasks_said_done(text: str, calls: list[ToolCall] | None) -> None:
    assert parse_free_text(text, MONDAY, now=time(12)) == calls


@pytest.mark.parametrize("text, view, day", [
    ("Wie viel Wasser habe ich heute getrunken?", View.DAY, None),
    ("Wasser?", View.DAY, None),
    ("Habe ich heute genug getrunken", View.DAY, None),  # a verb and a pronoun first ask
    ("How much water did I drink today?", View.DAY, None),
    ("Wie sieht mein Tag aus?", View.DAY, None),
    ("Was steht heute an?", View.DAY, None),
    ("Was steht morgen an?", View.AGENDA, date(2026, 12, 1)),
    ("Was habe ich am Freitag vor?", View.AGENDA, date(2026, 12, 4)),
    ("Was ist morgen los?", View.AGENDA, date(2026, 12, 1)),
    ("What's on tomorrow?", View.AGENDA, date(2026, 12, 1)),
    # A coming day alone asks about it; "Morgen" alone is a greeting, a day in a statement is none.
    ("tomorrow", View.AGENDA, date(2026, 12, 1)), ("and Friday?", View.AGENDA, date(2026, 12, 4)),
    ("Morgen?", View.AGENDA, date(2026, 12, 1)), ("übermorgen", View.AGENDA, date(2026, 12, 2)),
    ("und am Mittwoch?", View.AGENDA, date(2026, 12, 2)), ("Morgen!", None, None),
    ("tomorrow is fine", None, None), ("Friday was great", None, None),
    ("Do I have appointments tomorrow?", View.AGENDA, date(2026, 12, 1)),
    ("Welche Aufgaben habe ich?", View.TASKS, None),
    ("zeig meine Aufgaben", View.TASKS, None),
    ("Welche Erinnerungen habe ich?", View.REMINDERS, None),
    # A past day's drinks and meals; a weekday or a date in a question about what was had is the one gone.
    ("Wie viel Wasser habe ich gestern getrunken?", View.PAST_DAY, date(2026, 11, 29)),
    ("Was habe ich vorgestern gegessen?", View.PAST_DAY, date(2026, 11, 28)),
    ("What did I eat on Friday?", View.PAST_DAY, date(2026, 11, 27)),
    ("Was hatte ich am 2.10. zum Frühstück?", View.PAST_DAY, date(2026, 10, 2)),
    ("What did I have for lunch yesterday?", View.PAST_DAY, date(2026, 11, 29)),
    ("What's for dinner tonight?", None, None),  # asks for an idea, not about the log
    ("Was habe ich letzte Woche gegessen?", View.WEEK, None),  # a span that is over: the last seven days
    ("Was steht diesen Monat an?", None, None),  # longer than a week
    ("Wie läuft mein Ziel?", View.GOALS, None),
    ("how are my goals?", View.GOALS, None),
    ("Wie stehen meine Serien?", View.STREAKS, None),
    ("my streaks?", View.STREAKS, None),
    ("Wann ist mein nächster Termin?", View.NEXT_EVENT, None),
    ("what's my next appointment?", View.NEXT_EVENT, None),
    ("Was ist das Ziel des Spiels?", None, None),  # not the person's goal
    ("Was ist überfällig?", View.TASKS, None),
    ("Zeig mir meine Termine", View.EVENTS, None),  # what is coming up, not only today
    ("What are my appointments?", View.EVENTS, None),
    ("Hab ich heute Termine?", View.DAY, None),
    ("Zeig mir meine Orte", View.PLACES, None),
    ("Wo war ich heute?", View.PLACES_TODAY, None),  # today's visits, with their times
    ("where was I today?", View.PLACES_TODAY, None),
    ("where have I been?", View.PLACES, None),
    ("Wie oft war ich heute im Café?", View.PLACES, None),
    ("Wo ist der Bahnhof?", None, None),
    ("Was muss ich heute noch machen?", View.TASKS, None),
    ("What do I have to do tomorrow?", View.AGENDA, date(2026, 12, 1)),
    ("Was habe ich heute schon erledigt?", View.DAY, None),
    ("what's due tomorrow?", View.AGENDA, date(2026, 12, 1)),  # that day's, not every open task
    ("Was muss ich beim Zahnarzt beachten?", None, None),
    ("anything due today?", View.TASKS, None),
    ("what's left to do?", View.TASKS, None),
    ("what's my water goal?", View.DAY, None),  # the day's water target, not a tracked goal
    # A past day asked about as a whole: that day's logs (this was None: the memory or "not understood" answered).
    ("Was war gestern los?", View.PAST_DAY, date(2026, 11, 29)),
    ("what happened yesterday?", View.PAST_DAY, date(2026, 11, 29)),
    ("Was habe ich gestern gemacht?", View.PAST_DAY, date(2026, 11, 29)),
    ("How was your day?", None, None), ("Was war das?", None, None),
    # Intake over this week or the last: the last seven days' chart; a weekend or a longer span: none.
    ("Wie viel Kaffee hatte ich diese Woche?", View.WEEK, None),
    ("how many coffees this week?", View.WEEK, None),  # the span says it is about the person's own log
    ("how much water yesterday?", View.PAST_DAY, date(2026, 11, 29)),
    ("how much coffee is too much per day?", None, None),
    ("how much water did I drink last week?", View.WEEK, None),
    ("wie viel Kaffee am Wochenende?", None, None),
    ("Habe heute Nudeln gegessen", None, None),  # tells, does not ask
    ("Wann hat Anna Geburtstag?", None, None),
    ("Hast du Zeit?", None, None),
    ("What's up?", None, None),  # a greeting (bot.parsing.smalltalk), not a question about the calendar
    ("Wie viele Kalorien hat eine Banane?", None, None),  # not about the person's own log
    ("Wie viele Kalorien hatte ich heute?", View.DAY, None),
    ("Was habe ich heute gegessen?", View.MEALS, None),
    ("Wie spät ist es?", View.CLOCK, None),
    ("what time is it", View.CLOCK, None),
    ("What's the date today?", View.CLOCK, None),
    ("Wie spät ist es in Tokio?", None, None),  # another place's time is for the model
    ("what did I eat today?", View.MEALS, None),
    ("Was habe ich heute gegessen und getrunken?", View.DAY, None),
    # How the week or the day went: the last seven days, or the day at a glance.
    ("Wie war meine Woche?", View.WEEK, None), ("how's my week going?", View.WEEK, None),
    ("how am I doing this week?", View.WEEK, None), ("How am I doing today?", View.DAY, None),
    ("wie mache ich mich diese Woche?", View.WEEK, None), ("wie läuft es bei mir heute?", View.DAY, None),
    ("how am I doing with my goals?", View.GOALS, None), ("wie läuft es?", None, None), ("How's it going?", None, None),
    ("Wie läuft meine Woche bisher?", View.WEEK, None), ("how was my day?", View.DAY, None),
    ("Wie war mein Tag?", View.DAY, None), ("how was the meeting?", None, None), ("how was your day?", None, None),
    # What was done in a span: the week counts the tasks done.
    ("how many tasks did I finish this week?", View.WEEK, None),
    ("Was habe ich diese Woche geschafft?", View.WEEK, None), ("Was habe ich heute erledigt?", View.DAY, None),
])
def test_questions_about_the_logs_and_the_view_that_answers_them(text: str, view: View | None,
                                                                 day: date | None) -> None:
    asked = asked_about(text, MONDAY)
    assert (asked.view if asked else None, asked.day if asked else None) == (view, day)


@pytest.mark.parametrize("text, first, last", [
    ("Was steht diese Woche an?", date(2026, 11, 30), date(2026, 12, 6)),
    ("what's on this week?", date(2026, 11, 30), date(2026, 12, 6)),
    ("What's on next week?", date(2026, 12, 7), date(2026, 12, 13)),  # the week, not only its Monday
    ("Welche Termine habe ich nächste Woche?", date(2026, 12, 7), date(2026, 12, 13)),
    ("Was habe ich am Wochenende vor?", date(2026, 12, 5), date(2026, 12, 6)),
    ("anything on this weekend?", date(2026, 12, 5), date(2026, 12, 6)),
    ("Was steht in den nächsten Tagen an?", date(2026, 11, 30), date(2026, 12, 6)),
    ("Was steht nächste Woche Montag an?", date(2026, 12, 7), None),  # a day of it: that day
])
def test_questions_about_the_days_of_a_week_or_weekend(text: str, first: date, last: date | None) -> None:
    asked = asked_about(text, MONDAY)
    assert asked is not None and (asked.view, asked.day, asked.last) == (View.AGENDA, first, last)


def test_a_weekend_asked_about_on_the_weekend_is_the_one_under_way() -> None:
    saturday, sunday = date(2026, 12, 5), date(2026, 12, 6)
    assert asked_about("Was steht am Wochenende an?", saturday) == asked_about("Was steht am Wochenende an?", MONDAY)
    on_sunday = asked_about("Was steht am Wochenende an?", sunday)
    assert on_sunday is not None and (on_sunday.day, on_sunday.last) == (sunday, sunday)
    following = asked_about("What's on next weekend?", sunday)
    assert following is not None and (following.day, following.last) == (date(2026, 12, 12), date(2026, 12, 13))


@pytest.mark.parametrize("text, place", [
    ("ich bin im Café Luna", "Café Luna"),
    ("bin gerade beim Bäcker", "Bäcker"),
    ("ich war heute im Kino", "Kino"),
    ("I'm at the gym", "Gym"),
    ("I am at Café Luna now", "Café Luna"),
    ("I was at the gym this morning", "Gym"),  # when today is no part of the name
    ("ich war im Fitnessstudio heute Morgen", "Fitnessstudio"), ("Ich war vorhin beim Bäcker", "Bäcker"),
    ("ich war beim Bäcker vorhin", "Bäcker"), ("I was at the library earlier today", "Library"),
    ("ich bin am Bahnhof.", "Bahnhof"),
    ("Ich war gestern im Kino", None),  # another day: not a visit now
    ("war am Montag beim Arzt", None), ("I was at Café Luna on Sunday", None), ("ich war am 3.12. im Kino", None),
    ("ich bin am Freitag bei Anna", None), ("I was at the gym last Friday", None),
    ("I am at the Sunday market", "Sunday market"),  # a weekday in a name is no day
    ("ich war heute Morgen im Kino", "Kino"), ("ich war heute Abend beim Italiener", "Italiener"),
    ("ich bin morgen früh beim Arzt", None), ("I'm at the dentist tomorrow", None),
    ("ich bin im Stress", None),  # how the person is, not where
    ("ich bin in Eile", None),
    ("ich bin im Urlaub", None),
    ("I'm at a loss", None),
    ("Bin beim Arzt, melde mich später", "Arzt"),  # the name ends where the sentence goes on
    ("ich bin im Büro um 9", None),  # a time: a plan, not where the person is
    ("ich bin im Haus am See hinter dem Wald", None),  # too long for a place's name
    # Home and work without a place word.
    ("ich bin wieder zu Hause", "Zuhause"), ("bin daheim", "Zuhause"), ("I'm back home", "Home"),
    ("ich bin auf der Arbeit", "Arbeit"), ("I'm home alone", None), ("Ich bin zu Hause geblieben", None),
])
def test_the_place_a_person_says_they_are_at(text: str, place: str | None) -> None:
    assert place_said(text) == place


@pytest.mark.parametrize("text, ml", [
    ("Mein Wasserziel ist 2,5 Liter", 2500),
    ("set my water goal to 3 liters", 3000),
    ("Ändere mein Wasserziel auf 3 Liter", 3000),
    ("stell bitte mein Trinkziel auf 2,5 l", 2500),
    ("Trinkziel 2000 ml", 2000),
    ("Wasserziel auf 3 l setzen", 3000),
    ("my water goal is 3 liters a day", 3000),
    ("Wasserziel", None),
    ("water goal is high", None),
    # What the person wants to drink each day; without "a day" it is no daily goal.
    ("my goal is to drink 3 liters a day", 3000), ("I want to drink 2 liters of water a day", 2000),
    ("ich will 3 Liter am Tag trinken", 3000), ("ich möchte täglich 2,5 Liter Wasser trinken", 2500),
    ("Mein Ziel sind 2 Liter am Tag", 2000), ("ich will 2 Liter trinken", None),
    ("I want to drink 1 liter today", None),
])
def test_the_water_goal_said_in_words(text: str, ml: int | None) -> None:
    assert water_goal_said(text) == ml


@pytest.mark.parametrize("text, wished", [
    ("I want to drink more water", True), ("I should drink more", True), ("I'd like to drink more water today", True),
    ("I don't drink enough water", True), ("help me drink more water", True), ("ich sollte mehr trinken", True),
    ("Ich will ab heute mehr Wasser trinken", True), ("ich trinke zu wenig", True),
    ("Hilf mir, mehr Wasser zu trinken", True),
    # An amount is a goal (water_goal_said); more of something else, or drinking more at a party, is not this.
    ("I want to drink 2 liters of water a day", False), ("I want to drink more coffee", False),
    ("ich will mehr Bier trinken", False), ("I drank more water than yesterday", False),
])
def test_the_wish_to_drink_more_water(text: str, wished: bool) -> None:
    assert more_water_wished(text) is wished


@pytest.mark.parametrize("text, command", [
    ("Termin: Zahnarzt am Montag um 10", ("event", "Zahnarzt am Montag um 10")),
    ("appointment: dentist friday 3pm", ("event", "dentist friday 3pm")),
    ("Termin beim Zahnarzt", None),  # no colon: a note, read as one
    ("Termin:", None),
    # A task done by its number, without the slash.
    ("done 1", ("done", "1")), ("erledigt 2", ("done", "2")), ("3 erledigt", ("done", "3")), ("done with it", None),
    # A goal asked for in words: what /goal takes after it.
    ("set a goal: max 2 coffees a day", ("goal", "max 2 coffees a day")),
    ("set a goal to drink 8 glasses of water a day", ("goal", "drink 8 glasses of water a day")),
    ("neues Ziel: 8 Gläser Wasser am Tag", ("goal", "8 Gläser Wasser am Tag")),
    ("Ziel: 5 Aufgaben pro Tag", ("goal", "5 Aufgaben pro Tag")), ("Ziel erreicht!", None), ("goal reached", None),
    # ... or said plainly, with its bound and its period; without the bound it may tell a habit.
    ("max 2 Kaffee am Tag", ("goal", "max 2 Kaffee am Tag")),
    ("ich will höchstens 3 Kaffee pro Tag trinken", ("goal", "höchstens 3 Kaffee pro Tag")),
    ("I want at least 8 glasses of water a day", ("goal", "at least 8 glasses of water a day")),
    ("2 coffees a day", None), ("max 3 beers a day", None), ("max 2 Tage", None),
    # Something to keep, asked for in words: what /remember takes.
    ("remember that my sister's birthday is on May 3", ("remember", "my sister's birthday is on May 3")),
    ("please remember: the code is in the drawer", ("remember", "the code is in the drawer")),
    ("merk dir: der Schlüssel liegt unter der Matte", ("remember", "der Schlüssel liegt unter der Matte")),
    ("Merke dir, dass Anna Tee mag", ("remember", "Anna Tee mag")),
    ("remember to buy milk", None), ("I remember that day", None),
])
def test_a_command_word_with_a_colon_runs_the_command(text: str, command: tuple[str, str] | None) -> None:
    assert command_prefixed(text) == command


@pytest.mark.parametrize("text, untracked", [
    ("I walked 10000 steps", True), ("I slept 8 hours", True), ("ich wiege 80 kg", True),
    ("Ich habe 7 Stunden geschlafen", True), ("Ich war heute joggen", True), ("I went for a run", True),
    ("how many steps did I do?", True), ("I went for a 30 minute run", True), ("did a 20-minute yoga workout", True),
    ("I ran 5 km", True), ("bin heute 10 km gelaufen", True), ("I went for a walk with Anna", False),
    ("I ran into Tom", False), ("Ich bin zum Bäcker gelaufen", False),
    ("I need to run to the store", False), ("Schritte zählen", False), ("Ich gehe morgen um 7 joggen", False),
])
def test_what_no_log_keeps_is_recognised(text: str, untracked: bool) -> None:
    assert untracked_said(text) is untracked


@pytest.mark.parametrize("text, words", [
    ("Hab Milch gekauft", ["milch"]), ("Habe Mama angerufen", ["mama"]),
    ("Ich habe die Rechnung bezahlt", ["rechnung"]),
    ("bought milk", ["milk"]), ("called the bank", ["bank"]),
    ("Ich habe gestern Milch gekauft", None), ("I bought a new car yesterday", None), ("Milch kaufen", None),
    # Without "habe", and with a participle of a strong verb; forgotten, missed or not done is no done.
    ("Miete überwiesen", ["miete"]), ("Formular unterschrieben", ["formular"]),
    ("Ich habe die Miete vergessen", None), ("Zug verpasst", None), ("Miete noch nicht überwiesen", None),
    ("Termin abgesagt", None),
    # Said finished: the words, for the one open task that holds them (none: nothing is done).
    ("Die Wäsche ist fertig", ["wäsche"]), ("the slides are finished", ["slides"]), ("ich bin fertig", None),
])
def test_a_task_told_as_done_in_the_past_tense_names_its_object(text: str, words: list[str] | None) -> None:
    assert done_said(text) == words


@pytest.mark.parametrize("text, args", [
    ("move the dentist to Friday at 10", {"event": "dentist", "date": "2026-12-04", "time": "10:00"}),
    ("reschedule my dentist appointment to 11", {"event": "dentist", "time": "11:00"}),
    ("move my meeting with Tom to tomorrow", {"event": "Tom", "date": "2026-12-01"}),
    ("move the dentist to 3", {"event": "dentist", "time": "15:00"}),  # an hour before 7 is the afternoon's
    ("verschiebe den Zahnarzt auf Freitag 10 Uhr", {"event": "Zahnarzt", "date": "2026-12-04", "time": "10:00"}),
    ("Termin beim Zahnarzt auf 11 Uhr verschieben", {"event": "Zahnarzt", "time": "11:00"}),
    ("verschiebe den Zahnarzttermin auf 14:30", {"event": "Zahnarzt", "time": "14:30"}),
    # No day or time that can be read, or a week with no day: not read.
    ("move the dentist to a better time", None), ("push the team meeting to next week", None),
    ("move the couch to the living room", None),
    ("change the dentist appointment to 3pm", {"event": "dentist", "time": "15:00"}), ("change my mind", None),
])
def test_an_appointment_moved_in_words(text: str, args: dict[str, str] | None) -> None:
    moved = event_moved(text, MONDAY)
    assert (moved.args if moved is not None else None) == args
    assert moved is None or moved.name == "move_event"


BERLIN_MONDAY = datetime(2026, 11, 30, 8, 30, tzinfo=ZoneInfo("Europe/Berlin"))


@pytest.mark.parametrize("text, reminder, at", [
    ("move the stretch reminder to 8pm", "stretch", (30, 20, 0)),
    ("verschiebe die Erinnerung Dehnen auf 20 Uhr", "Dehnen", (30, 20, 0)),
    ("Verschiebe die Erinnerung an den Müll auf morgen 7 Uhr", "Müll", (1, 7, 0)),
    ("move my reminder for the plants to tomorrow at 9:30", "plants", (1, 9, 30)),
    ("move the mom reminder to 7", "mom", (30, 19, 0)),  # an hour alone: the next one ahead, as /remind reads it
    ("move the reminder to 8pm", "", (30, 20, 0)),  # none named: the dialog asks which
    ("move the dentist to 3pm", None, None), ("verschiebe den Zahnarzt auf 11 Uhr", None, None),
])
def test_a_reminder_moved_in_words_is_no_appointment(text: str, reminder: str | None,
                                                     at: tuple[int, int, int] | None) -> None:
    moved = reminder_moved(text, BERLIN_MONDAY)
    assert (event_moved(text, MONDAY) is None) is (reminder is not None)
    if reminder is None:
        assert moved is None
        return
    assert isinstance(moved, ReminderMove) and moved.reminder == reminder
    assert moved.day_said is any(word in text for word in ("morgen", "tomorrow"))
    day, hour, minute = at or (0, 0, 0)
    month = 11 if day == 30 else 12
    assert moved.at == datetime(2026, month, day, hour, minute, tzinfo=ZoneInfo("Europe/Berlin"))


def test_a_reminder_moved_to_a_time_that_cannot_be_read_says_how_to_write_it() -> None:
    said = reminder_moved("move the stretch reminder to 25:99", BERLIN_MONDAY)
    assert said is not None and not isinstance(said, ReminderMove)


@pytest.mark.parametrize("text, asked", [
    ("What do you know about me?", True), ("what do you remember about me", True),
    ("Was weißt du alles über mich?", True), ("Was hast du dir gemerkt?", True), ("what did I tell you?", True),
    ("What do you know about Anna?", False), ("Was weißt du über Berlin?", False), ("about me", False),
])
def test_asking_what_the_companion_knows_of_the_person(text: str, asked: bool) -> None:
    assert about_me_asked(text) is asked


@pytest.mark.parametrize("text, asked", [
    ("Who am I?", True), ("what's my name", True), ("Do you know my name?", True), ("wer bin ich?", True),
    ("Wie heiße ich?", True), ("Weißt du, wie ich heiße?", True), ("Kennst du noch meinen Namen?", True),
    ("who am I supposed to call?", False), ("what is my name on the list?", False), ("Wie heißt Anna?", False),
])
def test_asking_who_the_person_is(text: str, asked: bool) -> None:
    assert name_asked(text) is asked and about_me_asked(text) is asked


@pytest.mark.parametrize("text, args", [
    ("that was 250ml", {"quantity_ml": 250}), ("oops, it was 250 ml", {"quantity_ml": 250}),
    ("das waren nur 250 ml", {"quantity_ml": 250}), ("sorry, 0,5 l", {"quantity_ml": 500}),
    ("actually it was a tea", {"drink_type": "tea"}), ("I meant tea", {"drink_type": "tea"}),
    ("nein, ein Tee", {"drink_type": "tea"}), ("Das war ein Espresso", {"drink_type": "coffee", "name": "Espresso"}),
    ("actually, 330 ml beer", {"drink_type": "alcohol", "name": "beer", "quantity_ml": 330}),
    # Not a drink after the words, or several: no correction.
    ("it was a long day", None), ("das war lecker", None), ("I meant the dentist", None), ("no, two coffees", None),
])
def test_the_last_drink_corrected_in_words(text: str, args: dict[str, object] | None) -> None:
    corrected = drink_corrected(text)
    assert (corrected.args if corrected is not None else None) == args


@pytest.mark.parametrize("text, args", [
    ("I meant dinner", {"meal_type": "dinner"}), ("das war das Abendessen", {"meal_type": "dinner"}),
    ("ich meinte Frühstück", {"meal_type": "breakfast"}), ("that was 600 kcal", {"kcal": 600}),
    ("das waren 600 kcal", {"kcal": 600}), ("it was a nice dinner", None), ("I meant tomorrow", None),
])
def test_the_last_meal_corrected_in_words(text: str, args: dict[str, object] | None) -> None:
    corrected = meal_corrected(text)
    assert (corrected.args if corrected is not None else None) == args


@pytest.mark.parametrize("text, wished", [
    ("I want to drink less coffee", True), ("I should cut down on coffee", True), ("ich trinke zu viel Kaffee", True),
    ("Ich möchte weniger Kaffee trinken", True), ("I love coffee", False), ("weniger Kaffee wäre gut", False),
])
def test_the_wish_to_drink_less_coffee(text: str, wished: bool) -> None:
    assert less_coffee_wished(text) is wished


@pytest.mark.parametrize("text, ml", [("250", 250), ("330 ml", 330), ("20", None), ("2500", None), ("250 g", None)])
def test_an_amount_alone(text: str, ml: int | None) -> None:
    assert amount_alone(text) == ml


@pytest.mark.parametrize("text, told", [
    ("had 2 beers last night", True), ("gestern Abend Pizza gegessen", True), ("yesterday was great", False),
    ("what did I eat yesterday?", False), ("I had a meeting yesterday", False),
])
def test_a_drink_or_meal_of_an_earlier_day(text: str, told: bool) -> None:
    assert past_day_log_said(text) is told


@pytest.mark.parametrize("text, what", [
    ("lösche die Pizza", "Pizza"), ("delete the dentist", "dentist"), ("Milch kaufen löschen", "Milch kaufen"),
    ("remove my gym, please", "gym"), ("delete it", None), ("lösche alles", None), ("delete 3", None),
    ("Pizza", None),
])
def test_something_to_delete_named_by_its_words(text: str, what: str | None) -> None:
    assert delete_target(text) == what


@pytest.mark.parametrize("text, asks", [
    ("what are my tasks", True), ("how much water today", True), ("wann ist mein Termin", True), ("Was ist los?", True),
    ("When I was young I lived in Leeds", False), ("Wie immer hab ich Kaffee getrunken", False), ("What a day", False),
])
def test_a_question_without_its_mark_is_told_from_a_statement(text: str, asks: bool) -> None:
    assert asks_plainly(text) is asks
