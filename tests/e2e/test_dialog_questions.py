"""Without a language model: questions about the logs are answered from them and log nothing; a to-do said as a bare
verb phrase becomes a task, and one said done is completed. (The clock says Monday 2026-11-30, 08:30 in Berlin.)"""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from brain.modules.calendar.models import CalendarEvent
from brain.modules.drink.models import DrinkEntry
from brain.modules.food.models import Meal
from brain.modules.todo.models import Task
from brain.reminders.models import WAITING, Reminder

BERLIN = ZoneInfo("Europe/Berlin")


async def test_a_question_about_water_logs_none_and_answers_with_the_day(person, brain, db_state) -> None:
    alice = person(language="de")
    await alice.send("/start")
    before = await db_state()
    answer = await alice.send("Hab ich heute schon Wasser getrunken?")
    assert "Wasser: 0 ml von 2.000 ml" in answer and "eingetragen" not in answer
    assert await db_state() == before  # no glass of water from a question
    await alice.send("2 Gläser Wasser")
    assert "Wasser: 500 ml von 2.000 ml" in await alice.send("Wie viel Wasser habe ich heute getrunken?")
    async with brain.transactions.read() as s:
        assert len((await s.scalars(select(DrinkEntry))).all()) == 2


async def test_what_is_on_tomorrow_lists_its_appointments_reminders_and_tasks_in_time_order(person) -> None:
    alice = person(language="de")
    await alice.send("/termin Friseur morgen 15:00")
    await alice.send("Erinnere mich morgen um 9 an den Zahnarzt")
    await alice.send("/termin Urlaub 1.12.-3.12.")
    await alice.send("Zahnarzt anrufen bis morgen")
    await alice.send("/termin Kino übermorgen 20:00")  # another day: not listed
    answer = await alice.send("Was steht morgen an?")
    lines = answer.splitlines()
    assert lines[0] == "Morgen, Dienstag, 1. Dezember 2026:"
    assert lines[1:] == ["• ganztägig: Urlaub", "• 09:00 ⏰ Zahnarzt", "• 15:00 Friseur", "• ✓ Zahnarzt anrufen"]
    assert "Kino" not in answer
    assert "nichts" in (await alice.send("Was habe ich am Samstag vor?"))


async def test_whats_on_in_english_and_nothing_on(person) -> None:
    alice = person()
    assert await alice.send("What's on tomorrow?") == (
        "Nothing is on for Tuesday, December 1, 2026 yet: no appointments, reminders or tasks due.")
    await alice.send("/event Dentist tomorrow 14:00")
    assert "2:00\u202fPM Dentist" in await alice.send("Do I have appointments tomorrow?")
    assert "2:00\u202fPM Dentist" in await alice.send("tomorrow")  # the day alone asks about it
    assert (await alice.send("and Wednesday?")).startswith("Nothing is on for Wednesday, December 2, 2026")


@pytest.mark.parametrize("line, shows", [
    ("Welche Aufgaben habe ich?", "Offene Aufgaben"),
    ("Welche Erinnerungen habe ich?", "keine anstehenden Erinnerungen"),
    ("Wie sieht mein Tag aus?", "Heute, Montag, 30. November 2026"),
    ("Was steht heute an?", "Heute, Montag, 30. November 2026"),
])
async def test_german_questions_get_the_view_that_answers_them(person, brain, line: str, shows: str) -> None:
    alice = person(language="de")
    await alice.send("/aufgabe Steuer bis Freitag")
    assert shows in await alice.send(line)
    async with brain.transactions.read() as s:
        assert [t.title for t in (await s.scalars(select(Task))).all()] == ["Steuer"]  # asked, nothing added


async def test_a_question_the_logs_cannot_answer_is_not_answered_with_them(person) -> None:
    alice = person()
    # A span longer than a week is kept in no view; a question about someone is for the memory or the model.
    assert "didn't understand" in await alice.send("What did I eat last month?")
    assert "didn't understand" in await alice.send("When is Anna's birthday?")
    assert "Your last 7 days" in await alice.send("What did I eat last week?")  # the last seven days' chart
    assert "I'm well" in await alice.send("What's up?")  # a greeting stays one


