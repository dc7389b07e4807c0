"""Amounts as people write them, from the inbound line to the reply: thousands separators as the bot itself writes
them ("2,000 ml", "2.000 ml"), calories with separators, decimals and a minus, counts before plural drink words,
a meal named without its food, and a meal description without the eating verb. Bad input changes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from brain.core import Brain
from brain.modules.drink.models import DrinkEntry, DrinkGoal
from brain.modules.food.models import Meal
from tests.e2e.conftest import Person


async def _drinks(brain: Brain) -> list[tuple[str, int]]:
    async with brain.transactions.read() as session:
        rows = await session.execute(select(DrinkEntry.drink_type, DrinkEntry.quantity_ml))
        return [(t, ml) for t, ml in rows]


async def _meals(brain: Brain) -> list[tuple[str, str, int | None]]:
    async with brain.transactions.read() as session:
        rows = await session.execute(select(Meal.meal_type, Meal.description, Meal.calories))
        return [(t, d, c) for t, d, c in rows]


@pytest.mark.parametrize("language, line, drink_type, ml", [
    ("en", "/water 1,500 ml", "water", 1500),
    ("en", "/drink tea 1,000ml", "tea", 1000),
    ("en", "1,000 ml water", "water", 1000),
    ("de", "/wasser 2.000 ml", "water", 2000),
    ("de", "1.500 ml Wasser", "water", 1500),
    ("de", "/wasser 0,5 l", "water", 500),
    ("en", "/water 1.5 l", "water", 1500),
])
async def test_thousands_separators_log_the_whole_amount(person, brain: Brain, language: str, line: str,
                                                         drink_type: str, ml: int) -> None:
    someone: Person = person(language=language)
    reply = await someone.send(line)
    assert (f"{ml:,}" if language == "en" else f"{ml:,}".replace(",", ".")) + " ml" in reply
    assert await _drinks(brain) == [(drink_type, ml)]


@pytest.mark.parametrize("language, line, drink_type, ml", [
    ("en", "/coffee 2.5", "coffee", 375),  # two and a half cups of 150 ml, not 2.5 litres
    ("de", "/kaffee 2,5", "coffee", 375),
    ("en", "/water 1.5", "water", 375),  # one and a half glasses
    ("de", "/wasser 0,5", "water", 125),  # half a glass
    ("en", "/drink tea 2.5", "tea", 625),
    ("en", "/coffee 1.5l", "coffee", 1500),  # with a unit: that volume
    ("de", "/wasser 1,5 l", "water", 1500),
    ("en", "/water 300ml", "water", 300),
])
async def test_a_bare_decimal_up_to_ten_counts_glasses_or_cups_and_a_unit_keeps_its_volume(
        person, brain: Brain, language: str, line: str, drink_type: str, ml: int) -> None:
    someone: Person = person(language=language)
    reply = await someone.send(line)
    assert (f"{ml:,}" if language == "en" else f"{ml:,}".replace(",", ".")) + " ml" in reply
    assert await _drinks(brain) == [(drink_type, ml)]


async def test_a_goal_typed_like_its_own_button_is_read_during_setup(person, brain: Brain) -> None:
    for language, skip, typed, said in (("en", "Skip", "2,500 ml", "2,500 ml"),
                                         ("de", "Überspringen", "3.000 ml", "3.000 ml")):
        someone: Person = person(language=language)
        await someone.send("/start")
        await someone.press(someone.buttons()[skip])
        await someone.press(someone.buttons()[skip])
        await someone.press(someone.buttons()[skip])
        assert said in await someone.send(typed)
    async with brain.transactions.read() as session:
        assert sorted(await session.scalars(select(DrinkGoal.daily_ml))) == [2500, 3000]


async def test_the_drink_check_ritual_reads_thousands(person, brain: Brain) -> None:
    alice: Person = person(language="de")
    await alice.send("/ritual drink check")
    assert "Bitte" not in await alice.send("/ritual 2.000 ml")
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.sum(DrinkEntry.quantity_ml))) == 2000


@pytest.mark.parametrize("language, line, meal_type, description, kcal", [
    ("en", "/meal dinner Pizza 1.200 kcal", "dinner", "Pizza", 1200),
    ("en", "/meal dinner Pizza 1,200 kcal", "dinner", "Pizza", 1200),
    ("en", "/meal lunch soup 250,5 kcal", "lunch", "soup", 251),  # round half up
    ("de", "Frühstück Brötchen 1.100 Kalorien", "breakfast", "Brötchen", 1100),
    ("de", "Abendessen: ich habe Pizza gegessen 800 kcal", "dinner", "Pizza", 800),
    ("en", "dinner: I ate a burger 900 kcal", "dinner", "burger", 900),
])
async def test_calories_and_descriptions_are_read_whole(person, brain: Brain, language: str, line: str,
                                                        meal_type: str, description: str, kcal: int) -> None:
    someone: Person = person(language=language)
    await someone.send(line)
    assert await _meals(brain) == [(meal_type, description, kcal)]


async def test_the_eating_verb_is_not_part_of_the_free_text_meal(person, brain: Brain) -> None:
    bea: Person = person(language="de")
    reply = await bea.send("ich habe Pizza gegessen 800 kcal")
    assert "Pizza" in reply and "gegessen" not in reply
    [(_, description, kcal)] = await _meals(brain)
    assert (description, kcal) == ("Pizza", 800)


@pytest.mark.parametrize("language, line, expected", [
    ("en", "/meal snack Apple -50 kcal", "can't be negative"),
    ("de", "/essen snack Apfel -50 kcal", "nicht negativ"),
    ("en", "/meal breakfast", "What was your breakfast? Write it after the meal, e.g. /meal breakfast Muesli"),
    ("en", "/meal dinner 700 kcal", "What was your dinner?"),
    ("de", "/meal frühstück", "Was gab es zum Frühstück?"),
    ("de", "/meal Frühstück", "z. B. /meal Frühstück Müsli 350 kcal"),
    ("en", "snack Apple -50 kcal", "must be at least 0"),
    ("en", "25 coffees", "The number of drinks must be at most 10."),
    ("de", "25 Kaffees", "Die Anzahl der Getränke darf höchstens 10 sein."),
    ("en", "12 glasses of water", "The number of drinks must be at most 10."),
    ("en", "20 water", "\"250 ml water\""),  # 20 ml or twenty? Not guessed: the reply shows how to write it
    ("de", "Wasser 20", "„250 ml Wasser“"),
    ("en", "/water 2,500 l", "must be at most 5,000"),
    ("en", "/coffee 12.5", "couldn't read the amount \"12.5\""),  # 12.5 cups or 12.5 ml? Not guessed
    ("de", "/wasser 10,5", "Menge „10,5“"),
])
async def test_bad_amounts_get_a_clear_answer_and_change_nothing(person, db_state, language: str, line: str,
                                                                 expected: str) -> None:
    someone: Person = person(language=language)
    await someone.send("/start")
    before = await db_state()
    assert expected in await someone.send(line)
    assert await db_state() == before


async def test_a_count_before_a_plural_drink_word_logs_that_many(person, brain: Brain) -> None:
    alice: Person = person()
    await alice.send("3 coffees")
    await alice.send("250 water")
    drinks = sorted(await _drinks(brain))
    assert [t for t, _ in drinks] == ["coffee"] * 3 + ["water"] and drinks[-1] == ("water", 250)
    assert "Coffee: 3" in await alice.send("/today")
