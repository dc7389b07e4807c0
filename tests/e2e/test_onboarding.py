"""/start as a setup flow through the dialog (no chat platform): language from the app's language code,
time zone from a city name or a shared location, quiet hours, water goal, every step skippable; an old
button of an answered step changes nothing; a finished setup is not started again by /start."""

from __future__ import annotations

from datetime import time, timedelta

import pytest
from sqlalchemy import select

from bot.inbound import Inbound
from brain.clock import FixedClock
from brain.core import Brain
from brain.modules.drink.models import DrinkGoal
from brain.onboarding.models import OnboardingState
from brain.onboarding.zones import city_name, zone_at, zone_for_city
from brain.people.models import Identity, User
from tests.e2e.conftest import Person


async def me(brain: Brain, who: Person) -> tuple[User, OnboardingState | None]:
    async with brain.transactions.read() as session:
        user = await session.scalar(select(User).join(Identity, Identity.user_id == User.id)
                                    .where(Identity.platform == "test", Identity.platform_id == who.handle))
        assert user is not None
        return user, await session.get(OnboardingState, user.id)


async def share(who: Person, lat: float, lng: float) -> str:
    who.last = await who.dialog.handle(Inbound(platform="test", platform_user_id=who.handle, chat_id=who.handle,
                                               message_id=f"loc-{lat}-{lng}", location=(lat, lng)))
    return "\n".join(m.text for m in who.last)


async def test_setup_by_buttons_and_a_city_name_to_the_end(person, brain: Brain) -> None:
    alice = person()
    greeting = await alice.send("/start")
    assert "Four quick questions" in greeting and "Step 1 of 4" in greeting
    assert list(alice.buttons()) == ["English ✓", "Deutsch", "Skip"]
    assert "Step 2 of 4" in await alice.press(alice.buttons()["Skip"])
    # The zone as people name it, never the database key.
    assert "It is Berlin (Central European Time) now" in alice.last[0].text and "Berlin" not in alice.buttons()
    assert "Europe/Berlin" not in alice.last[0].text
    reply = await alice.send("New York")
    assert "Your time zone is now New York (Eastern Time)" in reply and "Step 3 of 4" in reply
    assert "Step 4 of 4" in await alice.press(alice.buttons()["11:00\u202fPM – 7:00\u202fAM"])
    finished = await alice.press(alice.buttons()["2,500 ml"])
    assert "Your daily water goal is now 2,500 ml." in finished and "All set." in finished
    user, state = await me(brain, alice)
    assert (user.timezone, user.quiet_start, user.quiet_end) == ("America/New_York", time(23, 0), time(7, 0))
    assert state is not None and state.step == "done" and state.finished_at is not None
    async with brain.transactions.read() as session:
        assert await session.scalar(select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == user.id)) == 2500
    assert "didn't understand" in await alice.send("Paris")  # the question is over: ordinary text again


async def test_language_comes_from_the_app_and_can_be_changed(person, brain: Brain) -> None:
    bea = person(language="de-AT")
    await bea.send("/start")
    assert list(bea.buttons())[:2] == ["English", "Deutsch ✓"]  # the question itself is in German
    await bea.press(bea.buttons()["English"])
    user, _ = await me(brain, bea)
    assert (user.locale, user.locale_chosen) == ("en", True)  # chosen: writing German later does not switch it
    assert "Step 2 of 4" in bea.last[0].text


@pytest.mark.parametrize("app_language, typed, locale, next_question", [
    ("en", "Deutsch", "de", "Schritt 2 von 4"),
    ("en", "german", "de", "Schritt 2 von 4"),
    ("de", "English", "en", "Step 2 of 4"),
])
async def test_the_language_can_be_typed_by_its_name_as_for_lang(
    person, brain: Brain, app_language: str, typed: str, locale: str, next_question: str
) -> None:
    alice = person(language=app_language)
    await alice.send("/start")
    assert next_question in await alice.send(typed)
    user, state = await me(brain, alice)
    assert user.locale == locale
    assert state is not None and state.step == "timezone"


