"""Numbers read as meant and finding one's way, through python-telegram-bot against the fake Bot API: one rule for
every drink (a bare number up to 10 counts glasses or cups, 50 and more is ml, in between two buttons ask), a meal's
out-of-range energy refused with the range, /help grouped with the rule and admin commands for admins only, and
Telegram's "/" menu set for English, German and the default, in private chats."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from adapters.telegram.adapter import TelegramAdapter
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from brain.events.actor import USER
from brain.modules.drink.models import DrinkEntry
from brain.modules.food.models import Meal
from tests.telegram.conftest import press, send, user_id_of
from tests.telegram.fake_bot_api import FakeBotAPI

WORDS = {
    "en": {"ask": "12 glasses or 12 ml?", "glasses": "12 glasses", "ml": "12 ml", "cups": "12 cups or 12 ml?",
           "too_much": "at most 5,000", "kcal": "A meal must have between 0 and 5,000 kcal. Nothing was logged.",
           "rule": "Drinks: a bare number up to 10 counts glasses or cups", "logs": "Logs:",
           "groups": ["Logs:", "Goals and streaks:", "Rituals and reminders:", "Assistant:", "Memory:",
                      "Your data:", "Settings:"]},
    "de": {"ask": "12 Gläser oder 12 ml?", "glasses": "12 Gläser", "ml": "12 ml", "cups": "12 Tassen oder 12 ml?",
           "too_much": "5.000", "kcal": "Eine Mahlzeit muss zwischen 0 und 5.000 kcal haben. Nichts wurde eingetragen.",
           "rule": "Getränke: eine Zahl allein bis 10 zählt Gläser oder Tassen", "logs": "Einträge:",
           "groups": ["Einträge:", "Ziele und Serien:", "Rituale und Erinnerungen:", "Assistent:", "Gedächtnis:",
                      "Deine Daten:", "Einstellungen:"]},
}


async def drunk_ml(brain: Brain) -> list[int]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(DrinkEntry.quantity_ml).order_by(DrinkEntry.logged_at))).all())


@pytest.mark.parametrize("language", ["en", "de"])
async def test_one_rule_for_every_drink(telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain,
                                        language: str) -> None:
    alice = person(language_code=language)
    words = WORDS[language]
    await send(api, alice, "/water 1")
    await send(api, alice, "/water 10")
    await send(api, alice, "/water 50")
    assert await drunk_ml(brain) == [250] + [250] * 10 + [50]
    (asked,) = await send(api, alice, "/water 12")
    assert asked.text == words["ask"] and list(asked.buttons()) == [words["glasses"], words["ml"]]
    (logged,) = await press(api, alice, words["glasses"], asked)
    assert "3" in logged.text
    assert (await drunk_ml(brain))[-1] == 3000
    (asked,) = await send(api, alice, "/water 12")
    await press(api, alice, words["ml"], asked)
    assert (await drunk_ml(brain))[-1] == 12
    (cups,) = await send(api, alice, "/coffee 12")
    assert cups.text == words["cups"]
    before = await drunk_ml(brain)
    (refused,) = await send(api, alice, "/water 250 250")
    assert words["too_much"] in refused.text
    assert await drunk_ml(brain) == before


@pytest.mark.parametrize(("language", "half", "litre"), [("en", "/coffee 2.5", "/water 1.5 l"),
                                                     ("de", "/kaffee 2,5", "/wasser 1,5 l")])
async def test_a_bare_decimal_counts_cups_and_a_unit_keeps_its_volume(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, language: str, half: str,
        litre: str) -> None:
    alice = person(language_code=language)
    await send(api, alice, half)
    await send(api, alice, litre)
    assert await drunk_ml(brain) == [375, 1500]  # two and a half cups of 150 ml; one and a half litres


@pytest.mark.parametrize("language", ["en", "de"])
async def test_a_meals_energy_out_of_range_is_refused_with_the_range(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, language: str) -> None:
    alice = person(language_code=language)
    (refused,) = await send(api, alice, "/meal 99999999 kcal")
    assert refused.text == WORDS[language]["kcal"]
    (refused,) = await send(api, alice, "/meal Pizza 99999999 kcal")
    assert refused.text == WORDS[language]["kcal"]
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(Meal)) == 0


@pytest.mark.parametrize("language", ["en", "de"])
async def test_help_is_grouped_says_the_drink_rule_and_shows_audit_to_admins_only(
        brain: Brain, llm: LLM, telegram: TelegramAdapter, api: FakeBotAPI, person, language: str) -> None:
    alice, admin = person(language_code=language), person("Root", language_code=language)
    brain.companion = Companion(brain, llm, CompanionConfig(admins=frozenset({f"telegram:{admin.id}"})))
    words = WORDS[language]
    (shown,) = await send(api, alice, "/help")
    lines = shown.text.splitlines()
    assert [line for line in lines if line in words["groups"]] == words["groups"]
    assert any(line.startswith(words["rule"]) for line in lines)
    assert "/audit" not in shown.text
    (to_admin,) = await send(api, admin, "/help")
    assert "/audit" in to_admin.text


async def test_the_command_menu_is_set_for_english_german_and_the_default_in_private_chats(
        telegram: TelegramAdapter, api: FakeBotAPI) -> None:
    calls = await api.wait_for("setMyCommands", count=3)  # set after the start, not in the way of the first update
    menus = {call.params.get("language_code"): {k: json.loads(v) if isinstance(v, str) and k != "language_code"
                                                else v for k, v in call.params.items()} for call in calls}
    assert set(menus) == {None, "en", "de"}
    for params in menus.values():
        assert params["scope"] == {"type": "all_private_chats"}
    names = {entry["command"]: entry["description"] for entry in menus["de"]["commands"]}
    assert names["water"] == "Wasser eintragen" and "audit" not in names
    assert {entry["command"]: entry["description"] for entry in menus[None]["commands"]}["water"] == "Log water"


@pytest.mark.parametrize(("language", "more", "back", "page"), [
    ("en", "More ›", "‹ Back", "Open tasks (page 2 of 3):"),
    ("de", "Weiter ›", "‹ Zurück", "Offene Aufgaben (Seite 2 von 3):"),
])
async def test_tasks_beyond_one_screen_page_with_buttons(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, language: str, more: str, back: str,
        page: str) -> None:
    alice = person(language_code=language)
    await send(api, alice, "/help")
    user_id = await user_id_of(brain, alice)
    for n in range(1, 41):
        assert (await brain.tools.execute(user_id, "create_task", {"title": f"Task {n}"}, USER)).ok
    (first,) = await send(api, alice, "/tasks")
    assert first.text.count("\n") >= 15 and "Task 15" in first.text and "Task 16" not in first.text
    assert more in first.buttons() and back not in first.buttons()
    (second,) = await press(api, alice, more, first)
    assert second.text.splitlines()[0] == page
    assert "16. Task 16" in second.text and "30. Task 30" in second.text and "Task 31" not in second.text
    assert {more, back} <= set(second.buttons())


async def test_done_takes_the_number_of_the_list_shown_even_after_a_task_due_earlier_was_added(
        telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:
    alice = person(language_code="en")
    await send(api, alice, "/task Report")
    (listing,) = await send(api, alice, "/tasks")
    assert "1. Report" in listing.text
    await send(api, alice, "/task Taxes tomorrow")  # due: before the undated report in a list shown now
    (done,) = await send(api, alice, "/done 1")
    assert "Report" in done.text and "Taxes" not in done.text
