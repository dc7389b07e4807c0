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


@pytest.mark.parametrize("line, language, said", [
    ("/event Team meeting friday 10:00-11:30", "en",
     "Added Team meeting at Fri, Dec 4, 10:00\u202fAM until 11:30\u202fAM."),
    ("/event Night shift tomorrow 22:00 to 6:00", "en",
     "Added Night shift tomorrow at 10:00\u202fPM until Wed, Dec 2, 6:00\u202fAM."),
    ("/event Yoga tomorrow 18:00 45m", "en", "Added Yoga tomorrow at 6:00\u202fPM until 6:45\u202fPM."),
    ("/event Dentist tomorrow 14:00", "en", "Added Dentist tomorrow at 2:00\u202fPM."),  # the usual hour: no end
    ("/termin Kino morgen 20:00 bis 22:30", "de", "Kino morgen um 20:00 bis 22:30 eingetragen."),
])
async def test_an_event_with_an_end_of_its_own_says_it_back(person, line: str, language: str, said: str) -> None:
    assert await person(language=language).send(line) == said


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


@pytest.mark.parametrize("line, language, title, start, minutes", [
    ("/event D 5 Dec 15:00", "en", "D", datetime(2026, 12, 5, 14, 0, tzinfo=UTC), 60),
    ("/event E December 5 at 3pm", "en", "E", datetime(2026, 12, 5, 14, 0, tzinfo=UTC), 60),
    ("/event F 12/24 10:00", "en", "F", datetime(2026, 12, 24, 9, 0, tzinfo=UTC), 60),
    ("/termin X 5. Dezember 15:00", "de", "X", datetime(2026, 12, 5, 14, 0, tzinfo=UTC), 60),
    ("/termin Y 24. Dez 10 Uhr", "de", "Y", datetime(2026, 12, 24, 9, 0, tzinfo=UTC), 60),
    ("/event Workout tomorrow 18:00 1.5h", "en", "Workout", datetime(2026, 12, 1, 17, 0, tzinfo=UTC), 90),
    ("/termin Workout morgen 18:00 1,5h", "de", "Workout", datetime(2026, 12, 1, 17, 0, tzinfo=UTC), 90),
    ("/event Call tomorrow 10:00 for 1 hour", "en", "Call", datetime(2026, 12, 1, 9, 0, tzinfo=UTC), 60),
    ("/event Call tomorrow 10:00 20 mins", "en", "Call", datetime(2026, 12, 1, 9, 0, tzinfo=UTC), 20),
    ("/termin Treffen morgen 10 Uhr 1 Stunde", "de", "Treffen", datetime(2026, 12, 1, 9, 0, tzinfo=UTC), 60),
    ("/termin Treffen morgen 10 Uhr für 1 Std. 30 Min.", "de", "Treffen", datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
     90),
    ("/event I tomorrow noon", "en", "I", datetime(2026, 12, 1, 11, 0, tzinfo=UTC), 60),
    ("/termin Essen morgen mittags", "de", "Essen", datetime(2026, 12, 1, 11, 0, tzinfo=UTC), 60),
    ("/termin Essen heute halb acht", "de", "Essen", datetime(2026, 11, 30, 6, 30, tzinfo=UTC), 60),
    ("/termin Essen heute halb acht abends", "de", "Essen", datetime(2026, 11, 30, 18, 30, tzinfo=UTC), 60),
    ("/termin Essen heute Abend halb acht", "de", "Essen", datetime(2026, 11, 30, 18, 30, tzinfo=UTC), 60),
    ("/event Dinner tonight at 7", "en", "Dinner", datetime(2026, 11, 30, 18, 0, tzinfo=UTC), 60),
    ("/termin Kino morgen 20:00 bis Mitternacht", "de", "Kino", datetime(2026, 12, 1, 19, 0, tzinfo=UTC), 240),
    ("/termin Sitzung morgen 14:00 bis halb vier", "de", "Sitzung", datetime(2026, 12, 1, 13, 0, tzinfo=UTC), 90),
    # The night the clocks go back: 2:30 comes twice (the first is taken) and lengths are real time.
    ("/event Night 31.10.2027 2:30", "en", "Night", datetime(2027, 10, 31, 0, 30, tzinfo=UTC), 60),
    ("/event Night 31.10.2027 1:30 2h", "en", "Night", datetime(2027, 10, 30, 23, 30, tzinfo=UTC), 120),
    ("/termin Nacht 31.10.2027 1:00-4:00", "de", "Nacht", datetime(2027, 10, 30, 23, 0, tzinfo=UTC), 240),
    ("/event Flight 27.03.2027 23:30 4h", "en", "Flight", datetime(2027, 3, 27, 22, 30, tzinfo=UTC), 240),
])
async def test_event_phrases_with_month_names_durations_spoken_times_and_dst(
        person, brain, line: str, language: str, title: str, start: datetime, minutes: int) -> None:
    alice = person(language=language)
    assert title in await alice.send(line)
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert (event.title, event.start_time, event.is_all_day) == (title, start, False)
    assert (event.end_time - event.start_time).total_seconds() == minutes * 60


