"""The vision model's answer about a photo, read as a meal (`brain.media.vision.meal_estimate`): only a well-formed
"meal" answer with a description and a plausible energy range counts; anything else is not a meal."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from brain.media.vision import MAX_KCAL, meal_estimate


def test_a_meal_answer_is_read_with_its_range_and_middle() -> None:
    meal = meal_estimate(json.dumps({"meal": True, "description": "  Pasta   with pesto ", "foods": ["pasta", ""],
                                     "kcal_min": 700, "kcal_max": 500, "confidence": 0.7}))
    assert meal is not None
    assert (meal.description, meal.kcal_min, meal.kcal_max, meal.kcal) == ("Pasta with pesto", 500, 700, 600)
    assert meal.foods == ["pasta"] and meal.confidence == 0.7


def test_no_meal_garbage_and_implausible_numbers_are_not_a_meal() -> None:
    assert meal_estimate('{"meal": false}') is None
    assert meal_estimate("a plate of pasta") is None
    assert meal_estimate('{"meal": true, "description": "Soup", "kcal_min": -5, "kcal_max": 200}') is None
    assert meal_estimate('{"meal": true, "description": "", "kcal_min": 100, "kcal_max": 200}') is None
    assert meal_estimate('{"meal": "yes", "description": "Soup", "kcal_min": 100, "kcal_max": 200}') is None


@given(st.text(max_size=300))
def test_any_text_gives_a_meal_within_bounds_or_none(text: str) -> None:
    meal = meal_estimate(text)
    assert meal is None or (0 <= meal.kcal_min <= meal.kcal <= meal.kcal_max <= MAX_KCAL and meal.description)


VALUES = st.one_of(st.booleans(), st.integers(-10, 10_000), st.floats(allow_nan=True), st.text(max_size=20),
                   st.lists(st.text(max_size=5), max_size=3), st.none())


@given(st.dictionaries(st.sampled_from(["meal", "description", "kcal_min", "kcal_max", "confidence", "foods"]),
                       VALUES))
def test_any_json_object_gives_a_meal_within_bounds_or_none(data: dict[str, object]) -> None:
    meal = meal_estimate(json.dumps(data))
    assert meal is None or (0 <= meal.kcal_min <= meal.kcal_max <= MAX_KCAL and 0 <= meal.confidence <= 1)
