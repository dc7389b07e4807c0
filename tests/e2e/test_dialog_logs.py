"""From an inbound line to the reply: tasks, calendar, meals, places, /undo, and what one person
never sees of another."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from brain.modules.calendar.models import CalendarEvent
from brain.modules.todo.models import Task


async def test_task_with_deadline_phrase_gets_its_due_date(person, brain) -> None:
    alice = person()  # the clock says Monday 2026-11-30
    assert "Einkaufen" in await alice.send("/task Einkaufen bis Freitag")
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert task.title == "Einkaufen" and task.due_date.isoformat() == "2026-12-04"


async def test_free_text_deadline_becomes_a_task_and_its_button_completes_it_once(person) -> None:
    alice = person()
    await alice.send("Einkaufen bis Freitag")
    listing = await alice.send("/tasks")
    assert "1. Einkaufen" in listing
    token = alice.buttons()["✓ 1"]
    assert "Einkaufen" in await alice.press(token)
    assert "already used" in await alice.press(token)
    assert "No open tasks" in await alice.send("/tasks")


async def test_done_by_title_fragment(person) -> None:
    alice = person()
    await alice.send("/task Call mom")
    await alice.send("/task Steuererklärung")
    assert "Steuererklärung" in await alice.send("/done steuer")
    listing = await alice.send("/tasks")
    assert "Call mom" in listing and "Steuer" not in listing


async def test_event_phrase_is_stored_in_the_persons_time_zone(person, brain) -> None:
    alice = person()
    await alice.send("/event Zahnarzt morgen 14:00")
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert event.title == "Zahnarzt"
    assert event.start_time == datetime(2026, 12, 1, 13, 0, tzinfo=UTC)  # 14:00 in Berlin
    assert (event.end_time - event.start_time).total_seconds() == 3600


@pytest.mark.parametrize("line, title, start, minutes", [
    ("/termin Weihnachtsfeier 18.12. 19:00", "Weihnachtsfeier", datetime(2026, 12, 18, 18, 0, tzinfo=UTC), 60),
    ("/event Dentist 3.12. 14:00", "Dentist", datetime(2026, 12, 3, 13, 0, tzinfo=UTC), 60),
    ("/event Team 11.12.2026 10:00", "Team", datetime(2026, 12, 11, 9, 0, tzinfo=UTC), 60),
    ("/event Call 3pm tomorrow", "Call", datetime(2026, 12, 1, 14, 0, tzinfo=UTC), 60),
    ("/event Standup today 9:00-9:15", "Standup", datetime(2026, 11, 30, 8, 0, tzinfo=UTC), 15),
    ("/termin Kino morgen 20:00 bis 22:30", "Kino", datetime(2026, 12, 1, 19, 0, tzinfo=UTC), 150),
])
async def test_event_phrases_with_dates_times_and_ranges(person, brain, line: str, title: str, start: datetime,
                                                         minutes: int) -> None:
    alice = person()
    await alice.send(line)
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert (event.title, event.start_time) == (title, start)
    assert (event.end_time - event.start_time).total_seconds() == minutes * 60


async def test_todays_event_shows_in_today(person) -> None:
    alice = person()
    await alice.send("/event Standup 17:30 15m")
    assert "Calendar: 5:30\u202fPM Standup" in await alice.send("/today")


async def test_meal_and_place_show_in_today(person) -> None:
    alice = person()
    await alice.send("/meal lunch Pasta 650 kcal")
    await alice.send("/place Café Luna")
    assert "2 visits" in await alice.send("/place Café Luna")
    today = await alice.send("/today")
    assert "Meals: 1 · 650 of 2,000 kcal" in today
    assert "Places today: Café Luna" in today


async def test_undo_steps_back_through_own_entries(person) -> None:
    alice = person()
    await alice.send("/water 250")
    await alice.send("lunch: soup 300 kcal")
    assert "soup" in await alice.send("/undo")
    assert "250 ml" in await alice.send("/undo")
    assert "nothing" in await alice.send("/undo")
    today = await alice.send("/today")
    assert "Water: 0 ml" in today and "Meals: 0" in today


async def test_done_numbers_stay_those_of_the_list_shown_until_tomorrow(person, clock) -> None:
    alice = person()
    for title in ("Alpha", "Beta", "Gamma", "Delta", "Epsilon"):
        await alice.send(f"/task {title}")
    assert "3. Gamma" in await alice.send("/tasks")
    assert "Gamma" in await alice.send("/done 3")
    assert "Delta" in await alice.send("/done 4")  # the fourth of the list read, not the fifth
    listing = await alice.send("/tasks")
    assert "2. Beta" in listing and "5. Epsilon" in listing and "Gamma" not in listing
    assert set(alice.buttons()) == {"✓ 1", "✓ 2", "✓ 5"}
    assert "Epsilon" in await alice.press(alice.buttons()["✓ 5"])
    clock.advance(timedelta(days=1))
    assert "1. Alpha\n2. Beta" in await alice.send("/tasks")  # the next day the numbers close up


async def test_a_long_task_list_says_how_many_are_not_shown(person) -> None:
    alice = person()
    for n in range(17):
        await alice.send(f"/task Item {n:02d}")
    listing = await alice.send("/tasks")
    assert "15. Item 14" in listing and "Item 15" not in listing
    assert "… and 2 more." in listing


async def test_undo_reopens_a_completed_task(person) -> None:
    alice = person()
    await alice.send("/task Einkaufen")
    await alice.send("/done 1")
    await alice.send("/undo")
    assert "1. Einkaufen" in await alice.send("/tasks")


async def test_one_persons_lists_never_show_anothers(person) -> None:
    alice, bob = person(), person()
    await alice.send("/task Alice secret")
    await alice.send("/place Alice home")
    await alice.send("/meal dinner Alice pizza 900 kcal")
    assert "Alice" not in await bob.send("/tasks")
    assert "Alice" not in await bob.send("/place")
    bob_today = await bob.send("/today")
    assert "Alice" not in bob_today and "900" not in bob_today
    assert "no task" in (await bob.send("/done Alice")).lower()


@pytest.mark.parametrize("line, expected", [
    ("/task", "Usage: /task"),
    ("/done 99", "no task number 99"),
    ("/event Nothing", "When is it?"),
    ("/event 14:00", "What is the event called?"),
    ("/event Party Friday 25:00", "couldn't read the time \"25:00\""),
    ("/event Meeting tomorrow 14:60", "couldn't read the time"),
    ("/event Dentist 2026-02-30 14:00", "couldn't read the date \"2026-02-30\""),
    ("/task Meeting prep 31.02.", "couldn't read the date \"31.02.\""),
    ("/meal", "Usage: /meal"),
    ("/meal Pasta 99999 kcal", "at most"),
    ("/place " + "x" * 150, "too long"),
])
async def test_bad_input_on_logs_changes_nothing(person, db_state, line: str, expected: str) -> None:
    alice = person()
    await alice.send("/start")
    before = await db_state()
    assert expected in await alice.send(line)
    assert await db_state() == before