async def test_a_bare_to_do_becomes_a_task_and_is_completed_by_its_title(person, brain) -> None:
    alice = person(language="de")
    assert await alice.send("Milch kaufen") == "Aufgabe Milch kaufen angelegt."
    assert "(fällig morgen)" in await alice.send("morgen Mama anrufen")
    assert "Erledigt: Milch kaufen" in await alice.send("Milch kaufen erledigt")
    async with brain.transactions.read() as s:
        tasks = {t.title: t for t in (await s.scalars(select(Task))).all()}
    assert tasks["Milch kaufen"].completed_at is not None
    assert tasks["Mama anrufen"].completed_at is None and tasks["Mama anrufen"].due_date == date(2026, 12, 1)
    assert "keine Aufgabe" in await alice.send("erledigt: Fenster putzen")
    # Said of the past, or by someone about themselves: no task.
    assert "nicht verstanden" in await alice.send("wir waren gestern einkaufen")


async def test_where_the_person_is_checks_in_at_a_saved_place_and_offers_a_new_one(person, brain, db_state) -> None:
    alice = person(language="de")
    await alice.send("/start")
    before = await db_state()
    offer = await alice.send("ich war heute im Café Luna")
    assert offer == "Café Luna ist noch keiner deiner Orte. Speichern und dort einchecken?"
    assert await db_state() == before  # only offered
    assert "Café Luna: Besuch notiert (bisher 1 Besuch)" in await alice.press(alice.buttons()["📍 Einchecken"])
    # A saved place is checked in at once, however its accents and case are written.
    assert "Café Luna: Besuch notiert (bisher 2 Besuche)" in await alice.send("bin gerade im cafe luna")
    before = await db_state()
    for said in ("ich bin im Stress", "ich bin in Eile", "ich war gestern im Kino"):  # a state, or another day
        assert "nicht verstanden" in await alice.send(said)
    assert await db_state() == before


async def test_im_at_the_gym_in_english(person) -> None:
    alice = person()
    assert await alice.send("I'm at the gym") == "Gym is not one of your places yet. Save it and check in there?"
    assert "Gym" in await alice.press(alice.buttons()["📍 Check in"])
    assert "2 visits" in await alice.send("I am at the gym now")


async def test_where_the_person_was_today_lists_the_places_with_their_times(person, clock, db_state) -> None:
    alice, bert = person(), person(language="de")
    assert await alice.send("where was I today?") == (
        "No place noted today. Tell me where you are, e.g. \"I'm at the gym\".")
    await alice.send("/place Gym")  # Monday, 8:30 in Berlin
    clock.advance(timedelta(hours=4))
    await alice.send("/place Café Luna")
    clock.advance(timedelta(hours=2))
    await alice.send("/place Gym")
    before = await db_state()
    assert (await alice.send("where was I today?")).splitlines() == [
        "Where you were today:", "• Gym, 8:30\u202fAM and 2:30\u202fPM", "• Café Luna at 12:30\u202fPM"]
    assert await db_state() == before  # a question changes nothing
    await bert.send("/ort Büro")
    assert (await bert.send("Wo war ich heute?")).splitlines() == ["Wo du heute warst:", "• Büro um 14:30"]
    assert "Your places:" in await alice.send("where have I been?")  # not only today: every place


async def test_the_place_offer_is_taken_once_by_a_press_or_a_yes_while_it_is_fresh(person, clock, db_state) -> None:
    alice = person(language="de")
    await alice.send("ich bin im Büro")
    button = alice.buttons()["📍 Einchecken"]
    assert "Büro: Besuch notiert (bisher 1 Besuch)" in await alice.send("ja, bitte")
    assert "schon benutzt" in await alice.press(button)  # one answer: no second visit from the old button
    assert "Büro: Besuch notiert" not in await alice.send("ja")  # no offer waits now
    await alice.send("ich bin im Kino")
    cinema = alice.buttons()["📍 Einchecken"]
    clock.advance(timedelta(minutes=11))
    before = await db_state()
    assert "Kino" not in await alice.send("ja")  # a yes long after the offer is not its answer
    assert await db_state() == before
    assert "Kino: Besuch notiert" in await alice.press(cinema)  # the button still works


async def test_a_commands_word_without_its_slash_runs_it(person, db_state) -> None:
    alice = person()
    assert "/today" in await alice.send("help")
    await alice.send("2 glasses of water")
    assert "Removed 2 × 250 ml water" in await alice.send("undo")
    assert "No open tasks" in await alice.send("Aufgaben")
    before = await db_state()
    assert "didn't understand" in await alice.send("cancel the reminder")  # no task "Cancel the reminder"
    assert await db_state() == before