@pytest.mark.parametrize("line, language, title, start", [
    ("/termin Kino morgen Abend um 8", "de", "Kino", datetime(2026, 12, 1, 19, 0, tzinfo=UTC)),
    ("/termin Kino morgen Abend 8", "de", "Kino", datetime(2026, 12, 1, 19, 0, tzinfo=UTC)),
    ("/termin Yoga Freitagabend um 7", "de", "Yoga", datetime(2026, 12, 4, 18, 0, tzinfo=UTC)),
    ("/termin Kaffee morgen Nachmittag um 3", "de", "Kaffee", datetime(2026, 12, 1, 14, 0, tzinfo=UTC)),
    ("/termin Zug morgen früh um 7", "de", "Zug", datetime(2026, 12, 1, 6, 0, tzinfo=UTC)),
    ("/termin Arzt Freitag Vormittag 10", "de", "Arzt", datetime(2026, 12, 4, 9, 0, tzinfo=UTC)),
    ("/termin Kino heute 8 abends", "de", "Kino", datetime(2026, 11, 30, 19, 0, tzinfo=UTC)),
    ("/termin Party Samstag Nacht um 1", "de", "Party", datetime(2026, 12, 6, 0, 0, tzinfo=UTC)),
    ("/event Dinner tomorrow evening at 7", "en", "Dinner", datetime(2026, 12, 1, 18, 0, tzinfo=UTC)),
    ("/event Drinks tomorrow night 9", "en", "Drinks", datetime(2026, 12, 1, 20, 0, tzinfo=UTC)),
    ("/event Drinks tomorrow night 9pm", "en", "Drinks", datetime(2026, 12, 1, 20, 0, tzinfo=UTC)),
    ("/event Run tomorrow morning 7", "en", "Run", datetime(2026, 12, 1, 6, 0, tzinfo=UTC)),
    ("/event Tea friday afternoon at 4", "en", "Tea", datetime(2026, 12, 4, 15, 0, tzinfo=UTC)),
    ("/event Dinner this evening at 7", "en", "Dinner", datetime(2026, 11, 30, 18, 0, tzinfo=UTC)),
    ("/event Drinks 9 at night", "en", "Drinks", datetime(2026, 11, 30, 20, 0, tzinfo=UTC)),
    # The night after Friday: 1 o'clock is on Saturday.
    ("/event Party friday night at 1", "en", "Party", datetime(2026, 12, 5, 0, 0, tzinfo=UTC)),
    ("/event Call friday 15", "en", "Call", datetime(2026, 12, 4, 14, 0, tzinfo=UTC)),
    ("/event Night 31.10.2027 2:30", "en", "Night", datetime(2027, 10, 31, 0, 30, tzinfo=UTC)),
    # Midday alone is an hour: noon.
    ("/termin Essen morgen Mittag", "de", "Essen", datetime(2026, 12, 1, 11, 0, tzinfo=UTC)),
    ("/event Lunch tomorrow midday", "en", "Lunch", datetime(2026, 12, 1, 11, 0, tzinfo=UTC)),
])
async def test_a_part_of_the_day_says_which_half_an_hour_is_in_and_stays_out_of_the_title(
        person, brain, line: str, language: str, title: str, start: datetime) -> None:
    alice = person(language=language)
    await alice.send(line)
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert (event.title, event.start_time, event.is_all_day) == (title, start, False)


