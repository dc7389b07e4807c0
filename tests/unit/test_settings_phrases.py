"""Settings said in words are read as the command that makes them; a sentence that only mentions a language, a city
or reminders is left alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.parsing.settings import setting_said


@pytest.mark.parametrize("text, command", [
    ("switch to German", ("lang", "de")),
    ("sprich Deutsch", ("lang", "de")),
    ("Sprache auf Englisch stellen", ("lang", "en")),
    ("auf Deutsch bitte", ("lang", "de")),
    ("speak English please", ("lang", "en")),
    ("my timezone is Europe/Berlin", ("tz", "Europe/Berlin")),
    ("I live in New York", ("tz", "New York")),
    ("Ich wohne in Berlin", ("tz", "Berlin")),
    ("no reminders between 10pm and 7am", ("quiet", "22:00-07:00")),
    ("keine Erinnerungen zwischen 22 und 7 Uhr", ("quiet", "22:00-07:00")),
    ("keine Erinnerungen zwischen 10 und 7", ("quiet", "22:00-07:00")),  # the evening's 10 before the morning's 7
    ("no reminders after 10pm", ("quiet", "22:00-")), ("keine Erinnerungen nach 10", ("quiet", "22:00-")),
    ("keine Nachrichten vor 8 Uhr", ("quiet", "-08:00")), ("no notifications before 7:30am", ("quiet", "-07:30")),
    ("pause reminders for 3 days", ("pause", "3")),
    ("pausiere die Erinnerungen", ("pause", "")),
    ("I'm on vacation until Sunday", ("vacation", "until Sunday")),
    ("Ich bin im Urlaub bis Sonntag", ("vacation", "bis Sonntag")),
    ("Urlaub vom 5.12. bis 10.12.", ("vacation", "vom 5.12. bis 10.12.")),
    ("reminders back on", ("resume", "")),
    ("send me a summary every morning at 7:30", ("morning", "07:30")),
    ("Morgenübersicht um 7 Uhr", ("morning", "07:00")), ("send me my summary at 8am", ("morning", "08:00")),
    ("Abendrückblick um 9", ("evening", "21:00")),  # the evening's 9
    ("turn off the morning summary", ("morning", "off")),
    ("keine Abendreflexion mehr", ("evening", "off")),
    ("start the morning ritual", ("ritual", "morning")),
    ("Starte die Abendroutine", ("ritual", "Abend")),
    ("Morgenritual starten", ("ritual", "Morgen")),
])
def test_a_setting_said_in_words_is_its_command(text: str, command: tuple[str, str]) -> None:
    assert setting_said(text) == command


@pytest.mark.parametrize("text", [
    "I speak German", "Deutsch ist schwer", "I live in a flat", "Ich wohne in einer WG", "I'm in Berlin",
    "keine Erinnerungen nach dem Essen", "Ich bin im Urlaub", "pause", "", "Morgenübersicht",
    "the morning summary was great", "my morning routine was chaotic", "start the car",
])
def test_a_sentence_that_only_mentions_a_setting_is_left_alone(text: str) -> None:
    assert setting_said(text) is None


@given(st.text(max_size=200))
def test_any_text_reads_as_a_known_command_or_nothing(text: str) -> None:
    said = setting_said(text)
    assert said is None or said[0] in {"lang", "tz", "quiet", "pause", "vacation", "resume", "morning", "evening",
                                     "ritual"}