async def test_the_water_goal_said_in_words_is_the_days_target(person, db_state) -> None:
    alice = person(language="de")
    assert await alice.send("Mein Wasserziel ist 2,5 Liter") == "Dein tägliches Wasserziel liegt jetzt bei 2.500 ml."
    assert "Wasser: 0 ml von 2.500 ml" in await alice.send("/heute")
    before = await db_state()
    assert "höchstens 10.000" in await alice.send("Wasserziel auf 100 l setzen")
    assert await db_state() == before


async def test_a_repeating_reminder_is_on_every_day_it_comes(person) -> None:
    alice = person()
    await alice.send("remind me every day at 8 to take pills")
    await alice.send("/remind friday 18:00 call Anna")
    friday = await alice.send("What's on Friday?")
    assert friday.splitlines() == ["Friday, December 4, 2026:", "• 8:00\u202fAM ⏰ Take pills",
                                   "• 6:00\u202fPM ⏰ Call Anna"]
    assert "Call Anna" not in await alice.send("What's on Thursday?")


async def test_what_was_eaten_today_lists_the_meals_with_their_times_and_calories(person, clock) -> None:
    alice = person(language="de")
    assert await alice.send("Was habe ich heute gegessen?") == "Heute ist noch keine Mahlzeit eingetragen."
    await alice.send("Frühstück: Müsli 350 kcal")
    await alice.send("Ich habe heute Mittag Pizza gegessen")
    assert (await alice.send("Was habe ich heute gegessen?")).splitlines() == [
        "Heute gegessen:", "• 08:30 Frühstück: Müsli (350 kcal)", "• 08:30 Mittagessen: Pizza",
        "Heute: 350 von 2.000 kcal (18\xa0%)."]
    bob = person()
    await bob.send("lunch: pasta")
    assert (await bob.send("what did I eat today?")).splitlines() == ["Eaten today:", "• 8:30\u202fAM Lunch: pasta"]


async def test_the_time_and_date_are_said_in_the_persons_zone_and_language(person) -> None:
    # The test clock says 07:30 UTC, 08:30 in Berlin (the default zone of these people).
    assert await person(language="de").send("Wie spät ist es?") == "Es ist 08:30, Montag, 30. November 2026."
    assert await person().send("what time is it?") == "It is 8:30\u202fAM on Monday, November 30, 2026."


async def test_what_is_on_this_week_lists_each_day_that_has_something(person, db_state) -> None:
    alice = person(language="de")
    await alice.send("/termin Friseur morgen 15:00")
    await alice.send("/termin Kino Samstag 20:00")
    await alice.send("/termin Zahnarzt 8.12. 9:00")  # next week
    before = await db_state()
    assert (await alice.send("Was steht diese Woche an?")).splitlines() == [
        "Morgen, Dienstag, 1. Dezember 2026:", "• 15:00 Friseur", "", "Samstag, 5. Dezember 2026:", "• 20:00 Kino"]
    assert await alice.send("Was habe ich am Wochenende vor?") == "Samstag, 5. Dezember 2026:\n• 20:00 Kino"
    assert await alice.send("Was steht nächste Woche an?") == "Dienstag, 8. Dezember 2026:\n• 09:00 Zahnarzt"
    assert await db_state() == before  # asked: nothing made


async def test_a_week_with_nothing_on_says_so(person) -> None:
    alice = person()
    assert await alice.send("What's on next week?") == (
        "Nothing is on from Monday, December 7, 2026 to Sunday, December 13, 2026 yet: no appointments, reminders "
        "or tasks due.")


async def test_a_past_days_drinks_and_meals_are_answered_from_the_logs(person, clock, db_state) -> None:
    alice = person(language="de")
    await alice.send("2 Gläser Wasser")
    await alice.send("1 Kaffee")
    await alice.send("/essen mittag Pizza 800 kcal")
    clock.advance(timedelta(days=1))
    await alice.send("1 Glas Wasser")  # today's: not yesterday's
    before = await db_state()
    assert (await alice.send("Wie viel Wasser habe ich gestern getrunken?")).splitlines() == [
        "Gestern, Montag, 30. November 2026:", "Wasser: 500 von 2.000 ml (25\xa0%) · Kaffee: 1 Tasse", "Gegessen:",
        "• 08:30 Mittagessen: Pizza (800 kcal)", "Zusammen: 800 von 2.000 kcal (40\xa0%)."]
    assert "Gestern, Montag" in await alice.send("Was habe ich am Montag gegessen?")  # the Monday gone
    assert await alice.send("Was habe ich vorgestern gegessen?") == (
        "Für Sonntag, 29. November 2026 ist nichts eingetragen: keine Getränke und keine Mahlzeiten.")
    # The day asked about as a whole; intake over the week: the last seven days' chart (/week).
    assert (await alice.send("Was war gestern?")).startswith("Gestern, Montag, 30. November 2026:")
    assert "7 Tage" in await alice.send("Wie viel Kaffee hatte ich diese Woche?")
    assert await db_state() == before


