"""What a message the rule-based reader did not understand was about, so the answer shows how to write that."""

from __future__ import annotations

import pytest

from bot.parsing.hints import Topic, topic_of


@pytest.mark.parametrize("text, topic", [
    ("erinnere mich irgendwann an Oma", Topic.REMINDER),
    ("I want a reminder for the dentist appointment", Topic.REMINDER),  # the reminder is what is asked for
    ("irgendwas mit Terminen", Topic.APPOINTMENT),
    ("Aufgaben verschieben", Topic.TASK),
    ("ich habe was getrunken", Topic.DRINK),
    ("I ate something", Topic.MEAL),
    ("neuer Ort", Topic.PLACE),
    ("asdfgh", None),
    ("bla bla", None),
])
def test_the_topic_of_a_message_not_understood(text: str, topic: Topic | None) -> None:
    assert topic_of(text) is topic
