"""What a message the rule-based reader did not understand was about, so the answer shows how to write that."""

from __future__ import annotations

import pytest

from bot.parsing.hints import Topic, request_said, topic_of


@pytest.mark.parametrize("text, topic", [
    ("erinnere mich irgendwann an Oma", Topic.REMINDER),
    ("I want a reminder for the dentist appointment", Topic.REMINDER),  # the reminder is what is asked for
    ("irgendwas mit Terminen", Topic.APPOINTMENT),
    ("Aufgaben verschieben", Topic.TASK),
    ("ich habe was getrunken", Topic.DRINK),
    ("I ate something", Topic.MEAL),
    ("neuer Ort", Topic.PLACE),
    # deleting, whatever it names
    ("lösche die Pizza", Topic.DELETE), ("please remove the reminder thing", Topic.DELETE),
    ("asdfgh", None),
    ("bla bla", None),
])
def test_the_topic_of_a_message_not_understood(text: str, topic: Topic | None) -> None:
    assert topic_of(text) is topic


@pytest.mark.parametrize("text, asks", [
    ("delete the gym thing", True), ("please change my goal to 3 liters", True), ("can you set my goal to 3 l", True),
    ("Kannst du den Termin verschieben", True), ("tell me a joke", True), ("erzähl mir was", True),
    ("zeig mir meine Woche", True), ("stell meinen Wecker auf 7", True),
    # statements, also those that open with a word that can be an imperative
    ("Mark is my brother", False), ("Update: I got the job", False), ("Stell dir vor, ich hab den Job", False),
    ("I love coffee", False), ("Anna hat am 12. Mai Geburtstag", False),
])
def test_a_request_to_the_companion_is_told_from_a_statement(text: str, asks: bool) -> None:
    assert request_said(text) is asks