@pytest.mark.parametrize("line, language, reply", [
    ("/event Call friday 3", "en", "I couldn't read the time \"3\""),
    ("/termin Anruf Freitag 3", "de", "Die Uhrzeit „3“ kann ich nicht lesen"),
    ("/event Call friday 3 with Anna", "en", "I couldn't read the time \"3\""),
])
async def test_a_bare_small_hour_after_a_day_is_asked_about_not_put_in_the_title(
        person, db_state, line: str, language: str, reply: str) -> None:
    alice = person(language=language)
    await alice.send("/start")
    before = await db_state()
    assert reply in await alice.send(line)  # 3 in the morning or the afternoon, or no time at all?
    assert await db_state() == before


@pytest.mark.parametrize("line, language, title, first, after_last, reply", [
    ("/event Holiday 24.12.", "en", "Holiday", 24, 25, "Added Holiday on Thu, Dec 24"),
    ("/termin Feiertag 24. Dezember", "de", "Feiertag", 24, 25, "Feiertag am Do., 24. Dez. eingetragen"),
    ("/event Vacation 24.12.-27.12.", "en", "Vacation", 24, 28, "Added Vacation from Thu, Dec 24 to Sun, Dec 27"),
    ("/event Vacation from Dec 24 to Dec 27", "en", "Vacation", 24, 28, "from Thu, Dec 24 to Sun, Dec 27"),
    ("/termin Urlaub vom 24.12. bis 27.12.", "de", "Urlaub", 24, 28, "Urlaub von Do., 24. Dez. bis So., 27. Dez."),
])
async def test_an_all_day_event_covers_exactly_its_days(person, brain, line: str, language: str, title: str,
                                                        first: int, after_last: int, reply: str) -> None:
    alice = person(language=language)
    assert reply in await alice.send(line)
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert (event.title, event.is_all_day) == (title, True)
    # Berlin midnight to Berlin midnight: 23:00 UTC the evening before.
    assert (event.start_time, event.end_time) == (datetime(2026, 12, first - 1, 23, 0, tzinfo=UTC),
                                                  datetime(2026, 12, after_last - 1, 23, 0, tzinfo=UTC))


async def test_an_all_day_event_yesterday_is_not_on_today(person) -> None:
    alice = person()
    assert "Added Vacation day on Sun, Nov 29" in await alice.send("/event Vacation day yesterday")
    today = await alice.send("/today")
    assert "Vacation day" not in today and "Calendar: nothing today" in today


async def test_event_without_arguments_lists_what_is_coming_up_first(person) -> None:
    alice = person()
    for line in ("/event Holiday 24.12.", "/event Vacation 28.12.-30.12.", "/event A tomorrow 9:00",
                 "/event B tomorrow 10:00", "/event C 2.12. 9:00", "/event D 3.12. 9:00", "/event E 4.12. 9:00"):
        assert "Added" in await alice.send(line)
    lines = (await alice.send("/event")).splitlines()
    assert lines[0] == "Coming up:"
    assert [line.rsplit(" ", 1)[1] for line in lines[1:6]] == ["A", "B", "C", "D", "E"]
    assert lines[6] == "… and 2 more."
    assert lines[7] == "To add one, write “appointment: dentist tomorrow 2pm” or /event Dentist tomorrow 14:00 45m."
    everything = await alice.send("/event")
    assert "12:00 AM" not in everything


async def test_event_list_shows_all_day_events_as_all_day_in_english_and_german(person) -> None:
    alice, bea = person(), person(language="de")
    await alice.send("/event Holiday 24.12.")
    await alice.send("/event Vacation 28.12.-30.12.")
    listing = await alice.send("/event")
    assert "Dec 24, all day Holiday" in listing and "Dec 28 – Wed, Dec 30, all day Vacation" in listing
    assert "12:00 AM" not in listing
    await bea.send("/termin Feiertag 24.12.")
    listing = await bea.send("/termin")
    assert listing.startswith("Demnächst:") and "24. Dez., ganztägig Feiertag" in listing
    assert "00:00" not in listing


