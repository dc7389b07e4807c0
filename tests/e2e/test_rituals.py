"""/ritual, /morning and /evening from the inbound line to the reply: the overview with templates, the morning
routine through every step to the end (and its day log), typed answers for words and numbers, a checklist and
a breathing step, a run interrupted by a restart that resumes at its step, stale and foreign buttons refused,
scheduling by command, the daily push settings, and the scheduled pushes' buttons."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from sqlalchemy import func, select

from bot.access import AccessPolicy
from bot.dialog import Dialog
from brain.clock import FixedClock
from brain.core import Brain
from brain.modules.drink.models import DrinkEntry
from brain.modules.todo.models import Task
from brain.outbox.models import OutboxMessage
from brain.rituals.models import FINISHED, RitualLog, RitualRun
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY, RITUAL, PushSchedule
from brain.schedules.pushes import send_due_pushes
from brain.store.database import Database
from rules.wiring import build_brain
from tests.e2e.conftest import Person


async def _water(brain: Brain) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.coalesce(func.sum(DrinkEntry.quantity_ml), 0))) or 0)


async def _logs(brain: Brain) -> list[RitualLog]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(RitualLog))).all())


async def test_ritual_offers_the_templates_and_runs_the_morning_routine_to_the_end(person, brain) -> None:
    alice: Person = person()
    overview = await alice.send("/ritual")
    assert "No rituals yet" in overview
    assert {"+ Morning routine", "+ Evening routine", "+ Drink check", "+ Weekly review", "+ Wind-down"} \
        <= set(alice.buttons())

    first = await alice.press(alice.buttons()["+ Morning routine"])
    assert "Morning routine — step 1 of 5" in first and "Drink a glass of water" in first
    assert set(alice.buttons()) == {"Done", "Skip", "Stop the ritual"}

    after_water = await alice.press(alice.buttons()["Done"])
    assert await _water(brain) == 250
    # The three info steps pass by themselves and the mood question waits.
    for expected in ("▸ Your day at a glance", "Calendar: nothing today", "▸ Today's tasks",
                     "Tasks: 0 open · 0 done today · 0 overdue", "▸ Your streaks", "Streaks: water 1 day",
                     "Morning routine — step 5 of 5", "How do you feel this morning?"):
        assert expected in after_water, expected
    assert {"1 😞", "5 😄", "Skip", "Stop the ritual"} <= set(alice.buttons())

    done = await alice.press(alice.buttons()["4 🙂"])
    assert "Morning routine done: every step. Well done!" in done
    [entry] = await _logs(brain)
    assert (entry.completed_steps, entry.total_steps) == (5, 5) and entry.completed_at is not None
    async with brain.transactions.read() as session:
        run = await session.scalar(select(RitualRun))
    assert run is not None and run.status == FINISHED and run.answers == {"4": 4}

    # One tap schedules it at the template's suggested time.
    [remind] = alice.buttons()
    assert remind == "Remind me every day at 7:30\u202fAM"
    assert "I'll start it with you every day at 7:30\u202fAM" in await alice.press(alice.buttons()[remind])
    listing = await alice.send("/ritual")
    assert "1. Morning routine — every day at 7:30\u202fAM · done today ✓" in listing
    assert "+ Morning routine" not in alice.buttons() and "Start: Morning routine" in alice.buttons()


async def test_a_new_person_is_told_names_not_numbers_and_a_ritual_started_over_another_says_so(person) -> None:
    alice: Person = person()
    overview = await alice.send("/ritual")
    assert "/ritual 1" not in overview and "write its name: /ritual Morning routine." in overview
    assert "Drink check — step" in await alice.send("/ritual Drink check")
    switched = await alice.send("/ritual morning routine")
    assert switched.startswith("I stopped Drink check; what you did of it is kept.")
    assert "Morning routine — step 1 of 5" in switched
    assert "/ritual 1 starts one" in await alice.send("/ritual")  # now there are numbers to give


async def test_words_and_numbers_are_answered_with_the_ritual_command(person, brain) -> None:
    alice: Person = person()
    evening = await alice.send("/ritual evening")
    assert "▸ What you drank today" in evening and "Water: 0 ml of 2,000 ml (0%)" in evening
    assert "Evening routine — step 4 of 5" in evening and "What went well today?" in evening
    assert "/ritual A good talk with Anna" in evening
    mood = await alice.send("/ritual A walk in the sun")
    assert "Evening routine — step 5 of 5" in mood
    assert "done" in await alice.press(alice.buttons()["5 😄"])
    async with brain.transactions.read() as session:
        run = await session.scalar(select(RitualRun).where(RitualRun.status == FINISHED))
    assert run is not None and run.answers["3"] == "A walk in the sun"

    check = await alice.send("/ritual drink check")
    assert "How much water do you want to log?" in check
    assert {"150 ml", "250 ml", "330 ml", "500 ml"} <= set(alice.buttons())
    assert "Please give a number from 50 to 2,000." in await alice.send("/ritual lots")
    assert "Drink check done" in await alice.send("/ritual 0,3 l")
    assert await _water(brain) == 300


async def test_stop_and_skip_typed_during_a_ritual_are_no_answers(person, brain) -> None:
    alice: Person = person()
    assert "What went well today?" in await alice.send("/ritual evening")
    # A word typed at a step that waits for words is the answer, but "skip" skips and "stop" ends the run.
    assert "Evening routine — step 5 of 5" in await alice.send("skip")
    assert "Stopped Evening routine." in await alice.send("Stop!")
    assert "All right." == await alice.send("cancel")  # nothing runs any more: heard, nothing to stop
    bert: Person = person(language="de")
    await bert.send("/ritual abend")
    assert "Abendroutine" in await bert.send("abbrechen")
    async with brain.transactions.read() as session:
        runs = (await session.scalars(select(RitualRun))).all()
    assert len(runs) == 2 and all(run.status != FINISHED and not run.answers.get("3") for run in runs)
    assert "No ritual is running" in await alice.send("/ritual continue")


async def test_a_checklist_ticks_items_and_a_breathing_step_shows_its_rhythm(person, brain) -> None:
    alice: Person = person()
    checklist = await alice.send("/ritual wind-down")
    assert "☐ Screens away" in checklist and "☐ A glass of water" in checklist
    ticked = await alice.press(alice.buttons()["☐ A glass of water"])
    assert "☑ A glass of water" in ticked and await _water(brain) == 250
    assert "☐ A glass of water" not in alice.buttons()
    await alice.press(alice.buttons()["☐ Screens away"])
    breathing = await alice.press(alice.buttons()["☐ Clothes for tomorrow ready"])
    assert "4-7-8 breathing" in breathing and "in 4 s · hold 7 s · out 8 s, 4 times" in breathing
    text_step = await alice.press(alice.buttons()["Done"])
    assert "What moved you today?" in text_step
    # The name of a ritual is not an answer: it starts that ritual (and stops this one, logging its progress).
    assert "Evening routine — step 4 of 5" in await alice.send("/ritual evening")
    [entry] = await _logs(brain)
    assert (entry.completed_steps, entry.total_steps, entry.completed_at) == (2, 3, None)
    await alice.send("/ritual wind-down")
    await alice.press(alice.buttons()["Done"])
    await alice.press(alice.buttons()["Done"])
    assert "Wind-down done: 2 of 3 steps." in await alice.send("/ritual skip")


async def test_a_ritual_interrupted_by_a_restart_resumes_at_its_step(
        person, brain: Brain, clock: FixedClock, database_url: str) -> None:
    alice: Person = person()
    await alice.send("/ritual morning")
    await alice.press(alice.buttons()["Done"])
    mood_buttons = alice.buttons()
    # The process restarts: a new brain and dialog over the same database, nothing carried over in memory.
    restarted_brain = build_brain(Database(database_url, pool_size=2), clock=clock)
    try:
        again = Person(Dialog(restarted_brain, default_locale="en",
                              default_timezone="Europe/Berlin", access=AccessPolicy.open()), alice.handle)
        overview = await again.send("/ritual")
        assert "You are in the middle of Morning routine (step 5 of 5)." in overview
        resumed = await again.press(again.buttons()["Continue"])
        assert "Morning routine — step 5 of 5" in resumed and "How do you feel this morning?" in resumed
        # A button from before the restart is still good for its step.
        assert "Morning routine done" in await again.press(mood_buttons["3 😐"])
        assert "This ritual is over." in await again.press(mood_buttons["5 😄"])
    finally:
        await restarted_brain.close()
    assert await _water(brain) == 250


async def test_old_foreign_and_timed_out_buttons_change_nothing(person, brain: Brain, clock: FixedClock) -> None:
    alice: Person = person()
    bob: Person = person()
    await alice.send("/ritual morning")
    step_one = alice.buttons()
    await alice.press(step_one["Done"])
    assert "That step is done already." in await alice.press(step_one["Skip"])
    assert "That button is not valid." in await bob.press(alice.buttons()["2 🙁"])
    clock.advance(timedelta(hours=3))
    assert "This ritual timed out" in await alice.press(alice.buttons()["2 🙁"])
    assert "No ritual is running" in await alice.send("/ritual continue")
    assert await _water(brain) == 250


async def test_rituals_are_scheduled_unscheduled_and_removed_by_command(
        person, brain: Brain, clock: FixedClock) -> None:
    alice: Person = person()
    scheduled = await alice.send("/ritual weekly review 18:00 sundays")
    assert "Weekly review: I'll start it with you Sunday at 6:00\u202fPM." in scheduled
    assert "1. Weekly review — Sunday at 6:00\u202fPM" in await alice.send("/ritual")
    clock.advance(timedelta(minutes=1))  # the list is in the order they were made
    assert "Wind-down: I'll start it with you on weekdays at 9:45\u202fPM" in \
        await alice.send("/ritual wind-down 21:45 weekdays")
    assert "no longer scheduled" in await alice.send("/ritual 1 off")
    assert "1. Weekly review — started by hand" in await alice.send("/ritual")
    assert "Wind-down is removed." in await alice.send("/ritual 2 delete")
    async with brain.transactions.read() as session:
        kinds = (await session.scalars(select(PushSchedule.ref).where(PushSchedule.kind == RITUAL))).all()
    assert kinds == []
    assert "I found no ritual matching" in await alice.send("/ritual 7")
    assert "I couldn't read that" in await alice.send("/ritual 1 sometime soon")


async def test_the_weekly_review_turns_an_answer_into_a_task(person, brain: Brain) -> None:
    alice: Person = person()
    await alice.send("/ritual weekly review")
    await alice.send("/ritual A good week")
    assert "Weekly review done" in await alice.send("/ritual Book the dentist")
    async with brain.transactions.read() as session:
        titles = (await session.scalars(select(Task.title))).all()
    assert titles == ["Book the dentist"]


async def test_morning_and_evening_set_when_the_daily_pushes_come(person, brain: Brain) -> None:
    alice: Person = person()
    assert "Morning summary: every day at 8:00\u202fAM." in await alice.send("/morning")
    assert "Morning summary: every day at 7:15\u202fAM." in await alice.send("/morning 07:15")
    assert "Evening reflection: on weekdays at 9:30\u202fPM." in await alice.send("/evening 21:30 weekdays")
    assert "Morning summary is off." in await alice.send("/morning off")
    assert "Morning summary: off." in await alice.send("/morgen")
    assert "I couldn't read that time" in await alice.send("/abend später")
    async with brain.transactions.read() as session:
        rows = {r.kind: r for r in (await session.scalars(select(PushSchedule))).all()}
    assert not rows[MORNING_SUMMARY].enabled and rows[MORNING_SUMMARY].at == time(7, 15)
    assert rows[EVENING_REFLECTION].enabled and rows[EVENING_REFLECTION].weekdays == 0b0011111
    assert "Morning summary: every day at 7:15\u202fAM." in await alice.send("/morning on")


@pytest.mark.parametrize("line, language, reply", [
    ("/morning 7", "en", "Morning summary: every day at 7:00\u202fAM."),
    ("/morning 7 weekdays", "en", "Morning summary: on weekdays at 7:00\u202fAM."),
    ("/morgen 6", "de", "Morgenübersicht: täglich um 06:00."),
    ("/evening 21", "en", "Evening reflection: every day at 9:00\u202fPM."),
    # An evening reflection at 9 is at 9 in the evening, as "/abend 9 Uhr" would be said.
    ("/evening 9", "en", "Evening reflection: every day at 9:00\u202fPM."),
    ("/abend 9", "de", "Abendrückblick: täglich um 21:00."),
    ("/abend 9 Uhr", "de", "Abendrückblick: täglich um 21:00."),
    ("/abend halb acht", "de", "Abendrückblick: täglich um 19:30."),
    # A clock time is the time written, also in the morning hours.
    ("/evening 9:30", "en", "Evening reflection: every day at 9:30\u202fAM."),
    ("/evening 09:30", "en", "Evening reflection: every day at 9:30\u202fAM."),
    ("/evening 10:25", "en", "Evening reflection: every day at 10:25\u202fAM."),
    ("/evening 12:10", "en", "Evening reflection: every day at 12:10\u202fPM."),
    ("/abend 10:00", "de", "Abendrückblick: täglich um 10:00."),
    ("/abend 9:00", "de", "Abendrückblick: täglich um 09:00."),
    ("/abend 9.30", "de", "Abendrückblick: täglich um 09:30."),
    ("/evening 24", "en", "I couldn't read that time"),
    ("/morning 7 pancakes", "en", "I couldn't read that time"),
])
async def test_a_bare_hour_sets_the_morning_and_evening_pushes(person, line: str, language: str, reply: str) -> None:
    assert reply in await person(language=language).send(line)


async def test_scheduled_pushes_start_their_ritual_with_one_tap(person, brain: Brain, clock: FixedClock) -> None:
    alice: Person = person()
    await alice.send("/ritual wind-down 21:45")  # Berlin: 20:45 UTC
    await send_due_pushes(brain, clock.now())
    for hour, minute in ((20, 0), (20, 45)):  # the evening reflection at 21:00 local, then the wind-down
        clock.set(datetime(2026, 11, 30, hour, minute, tzinfo=UTC))
        await send_due_pushes(brain, clock.now())
    async with brain.transactions.read() as session:
        rows = {r.kind: r for r in (await session.scalars(select(OutboxMessage).where(
            OutboxMessage.kind.in_([EVENING_REFLECTION, RITUAL])))).all()}
    evening, wind_down = rows[EVENING_REFLECTION], rows[RITUAL]
    assert wind_down.text.startswith("Time for your ritual: Wind-down")
    labels = {b["label"]: b["token"] for row in wind_down.buttons for b in row}
    assert "Okay, not today." in await alice.press(labels["Not today"])
    assert "Wind-down — step 1 of 3" in await alice.press(labels["Start"])
    # The evening reflection's button starts the evening routine (made from its template on first use).
    evening_labels = {b["label"]: b["token"] for row in evening.buttons for b in row}
    assert set(evening_labels) == {"Evening routine", "Show today"}
    assert "Evening routine — step 4 of 5" in await alice.press(evening_labels["Evening routine"])


async def test_a_push_set_inside_quiet_hours_says_it_comes_late_or_not_at_all(person) -> None:
    alice: Person = person()
    reply = await alice.send("/morning 6:30")  # the default quiet hours are 22:00 to 07:00
    assert "Morning summary: every day at 6:30\u202fAM." in reply
    assert ("6:30\u202fAM is inside your quiet hours (10:00\u202fPM to 7:00\u202fAM), so it comes late or not at all. "
            "Choose another time, or change them with /quiet.") in reply
    assert "quiet hours" not in await alice.send("/morning 7:00")  # their end is outside them
    await alice.send("/quiet 19-23")
    assert "inside your quiet hours" in await alice.send("/evening 21:30")
    bob: Person = person(language="de")
    assert "06:30 liegt in deiner Ruhezeit (22:00 bis 07:00)" in await bob.send("/morgen 6:30")


async def test_the_weekly_review_shows_the_coming_week_not_only_today(person) -> None:
    alice: Person = person()
    await alice.send("/event Dentist tomorrow 10:00")
    await alice.send("/event Dinner friday 19:00")
    await alice.send("/event Next month's trip 28.12.")
    await alice.send("/ritual weekly review")
    await alice.send("/ritual skip")
    reply = await alice.send("/ritual skip")
    assert "Coming up" in reply
    assert "Tue, Dec 1, 10:00\u202fAM · Dentist" in reply and "Fri, Dec 4, 7:00\u202fPM · Dinner" in reply
    assert "trip" not in reply  # four weeks away
