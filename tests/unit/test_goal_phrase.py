"""The goal phrase reader: German and English phrases become a measure, comparison, target and
period; anything unclear gives None (and so creates nothing)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.goals.phrase import GoalPhrase, parse_goal_phrase
from brain.goals.templates import MEASURES, goal_title
from brain.i18n import Renderer


@pytest.mark.parametrize(("text", "expected"), [
    # The examples of the issue.
    ("8 Gläser Wasser pro Tag", GoalPhrase("water_glasses", ">=", 8, "day")),
    ("drink 2000 ml water a day", GoalPhrase("water_ml", ">=", 2000, "day")),
    ("max 3 Kaffee am Tag", GoalPhrase("coffees", "<=", 3, "day")),
    ("höchstens 2000 kcal pro Tag", GoalPhrase("kcal", "<=", 2000, "day")),
    ("5 tasks a day", GoalPhrase("tasks", ">=", 5, "day")),
    ("3 neue Orte pro Woche", GoalPhrase("new_places", ">=", 3, "week")),
    ("10 Aufgaben pro Woche", GoalPhrase("tasks", ">=", 10, "week")),
    # Units, decimal commas and thousands separators.
    ("2 l Wasser am Tag", GoalPhrase("water_ml", ">=", 2000, "day")),
    ("2,5 Liter Wasser täglich", GoalPhrase("water_ml", ">=", 2500, "day")),
    ("at least 1.5l water per day", GoalPhrase("water_ml", ">=", 1500, "day")),
    ("trinke 2500ml Wasser", GoalPhrase("water_ml", ">=", 2500, "day")),
    ("höchstens 2.000 kcal am Tag", GoalPhrase("kcal", "<=", 2000, "day")),
    ("at most 1,800 calories a day", GoalPhrase("kcal", "<=", 1800, "day")),
    ("100 g Protein am Tag", GoalPhrase("protein", ">=", 100, "day")),
    # Comparison words.
    ("mindestens 8 Gläser Wasser", GoalPhrase("water_glasses", ">=", 8, "day")),
    ("no more than 2 coffees per day", GoalPhrase("coffees", "<=", 2, "day")),
    ("genau 3 Mahlzeiten am Tag", GoalPhrase("meals", "=", 3, "day")),
    ("less than 3 coffees a day", GoalPhrase("coffees", "<=", 2, "day")),
    ("mehr als 4 Aufgaben täglich", GoalPhrase("tasks", ">=", 5, "day")),
    ("weniger als 2000 kcal am Tag", GoalPhrase("kcal", "<=", 2000, "day")),
    # Defaults: coffee and kcal are limits, places are per week, everything else per day and at least.
    ("3 Kaffee am Tag", GoalPhrase("coffees", "<=", 3, "day")),
    ("1800 kcal", GoalPhrase("kcal", "<=", 1800, "day")),
    ("2 new places", GoalPhrase("new_places", ">=", 2, "week")),
    ("3 meals", GoalPhrase("meals", ">=", 3, "day")),
    # Periods and number words.
    ("20 tasks a month", GoalPhrase("tasks", ">=", 20, "month")),
    ("30 Aufgaben im Monat", GoalPhrase("tasks", ">=", 30, "month")),
    ("5 places weekly", GoalPhrase("new_places", ">=", 5, "week")),
    ("acht Gläser Wasser am Tag", GoalPhrase("water_glasses", ">=", 8, "day")),
    ("eight glasses of water daily", GoalPhrase("water_glasses", ">=", 8, "day")),
    ("einen neuen Ort pro Woche", GoalPhrase("new_places", ">=", 1, "week")),
    ("  MAX   3   COFFEES / DAY ", GoalPhrase("coffees", "<=", 3, "day")),
    ("to-dos: 6 per day", GoalPhrase("tasks", ">=", 6, "day")),
])
def test_phrases_become_goals(text: str, expected: GoalPhrase) -> None:
    assert parse_goal_phrase(text) == expected


@pytest.mark.parametrize("text", [
    "",
    "hello",
    "8 a day",  # what?
    "water every day",  # how much?
    "8 glasses of water and 3 coffees a day",  # two goals at once
    "8 Gläser Wasser pro Tag pro Woche",  # two periods
    "at least at most 3 coffees",  # two comparisons
    "2.5 glasses of water a day",  # a count is whole
    "500 ml coffee a day",  # ml only for water
    "0 tasks a day",  # nothing to reach
    "-3 coffees a day",
    "9999999 kcal a day",  # beyond any target
    "x" * 300,
])
def test_unclear_phrases_give_nothing(text: str) -> None:
    assert parse_goal_phrase(text) is None


def test_a_limit_of_zero_is_a_goal() -> None:
    assert parse_goal_phrase("max 0 Kaffee am Tag") == GoalPhrase("coffees", "<=", 0, "day")


@given(st.text(max_size=80))
def test_any_text_either_parses_to_a_valid_goal_or_to_nothing(text: str) -> None:
    phrase = parse_goal_phrase(text)
    if phrase is not None:
        assert phrase.measure in MEASURES
        assert phrase.comparison in (">=", "<=", "=") and phrase.period in ("day", "week", "month")
        assert 0 <= phrase.target <= 1_000_000


def test_the_title_of_a_phrase_goal_reads_well_in_english() -> None:
    phrase = parse_goal_phrase("max 3 Kaffee am Tag")
    assert phrase is not None
    title = goal_title(MEASURES[phrase.measure], phrase.comparison, phrase.target, phrase.period)
    assert Renderer("en")(title) == "At most 3 coffees a day"
    assert Renderer("en")(goal_title(MEASURES["water_glasses"], ">=", 1, "week")) == "At least 1 glass of water a week"