async def test_event_without_arguments_and_nothing_coming_up_says_so_and_how_to_add_one(person) -> None:
    reply = await person().send("/event")
    assert reply.splitlines()[0] == "Nothing coming up in your calendar."
    assert reply.splitlines()[-1].startswith("To add one, write “appointment: dentist tomorrow 2pm”")
    assert "Usage" not in reply and "<title>" not in reply


@pytest.mark.parametrize("line, language, title, due", [
    ("/task Steuer bis 5. Dezember", "de", "Steuer", "2026-12-05"),
    ("/task Taxes by Dec 5", "en", "Taxes", "2026-12-05"),
    ("/task Gifts until 12/20", "en", "Gifts", "2026-12-20"),
])
async def test_task_with_a_month_name_deadline_gets_its_due_date(person, brain, line: str, language: str,
                                                                 title: str, due: str) -> None:
    await person(language=language).send(line)
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert (task.title, task.due_date.isoformat()) == (title, due)


@pytest.mark.parametrize("line, language, title, due, reply", [
    ("/task Report next monday 9am", "en", "Report", "2026-12-07",
     "Added the task Report, due Mon, Dec 7 at 9:00\u202fAM."),
    ("/task N until tomorrow 18:00", "en", "N", "2026-12-01", "Added the task N, due tomorrow at 6:00\u202fPM."),
    ("/task Call Anna 9am tomorrow", "en", "Call Anna", "2026-12-01", "Added the task Call Anna, due"),
    ("/task Call Anna tomorrow evening at 7", "en", "Call Anna", "2026-12-01", "Added the task Call Anna, due"),
    ("/aufgabe Zahnarzt anrufen morgen 14 Uhr", "de", "Zahnarzt anrufen", "2026-12-01",
     "Aufgabe Zahnarzt anrufen angelegt (fällig morgen um 14:00)."),
    ("/aufgabe Oma anrufen morgen Abend um 8", "de", "Oma anrufen", "2026-12-01", "Aufgabe Oma anrufen angelegt"),
    ("/aufgabe Oma anrufen Freitag 18", "de", "Oma anrufen", "2026-12-04", "Aufgabe Oma anrufen angelegt"),
    # Not a time of the day: a version number, and a clock time that is not next to the day.
    ("/task Release 1.10 by friday", "en", "Release 1.10", "2026-12-04", "Added the task Release 1.10, due"),
    ("/task Book the 9am train by friday", "en", "Book the 9am train", "2026-12-04", "Book the 9am train"),
])
async def test_a_time_said_with_a_tasks_due_day_is_no_part_of_its_title(
        person, brain, line: str, language: str, title: str, due: str, reply: str) -> None:
    assert reply in await person(language=language).send(line)
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert (task.title, task.due_date.isoformat()) == (title, due)  # the time is the task's due time, not its title


@pytest.mark.parametrize("line, language, title, due, said", [
    # The clock stands at 8:30 in Berlin: a time still ahead is today's, one gone tomorrow's (and that is said).
    ("/task Report at 3pm", "en", "Report", "2026-11-30", "Added the task Report, due today at 3:00\u202fPM."),
    ("/task Report 7:00", "en", "Report", "2026-12-01",
     "Added the task Report, due tomorrow at 7:00\u202fAM.\n7:00\u202fAM has passed today, so it is due tomorrow."),
    ("/task Call Anna at 3", "en", "Call Anna", "2026-11-30", "due today at 3:00\u202fPM"),  # 3 am is gone
    ("/task 3pm call Anna", "en", "call Anna", "2026-11-30", "due today at 3:00\u202fPM"),
    ("/aufgabe Bericht um 15 Uhr", "de", "Bericht", "2026-11-30",
     "Aufgabe Bericht angelegt (fällig heute um 15:00)."),
    ("/aufgabe Bericht 8:00", "de", "Bericht", "2026-12-01", "08:00 ist heute schon vorbei, also ist sie morgen"),
])
async def test_a_time_said_without_a_day_makes_a_task_due_on_the_next_such_time_and_says_so(
        person, brain, line: str, language: str, title: str, due: str, said: str) -> None:
    assert said in await person(language=language).send(line)
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert (task.title, task.due_date.isoformat()) == (title, due)
    assert task.due_time is not None


