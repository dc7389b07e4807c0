"""Without a language model, a greeting, a thank-you or a goodbye gets a friendly answer, not "I didn't understand
that", and changes nothing. Anything more than such a phrase still goes to the parser."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from bot.parsing.smalltalk import Smalltalk, name_said, smalltalk_of
from brain.core import Brain
from brain.people.service import resolve_identity
from tests.e2e.conftest import Person


@pytest.mark.parametrize("text, kind", [
    ("hi", Smalltalk.GREETING), ("Hallo!", Smalltalk.GREETING), ("hey companion 👋", Smalltalk.GREETING),
    ("Guten Morgen", Smalltalk.GREETING), ("Servus", Smalltalk.GREETING), ("Danke dir!", Smalltalk.THANKS),
    ("thank you very much", Smalltalk.THANKS), ("danke, tschüss", Smalltalk.GOODBYE),
    ("Gute Nacht", Smalltalk.GOOD_NIGHT), ("hi, wie geht's dir?", Smalltalk.HOW_ARE_YOU),
    ("How are you doing?", Smalltalk.HOW_ARE_YOU), ("Wie geht\u2019s?", Smalltalk.HOW_ARE_YOU),
    ("wie läuft's?", Smalltalk.HOW_ARE_YOU),
    ("gut, danke", Smalltalk.FEELING_GOOD), ("I'm fine, thanks", Smalltalk.FEELING_GOOD),
    ("Mir geht es schlecht", Smalltalk.FEELING_LOW), ("ich bin heute echt müde", Smalltalk.FEELING_LOW),
    ("I'm feeling a bit stressed", Smalltalk.FEELING_LOW), ("Was kannst du?", Smalltalk.ABOUT),
    ("what can you do", Smalltalk.ABOUT), ("ich bin im Café", None), ("müde aber glücklich", None),
    ("thanks, that's all", Smalltalk.GOODBYE), ("see you tomorrow", Smalltalk.GOODBYE),
    ("ich gehe jetzt schlafen", Smalltalk.GOOD_NIGHT), ("I'm going to bed", Smalltalk.GOOD_NIGHT),
    ("Kannst du mir helfen?", Smalltalk.ABOUT), ("ich gehe einkaufen", None),
    ("hi, two coffees", None), ("morgen 9 Uhr Zahnarzt", None), ("hi Anna, how was the trip", None),
    # Heard, nothing asked; or never mind.
    ("ok", Smalltalk.ACK), ("Cool!", Smalltalk.ACK), ("👍", Smalltalk.ACK), ("🙂🙏", Smalltalk.ACK),
    ("ok bye", Smalltalk.GOODBYE), ("ok, two coffees", None), ("never mind", Smalltalk.NEVER_MIND),
    ("ach egal", Smalltalk.NEVER_MIND), ("forget it", Smalltalk.NEVER_MIND), ("Cancel", Smalltalk.NEVER_MIND),
    ("nein danke", Smalltalk.NEVER_MIND), ("no thanks!", Smalltalk.NEVER_MIND), ("cancel the dentist", None),
    ("", None),
    # How the person feels, with why after it.
    ("I'm feeling stressed about work", Smalltalk.FEELING_LOW),
    ("ich bin gestresst wegen der Arbeit", Smalltalk.FEELING_LOW),
    ("I feel overwhelmed with everything", Smalltalk.FEELING_LOW), ("ich fühle mich einsam", Smalltalk.FEELING_LOW),
    ("I'm happy about the result", None), ("I'm at the gym", None), ("gut wegen dir", None),
    ("I'm sick today", Smalltalk.FEELING_LOW), ("Ich habe Kopfschmerzen", Smalltalk.FEELING_LOW),
    ("I'm done for today", Smalltalk.GOODBYE), ("ich mache jetzt Feierabend", Smalltalk.GOODBYE),
])
def test_only_a_whole_phrase_is_smalltalk(text: str, kind: Smalltalk | None) -> None:
    assert smalltalk_of(text) == kind


async def test_greetings_thanks_and_goodbyes_get_an_answer_in_both_languages(person: Callable[..., Person],
                                                                             db_state) -> None:
    alice = person()
    await alice.send("/start")
    before = await db_state()
    greeting = await alice.send("Hi!")
    assert greeting.startswith("Hi") and "250 ml water" in greeting and "didn't understand" not in greeting
    assert "You're welcome!" in await alice.send("thanks")
    assert "Good night" in await alice.send("good night 🌙")
    assert "Bye" in await alice.send("bye")
    assert await alice.send("ok") == "👍"  # heard: no "I didn't understand that"
    assert await alice.send("never mind") == "All right."
    assert await db_state() == before
    bea = person(language="de")
    await bea.send("/start")
    hallo = await bea.send("Hallo")
    assert hallo.startswith("Hallo") and "250 ml Wasser" in hallo
    assert "Gern geschehen!" in await bea.send("Danke schön")
    assert "Gute Nacht" in await bea.send("Gute Nacht")
    assert "Tschüss" in await bea.send("tschüss")
    assert await bea.send("schon gut") == "Alles klar."
    assert "Mir geht's gut" in await bea.send("Hey, wie geht's?")



async def test_how_the_person_feels_and_what_the_companion_can_do_get_an_answer(person: Callable[..., Person],
                                                                               db_state) -> None:
    bea = person(language="de")
    await bea.send("/start")
    before = await db_state()
    assert "Mir geht's gut" in await bea.send("wie geht's dir?")
    assert await bea.send("gut, danke") == "Das freut mich!"
    low = await bea.send("Mir geht es heute nicht gut")
    assert low.startswith("Das tut mir leid.") and "erinnere mich" in low
    about = await bea.send("Was kannst du?")
    assert "Aufgaben" in about and "/help" in about and "nicht verstanden" not in about
    assert "/help lists everything" in await person().send("what can you do?")
    assert await db_state() == before


@pytest.mark.parametrize("text, name", [
    ("my name is Tom", "Tom"), ("ich heiße jana", "Jana"), ("Mein Name ist Hans-Peter.", "Hans-Peter"),
    ("call me Max!", "Max"), ("I'm Tom, nice to meet you", "Tom"), ("Hallo, ich bin Jana", "Jana"),
    # "I'm ..." and "ich bin ..." without a greeting are how the person is or what they do.
    ("ich bin Lehrer", None), ("Ich bin Müde", None), ("Hi, I'm Tired", None), ("hi i am tom", None),
    ("My name is Tom and I live in Berlin", None),
])
def test_a_name_is_read_only_when_the_person_says_it_is_theirs(text: str, name: str | None) -> None:
    assert name_said(text) == name


async def test_a_person_who_says_their_name_is_greeted_by_it(person: Callable[..., Person], db_state) -> None:
    tom = person()
    assert await tom.send("I'm Tom, nice to meet you") == (
        "Nice to meet you, Tom! Tell me what you drank, ate or want to get done, or ask me what's on tomorrow.")
    assert (await tom.send("hi")).startswith("Hi Tom! ")
    # Someone else keeps their own name (none here).
    assert (await person().send("hi")).startswith("Hi! ")


async def test_someone_who_came_on_an_earlier_day_is_greeted_with_their_day(person: Callable[..., Person],
                                                                           brain: Brain) -> None:
    async def arrived(who: Person, days_ago: int) -> None:
        async with brain.transactions.begin() as uow:
            user = await resolve_identity(uow.session, "test", who.handle, default_locale="en",
                                          default_timezone="Europe/Berlin")
            user.created_at = brain.clock.now() - timedelta(days=days_ago)

    tom = person()
    await arrived(tom, 2)  # first wrote two days ago
    await tom.send("my name is Tom")
    await tom.send("todo: call the bank today")
    await tom.send("/event Dentist today 15:00")
    again = await tom.send("Good morning!")
    assert again.splitlines() == ["Hi Tom! Here is your day.", "Due today: Call the bank", "1 open task in all",
                                  "1 appointment today", "Next: Dentist at 3:00\u202fPM", "/today shows your day."]
    assert "250 ml water" in await person().send("hi")  # the first day: how to start
    bea = person(language="de")
    await arrived(bea, 1)
    assert (await bea.send("Moin")).splitlines() == [  # a German greeting: German from now on
        "Ich antworte dir auf Deutsch, wie du schreibst. Mit /lang en wechselst du zurück.",
        "Hallo! Heute keine Aufgaben und keine Termine: ein freier Tag.", "/heute zeigt deinen Tag."]
