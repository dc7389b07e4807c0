"""Reminders the person asks for, from the message to the reminder arriving: /remind and free text in English and
German without a model, the list with its delete buttons, the scheduler's minute sending each once at its local time
with Done and Snooze buttons, quiet hours and a pause holding it (and saying so), a restart in between, a task's
reminder, two runs at once and lost bookkeeping (each still once), and bad input changing nothing."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, update

from adapters.console.chat import ConsoleChat, ConsoleConfig
from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.actions.models import ActionToken
from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import ai
from brain.modules.calendar.models import CalendarEvent
from brain.modules.todo.models import Task
from brain.outbox.models import OutboxMessage
from brain.reminders.models import DONE, SENT, WAITING, Reminder
from brain.reminders.sending import REMINDER_KIND, send_due_reminders

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(day: int, hour: int, minute: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


async def sent(brain: Brain) -> list[OutboxMessage]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == REMINDER_KIND)
                                           .order_by(OutboxMessage.id))).all())


async def reminders(brain: Brain) -> list[Reminder]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(Reminder).order_by(Reminder.created_at))).all())


async def tick(brain: Brain, clock: FixedClock, at: datetime) -> None:
    """One run of the scheduler's reminder job at `at` (a fresh job object: the state is all in the database)."""
    clock.set(at)
    await ScheduledJobs(brain, Settings()).reminders()


def buttons_of(message: OutboxMessage) -> dict[str, str]:
    return {b["label"]: b["token"] for row in message.buttons for b in row}


