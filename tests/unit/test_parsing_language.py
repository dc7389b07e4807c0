"""The language a message is plainly written in (bot.parsing.language): only whole sentences in one language count;
entries, names, mixed and short messages say nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.parsing.language import written_language


@pytest.mark.parametrize("text", [
    "Ich habe heute Mittag Pizza gegessen",
    "Erinnere mich morgen früh an den Müll",
    "Wie heiße ich?",
    "Was steht morgen bei mir an?",
    "Kannst du mich um 9 an den Zahnarzt erinnern",
    "Mir geht es heute nicht gut",
    "Ich heiße Mara",
    "Ich wohne in Hamburg",
    "Kaffee mit Milch und Zucker",
    "hallo", "Moin!", "Guten Morgen :)",  # a greeting alone
])
def test_german_sentences(text: str) -> None:
    assert written_language(text) == "de"


@pytest.mark.parametrize("text", [
    "I had pizza for lunch today",
    "What's on my calendar tomorrow?",
    "Remind me to call the bank at 9",
    "I don't feel good today",
    "Can you tell me what I ate yesterday",
    "My name is Tom",
    "I live in Hamburg",
    "Hello!", "good morning",
])
def test_english_sentences(text: str) -> None:
    assert written_language(text) == "en"


@pytest.mark.parametrize("text", [
    "Kaffee",  # an entry: one word
    "2 Bier",
    "hi", "Hey!",  # greetings of both
    "Zahnarzt am 14.12. um 9:30",  # nouns and words of both languages ("am", "um")
    "Thanks for the Kuchen, Jürgen",  # mixed: an umlaut among English words
    "Meeting mit dem Team at the office",  # mixed
    "Anna Müller Berlin",  # names
    "Ich bin",  # two words
    "Lunch with Jürgen Müller",  # names with umlauts among English
    "in an am was so will",  # words both languages have
    "",
])
def test_short_mixed_or_shared_messages_say_nothing(text: str) -> None:
    assert written_language(text) is None


@given(st.text(max_size=200))
def test_any_text_is_one_of_the_two_languages_or_none(text: str) -> None:
    assert written_language(text) in {"de", "en", None}