@pytest.mark.parametrize("line, language, title, due, said", [
    # Written as a to-do rather than with /task: the same title, due day and note (8:30 in Berlin).
    ("todo: Report at 3pm", "en", "Report", "2026-11-30", "Added the task Report, due today at 3:00\u202fPM."),
    ("todo: report 7:00", "en", "Report", "2026-12-01", "7:00\u202fAM has passed today, so it is due tomorrow."),
    ("Aufgabe: Bericht um 15 Uhr", "de", "Bericht", "2026-11-30",
     "Aufgabe Bericht angelegt (fällig heute um 15:00)."),
])
async def test_a_to_do_in_free_text_with_a_time_and_no_day_is_due_on_the_next_such_time_and_says_so(
        person, brain, line: str, language: str, title: str, due: str, said: str) -> None:
    assert said in await person(language=language).send(line)
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert (task.title, task.due_date.isoformat()) == (title, due)


@pytest.mark.parametrize("line, title", [
    ("/task Book the 9am train", "Book the 9am train"),  # a time inside the title stays, as with a day
    ("/task Release 1.10", "Release 1.10"),  # a version more often than 1:10
])
async def test_a_time_inside_a_tasks_title_stays_and_gives_no_due_day(person, brain, line: str, title: str) -> None:
    assert await person().send(line) == f"Added the task {title}."
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert (task.title, task.due_date) == (title, None)


@pytest.mark.parametrize("line, language, title, due", [
    ("/task A this tuesday", "en", "A", "2026-12-01"),
    ("/aufgabe C diesen Dienstag", "de", "C", "2026-12-01"),
    ("/task B tuesday", "en", "B", "2026-12-08"),  # a plain weekday on that day is next week's
    ("/task O 24.11.", "en", "O", "2026-11-24"),
    ("/task P 23.11.", "en", "P", "2026-11-23"),  # a week ago too, not next year
    ("/aufgabe P 23. November", "de", "P", "2026-11-23"),
    ("/task R 3.1.", "en", "R", "2027-01-03"),
    ("/task D friday next week", "en", "D", "2026-12-11"),
    ("/aufgabe H Freitag nächste Woche", "de", "H", "2026-12-11"),
    ("/aufgabe X nächste Woche", "de", "X", "2026-12-07"),
])
async def test_a_tasks_day_said_on_tuesday_the_first_of_december(person, brain, clock, line: str, language: str,
                                                                 title: str, due: str) -> None:
    clock.set(datetime(2026, 12, 1, 19, 0, tzinfo=UTC))  # Tuesday evening in Berlin
    await person(language=language).send(line)
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert (task.title, task.due_date.isoformat()) == (title, due)


async def test_a_time_the_clocks_skip_is_asked_about_in_german_too(person, db_state) -> None:
    bea = person(language="de")
    await bea.send("/start")
    before = await db_state()
    reply = await bea.send("/termin Flug 28.03.2027 2:30")
    assert "02:30" in reply and "28. März 2027" in reply and "vorgestellt" in reply
    assert await db_state() == before


async def test_an_event_today_at_a_time_already_over_is_kept_and_said_to_be_past(person, brain, clock) -> None:
    clock.advance(timedelta(hours=6, minutes=30))  # 15:00 in Berlin
    reply = await person().send("/event Dentist today 9:00")
    assert reply == ("Added Dentist at Mon, Nov 30, 9:00\u202fAM. That time has already passed: "
                     "it is kept as a past event.")
    reply = await person(language="de").send("/termin Zahnarzt heute 9:00")
    assert "schon vorbei" in reply
    async with brain.transactions.read() as s:
        starts = set((await s.scalars(select(CalendarEvent.start_time))).all())
    assert starts == {datetime(2026, 11, 30, 8, 0, tzinfo=UTC)}  # logged where it was said, today


