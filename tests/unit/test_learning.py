"""Learning, pure: what answers to nudges say ("mostly ignores the water reminder before 10:00", "acts on it on
weekdays"), when a person's nightly run is due, what the model's answer yields (and what it does not), and a fact
said to the person in their language."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from brain.i18n import Renderer
from brain.learning.model_facts import parse_proposals
from brain.learning.nightly import _Person, due
from brain.learning.outcomes import Answer, answer_findings
from brain.learning.wording import fact_text, relevant_today
from brain.pulse.nudges import text_from_json

LABELS = {"water": "Water reminder", "evening_reflection": "Evening reflection"}


def week(rule: str, hour: int, acted: bool, days: range = range(7)) -> list[Answer]:
    return [Answer(rule, acted, hour, day % 7) for day in days]


def holding(answers: list[Answer]) -> dict[str, str]:
    return {f.key: f.statement for f in answer_findings(answers, LABELS) if f.holds}


def test_water_reminders_left_unanswered_early_become_a_fact_with_the_hour() -> None:
    answers = week("water", 8, False) + week("water", 9, False) + week("water", 11, True) + week("water", 14, True)
    # Half of every day's are acted on: neither weekdays nor weekends stand out.
    assert holding(answers) == {"nudge:water:ignored-before:10": "Mostly ignores the water reminder before 10:00"}
    said = next(f.said for f in answer_findings(answers, LABELS) if f.key == "nudge:water:ignored-before:10")
    assert said is not None
    assert (Renderer("en")(text_from_json(said))
            == "Water reminder: you usually leave it unanswered before 10:00\u202fAM.")
    assert Renderer("de")(text_from_json(said)) == "Wasser-Erinnerung: lässt du vor 10:00 meist unbeantwortet."


def test_acting_on_weekdays_only_is_said_of_weekdays() -> None:
    rule = "evening_reflection"
    answers = (week(rule, 21, True, range(5)) + week(rule, 21, True, range(7, 12))
               + week(rule, 21, False, range(5, 7)) + week(rule, 21, False, range(12, 14)))
    assert holding(answers) == {"nudge:evening_reflection:acts:weekdays":
                                "Acts on the evening reflection on weekdays"}
    against = {f.key for f in answer_findings(answers, LABELS) if not f.holds}
    assert "nudge:evening_reflection:acts:weekends" in against


def test_too_few_answers_or_all_ignored_say_nothing_about_an_hour() -> None:
    assert holding(week("water", 8, False, range(3))) == {}
    everything_ignored = week("water", 8, False) + week("water", 15, False)
    assert not any(k.startswith("nudge:water:ignored-before") for k in holding(everything_ignored))


@pytest.mark.parametrize("last_run, local, expected", [
    (None, datetime(2026, 12, 1, 14, 0), True),  # the first run comes as soon as the week is full
    (datetime(2026, 11, 30, 3, 10), datetime(2026, 12, 1, 3, 5), True),  # a new night
    (datetime(2026, 12, 1, 3, 10), datetime(2026, 12, 1, 4, 30), False),  # once a night
    (datetime(2026, 11, 30, 3, 10), datetime(2026, 12, 1, 14, 0), False),  # only in the night
])
def test_a_nightly_run_is_due_once_a_local_night(last_run: datetime | None, local: datetime, expected: bool) -> None:
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("Europe/Berlin")
    person = _Person(id=None, zone="Europe/Berlin",  # type: ignore[arg-type]
                     last_run=last_run.replace(tzinfo=zone) if last_run else None)
    assert due(person, local.replace(tzinfo=zone).astimezone(UTC)) is expected


def test_the_models_answer_yields_only_well_formed_facts() -> None:
    reply = ('Sure! {"facts": [{"kind": "relationship", "statement": "Calls  her mother on Sundays", '
             '"confidence": 0.8}, {"kind": "preference", "statement": "Likes tea", "confidence": 3}, '
             '{"kind": "health", "statement": "x", "confidence": 0.9}, {"kind": "context", "statement": 5}]}')
    found = parse_proposals(reply)
    assert [(f.kind, f.statement, f.confidence) for f in found] == [
        ("relationship", "Calls her mother on Sundays", 0.8), ("preference", "Likes tea", 0.9)]
    assert found[0].key == parse_proposals(reply.replace("Calls  her", "calls her"))[0].key
    assert parse_proposals("no json here") == [] and parse_proposals('{"facts": "none"}') == []


def test_a_fact_is_said_in_the_persons_language_from_its_key() -> None:
    en, de = Renderer("en"), Renderer("de")
    weekday = fact_text("weekday:drink:coffee:0", "Usually drinks coffee on Mondays", None)
    assert en(weekday) == "On Mondays you usually drink coffee."
    assert de(weekday) == "Montags typisch für dich: Kaffee trinken."
    assert en(fact_text("window:meal:lunch:afternoon", "", None)) == "You usually have lunch in the afternoon."
    assert fact_text("model:abc", "Calls her mother on Sundays", None) == "Calls her mother on Sundays"
    assert relevant_today("weekday:drink:coffee:0", date(2026, 11, 30))  # a Monday
    assert not relevant_today("weekday:drink:coffee:1", date(2026, 11, 30))
