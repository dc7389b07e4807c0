"""A person who never chose a language is answered in the one they write: a plainly German sentence to a companion
that speaks English (their app said "en", or nothing) turns it to German, says so once and how to go back; a chosen
language (/lang, "sprich Deutsch", the setup's button) is kept whatever they write; entries and mixed messages change
nothing."""

from __future__ import annotations

from sqlalchemy import select

from brain.core import Brain
from brain.people.models import Identity, User

SWITCHED_TO_GERMAN = "Ich antworte dir auf Deutsch, wie du schreibst. Mit /lang en wechselst du zurück."
SWITCHED_TO_ENGLISH = "I'll answer in English, as you write. /lang de switches back."


async def _language(brain: Brain, handle: str) -> tuple[str, bool]:
    async with brain.transactions.read() as session:
        row = (await session.execute(
            select(User.locale, User.locale_chosen).join(Identity, Identity.user_id == User.id)
            .where(Identity.platform == "test", Identity.platform_id == handle))).one()
    return row.locale, row.locale_chosen


async def test_a_german_sentence_turns_the_companion_to_german_and_an_english_one_back(person, brain) -> None:
    jana = person()
    said = await jana.send("Ich habe heute Mittag Pizza gegessen")
    assert said == SWITCHED_TO_GERMAN + "\nMittagessen eingetragen: Pizza."
    assert await _language(brain, jana.handle) == ("de", False)
    # From now on everything is German, also an entry that says nothing of its language, and /today.
    assert (await jana.send("Kaffee")).startswith("150 ml Kaffee eingetragen.")
    assert "Wasser: 0 ml von 2.000 ml" in await jana.send("/today")
    # Said once: the next German sentence is just answered.
    assert not (await jana.send("Ich habe noch einen Apfel gegessen")).startswith("Ich antworte")
    # Not chosen: writing English turns it back.
    said = await jana.send("I drank a glass of water at the office")
    assert said.startswith(SWITCHED_TO_ENGLISH + "\nLogged 250 ml water.")
    assert await _language(brain, jana.handle) == ("en", False)


async def test_a_chosen_language_is_kept_whatever_the_person_writes(person, brain) -> None:
    max_ = person()
    assert await max_.send("/lang en") == "I'll speak English with you from now on."
    assert await _language(brain, max_.handle) == ("en", True)
    assert (await max_.send("Ich habe heute Mittag Pizza gegessen")) == "Logged lunch: Pizza."
    assert await _language(brain, max_.handle) == ("en", True)

    # Asking for a language in words is the command (no note that it follows the writing first).
    lea = person()
    assert await lea.send("Sprich bitte Deutsch mit mir") == "Ab jetzt spreche ich Deutsch mit dir."
    assert await _language(brain, lea.handle) == ("de", True)
    assert (await lea.send("I had pizza for lunch today")) == "Mittagessen eingetragen: pizza."


async def test_entries_mixed_messages_and_commands_change_no_language(person, brain, db_state) -> None:
    tom = person()
    for text in ("Kaffee", "2 Bier", "Zahnarzt am 14.12. um 9:30", "/todo Steuererklärung bis Freitag"):
        reply = await tom.send(text)
        assert "Deutsch" not in reply, text
    assert await _language(brain, tom.handle) == ("en", False)
    # A person whose app says German and who writes German hears nothing about languages.
    ida = person(language="de")
    assert await ida.send("Ich habe heute Mittag Pizza gegessen") == "Mittagessen eingetragen: Pizza."
    assert await _language(brain, ida.handle) == ("de", False)


async def test_help_says_in_both_languages_how_to_correct_an_entry_and_what_the_memory_holds(person) -> None:
    # The phrases it names are ones the companion understands (tested where they are read).
    assert 'Something logged wrong? Write "that was 250 ml", "I meant dinner" or "undo".' in await person().send(
        "/help")
    assert "Etwas falsch eingetragen? Schreib „das waren 250 ml“" in await person(language="de").send("/hilfe")


async def test_saying_ones_name_in_german_is_answered_in_german(person, brain) -> None:
    mara = person()
    said = await mara.send("Ich heiße Mara")
    assert said.startswith("Ich antworte dir auf Deutsch, wie du schreibst.")
    assert "Schön, dich kennenzulernen, Mara!" in said
    assert await _language(brain, mara.handle) == ("de", False)