@pytest.mark.parametrize("line, language, said", [
    ("/event Dentist 9:00", "en", "9:00\u202fAM has already passed today, so it is tomorrow. "
                                  "For today: /event Dentist today 9:00\u202fAM"),
    ("/termin Zahnarzt 9:00", "de", "09:00 ist heute schon vorbei, darum morgen. "
                                    "Für heute: /termin Zahnarzt heute 09:00"),
    ("/event Dentist 9am 30m", "en", "has already passed today, so it is tomorrow"),
])
async def test_a_time_without_a_day_already_over_today_is_the_next_one(
        person, brain, clock, line: str, language: str, said: str) -> None:
    clock.advance(timedelta(hours=6, minutes=30))  # 15:00 in Berlin
    reply = await person(language=language).send(line)
    assert said in reply and ("tomorrow at 9:00" in reply or "morgen um 09:00" in reply)
    assert "passed:" not in reply and "vergangener" not in reply
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert event.start_time == datetime(2026, 12, 1, 8, 0, tzinfo=UTC)  # 9:00 tomorrow


async def test_a_time_without_a_day_going_on_now_stays_today(person, brain) -> None:
    reply = await person().send("/event Workshop 8:00 2h")  # at 8:30
    assert reply == "Added Workshop today at 8:00\u202fAM until 10:00\u202fAM."
    async with brain.transactions.read() as s:
        event = (await s.scalars(select(CalendarEvent))).one()
    assert event.start_time == datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


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


async def test_done_takes_the_number_of_the_list_shown_when_a_task_due_earlier_was_added_since(person) -> None:
    alice = person()  # Monday
    await alice.send("/task Report by Friday")
    await alice.send("/task Laundry")
    assert "1. Report" in await alice.send("/tasks")
    await alice.send("/task Taxes tomorrow")  # due before the report: number 1 in a list shown now
    assert "Report" in await alice.send("/done 1")  # number 1 of the list shown
    assert "Laundry" in await alice.send("/task delete 2")
    assert "1. Taxes" in await alice.send("/tasks")  # a new list, new numbers
    assert "Taxes" in await alice.send("/done 1")


async def test_without_a_list_shown_done_takes_the_number_of_the_current_order(person) -> None:
    alice = person()
    await alice.send("/task Laundry")
    await alice.send("/task Taxes tomorrow")
    assert "Taxes" in await alice.send("/done 1")


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
    ("/event Flight 28.03.2027 2:30", "2:30\u202fAM does not exist on Sun, Mar 28, 2027"),
    ("/event Flight 28.03.2027 1:00-2:30", "2:30\u202fAM does not exist"),
    ("/event G 3/4 10:00", "couldn't read the date \"3/4\""),
    ("/event Party 31 November 20:00", "couldn't read the date \"31 November\""),
    ("/termin Essen morgen halb 13", "couldn't read the time \"halb 13\""),
    ("/event Trip 24.12.-27.12. 10:00", "is an all-day event: leave out the time"),
    ("/event Trip 27.12.-24.12.", "must end after it starts"),
    ("/event Trip 1.12.-31.12.", "at most 14 days"),
    ("/meal", "Log one: /meal lunch Pasta 650 kcal"),
    ("/meal Pasta 99999 kcal", "between 0 and 5,000 kcal"),
    ("/place " + "x" * 150, "too long"),
])
async def test_bad_input_on_logs_changes_nothing(person, db_state, line: str, expected: str) -> None:
    alice = person()
    await alice.send("/start")
    before = await db_state()
    assert expected in await alice.send(line)
    assert await db_state() == before


async def test_event_numbers_are_the_ones_the_list_shows_and_a_finished_event_has_none(person) -> None:
    alice = person()  # the clock stands at 8:30 in Berlin
    await alice.send("/event Standup today 7:00")
    await alice.send("/event Dentist tomorrow 10:00")
    listing = await alice.send("/event")
    assert "1. Tue, Dec 1, 10:00\u202fAM Dentist" in listing and "Standup" not in listing
    assert "/event delete 2" not in listing  # one event: there is no second one
    assert "There is no event number 2" in await alice.send("/event delete 2")
    assert await alice.send("/event delete 1") == "Deleted Dentist."
    assert await alice.send("/event delete standup") == "Deleted Standup."  # not deleted in the other's place


async def test_german_event_numbers_are_the_ones_the_list_shows(person) -> None:
    bob = person(language="de")
    await bob.send("/lang de")
    await bob.send("/termin Standup heute 7:00")
    await bob.send("/termin Zahnarzt morgen 10:00")
    await bob.send("/termin Urlaub 24.12.")
    listing = await bob.send("/termin")
    assert "1. Di., 1. Dez. um 10:00 Zahnarzt" in listing and "2. Do., 24. Dez., ganztägig Urlaub" in listing
    assert "Standup" not in listing and "/termin löschen 2 entfernt den zweiten." in listing
    assert await bob.send("/termin löschen 2") == "Urlaub gelöscht."