async def test_remind_command_sets_one_that_arrives_once_at_its_local_time_with_buttons(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    reply = await alice.send("/remind 15:00 call mom")
    assert "Reminder set for today at 3:00\u202fPM: Call mom" in reply
    [stored] = await reminders(brain)
    assert stored.occurrence_at == datetime(2026, 11, 30, 14, 0, tzinfo=UTC) and stored.timezone == "Europe/Berlin"
    await tick(brain, clock, berlin(30, 14, 59))
    assert await sent(brain) == []
    for minute in (0, 1, 2):
        await tick(brain, clock, berlin(30, 15, minute))
    [message] = await sent(brain)
    assert message.text == "⏰ Call mom"
    assert set(buttons_of(message)) == {"✓ Done", "Snooze 15 min", "1 h", "Tomorrow"}
    assert (await reminders(brain))[0].status == SENT


async def test_done_ends_it_and_a_second_press_is_refused(person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/remind 15:00 call mom")
    await tick(brain, clock, berlin(30, 15))
    [message] = await sent(brain)
    assert "Done: Call mom." in await alice.press(buttons_of(message)["✓ Done"])
    assert (await reminders(brain))[0].status == DONE
    assert "already answered" in await alice.press(buttons_of(message)["1 h"])


async def test_snoozes_bring_it_back_once_each_15_minutes_later_and_tomorrow_at_its_time(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/remind 15:00 call mom")
    await tick(brain, clock, berlin(30, 15))
    first = (await sent(brain))[0]
    clock.set(berlin(30, 15, 2))
    assert "again at Mon, Nov 30, 3:17\u202fPM" in await alice.press(buttons_of(first)["Snooze 15 min"])
    await tick(brain, clock, berlin(30, 15, 16))
    assert len(await sent(brain)) == 1
    await tick(brain, clock, berlin(30, 15, 17))
    await tick(brain, clock, berlin(30, 15, 18))
    second = (await sent(brain))[1]
    assert len(await sent(brain)) == 2 and second.text == "⏰ Call mom"
    assert "already answered" in await alice.press(buttons_of(first)["Tomorrow"])  # the earlier delivery
    assert "Tue, Dec 1, 3:00\u202fPM" in await alice.press(buttons_of(second)["Tomorrow"])
    await tick(brain, clock, berlin(1, 14, 59, month=12))
    await tick(brain, clock, berlin(1, 15, 0, month=12))
    assert len(await sent(brain)) == 3


async def test_free_text_reminders_in_english_and_german_without_a_model(person, brain: Brain) -> None:
    alice, bert = person(), person(language="de")
    assert "Reminder set for today at 3:00\u202fPM: Call mom" in await alice.send(
        "remind me to call mom at 3pm")
    assert "Zahnarzt" in await bert.send("erinnere mich morgen um 9 an den Zahnarzt")
    assert "Tee" in await bert.send("in 20 Minuten: Tee")
    assert "Tea" in await alice.send("in 20 minutes: tea")
    stored = {r.text: r.occurrence_at for r in await reminders(brain)}
    assert stored == {
        "Call mom": datetime(2026, 11, 30, 14, 0, tzinfo=UTC),
        "Zahnarzt": datetime(2026, 12, 1, 8, 0, tzinfo=UTC),  # 9:00 in Berlin
        "Tee": datetime(2026, 11, 30, 7, 50, tzinfo=UTC),  # 8:30 + 20 min
        "Tea": datetime(2026, 11, 30, 7, 50, tzinfo=UTC),
    }


async def test_a_repeating_reminder_or_a_polite_request_with_when_said_first(person, brain: Brain) -> None:
    alice, bert = person(), person(language="de")
    answer = await bert.send("jeden Tag um 8 erinnere mich an meine Tabletten")
    assert answer == "Erinnerung täglich, ab morgen um 08:00: Tabletten"
    assert "Zahnarzt" in await bert.send("Kannst du mich morgen um 10 an den Zahnarzt erinnern?")
    assert "Call Anna" in await alice.send("tomorrow at 9, remind me to call Anna")
    stored = {r.text: (r.occurrence_at, r.rrule) for r in await reminders(brain)}
    assert stored == {
        "Tabletten": (datetime(2026, 12, 1, 7, 0, tzinfo=UTC), "FREQ=DAILY"),  # 8:00 has passed today
        "Zahnarzt": (datetime(2026, 12, 1, 9, 0, tzinfo=UTC), None),
        "Call Anna": (datetime(2026, 12, 1, 8, 0, tzinfo=UTC), None),
    }


async def test_german_command_words_for_remind_set_a_reminder_not_a_recall(person, brain: Brain) -> None:
    bert = person(language="de")
    for word, what in (("erinnere", "Tee"), ("erinnern", "Mama anrufen"), ("erinnerung", "Zahnarzt")):
        assert f"15:00: {what}" in await bert.send(f"/{word} 15:00 {what}")
    assert sorted(r.text for r in await reminders(brain)) == ["Mama anrufen", "Tee", "Zahnarzt"]


async def test_a_dated_note_without_a_model_asks_calendar_reminder_or_task_and_takes_one_answer(
        person, brain: Brain) -> None:
    bert, alice = person(language="de"), person()
    asked = await bert.send("Zahnarzt morgen um 14 Uhr")
    assert asked == ("Di., 1. Dez. um 14:00: Zahnarzt. Soll ich es in deinen Kalender eintragen, dich dann erinnern "
                     "oder eine Aufgabe daraus machen?")
    choice = bert.buttons()
    assert list(choice) == ["📅 Kalender", "⏰ Erinnerung", "✓ Aufgabe"]
    assert "Zahnarzt morgen um 14:00 eingetragen" in await bert.press(choice["📅 Kalender"])
    assert "schon benutzt" in await bert.press(choice["⏰ Erinnerung"])  # one answer per question
    assert "schon benutzt" in await bert.press(choice["✓ Aufgabe"])
    assert "Tue, Dec 1, 9:00\u202fAM: Call mom." in await alice.send("call mom tomorrow at 9")
    assert "Added the task Call mom" in await alice.press(alice.buttons()["✓ Task"])
    asked_again = await alice.send("Mama morgen um 9 anrufen")
    await alice.press(alice.buttons()["⏰ Reminder"])
    async with brain.transactions.read() as session:
        events = (await session.scalars(select(CalendarEvent))).all()
        tasks = (await session.scalars(select(Task))).all()
    assert [(e.title, e.start_time.astimezone(BERLIN), e.end_time.astimezone(BERLIN)) for e in events] == [
        ("Zahnarzt", berlin(1, 14, month=12), berlin(1, 15, month=12))]
    assert [(t.title, str(t.due_date)) for t in tasks] == [("Call mom", "2026-12-01")]
    assert "Mama anrufen" in asked_again
    assert {(r.text, r.occurrence_at) for r in await reminders(brain)} == {("Mama anrufen", berlin(1, 9, month=12))}
    assert "didn't understand" in await alice.send("Pizza is great")  # no day, no time: nothing to ask
    assert "didn't understand" in await alice.send("the weather is strange today")  # a day alone: no appointment
    # A day without a time: no 9:00 guessed; the day in the calendar or a task for it (below).
    assert "Should I put it in your calendar for that day" in await alice.send("Konzert nächsten Freitag")
    assert "Arzt" in await alice.send("Arzt in 2 Stunden")  # a span from now says when
    assert "didn't understand" in await alice.send("I was at the doctor yesterday at 2pm")  # past: no plan
    assert "didn't understand" in await alice.send(  # a long text that mentions a time is no note
        "so tired today, and tomorrow at 9 it is work again and then the kids and the shopping and everything")


async def test_a_reminder_asked_for_without_a_time_asks_when_and_takes_a_press_or_a_typed_time(
        person, brain: Brain, clock: FixedClock) -> None:
    alice, bert = person(), person(language="de")
    asked = await alice.send("remind me to call mom")  # Monday 8:30 in Berlin
    assert asked == ("When should I remind you of «Call mom»? Press one, or write a time, e.g. \"at 5 pm\" or "
                     "\"tomorrow at 9\".")
    choice = alice.buttons()
    assert list(choice) == ["In an hour", "This evening, 7:00\u202fPM", "Tomorrow, 9:00\u202fAM"]
    assert (await alice.send("at 5pm")).startswith("Reminder set for today at 5:00\u202fPM: Call mom")
    assert "already used" in await alice.press(choice["In an hour"])  # one answer, typed or pressed
    assert "Reminder set" not in await alice.send("at 6pm")  # no question waits: nothing is set
    await bert.send("Erinnere mich nachher an den Müll")  # "nachher" says no time: asked, not part of the words
    assert "Erinnerung für heute um 19:00: Müll" in await bert.press(bert.buttons()["Heute Abend, 19:00"])
    assert "«Water the plants»" in await alice.send("remind me later to water the plants")
    # A reminder moved in words is moved, not "I found no event matching ..." or a new plan.
    assert (await alice.send("move the mom reminder to 8pm")) == (
        "Moved the reminder to today at 8:00\u202fPM: Call mom")
    assert (await bert.send("verschiebe die Erinnerung Müll auf 20 Uhr")).startswith(
        "Erinnerung verschoben auf heute um 20:00: Müll")
    assert (await alice.send("remind me later")).startswith("What should I remind you of, and when?")
    await alice.send("remind me about the dentist")
    clock.advance(timedelta(minutes=11))  # a question scrolled out of mind is not answered by a time
    assert "Reminder set" not in await alice.send("tomorrow at 9")
    assert {(r.text, r.occurrence_at) for r in await reminders(brain)} == {
        ("Call mom", berlin(30, 20)), ("Müll", berlin(30, 20))}


async def test_a_note_for_a_coming_day_without_a_time_asks_calendar_day_or_task(person, brain: Brain) -> None:
    alice, bert = person(), person(language="de")
    asked = await alice.send("dentist on Friday")  # Monday, November 30
    assert asked == "Fri, Dec 4: Dentist. Should I put it in your calendar for that day, or make it a task?"
    choice = alice.buttons()
    assert list(choice) == ["📅 Calendar", "✓ Task"]  # no time, so no reminder
    assert "Added Dentist on Fri, Dec 4 (all day)" in await alice.press(choice["📅 Calendar"])
    assert "already used" in await alice.press(choice["✓ Task"])
    assert "Cinema with Anna" in await alice.send("I'm going to the cinema with Anna on Saturday")
    assert "Added the task Cinema with Anna, due Sat, Dec 5" in await alice.send("task")  # typed instead
    assert await bert.send("Annas Geburtstag ist am 12. Mai") == (
        "Mi., 12. Mai 2027: Annas Geburtstag. Soll ich es für diesen Tag in deinen Kalender eintragen oder eine "
        "Aufgabe daraus machen?")
    for said in ("see you on Monday", "Friday was great", "I hate Mondays", "no meetings on Friday",
                 "the weather is strange tomorrow"):
        assert "calendar for that day" not in await alice.send(said), said
    async with brain.transactions.read() as session:
        events = (await session.scalars(select(CalendarEvent))).all()
        tasks = (await session.scalars(select(Task))).all()
    assert [(e.title, e.is_all_day, e.start_time.astimezone(BERLIN), e.end_time.astimezone(BERLIN))
            for e in events] == [("Dentist", True, berlin(4, 0, month=12), berlin(5, 0, month=12))]
    assert [(t.title, str(t.due_date)) for t in tasks] == [("Cinema with Anna", "2026-12-05")]


async def test_the_offer_answered_by_typing_its_choice_is_taken_once_and_only_while_it_is_fresh(
        person, brain: Brain, clock: FixedClock) -> None:
    bert, alice = person(language="de"), person()
    await bert.send("Zahnarzt morgen um 14 Uhr")
    choice = bert.buttons()
    assert "Zahnarzt morgen um 14:00 eingetragen" in await bert.send("Kalender")
    assert "schon benutzt" in await bert.press(choice["⏰ Erinnerung"])  # one answer, typed or pressed
    assert "Zahnarzt" in await bert.send("Kalender")  # no offer waits: the word shows the calendar
    await alice.send("call mom tomorrow at 9")
    assert (await alice.send("as a reminder, please")).startswith("Reminder set for tomorrow at 9:00")
    await alice.send("water the plants tomorrow at 10")
    clock.advance(timedelta(minutes=31))  # an offer scrolled out of mind is not answered by a word
    assert "Added the task" not in await alice.send("task")
    async with brain.transactions.read() as session:
        events = (await session.scalars(select(CalendarEvent))).all()
        tasks = (await session.scalars(select(Task))).all()
    assert [e.title for e in events] == ["Zahnarzt"] and tasks == []
    assert [r.text for r in await reminders(brain)] == ["Call mom"]


async def test_a_reminder_some_time_before_the_appointment_just_made_or_named(person, brain: Brain) -> None:
    alice = person()
    assert "Before which appointment?" in await alice.send("remind me 10 minutes before")
    await alice.send("/event Dentist tomorrow 10:00")
    await alice.send("/event Call with the bank tomorrow 15:00")
    assert (await alice.send("also remind me 10 minutes before")).startswith(
        "Reminder set for tomorrow at 2:50\u202fPM: Call with the bank")  # the appointment made last
    assert (await alice.send("remind me an hour before the dentist")).startswith(
        "Reminder set for tomorrow at 9:00\u202fAM: Dentist")
    assert "too soon" in await alice.send("remind me 30 hours before the dentist")
    assert "found no event matching" in await alice.send("remind me 5 minutes before the concert")
    assert {(r.text, r.occurrence_at) for r in await reminders(brain)} == {
        ("Call with the bank", berlin(1, 14, 50, month=12)), ("Dentist", berlin(1, 9, month=12))}


async def test_every_evening_is_a_daily_reminder_in_the_evening(person, brain: Brain) -> None:
    # "jeden Abend um 10 ans Zähneputzen" was one reminder titled "Jeden Abend ans Zähneputzen" at 10:00 the next day.
    bert = person(language="de")
    assert (await bert.send("Erinnere mich jeden Abend um 10 ans Zähneputzen")).startswith(
        "Erinnerung täglich, ab heute um 22:00: Zähneputzen")
    assert {(r.text, r.occurrence_at, r.rrule) for r in await reminders(brain)} == {
        ("Zähneputzen", berlin(30, 22), "FREQ=DAILY")}


async def test_who_has_the_appointment_is_not_part_of_its_title(person) -> None:
    # "habe ich einen Termin beim Friseur" was offered as "Habe ich einen Termin beim Friseur".
    bert, alice = person(language="de"), person()
    assert (await bert.send("Morgen um 15 Uhr habe ich einen Termin beim Friseur")).startswith(
        "Di., 1. Dez. um 15:00: Termin beim Friseur. Soll ich")
    assert (await bert.send("habe morgen um 9 Yoga")).startswith("Di., 1. Dez. um 09:00: Yoga. Soll ich")
    assert (await alice.send("I have a meeting with Tom tomorrow at 3pm")).startswith(
        "Tue, Dec 1, 3:00\u202fPM: Meeting with Tom. Should I")
    assert (await alice.send("I've got a dentist appointment tomorrow at 10")).startswith(
        "Tue, Dec 1, 10:00\u202fAM: Dentist appointment. Should I")
    assert (await alice.send("Tomorrow I'm meeting Sarah for lunch at 12:30")).startswith(
        "Tue, Dec 1, 12:30\u202fPM: Meeting Sarah for lunch. Should I")


async def test_the_list_shows_them_soonest_first_with_a_delete_button_each(person, brain: Brain) -> None:
    alice = person()
    await alice.send("/remind tomorrow 9:00 dentist")
    await alice.send("/remind 15:00 call mom")
    listing = await alice.send("/remind")
    assert listing.splitlines()[1:3] == ["1. Mon, Nov 30, 3:00\u202fPM Call mom", "2. Tue, Dec 1, 9:00\u202fAM Dentist"]
    assert "Deleted the reminder Call mom." in await alice.press(alice.buttons()["✕ 1"])
    assert [r.text for r in await reminders(brain) if r.status == WAITING] == ["Dentist"]
    assert "Deleted the reminder Dentist." in await alice.send("/remind delete 1")
    empty = await alice.send("/remind")
    assert empty.startswith("You have no reminders coming up.") and "remind me tomorrow at 9" in empty
    assert "Usage" not in empty and "<when>" not in empty


async def test_bad_input_gets_a_clear_answer_and_changes_nothing(person, db_state) -> None:
    bert = person(language="de")
    before = await db_state()
    for line, said in (("/remind 25:00 x", "Uhrzeit"), ("/remind Mama anrufen", "Wann"),
                       ("/remind 15:00", "Woran"), ("/remind heute 7:00 Sport", "schon vorbei"),
                       ("/remind delete 9", "keine Erinnerung Nummer 9"), ("erinnere mich an nichts", "Wann")):
        assert said in await bert.send(line), line
    assert await db_state() == before


async def test_quiet_hours_hold_it_until_they_end_and_the_message_says_so(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/remind 23:30 take out the bins")
    await tick(brain, clock, berlin(30, 23, 30))
    await tick(brain, clock, berlin(1, 6, 59, month=12))
    assert await sent(brain) == []
    await tick(brain, clock, berlin(1, 7, 0, month=12))
    [message] = await sent(brain)
    assert message.text.splitlines() == ["⏰ Take out the bins",
                                         "It was due at Mon, Nov 30, 11:30\u202fPM; I held it back during your quiet "
                                         "hours."]


async def test_a_wake_up_in_the_quiet_hours_says_when_it_comes_and_the_quiet_hours_can_let_it_through(
        person, brain: Brain, clock: FixedClock) -> None:
    clock.set(berlin(30, 21, 0))
    alice = person()
    said = await alice.send("wake me up at 6")
    assert said.startswith("Reminder set for tomorrow at 6:00\u202fAM: Wake up. That is in your quiet hours "
                           "(10:00\u202fPM to 7:00\u202fAM), so it comes at 7:00\u202fAM;")
    assert "Ruhezeit (22:00 bis 07:00), deshalb kommt sie um 07:00" in await person(language="de").send(
        "weck mich um 6:30")
    assert "quiet hours" not in await alice.send("remind me tomorrow at 8 to stretch")
    await alice.send("no reminders between 23 and 6")
    await tick(brain, clock, berlin(1, 6, 0, month=12))
    assert [m.text.splitlines()[0] for m in await sent(brain)] == ["⏰ Wake up"]


async def test_a_pause_holds_it_to_the_pause_end_and_the_feedback_loop_and_a_chat_do_not(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/remind 15:00 call mom")
    await alice.send("/remind tomorrow 10:00 water the plants")
    await alice.send("/pause 1")  # until tomorrow 8:30
    await tick(brain, clock, berlin(30, 15))
    assert await sent(brain) == []
    await tick(brain, clock, berlin(1, 8, 30, month=12))
    [held] = await sent(brain)
    assert held.text.splitlines()[1] == "It was due at Mon, Nov 30, 3:00\u202fPM; I held it back while your " \
                                        "reminders were paused."
    clock.set(berlin(1, 9, 59, month=12))
    await alice.send("what a morning")  # mid-conversation: a reminder still comes at its time
    await tick(brain, clock, berlin(1, 10, 0, month=12))
    assert (await sent(brain))[-1].text == "⏰ Water the plants"


async def test_waiting_reminders_survive_a_restart(person, brain: Brain, clock: FixedClock, database_url: str) -> None:
    from brain.store.database import Database

    await person().send("/remind 15:00 call mom")
    await brain.close()
    restarted = Brain(Database(database_url, pool_size=2), clock=clock)
    try:
        await tick(restarted, clock, berlin(30, 15))
        assert [m.text for m in await sent(restarted)] == ["⏰ Call mom"]
    finally:
        await restarted.close()


async def test_a_tasks_due_time_can_carry_a_reminder_that_ends_when_the_task_is_done(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    reply = await alice.send("/task Report at 3pm")
    assert "Added the task Report, due today at 3:00\u202fPM." in reply
    assert "Reminder set for" in await alice.press(alice.buttons()["⏰ Remind me then"])
    await alice.send("/task Slides tomorrow 10:00")
    await alice.press(alice.buttons()["⏰ Remind me then"])
    await tick(brain, clock, berlin(30, 15))
    assert [m.text for m in await sent(brain)] == ["⏰ Report"]
    await alice.send("/done Slides")
    await tick(brain, clock, berlin(1, 10, month=12))
    assert len(await sent(brain)) == 1
    assert {r.text: r.status for r in await reminders(brain)} == {"Report": SENT, "Slides": DONE}


async def test_a_reminder_moved_in_words_comes_at_its_new_time_once_and_undo_sets_it_back(
        person, brain: Brain, clock: FixedClock) -> None:
    alice, bert = person(), person(language="de")
    await alice.send("/remind 15:00 stretch")
    await bert.send("/remind 16:00 Müll")
    assert "Which reminder?" in await alice.send("move the reminder to 8pm")
    assert "I found no reminder matching dentist" in await alice.send("move the dentist reminder to 8pm")
    # Another person's reminder is not found, and stays as it was.
    assert "I found no reminder matching Müll" in await alice.send("move the Müll reminder to 9pm")
    assert "already passed" in await alice.send("move the stretch reminder to today 7am")  # it is 8:30
    assert {r.text: r.occurrence_at for r in await reminders(brain)}["Stretch"] == berlin(30, 15)
    assert "Moved the reminder to today at 8:00\u202fPM: Stretch" in await alice.send(
        "move the stretch reminder to 8pm")
    assert {r.text: r.occurrence_at for r in await reminders(brain)} == {
        "Stretch": berlin(30, 20), "Müll": berlin(30, 16)}
    assert "Erinnerung verschoben auf morgen um 07:00: Müll" in await bert.send(
        "Verschiebe die Erinnerung an den Müll auf morgen 7 Uhr")
    undone = await alice.send("/undo")  # back to its old time, still ahead
    assert {r.text: r.occurrence_at for r in await reminders(brain)}["Stretch"] == berlin(30, 15), undone
    await alice.send("move the stretch reminder to 8pm")
    await tick(brain, clock, berlin(30, 15))
    await tick(brain, clock, berlin(30, 16))
    assert await sent(brain) == []  # neither comes at its old time
    await tick(brain, clock, berlin(30, 20))
    await tick(brain, clock, berlin(30, 20, 1))
    assert [m.text for m in await sent(brain)] == ["⏰ Stretch"]
    await alice.send("/remind tomorrow 9:00 call Anna")
    assert "tomorrow at 5:00\u202fPM: Call Anna" in await alice.send("move the Anna reminder to 5pm")  # keeps its day


async def test_a_repeating_reminder_moved_keeps_its_rule_and_a_tasks_reminder_moves_with_its_task(
        person, brain: Brain) -> None:
    alice = person()
    await alice.send("/remind every day 10:00 stretch")
    assert (await alice.send("move the stretch reminder to 6pm")) == (
        "Moved: Stretch, every day, next: today at 6:00\u202fPM")
    [series] = await reminders(brain)
    assert (series.rrule, series.occurrence_at) == ("FREQ=DAILY", berlin(30, 18))
    await alice.send("/task Report at 3pm")
    await alice.press(alice.buttons()["⏰ Remind me then"])
    assert "moves with it" in await alice.send("move the report reminder to 5pm")
    report = next(r for r in await reminders(brain) if r.text == "Report")
    assert report.occurrence_at == berlin(30, 15)


async def test_a_series_for_a_few_days_goes_out_that_often_also_when_moved_on_the_way(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    said = await alice.send("remind me every day at 10 for 3 days to stretch")
    assert "Stretch" in said and "3 times" in said, said
    [series] = await reminders(brain)
    assert series.rrule == "FREQ=DAILY;COUNT=3"
    await tick(brain, clock, berlin(30, 10))
    # one went out: two left
    assert "next: tomorrow at 6:00\u202fPM" in await alice.send("move the stretch reminder to 6pm")
    [series] = await reminders(brain)
    assert (series.rrule, series.occurrence_at) == ("FREQ=DAILY;COUNT=2", berlin(1, 18, month=12))
    for day in (1, 2, 3):
        await tick(brain, clock, berlin(day, 10, month=12))
        await tick(brain, clock, berlin(day, 18, month=12))
    assert [m.text for m in await sent(brain)] == ["⏰ Stretch"] * 3


async def test_the_model_moving_a_reminder_is_a_proposal_that_moves_it_once_approved(person, brain: Brain) -> None:
    from tests.e2e.test_proposals_activity import user_of

    alice = person()
    await alice.send("/remind 15:00 stretch")
    user = await user_of(brain, alice)
    result = await brain.tools.execute(user.id, "move_reminder", {"reminder": "stretch", "at": "2026-11-30T20:00"},
                                       ai("you said evenings suit you"))
    assert result.ok and result.data["status"] == "proposed"
    assert "Move the reminder «stretch» to Monday, November 30 at 8:00\u202fPM?" in await alice.send("/proposals")
    assert (await reminders(brain))[0].occurrence_at == berlin(30, 15)  # nothing moved before the approval
    assert "Moved the reminder to today at 8:00\u202fPM: Stretch" in await alice.press(alice.buttons()["Approve"])
    assert (await reminders(brain))[0].occurrence_at == berlin(30, 20)


async def test_the_terminal_chats_ticker_sends_due_reminders(brain: Brain, dialog, clock: FixedClock) -> None:
    from app.cli import _pulse_ticker

    out = io.StringIO()
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO("/remind 9:00 stretch\n"), out, person="tester"))
    await chat.run()
    clock.set(berlin(30, 9) + timedelta(seconds=20))
    await _pulse_ticker(Settings(idle_hold_minutes=0), brain, dialog, chat, asyncio.Event(), once=True)
    assert out.getvalue().count("⏰ Stretch") == 1


async def test_a_reminder_belongs_to_its_person_only(person, brain: Brain, clock: FixedClock) -> None:
    alice, eve = person(), person()
    await alice.send("/remind 15:00 call mom")
    await tick(brain, clock, berlin(30, 15))
    [message] = await sent(brain)
    assert "not valid" in await eve.press(buttons_of(message)["✓ Done"])
    reminder_id = (await reminders(brain))[0].id
    assert "No such reminder" in await eve.send(f"/remind delete {reminder_id}")


async def test_german_and_english_reminders_arrive_once_at_their_local_time_across_a_dst_change(
        person, brain: Brain, clock: FixedClock) -> None:
    # Set on the Friday before each zone moves its clocks forward (New York on 8 March 2026, Berlin on the 29th),
    # for the Monday after: the UTC instant is an hour earlier than it would have been the week before.
    new_york = ZoneInfo("America/New_York")
    bert, carol = person(language="de"), person()
    clock.set(datetime(2026, 3, 27, 10, 0, tzinfo=BERLIN))
    assert "Zahnarzt" in await bert.send("erinnere mich am Montag um 9 an den Zahnarzt")
    clock.set(datetime(2026, 3, 6, 10, 0, tzinfo=new_york))
    await carol.send("/tz America/New_York")
    assert "Call mom" in await carol.send("remind me on monday at 3pm to call mom")
    due = {"⏰ Zahnarzt": datetime(2026, 3, 30, 9, 0, tzinfo=BERLIN),
           "⏰ Call mom": datetime(2026, 3, 9, 15, 0, tzinfo=new_york)}
    assert due["⏰ Zahnarzt"].astimezone(UTC).hour == 7 and due["⏰ Call mom"].astimezone(UTC).hour == 19
    came: dict[str, datetime] = {}
    for when in sorted(due.values()):
        # The scheduler's minute job before, at and after its time, and an hour later (the old offset's instant).
        for moment in (when - timedelta(hours=1), when - timedelta(minutes=1), when, when + timedelta(minutes=1),
                       when + timedelta(hours=1), when + timedelta(days=1)):
            await tick(brain, clock, moment)
            for message in await sent(brain):
                came.setdefault(message.text, moment)
    assert came == due
    messages = await sent(brain)
    assert sorted(m.text for m in messages) == ["⏰ Call mom", "⏰ Zahnarzt"]  # each once
    german = next(m for m in messages if m.text == "⏰ Zahnarzt")
    assert "✓ Erledigt" in buttons_of(german)


async def test_two_runs_at_once_and_lost_bookkeeping_send_each_reminder_once_with_one_set_of_buttons(
        person, brain: Brain, clock: FixedClock) -> None:
    for n, handle in enumerate(("alice", "bob", "carol")):
        await person(handle).send(f"/remind 15:0{n} call {handle}")
    clock.set(berlin(30, 15, 5))
    # Two scheduler runs at once, in batches small enough that they take turns: each row is locked by one of them.
    first, second = await asyncio.gather(send_due_reminders(brain, clock.now(), batch=1),
                                         send_due_reminders(brain, clock.now(), batch=1))
    assert first.sent + second.sent == 3 and first.sent_to.isdisjoint(second.sent_to)
    # The reminders' state lost (a restore from an older backup): the outbox still knows what went out.
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(Reminder).values(status=WAITING, due_at=Reminder.occurrence_at, deliveries=0,
                                                          sent_at=None))
    again = await send_due_reminders(brain, clock.now())
    assert (again.sent, again.already_sent) == (0, 3)
    messages = await sent(brain)
    assert len(messages) == 3 and len({m.user_id for m in messages}) == 3
    async with brain.transactions.read() as session:
        tokens = await session.scalar(select(func.count()).select_from(ActionToken)
                                      .where(ActionToken.kind == REMINDER_KIND))
    assert tokens == 3 * 4  # Done and three snoozes per message, none for the runs that found it sent
    for message in messages:
        async with brain.transactions.read() as session:
            token = await session.get(ActionToken, buttons_of(message)["✓ Done"])
        assert token is not None and token.user_id == message.user_id and token.payload["op"] == "done"


async def test_a_reminder_or_plan_whose_words_start_with_a_name_keeps_the_name(person, brain: Brain) -> None:
    alice = person(language="de")
    assert "Tom anrufen" in await alice.send("/remind 15:00 Tom anrufen")
    assert (await alice.send("Anna kommt morgen um 15 Uhr")).startswith("Di., 1. Dez. um 15:00: Anna kommt.")
    assert [r.text for r in await reminders(brain)] == ["Tom anrufen"]
