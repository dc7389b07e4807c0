"""/today with its streak and next-event lines, and /streaks with its skip buttons, from an inbound line
to the reply in the outbox; the clock is moved instead of waiting for days to pass."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from brain.clock import FixedClock
from brain.core import Brain
from brain.i18n import Renderer
from brain.people.models import Identity, User
from brain.summaries import morning_data, morning_summary


async def test_today_shows_the_streak_line(person) -> None:
    alice = person()
    assert "Streaks" not in await alice.send("/today")
    await alice.send("/water 250")
    await alice.send("/meal lunch Pasta 650 kcal")
    today = await alice.send("/today")
    assert "Water: 250 ml of 2,000 ml (13%)" in today
    assert "Streaks: water 1 day · meals 1 day" in today


async def test_today_warns_about_a_streak_at_risk_the_next_day(person, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/water")
    clock.advance(timedelta(days=1))
    await alice.send("/task Call mom")
    await alice.send("/done 1")
    today = await alice.send("/today")
    assert "Streaks: water 1 day (at risk: log one today) · tasks 1 day" in today
    assert "Water: 0 ml" in today


async def test_today_shows_the_next_event_after_today(person) -> None:
    alice = person()
    await alice.send("/event Standup 17:30 15m")
    await alice.send("/event Zahnarzt morgen 14:00")
    today = await alice.send("/today")
    assert "Calendar: 5:30\u202fPM Standup" in today
    assert "Next: Zahnarzt" not in today  # the standup comes first and is listed already


async def test_today_lists_an_event_going_on_now(person, clock: FixedClock) -> None:
    alice = person()  # the clock stands at 8:30 in Berlin
    await alice.send("/event Workshop 8:00 2h")
    await alice.send("/event Standup 17:30 15m")
    today = await alice.send("/today")
    assert "Calendar: 8:00\u202fAM Workshop · 5:30\u202fPM Standup" in today
    clock.advance(timedelta(hours=2))  # 10:30: the workshop is over
    assert "Calendar: 5:30\u202fPM Standup" in await alice.send("/today")


async def test_today_shows_an_event_from_last_night_as_going_on_until_its_end(person, clock: FixedClock) -> None:
    alice = person()  # the clock stands at 8:30 in Berlin, on Monday
    await alice.send("/event Party today 23:00-01:00")
    await alice.send("/event Conference today 20:00 30h")
    await alice.send("/event Standup tomorrow 9:00 15m")
    clock.advance(timedelta(hours=16))  # Tuesday 0:30: the party began last night
    today = await alice.send("/today")
    assert ("Calendar: until 1:00\u202fAM Party · until Wed, Dec 2, 2:00\u202fAM Conference · 9:00\u202fAM Standup"
            in today)
    bea = person(language="de")
    await bea.send("/lang de")
    clock.advance(timedelta(hours=-16))
    await bea.send("/termin Party heute 23:00-01:00")
    clock.advance(timedelta(hours=16))
    assert "Kalender: bis 01:00 Party" in await bea.send("/heute")


async def test_today_names_tomorrows_event_when_nothing_is_left_today(person) -> None:
    alice = person()
    await alice.send("/event Zahnarzt morgen 14:00")
    today = await alice.send("/today")
    assert "Calendar: nothing today" in today
    assert "Next: Zahnarzt" in today and "2:00\u202fPM" in today


async def test_streaks_lists_status_and_strength(person) -> None:
    alice = person()
    await alice.send("/water")
    reply = await alice.send("/streaks")
    assert "Water: 1 day, done today · best 1 · strength 5%" in reply
    assert "Tasks: 0 days, not running · best 0 · strength 0%" in reply
    assert alice.buttons() == {}


async def test_skip_today_button_keeps_an_at_risk_streak_alive_once(person, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/water")
    clock.advance(timedelta(days=1))
    assert "Water: 1 day, at risk: log one today" in await alice.send("/streaks")
    token = alice.buttons()["Skip today (water)"]
    assert "is a skip day for your water streak" in await alice.press(token)
    assert "already used" in await alice.press(token)
    reply = await alice.send("/streaks")
    assert "Water: 1 day, skipped today" in reply and "Skip today (water)" not in alice.buttons()
    assert "water 1 day (skipped today)" in await alice.send("/today")
    clock.advance(timedelta(days=1))
    await alice.send("/water")
    assert "Water: 2 days, done today · best 2" in await alice.send("/streaks")


async def test_skip_yesterday_button_rescues_a_streak_broken_by_one_day(person, clock: FixedClock) -> None:
    alice = person()
    await alice.send("/water")
    clock.advance(timedelta(days=2))
    assert "Water: 0 days, not running · best 1" in await alice.send("/streaks")
    assert "Skip today (water)" not in alice.buttons()
    assert "is a skip day" in await alice.press(alice.buttons()["Skip yesterday (water)"])
    assert "Water: 1 day, at risk: log one today" in await alice.send("/streaks")


async def test_another_person_cannot_press_my_skip_button(person, clock: FixedClock, db_state) -> None:
    alice, mallory = person(), person()
    await alice.send("/water")
    clock.advance(timedelta(days=1))
    await alice.send("/streaks")
    token = alice.buttons()["Skip today (water)"]
    await mallory.send("/start")
    before = await db_state()
    assert "not valid" in await mallory.press(token)
    assert await db_state() == before


async def test_undoing_the_only_drink_after_a_time_zone_change_takes_the_day_back(person) -> None:
    """The drink counted Monday in Berlin (8:30); in Los Angeles the same instant is still Sunday 23:30, and /undo
    there must take Monday back all the same: the streak is not done today, nor on a day that has not come."""
    alice = person()
    await alice.send("/water")
    assert "Water: 1 day, done today" in await alice.send("/streaks")
    await alice.send("/tz America/Los_Angeles")
    assert "Removed 250 ml water" in await alice.send("/undo")
    streaks = await alice.send("/streaks")
    assert "done today" not in streaks and "1 day" not in streaks, streaks
    assert "Streaks" not in await alice.send("/today")


@pytest.mark.parametrize(("language", "opening", "count"), [
    ("en", "Nothing due and no appointments today.", "1 open task in all"),
    ("de", "Heute ist nichts fällig und kein Termin.", "1 offene Aufgabe insgesamt"),
])
async def test_the_morning_summary_and_today_agree_on_an_open_task_without_a_date(
        person, brain: Brain, clock: FixedClock, language: str, opening: str, count: str) -> None:
    alice = person(language=language)
    await alice.send("/task Call the landlord")
    today = await alice.send("/today")
    async with brain.transactions.read() as session:
        user = (await session.scalars(select(User).join(Identity, Identity.user_id == User.id)
                                      .where(Identity.platform_id == alice.handle))).one()
        data = await morning_data(session, [user], clock.now())
    summary = morning_summary(data[user.id], Renderer(user.locale, user.timezone))
    assert summary.lines[1] == opening and count in summary.lines
    assert "1" in today and "free day" not in today and "freier Tag" not in today