async def test_a_log_entry_at_the_language_question_is_logged(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/start")
    assert "Logged 250 ml water" in await alice.send("250 ml water")
    user, state = await me(brain, alice)
    assert user.locale == "en" and state is not None and state.step == "language"


async def test_time_zone_buttons_name_their_cities_in_the_persons_language(person, brain: Brain) -> None:
    bea = person(language="de")
    await bea.send("/start")
    assert "Schritt 2 von 4" in await bea.press(bea.buttons()["Überspringen"])
    assert list(bea.buttons()) == ["Wien", "Zürich", "Überspringen"]  # Berlin, the zone she has, is left out
    assert "Zeitzone ist jetzt Zürich (Mitteleuropäische Zeit)" in await bea.press(bea.buttons()["Zürich"])
    user, _ = await me(brain, bea)
    assert user.timezone == "Europe/Zurich"


async def test_a_shared_location_answers_the_time_zone_question(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/start")
    await alice.press(alice.buttons()["Skip"])
    reply = await share(alice, 48.2082, 16.3738)  # Vienna
    assert "Vienna (Central European Time)" in reply and "Step 3 of 4" in reply
    assert "I couldn't find a time zone" not in reply
    user, _ = await me(brain, alice)
    assert user.timezone == "Europe/Vienna"


async def test_every_step_can_be_skipped_and_nothing_changes(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/start")
    for step in (2, 3, 4):
        assert f"Step {step} of 4" in await alice.press(alice.buttons()["Skip"])
    assert "All set." in await alice.press(alice.buttons()["Skip"])
    user, state = await me(brain, alice)
    assert (user.locale, user.timezone, user.quiet_start) == ("en", "Europe/Berlin", time(22, 0))
    assert state is not None and state.step == "done"


async def test_an_unknown_city_is_asked_again_and_a_log_entry_still_works(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/start")
    await alice.press(alice.buttons()["Skip"])
    assert "I don't know a time zone for \"Xyzzyville\"" in await alice.send("Xyzzyville")
    assert "Logged 250 ml water" in await alice.send("250 ml water")
    _, state = await me(brain, alice)
    assert state is not None and state.step == "timezone"


async def test_text_that_names_no_city_goes_its_usual_way_once_the_question_is_old_or_itself_a_question(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/start")
    await alice.press(alice.buttons()["Skip"])  # the time zone is asked
    assert "time zone" not in await alice.send("What can you do?")
    clock.advance(timedelta(minutes=11))
    assert "time zone" not in await alice.send("hello there")  # it was told as the hint before
    assert "Step 3 of 4" in await alice.send("Munich")  # a city still answers the question, all day
    _, state = await me(brain, alice)
    assert state is not None and state.step == "quiet"


async def test_start_again_asks_anew_and_a_city_typed_then_answers_it(person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/start")
    await alice.press(alice.buttons()["Skip"])
    clock.advance(timedelta(days=3))
    assert "Step 3 of 4" not in await alice.send("Munich")  # days later: ordinary text
    assert "Step 2 of 4" in await alice.send("/start")
    assert "Step 3 of 4" in await alice.send("Munich")
    _, state = await me(brain, alice)
    assert state is not None and state.step == "quiet"


async def test_quiet_hours_and_water_goal_can_be_typed(person, brain: Brain) -> None:
    bea = person(language="de")
    await bea.send("/start")
    await bea.press(bea.buttons()["Überspringen"])
    await bea.send("München")
    assert "Das habe ich nicht" in await bea.send("Pizza ist toll")  # no answer tried: ordinary text
    asked = await bea.send("ab 22 Uhr")
    assert "Ruhezeit" in asked and "Schritt 3 von 4" in asked and bea.buttons()  # the hint and the question again
    assert "Schritt 4 von 4" in await bea.send("von 22:30 bis 6 Uhr")
    assert "Schritt 4 von 4" in await bea.send("20 l")  # out of range: the goal's own answer, and the question
    assert "2.500 ml" in await bea.send("2,5 l")
    user, state = await me(brain, bea)
    assert (user.timezone, user.quiet_start, user.quiet_end) == ("Europe/Berlin", time(22, 30), time(6, 0))
    assert state is not None and state.step == "done"
    async with brain.transactions.read() as session:
        assert await session.scalar(select(DrinkGoal.daily_ml).where(DrinkGoal.user_id == user.id)) == 2500


async def test_a_log_entry_during_the_quiet_hours_question_is_logged(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/start")
    await alice.press(alice.buttons()["Skip"])
    await alice.press(alice.buttons()["Skip"])
    assert "Logged 250 ml water" in await alice.send("250 ml water")
    _, state = await me(brain, alice)
    assert state is not None and state.step == "quiet"


async def test_an_answered_steps_button_changes_nothing(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/start")
    language_buttons = alice.buttons()
    await alice.press(language_buttons["Skip"])
    reply = await alice.press(language_buttons["Deutsch"])
    assert "That question was already answered." in reply and "Step 2 of 4" in reply
    user, _ = await me(brain, alice)
    assert user.locale == "en"


async def test_start_after_the_setup_greets_and_offers_it_again(person) -> None:
    alice = person()
    await alice.send("/start")
    for _ in range(4):
        await alice.press(alice.buttons()["Skip"])
    again = await alice.send("/start")
    assert "Hello!" in again and "Step 1" not in again
    assert "Step 1 of 4" in await alice.press(alice.buttons()["Go through the setup again"])


def test_city_names_and_positions_find_their_zones() -> None:
    assert zone_for_city("Wien") == "Europe/Vienna"
    assert (city_name("Europe/Vienna", "de"), city_name("Europe/Vienna", "en")) == ("Wien", "Vienna")
    assert zone_for_city("  são paulo, Brazil") == "America/Sao_Paulo"
    assert zone_for_city("München") == "Europe/Berlin"
    assert zone_for_city("Berln") == "Europe/Berlin"
    assert zone_for_city("250 ml water") is None
    # No guess from legacy aliases or near misses of short words: "Atlantis" is not Canada/Atlantic, "EST" not
    # Australia/West, "Pacific" not Canada/Pacific.
    assert [zone_for_city(name) for name in ("Atlantis", "Pacific", "EST", "Wein")] == [None, None, None, None]
    assert zone_at(40.7128, -74.006) == "America/New_York"
    assert zone_at(0.0, -30.0) is None  # the open Atlantic has no place's zone