async def test_place_delete_without_a_name_asks_which_place_and_creates_none(person, db_state) -> None:
    alice = person()
    await alice.send("/place Gym")
    before = await db_state()
    assert await alice.send("/place delete") == "Which place? Give its name, number or id."
    assert await db_state() == before
    bob = person(language="de")
    await bob.send("/lang de")
    before = await db_state()
    assert await bob.send("/ort löschen") == "Welcher Ort? Nenn mir seinen Namen, seine Nummer oder ID."
    assert await db_state() == before


async def test_events_places_and_meals_can_be_deleted_without_a_model(person) -> None:
    alice = person()
    await alice.send("/event Dentist tomorrow 14:00")
    await alice.send("/event Holiday 24.12.")
    listing = await alice.send("/event")
    assert "1. Tue, Dec 1, 2:00\u202fPM Dentist" in listing and "2. Thu, Dec 24, all day Holiday" in listing
    assert await alice.send("/event delete 2") == "Deleted Holiday."
    assert "Holiday" not in await alice.send("/event")
    assert "Which event?" in await alice.send("/event delete")
    assert "There is no event number 7" in await alice.send("/event delete 7")
    await alice.send("/place Gym")
    assert "Deleted the place Gym" in await alice.send("/place delete gym")
    await alice.send("/meal lunch Pasta 600 kcal")
    assert "Deleted the lunch: Pasta" in await alice.send("/meal delete")
    assert "Meals: 0" in await alice.send("/today")
    bob = person(language="de")
    await bob.send("/termin Zahnarzt morgen 14:00")
    assert "Zahnarzt" in await bob.send("/termin löschen Zahnarzt")
    assert "In deinem Kalender steht nichts an." in await bob.send("/termin")


async def test_a_meal_without_calories_is_not_answered_with_a_day_of_zero_kcal(person) -> None:
    # "Today: 0 of 2,000 kcal" after a meal without calories would read as if the meal had none.
    alice = person()
    await alice.send("/lang en")  # chosen: a German sentence is answered in English
    said = await alice.send("Ich habe heute Mittag Pizza gegessen")
    assert said.startswith("Logged lunch: Pizza.") and "kcal" not in said
    assert "Meals: 1 · no calories given" in await alice.send("/today")  # not "0 of 2,000 kcal" either
    # With calories the day's total comes, and it stays for a meal without them once the day has some.
    assert "Today: 450 of 2,000 kcal" in await alice.send("/meal dinner Salad 450 kcal")
    assert "Today: 450 of 2,000 kcal" in await alice.send("/meal snack Apple")
    assert "Meals: 3 · 450 of 2,000 kcal" in await alice.send("/today")
    # A food named alone is eaten now, as a drink named alone is drunk (8:30: breakfast), and can be taken back.
    assert (await alice.send("a banana")).startswith("Logged breakfast: banana.") and "Undo" in alice.buttons()
    assert "Meals: 4" in await alice.send("/today")


async def test_meal_alone_shows_todays_meals_and_how_to_log_one(person, db_state) -> None:
    alice = person()
    before = await db_state()
    assert (await alice.send("/meal")).splitlines() == [
        "No meal logged today yet.",
        "Log one: /meal lunch Pasta 650 kcal, or write “pizza for dinner”. /meal delete removes the last one."]
    assert await db_state() == before
    await alice.send("pizza for dinner")
    assert (await alice.send("/meal")).splitlines()[:2] == ["Eaten today:", "• 8:30\u202fAM Dinner: pizza"]


async def test_a_drink_or_meal_of_an_earlier_day_is_said_to_be_remembered_not_logged(person, db_state) -> None:
    alice = person()
    assert (await alice.send("had 2 beers last night")).startswith(  # (no memory here: nothing said of it)
        "My logs keep today's drinks and meals, so I can't log that for an earlier day.")
    before = await db_state()
    assert "earlier day" in await alice.send("yesterday I had pizza for dinner")
    assert await db_state() == before
