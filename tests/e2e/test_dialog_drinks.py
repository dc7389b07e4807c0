"""From an inbound line to the reply in the outbox: drinks, /today, buttons, and bad input."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.inbound import MAX_TEXT_LENGTH
from brain.modules.drink.models import DrinkEntry


async def test_water_then_today_shows_progress_against_the_default_goal(person) -> None:
    alice = person()
    assert "Logged 250 ml water" in await alice.send("/water 250")
    today = await alice.send("/today")
    assert "Water: 250 ml of 2,000 ml (13%)" in today


async def test_german_person_gets_german_numbers_and_words(person) -> None:
    bob = person(language="de")
    await bob.send("/water 1,5 l")
    today = await bob.send("/heute")
    assert "1.500" in today and "2.000" in today


async def test_a_percentage_is_written_the_persons_way(person) -> None:
    # English writes "13%", German "13 %" (Babel's no-break space, so the sign never wraps onto a line of its own).
    assert "Water today: 250 of 2,000 ml (13%)." in await person().send("/water 250")
    assert "Wasser heute: 250 von 2.000 ml (13\u00a0%)." in await person(language="de").send("/wasser 250")


@pytest.mark.parametrize("line, expected", [
    ("250 ml water", 250), ("ein Glas Wasser", 250), ("0,5l Wasser", 500), ("/water", 250), ("/wasser 330ml", 330),
])
async def test_water_phrases_log_the_right_amount(person, line: str, expected: int) -> None:
    alice = person()
    await alice.send(line)
    assert f"{expected:,} ml of 2,000" in await alice.send("/today")


async def test_zwei_kaffee_logs_two_coffees(person) -> None:
    alice = person()
    await alice.send("zwei Kaffee")
    assert "Coffee: 2" in await alice.send("/today")


async def test_quick_button_logs_water_once_even_when_pressed_twice(person) -> None:
    alice = person()
    await alice.send("/water 250")
    token = alice.buttons()["+500 ml water"]
    assert "750" in await alice.press(token)
    assert "already used" in await alice.press(token)
    assert "750 ml of 2,000" in await alice.send("/today")


async def test_another_persons_button_is_refused_and_changes_nothing(person, db_state) -> None:
    alice, mallory = person(), person()
    await alice.send("/water 250")
    token = alice.buttons()["+250 ml water"]
    before = await db_state()
    assert "not valid" in await mallory.press(token)
    assert await db_state() == before


@pytest.mark.parametrize("line, expected", [
    ("/water -5", "couldn't read the amount"),
    ("/water 100 l", "The amount in ml must be at most 5,000"),
    ("/water lots", "couldn't read the amount"),
    ("/drink beer-ish 300", "Usage: /drink"),
    ("/coffee 20", "20 cups or 20 ml?"),  # one rule for every drink: from 11 to 49 it asks
    ("/tz Mars/Olympus", "Unknown time zone"),
    ("/lang klingon", "Unknown language"),
    ("/frobnicate", "don't know the command /frobnicate"),
    ("x" * (MAX_TEXT_LENGTH + 1), "too long"),
    ("the weather is strange today", "didn't understand"),
])
async def test_bad_input_gets_a_clear_answer_and_changes_nothing(person, db_state, line: str, expected: str) -> None:
    alice = person()
    await alice.send("/start")
    before = await db_state()
    assert expected in await alice.send(line)
    assert await db_state() == before


async def test_forged_token_is_refused(person, db_state) -> None:
    alice = person()
    await alice.send("/start")
    before = await db_state()
    for forged in ("AAAAAAAAAAA", "../../etc", "x" * 200, ""):
        reply = await alice.press(forged)
        assert "not valid" in reply
    assert await db_state() == before


async def test_lang_button_switches_to_german(person) -> None:
    alice = person()
    await alice.send("/start")
    await alice.press(alice.buttons()["Deutsch"])
    assert "Wasser" in await alice.send("/water")


async def test_tz_changes_the_local_day(person) -> None:
    alice = person()
    reply = await alice.send("/tz america/new_york")
    assert "Your time zone is now New York (Eastern Time)." in reply and "America/New_York" not in reply
    assert "New York (Eastern Time)" in await alice.send("/tz")
    await alice.send("/lang de")
    assert "Deine Zeitzone ist jetzt Berlin (Mitteleuropäische Zeit)." in await alice.send("/tz Europe/Berlin")
    assert "Deine Zeitzone ist jetzt UTC." in await alice.send("/tz UTC")


async def test_an_all_day_event_keeps_its_day_after_tz(person) -> None:
    alice = person()
    assert "Holiday on Wed, Dec 2 (all day)" in await alice.send("/event Holiday 2.12.")
    await alice.send("/tz New York")
    assert "Next: Holiday, Wed, Dec 2" in await alice.send("/today")


@pytest.mark.parametrize("city, zone, named", [("Berlin", "Europe/Berlin", "Berlin (Central European Time)"),
                                               ("New York", "America/New_York", "New York (Eastern Time)"),
                                               ("München", "Europe/Berlin", "Berlin (Central European Time)")])
async def test_tz_takes_a_city_as_setup_does(person, city: str, zone: str, named: str) -> None:
    # The reply names the zone as people do; its city is the zone's own (München is in Berlin's zone).
    reply = await person().send(f"/tz {city}")
    assert f"now {named}" in reply and zone not in reply


async def test_several_cups_are_logged_together_and_undone_together(person) -> None:
    alice = person()
    assert "Logged 2 × 150 ml coffee" in await alice.send("zwei Kaffee")
    assert "Coffee: 2" in await alice.send("/today")
    await alice.send("zwei Kaffee")
    assert "Removed 2 × 150 ml coffee" in await alice.press(alice.buttons()["Undo"])
    assert "Coffee: 2" in await alice.send("/today")  # the first two stay


async def test_undo_takes_back_a_log_of_several_drinks_whole_as_its_undo_button_does(person) -> None:
    alice = person()
    await alice.send("/water 250")
    await alice.send("/coffee 3")
    assert await alice.send("/undo") == "Removed 3 × 150 ml coffee. Water today: 250 of 2,000 ml."
    assert "Coffee" not in await alice.send("/today")
    await alice.send("3 glasses of water")
    assert "Removed 3 × 250 ml water. Water today: 250 of 2,000 ml." in await alice.send("/undo")
    # The next step back is the glass logged on its own, not what is left of a log.
    assert await alice.send("/undo") == "Removed 250 ml water. Water today: 0 of 2,000 ml."
    # A drink is taken back by the name it was logged with, as the log said it.
    assert "Logged 2 × 330 ml beer" in await alice.send("2 beers")
    assert await alice.send("undo") == "Removed 2 × 330 ml beer. Water today: 0 of 2,000 ml."


async def test_undo_after_the_undo_button_took_back_several_drinks_goes_on_to_the_step_before(person) -> None:
    alice = person()
    await alice.send("/water 500")
    await alice.send("/coffee 2")
    await alice.press(alice.buttons()["Undo"])
    assert await alice.send("/undo") == "Removed 500 ml water. Water today: 0 of 2,000 ml."


async def test_undo_takes_back_several_cups_whole_in_german(person) -> None:
    bob = person(language="de")
    await bob.send("/lang de")
    await bob.send("/kaffee 3")
    assert "3 × 150 ml Kaffee entfernt." in await bob.send("/undo")
    assert "Kaffee" not in await bob.send("/heute")


async def test_german_cups_are_counted_in_german(person) -> None:
    bob = person(language="de")
    assert "2 × 150 ml Kaffee eingetragen" in await bob.send("/kaffee 2")


async def test_drink_kinds_are_named_and_read_in_the_persons_language(person) -> None:
    bob = person(language="de")
    usage = await bob.send("/drink Lava")
    assert "Sorten: wasser, kaffee, tee, saft, alkohol, smoothie, limo." in usage and "coffee" not in usage
    assert "330 ml Limo eingetragen" in await bob.send("/drink Limo 330")
    # Said by its name, a drink is logged and answered with it, not with its kind ("Alkohol").
    assert "2 × 330 ml Bier eingetragen" in await bob.send("2 Bier")
    assert "150 ml Espresso eingetragen" in await bob.send("ein Espresso")
    assert "250 ml Saft eingetragen" in await bob.send("/drink saft 250")
    alice = person()
    assert "Kinds: water, coffee, tea, juice, alcohol, smoothie, soda." in await alice.send("/drink lava")


async def test_undo_says_what_the_undo_button_says(person) -> None:
    alice = person()
    await alice.send("/water 300")
    assert await alice.send("/undo") == "Removed 300 ml water. Water today: 0 of 2,000 ml."


async def test_undo_takes_back_the_drink_of_its_own_reply_not_the_latest(person) -> None:
    alice = person()
    await alice.send("/water 300")
    undo_water = alice.buttons()["Undo"]
    await alice.send("/coffee")
    assert "Removed 300 ml water" in await alice.press(undo_water)
    today = await alice.send("/today")
    assert "Water: 0 ml of 2,000" in today and "Coffee: 1" in today


async def test_undo_of_a_drink_removed_already_changes_nothing(person, db_state) -> None:
    alice = person()
    await alice.send("250 ml water")
    undo = alice.buttons()["Undo"]
    await alice.send("/undo")
    await alice.send("/water 500")
    before = await db_state()
    assert "No such drink entry" in await alice.press(undo)
    assert await db_state() == before


async def test_a_small_bare_number_after_a_drink_command_counts_drinks_not_millilitres(person) -> None:
    alice = person()
    assert "2 × 250 ml water" in await alice.send("/water 2")
    assert "500 ml of 2,000" in await alice.send("/today")
    assert "2 × 150 ml coffee" in await alice.send("/drink coffee 2")
    assert await alice.send("/water 20") == "20 glasses or 20 ml?"  # twenty glasses, or 20 ml? Asked.
    assert "couldn't read the amount" in await alice.send("/water 12.5")
    assert "Logged 60 ml water" in await alice.send("/water 60")
    assert "Logged 5 ml water" in await alice.send("/water 5 ml")  # with its unit it is what it says
    assert "565 ml of 2,000" in await alice.send("/today")


@pytest.mark.parametrize("line, reply", [
    ("/lang Deutsch", "Ab jetzt spreche ich Deutsch mit dir."),
    ("/lang german", "Ab jetzt spreche ich Deutsch mit dir."),
    ("/lang English", "I'll speak English with you from now on."),
])
async def test_lang_takes_a_languages_name_too(person, line: str, reply: str) -> None:
    assert await person().send(line) == reply


async def test_a_coffee_is_answered_with_the_cups_of_the_day_and_the_water_in_view(person) -> None:
    alice = person(language="de")
    assert await alice.send("Kaffee") == ("150 ml Kaffee eingetragen. Kaffee heute: 1 Tasse · Wasser: 0 von 2.000 ml "
                                          "(0\xa0%).")
    assert (await alice.send("zwei Kaffee")).startswith("2 × 150 ml Kaffee eingetragen. Kaffee heute: 3 Tassen ·")
    bob = person()
    await bob.send("250 ml water")
    assert await bob.send("/coffee") == "Logged 150 ml coffee. Coffee today: 1 cup · water: 250 of 2,000 ml (13%)."


async def test_several_drinks_in_one_message_are_each_logged_and_said(person) -> None:
    alice = person(language="de")
    said = await alice.send("2 Kaffee und ein Wasser")
    assert said.splitlines()[0].startswith("2 × 150 ml Kaffee eingetragen.")
    assert said.splitlines()[1].startswith("250 ml Wasser eingetragen.")
    assert "Wasser: 250 ml von 2.000 ml (13\xa0%) · Kaffee: 2" in await alice.send("/heute")


async def test_the_last_drink_of_a_kind_is_taken_back_in_words(person) -> None:
    # "lösche den letzten Kaffee" after a coffee and a water removes the coffee, not the water logged after it.
    alice = person()
    await alice.send("/lang en")
    await alice.send("Kaffee")
    await alice.send("500 ml Wasser")
    assert await alice.send("lösche den letzten Kaffee") == "Removed 150 ml coffee. Water today: 500 of 2,000 ml."
    assert await alice.send("delete the last coffee") == "There is no coffee from today to undo."
    assert "Water: 500 ml of 2,000 ml" in await alice.send("/today")
    # The last entry of any kind, in a sentence: /undo.
    assert await alice.send("mach das rückgängig") == "Removed 500 ml water. Water today: 0 of 2,000 ml."
    assert await alice.send("undo that") == "There is nothing of yours from the last 24 hours that I can undo."


async def test_a_drink_said_with_a_time_gone_today_is_logged_and_one_ahead_is_no_drink(person, db_state) -> None:
    # "I had a coffee at 7" was offered as an appointment "I had a coffee" at 7 PM. It is 08:30.
    alice = person()
    assert (await alice.send("I had a coffee at 7")).startswith("Logged 150 ml coffee.")
    before = await db_state()
    ahead = await alice.send("I had a coffee at 9")  # not yet 9: no drink of today, and told, so no plan either
    assert "Logged" not in ahead and "calendar" not in ahead
    assert "Should I put it in your calendar" in await alice.send("Kaffee um 10 mit Tom")  # a plan stays one
    assert await db_state() == before


async def test_the_drink_just_logged_is_corrected_in_words_and_the_correction_has_undo(person, brain) -> None:
    alice = person()
    assert await alice.send("that was 250ml") == "There is no drink from today to correct."
    await alice.send("500ml water")
    assert (await alice.send("oops, that was 250ml")).startswith(
        "Changed to 250 ml water (was 500 ml water). Water today: 250 of 2,000 ml (13%).")
    await alice.send("coffee")
    assert (await alice.send("actually it was a tea")).startswith("Changed to 250 ml tea (was 150 ml coffee).")
    assert "Coffee" not in (await alice.send("/today")).split("Water:")[1].splitlines()[0]
    await alice.send("actually it was a tea")  # again: the tea stays a tea
    assert await alice.press(alice.buttons()["Undo"]) == "Removed 250 ml tea. Water today: 250 of 2,000 ml."
    async with brain.transactions.read() as s:
        assert sorted((e.drink_type, e.quantity_ml) for e in (await s.scalars(select(DrinkEntry))).all()) == [
            ("water", 250)]


async def test_the_wish_to_drink_less_coffee_gets_the_days_coffee_and_a_limit_to_keep(person, db_state) -> None:
    alice, bea = person(), person(language="de")
    await alice.send("/coffee 2")
    before = await db_state()
    said = await alice.send("I want to drink less coffee")
    assert said.startswith("Good plan! Coffee today: 2 cups. A daily limit helps") and "remember" not in said
    assert await db_state() == before  # a wish sets nothing by itself
    assert list(alice.buttons()) == ["+ At most 2 coffees a day", "+ At most 3 coffees a day"]
    assert "New goal: At most 2 coffees a day." in await alice.press(alice.buttons()["+ At most 2 coffees a day"])
    assert await alice.send("I should cut down on coffee") == (
        "Good plan! Coffee today: 2 cups. Your goal keeps count: At most 2 coffees a day.")
    # A limit said plainly is set as a goal.
    assert "Neues Ziel: Höchstens 3 Kaffee pro Tag." in await bea.send("max 3 Kaffee am Tag")
    assert "Dein Ziel zählt mit: Höchstens 3 Kaffee pro Tag." in await bea.send("ich trinke zu viel Kaffee")


async def test_the_wish_to_drink_more_gets_the_days_water_and_a_glass_to_log(person, db_state) -> None:
    alice = person()
    await alice.send("/water 500")
    before = await db_state()
    said = await alice.send("I want to drink more water")
    assert said.startswith("Good plan! Water today: 500 of 2,000 ml.") and "/pulse" in said
    assert await db_state() == before  # a wish logs nothing by itself
    assert "Water today: 750 of 2,000 ml" in await alice.press(alice.buttons()["+250 ml water"])
    said = await person(language="de").send("Ich sollte mehr Wasser trinken")
    assert said.startswith("Gute Idee! Wasser heute: 0 von 2.000 ml.")
    assert "not every few hours" in await alice.send("remind me every hour to stretch")
    assert "I already remind you to drink water" in await alice.send("remind me to drink water every 2 hours")
    assert "You have no reminders coming up." in await alice.send("/remind")


async def test_the_day_shows_what_was_drunk_besides_water_and_coffee(person) -> None:
    alice = person()
    assert "Other drinks" not in await alice.send("/today")
    await alice.send("ein Bier")
    await alice.send("/drink tea 300")
    assert "Water: 0 ml of 2,000 ml (0%) · Other drinks: 630 ml" in await alice.send("/today")


async def test_an_amount_alone_asks_which_drink_and_logs_only_the_one_tapped(person, db_state) -> None:
    alice, bea = person(), person(language="de")
    before = await db_state()
    assert await alice.send("250") == "250 ml of what?"
    assert list(alice.buttons()) == ["Water", "Coffee", "Tea", "Juice"]
    assert await db_state() == before  # nothing logged before the tap
    assert "Logged 250 ml water" in await alice.press(alice.buttons()["Water"])
    assert await bea.send("330 ml") == "330 ml wovon?" and "Saft" in bea.buttons()
    assert "250 ml of what?" not in await alice.send("20")  # too little for a drink: not offered