async def test_an_hour_both_of_whose_times_have_passed_is_tomorrows_morning_from_seven_on(person, clock) -> None:
    alice = person(language="de")
    clock.advance(timedelta(hours=15, minutes=15))  # 23:45 in Berlin
    assert "morgen um 07:00: Tabletten" in await alice.send("Erinnere mich um 7 an die Tabletten")
    assert "morgen um 15:00: Anruf" in await alice.send("Erinnere mich um 3 an den Anruf")


async def test_the_next_appointment_goals_and_streaks_asked_in_words(person, db_state) -> None:
    alice = person(language="de")
    assert await alice.send("Wann ist mein nächster Termin?") == "In deinem Kalender steht nichts an."
    await alice.send("/termin Zahnarzt Freitag 10:00")
    await alice.send("/termin Friseur 10.12. 9:00")
    before = await db_state()
    assert await alice.send("Wann ist mein nächster Termin?") == (
        "Dein nächster Termin: Zahnarzt, Freitag, 4. Dezember 2026 um 10:00.")
    assert "Noch keine Ziele" in await alice.send("Wie läuft mein Ziel?")
    assert "Deine Serien:" in await alice.send("Wie stehen meine Serien?")
    assert await db_state() == before


async def test_a_reminder_deleted_in_words_is_gone_and_another_is_left(person, brain) -> None:
    alice = person()
    await alice.send("remind me tomorrow at 10 to call the dentist")
    await alice.send("remind me tomorrow at 11 to water the plants")
    assert await alice.send("delete the reminder about the dentist") == "Deleted the reminder Call the dentist."
    assert "found no reminder" in await alice.send("delete the reminder about the dentist")
    assert [r.text for r in await _waiting_reminders(brain)] == ["Water the plants"]


async def _waiting_reminders(brain) -> list[Reminder]:
    async with brain.transactions.read() as s:
        return list((await s.scalars(select(Reminder).where(Reminder.status == WAITING))).all())


async def test_an_appointment_written_with_termin_colon_goes_into_the_calendar(person, brain) -> None:
    alice = person(language="de")
    assert await alice.send("Termin: Zahnarzt am Freitag um 10") == "Zahnarzt am Fr., 4. Dez. um 10:00 eingetragen."
    assert "Freitag, 4. Dezember 2026 um 10:00" in await alice.send("Wann ist mein nächster Termin?")


async def test_what_the_person_has_to_do_is_eats_now_and_has_done_in_words(person, brain) -> None:
    alice = person(language="de")
    assert await alice.send("ich muss noch Milch kaufen") == "Aufgabe Milch kaufen angelegt."
    assert "Erledigt: Milch kaufen" in await alice.send("fertig mit Milch")
    eating = await alice.send("ich esse gerade einen Apfel")
    assert eating == "Frühstück eingetragen: Apfel."  # 08:30: the meal of the time of day
    assert "Abendessen eingetragen: Pasta." in await alice.send("zum Abendessen gab es Pasta")
    async with brain.transactions.read() as s:
        task = (await s.scalars(select(Task))).one()
    assert task.completed_at is not None


async def test_a_task_or_appointment_taken_back_in_words_is_deleted_not_made_a_task(person, brain) -> None:
    alice = person(language="de")
    await alice.send("Milch kaufen")
    await alice.send("Brot kaufen")
    await alice.send("/termin Zahnarzt morgen 10:00")
    await alice.send("/termin Friseur morgen 15:00")
    assert "Milch kaufen" in await alice.send("Lösche die Aufgabe Milch kaufen")
    assert "Zahnarzt" in await alice.send("Termin beim Zahnarzt absagen")
    assert "Friseur" in await alice.send("Lösche den Friseurtermin")  # the compound names it
    async with brain.transactions.read() as s:
        assert [t.title for t in (await s.scalars(select(Task))).all()] == ["Brot kaufen"]
        assert (await s.scalars(select(CalendarEvent))).all() == []
    assert "In deinem Kalender steht nichts an." in await alice.send("Zeig mir meine Termine")
    assert "Offene Aufgaben" in await alice.send("Was ist überfällig?")


