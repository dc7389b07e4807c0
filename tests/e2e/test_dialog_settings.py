"""Without a language model: a setting said in words is made as its command would make it. (The clock says Monday
2026-11-30, 08:30 in Berlin.)"""

from __future__ import annotations

from sqlalchemy import select

from brain.people.models import User


async def test_language_time_zone_and_quiet_hours_said_in_words(person, brain) -> None:
    alice = person()
    assert await alice.send("sprich Deutsch") == "Ab jetzt spreche ich Deutsch mit dir."
    assert (await alice.send("Ich wohne in Lissabon")).startswith("Deine Zeitzone ist jetzt Lissabon")
    assert "22:00" in await alice.send("keine Erinnerungen zwischen 22 und 6 Uhr")
    async with brain.transactions.read() as s:
        user = (await s.scalars(select(User))).one()
    assert (user.locale, user.timezone) == ("de", "Europe/Lisbon")
    assert (user.quiet_start.hour, user.quiet_end.hour) == (22, 6)


async def test_a_vacation_said_in_words_and_a_no_that_is_no_appointment(person, db_state) -> None:
    bob = person(language="de")
    assert (await bob.send("Ich bin im Urlaub bis Freitag")).startswith("Urlaub vom Mo., 30. Nov. bis Fr., 4. Dez.")
    before = await db_state()
    answer = await bob.send("keine Erinnerungen nach dem Essen")  # says what is not wanted: not offered as an entry
    assert "Kalender" not in answer and await db_state() == before
    # One end of the quiet hours said: that end is set, the other stays.
    assert await bob.send("keine Erinnerungen nach 21 Uhr") == "Ruhezeit ist jetzt von 21:00 bis 07:00: dann keine " \
        "Erinnerungen."
    assert "21:00 bis 08:00" in await bob.send("keine Nachrichten vor 8 Uhr")
    assert "10:00\u202fPM to 7:00\u202fAM" in await person(language="en").send("no reminders after 10pm")


async def test_the_morning_summary_and_evening_reflection_set_in_words(person) -> None:
    carla = person(language="de")
    assert await carla.send("Morgenübersicht um 7 Uhr") == "Morgenübersicht: täglich um 07:00."
    assert "aus" in await carla.send("keine Abendreflexion mehr")
    assert "07:00" in await carla.send("/morning")
    assert await person().send("send me my summary at 8am") == "Morning summary: every day at 8:00\u202fAM."


async def test_a_ritual_started_in_words_and_lists_asked_for_with_my(person) -> None:
    dora = person(language="de")
    started = await dora.send("Starte die Abendroutine")
    assert "Abendroutine — Schritt" in started and "nicht verstanden" not in started
    await dora.send("/ritual stop")  # while a step waits for words, words are its answer
    assert await dora.send("meine Orte") == "Noch keine Orte. Sag mir mit /place <Name>, wo du bist."
    await dora.send("/place Café Luna")
    assert "Café Luna" in await dora.send("Wie oft war ich im Café Luna?")
