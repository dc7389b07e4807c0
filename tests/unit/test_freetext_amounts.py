"""The free-text parser with amounts as people write them: thousands separators, decimals of kcal, a minus,
counts before plural drink words, and meal descriptions without the eating verb."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.parsing.freetext import ToolCall, parse_free_text

MONDAY = date(2026, 11, 30)


def drink(drink_type: str, **args: int) -> list[ToolCall]:
    return [ToolCall("log_drink", {"drink_type": drink_type, **args})]


def meal(description: str, **args: object) -> list[ToolCall]:
    return [ToolCall("log_meal", {**args, "description": description})]


@pytest.mark.parametrize("text, calls", [
    ("1,000 ml water", drink("water", quantity_ml=1000)),
    ("1,500ml water", drink("water", quantity_ml=1500)),
    ("1.500 ml Wasser", drink("water", quantity_ml=1500)),
    ("Wasser 1.500", drink("water", quantity_ml=1500)),
    ("Wasser 0,5", drink("water", quantity_ml=500)),
    ("0,5 l Wasser", drink("water", quantity_ml=500)),
])
def test_drink_volumes_with_separators(text: str, calls: list[ToolCall]) -> None:
    assert parse_free_text(text, MONDAY) == calls


@pytest.mark.parametrize("text, calls", [
    ("3 coffees", drink("coffee", count=3)),
    ("25 coffees", drink("coffee", count=25)),  # a count: the tool refuses more than 10 at once in words
    ("12 Kaffees", drink("coffee", count=12)),
    ("20 waters", drink("water", count=20)),
    ("12 glasses of water", drink("water", quantity_ml=250, count=12)),
])
def test_a_number_before_a_plural_drink_word_counts_drinks(text: str, calls: list[ToolCall]) -> None:
    assert parse_free_text(text, MONDAY) == calls


@pytest.mark.parametrize("text, calls", [
    ("250 water", drink("water", quantity_ml=250)), ("Wasser 300", drink("water", quantity_ml=300)),
    ("50 water", drink("water", quantity_ml=50)), ("zwei Kaffee", drink("coffee", count=2)),
    ("10 Kaffee", drink("coffee", count=10)),
])
def test_a_bare_number_with_a_singular_drink_is_ml_or_a_small_count(text: str, calls: list[ToolCall]) -> None:
    assert parse_free_text(text, MONDAY) == calls


@pytest.mark.parametrize("text", ["20 water", "Wasser 20", "11 Kaffee", "49 tea", "0 coffees", "2.5 coffees"])
def test_numbers_that_are_neither_a_sensible_count_nor_ml_are_not_guessed(text: str) -> None:
    assert parse_free_text(text, MONDAY) is None


@pytest.mark.parametrize("text, calls", [
    ("dinner Pizza 1.200 kcal", meal("Pizza", meal_type="dinner", kcal=1200)),
    ("dinner Pizza 1,200 kcal", meal("Pizza", meal_type="dinner", kcal=1200)),
    ("Frühstück Brötchen 1.100 Kalorien", meal("Brötchen", meal_type="breakfast", kcal=1100)),
    # Decimals round half up, as people round by hand:
    ("lunch soup 250,5 kcal", meal("soup", meal_type="lunch", kcal=251)),
    ("lunch soup 250.4 kcal", meal("soup", meal_type="lunch", kcal=250)),
    ("snack Apple -50 kcal", meal("Apple", meal_type="snack", kcal=-50)),  # the tool or /meal refuses it
    ("snack Wrap-400 kcal", meal("Wrap", meal_type="snack", kcal=400)),  # a dash, not a minus
    ("snack Apple - 50 kcal", meal("Apple", meal_type="snack", kcal=50)),
    ("lunch: pasta 650 kcal 30,5g Eiweiß", meal("pasta", meal_type="lunch", kcal=650, protein=31)),
    ("Pasta 1.020 kcal 20g protein", meal("Pasta", kcal=1020, protein=20)),
])
def test_calories_with_separators_decimals_and_signs(text: str, calls: list[ToolCall]) -> None:
    assert parse_free_text(text, MONDAY) == calls


@pytest.mark.parametrize("text", ["Pizza 1.200.5 kcal", "Pizza " + "9" * 400 + " kcal"])
def test_calories_that_are_no_number_are_not_a_meal(text: str) -> None:
    assert parse_free_text(text, MONDAY) is None


@pytest.mark.parametrize("text, calls", [
    ("ich habe Pizza gegessen 800 kcal", meal("Pizza", kcal=800)),
    ("ich hatte heute Müsli 300 kcal", meal("Müsli", kcal=300)),
    ("ich aß Nudeln 600 kcal", meal("Nudeln", kcal=600)),
    ("ich esse gerade Suppe 250 kcal", meal("Suppe", kcal=250)),
    ("I just had a salad 300 kcal", meal("salad", kcal=300)),
    ("I've had a burger 900 kcal", meal("burger", kcal=900)),
    ("Pizza I had just now 700 kcal", meal("Pizza", kcal=700)),
    ("lunch: had soup today 200 kcal", meal("soup", meal_type="lunch", kcal=200)),
    ("Frühstück: Brot mit Ei gegessen", meal("Brot mit Ei", meal_type="breakfast")),
])
def test_meal_descriptions_keep_the_food_not_the_verb(text: str, calls: list[ToolCall]) -> None:
    assert parse_free_text(text, MONDAY) == calls


@given(st.integers(min_value=1000, max_value=999_999), st.sampled_from([",", "."]))
def test_grouped_calories_are_read_whole_and_leave_no_digits_behind(kcal: int, sep: str) -> None:
    grouped = f"{kcal:,}".replace(",", sep)
    calls = parse_free_text(f"dinner Pizza {grouped} kcal", MONDAY)
    assert calls == meal("Pizza", meal_type="dinner", kcal=kcal)