async def test_an_appointment_moved_in_words_keeps_what_was_not_said_and_undo_takes_it_back(person, brain) -> None:
    alice, bob = person(language="de"), person()
    await alice.send("/termin Zahnarzt morgen 14:00 45m")
    await bob.send("/event Dentist tomorrow 9:00")
    assert await alice.send("verschiebe den Zahnarzt auf 16 Uhr") == "Zahnarzt auf morgen um 16:00 verschoben."
    assert await alice.send("Termin beim Zahnarzt auf Freitag verschieben") == (
        "Zahnarzt auf Fr., 4. Dez. um 16:00 verschoben.")
    assert "keinen Termin" in await alice.send("verschiebe den Friseur auf morgen")  # none matches: nothing moves
    assert "keinen Termin" in await alice.send("verschiebe den Dentist auf morgen")  # Bob's is not hers
    assert await alice.send("mach das rückgängig") == "Zahnarzt auf morgen um 16:00 verschoben."
    async with brain.transactions.read() as s:
        spans = {e.title: (e.start_time.astimezone(BERLIN).strftime("%d. %H:%M"),
                           int((e.end_time - e.start_time).total_seconds() // 60))
                 for e in (await s.scalars(select(CalendarEvent))).all()}
    assert spans == {"Zahnarzt": ("01. 16:00", 45), "Dentist": ("01. 09:00", 60)}


async def test_tasks_done_by_number_or_marked_and_a_task_pushed_like_an_appointment(person, brain) -> None:
    alice = person()
    for task in ("buy groceries", "call the plumber tomorrow", "finish the report by wednesday"):
        await alice.send(task)
    assert (await alice.send("done 1")).startswith("Done: Call the plumber.")  # the list's first: due soonest
    assert (await alice.send("mark the report as done")).startswith("Done: Finish the report.")
    await alice.send("finish the slides by wednesday")
    # No appointment is called that, but a task is: its due day moves.
    assert await alice.send("push the slides to friday") == "Finish the slides is now due Fri, Dec 4."
    async with brain.transactions.read() as s:
        tasks = {t.title: (t.completed_at is not None, str(t.due_date)) for t in (await s.scalars(select(Task))).all()}
    assert tasks == {"Buy groceries": (False, "None"), "Call the plumber": (True, "2026-12-01"),
                     "Finish the report": (True, "2026-12-02"), "Finish the slides": (False, "2026-12-04")}


async def test_a_task_put_on_the_list_renamed_in_words_and_an_appointment_changed_to_another_time(
        person, brain) -> None:
    alice = person()
    assert (await alice.send("add call the plumber to my list")).startswith("Added the task Call the plumber.")
    await alice.send("/tasks")
    assert await alice.send("rename task 1 to call the electrician") == "Updated the task Call the electrician."
    await alice.send("/event Dentist tomorrow 10:00")
    assert await alice.send("change the dentist appointment to 3pm") == "Moved Dentist to tomorrow at 3:00\u202fPM."
    async with brain.transactions.read() as s:
        assert [t.title for t in (await s.scalars(select(Task))).all()] == ["Call the electrician"]


async def test_the_meal_just_logged_is_corrected_in_words_and_the_correction_has_undo(person, brain) -> None:
    alice = person()
    assert await alice.send("I meant dinner") == "There is no meal from today to correct."
    await alice.send("lunch: pizza 800 kcal")
    assert await alice.send("I meant dinner") == (
        "Changed to dinner: pizza, 800 kcal (was lunch). Today: 800 of 2,000 kcal (40%).")
    assert await alice.send("that was 600 kcal") == "Changed dinner: pizza to 600 kcal. Today: 600 of 2,000 kcal (30%)."
    assert await alice.press(alice.buttons()["Undo"]) == "Deleted the dinner: pizza."
    async with brain.transactions.read() as s:
        assert (await s.scalars(select(Meal))).all() == []


async def test_a_task_read_from_free_text_can_be_taken_back_or_done_with_one_press(person, brain) -> None:
    alice = person(language="de")
    assert await alice.send("ich muss noch Milch kaufen") == "Aufgabe Milch kaufen angelegt."
    undo = alice.buttons()["Rückgängig"]
    assert "gelöscht" in await alice.press(undo)
    assert "gelöscht" not in await alice.press(undo)  # pressed twice: refused, nothing else deleted
    await alice.send("Brot kaufen")
    await alice.send("Käse kaufen")
    assert "Erledigt: Käse kaufen" in await alice.press(alice.buttons()["✓ Erledigt"])
    async with brain.transactions.read() as s:
        tasks = {t.title: t.completed_at is not None for t in (await s.scalars(select(Task))).all()}
    assert tasks == {"Brot kaufen": False, "Käse kaufen": True}


async def test_a_meal_read_from_free_text_or_meal_has_undo_for_exactly_that_meal(person, brain) -> None:
    alice = person()
    await alice.send("/meal breakfast Muesli")
    await alice.send("lunch was a chicken salad")
    assert "Deleted the lunch: chicken salad." in await alice.press(alice.buttons()["Undo"])
    async with brain.transactions.read() as s:
        assert [m.description for m in (await s.scalars(select(Meal))).all()] == ["Muesli"]


async def test_what_no_log_keeps_is_said_so_instead_of_not_understood(person, db_state) -> None:
    alice = person(language="de")
    before = await db_state()
    answer = await alice.send("Ich war heute joggen")
    assert answer.startswith("Schlaf, Schritte, Gewicht oder Training trage ich noch nicht ein.")
    assert "merke" not in answer  # no memory here: nothing is promised
    assert await db_state() == before


async def test_a_plan_said_with_i_need_to_is_offered_without_it_in_the_afternoon_of_a_bare_hour(person, clock) -> None:
    alice = person()
    clock.advance(timedelta(hours=16))  # 00:30 in Berlin: "at 5" is 17:00 as on any day, not 5:00 in the night
    assert (await alice.send("I need to pick up Anna at 5")).startswith("Tue, Dec 1, 5:00\u202fPM: Pick up Anna.")


async def test_a_message_not_understood_but_about_something_shows_how_to_write_that(person, db_state) -> None:
    alice = person(language="de")
    before = await db_state()
    assert (await alice.send("Termine irgendwann verschieben")).splitlines() == [
        "Das habe ich nicht verstanden, und es ist kein Sprachmodell verbunden, das mir helfen könnte.",
        "Für einen Termin nenn Tag und Uhrzeit: „Termin: Zahnarzt morgen 14:00“ oder /termin."]
    assert "Probier „250 ml Wasser“" in await alice.send("bla bla")  # about nothing: the general examples
    assert await db_state() == before


async def test_a_task_told_done_in_the_past_tense_is_completed_when_exactly_one_matches(person, brain) -> None:
    alice = person(language="de")
    await alice.send("Milch kaufen")
    await alice.send("Mama anrufen")
    await alice.send("Mama abholen")
    assert await alice.send("Hab Milch gekauft") == "Erledigt: Milch kaufen."
    assert "Erledigt" not in await alice.send("Hab Brot gekauft")  # no such task: nothing is completed
    assert "Erledigt" not in await alice.send("Habe Mama angerufen")  # two could be meant: neither is completed
    await alice.send("Ich muss noch die Miete überweisen")
    assert "Erledigt" not in await alice.send("Miete vergessen")  # forgotten is not done
    assert await alice.send("Miete überwiesen") == "Erledigt: Miete überweisen."  # no "habe" needed
    await alice.send("Wäsche waschen")
    assert "Erledigt" not in await alice.send("Das Essen ist fertig")  # no task holds it: nothing is done
    assert await alice.send("Die Wäsche ist fertig") == "Erledigt: Wäsche waschen."
    async with brain.transactions.read() as s:
        done = {t.title for t in (await s.scalars(select(Task))).all() if t.completed_at is not None}
    assert done == {"Milch kaufen", "Miete überweisen", "Wäsche waschen"}


async def test_a_shopping_list_is_done_when_all_of_it_is_bought(person) -> None:
    alice = person(language="de")
    assert "Einkaufen: Milch, Eier, Brot" in await alice.send("Einkaufen: Milch, Eier, Brot")
    assert "Erledigt" not in await alice.send("Hab Milch gekauft")  # one of three: the list stays open
    assert await alice.send("Milch, Eier und Brot gekauft") == "Erledigt: Einkaufen: Milch, Eier, Brot."
