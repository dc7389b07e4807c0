"""Calendar module: each mutation writes its record and exactly its event(s), with the actor; a
failing transaction leaves neither; "today" is the person's local (Berlin) day; tools resolve event
references and refuse bad input without touching the database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.errors import DomainError
from brain.events.actor import USER, ai, system
from brain.events.catalog import DomainEvent
from brain.events.store import EventRecord, query_events
from brain.modules.calendar import service
from brain.modules.calendar.models import CalendarEvent
from brain.people.models import User
from brain.people.service import resolve_identity, set_timezone

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(day: int, hour: int = 0, minute: int = 0, month: int = 11) -> datetime:
    """A Berlin wall-clock time in late 2026 (the clock fixture stands at Monday 30 Nov, 08:30 there)."""
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


async def _count(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


async def _events(brain: Brain, user: User, **filters: Any) -> list[DomainEvent]:
    async with brain.transactions.read() as s:
        return list(reversed(await query_events(s, user.id, module="calendar", **filters)))


async def _stored(brain: Brain, event_id: uuid.UUID) -> CalendarEvent | None:
    async with brain.transactions.read() as s:
        return await s.get(CalendarEvent, event_id)


async def _create(brain: Brain, user: User, title: str, start: datetime, end: datetime | None = None,
                  **kwargs: Any) -> CalendarEvent:
    async with brain.transactions.begin() as uow:
        return await service.create_event(uow, user, USER, title, start, end, **kwargs)


async def _other_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"other-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


async def _today(brain: Brain, user: User) -> list[tuple[int, str]]:
    async with brain.transactions.begin() as uow:
        return [(r.position, r.event.title) for r in await service.todays_events(uow, user)]


# ---- mutations and their events ---------------------------------------------------------------


async def test_create_event_defaults_to_one_hour_and_emits_calendar_event_created(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe("CalendarEventCreated", seen.append)
    event = await _create(brain, user, " Zahnarzt ", berlin(30, 14), location="Praxis Dr. Weiß")
    stored = await _stored(brain, event.id)
    assert stored is not None and stored.user_id == user.id
    assert (stored.title, stored.start_time, stored.end_time) == ("Zahnarzt", berlin(30, 14), berlin(30, 15))
    assert (stored.calendar_id, stored.is_all_day, stored.is_recurring) == ("default", False, False)
    events = await _events(brain, user)
    assert [e.type for e in events] == ["CalendarEventCreated"]
    assert events[0].meta.actor.kind == "user" and events[0].meta.record_id == str(event.id)
    assert events[0].payload.model_dump(include={"title", "start_time", "end_time", "location"}) == {
        "title": "Zahnarzt", "start_time": berlin(30, 14), "end_time": berlin(30, 15),
        "location": "Praxis Dr. Weiß"}
    assert len(seen) == 1


async def test_an_all_day_event_runs_from_local_midnight_to_local_midnight(brain: Brain, user: User) -> None:
    single = await _create(brain, user, "Urlaubstag", berlin(2, 15, month=12), is_all_day=True)
    several = await _create(brain, user, "Messe", berlin(3, month=12), berlin(5, month=12), is_all_day=True)
    assert (single.start_time, single.end_time) == (berlin(2, month=12), berlin(3, month=12))
    # An end at local midnight is exclusive: the fair is on the 3rd and 4th.
    assert (several.start_time, several.end_time) == (berlin(3, month=12), berlin(5, month=12))


async def test_all_day_events_keep_their_dates_when_the_person_moves_zone(brain: Brain, user: User) -> None:
    fair = await _create(brain, user, "Messe", berlin(3, month=12), berlin(5, month=12), is_all_day=True)
    call = await _create(brain, user, "Call", berlin(3, 9, month=12))
    other = await _other_user(brain)
    theirs = await _create(brain, other, "Urlaub", berlin(3, month=12), is_all_day=True)
    new_york = ZoneInfo("America/New_York")
    async with brain.transactions.begin() as uow:
        await set_timezone(uow, user.id, "America/New_York")
    moved, kept, untouched = [await _stored(brain, e.id) for e in (fair, call, theirs)]
    assert moved is not None and kept is not None and untouched is not None
    # Still the 3rd and 4th, now from midnight to midnight in New York (it showed from 18:00 on the 2nd before).
    assert (moved.start_time, moved.end_time) == (datetime(2026, 12, 3, tzinfo=new_york),
                                                  datetime(2026, 12, 5, tzinfo=new_york))
    assert kept.start_time == berlin(3, 9, month=12)  # a timed event stays at its instant
    assert untouched.start_time == berlin(3, month=12)  # another person's zone did not change
    async with brain.transactions.begin() as uow:
        await set_timezone(uow, user.id, "Asia/Tokyo")
    back = await _stored(brain, fair.id)
    assert back is not None and back.start_time == datetime(2026, 12, 3, tzinfo=ZoneInfo("Asia/Tokyo"))


@pytest.mark.parametrize(("start", "end", "code"), [
    (berlin(30, 14), berlin(30, 14), "bad_range"),
    (berlin(30, 14), berlin(30, 13), "bad_range"),
    (berlin(30, 14), berlin(30, 14) + timedelta(days=14, minutes=1), "out_of_range"),
])
async def test_create_event_refuses_a_bad_time_range_and_writes_nothing(
    brain: Brain, user: User, start: datetime, end: datetime, code: str
) -> None:
    with pytest.raises(DomainError) as refused:
        await _create(brain, user, "Kaputt", start, end)
    assert refused.value.code == code
    assert await _count(brain, CalendarEvent) == 0 and await _count(brain, EventRecord) == 0


async def test_an_event_may_last_exactly_fourteen_days(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Reha", berlin(1, month=12), berlin(15, month=12))
    assert event.end_time - event.start_time == timedelta(days=14)


async def test_update_emits_calendar_event_updated_naming_the_changed_fields(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Treffen", berlin(30, 14), location="Café")
    async with brain.transactions.begin() as uow:
        _, changed = await service.update_event(uow, user, ai(rationale="user renamed it"), event.id,
                                                title="Team-Treffen", location="Café", description="Agenda")
    assert changed == ["title", "description"]
    events = await _events(brain, user)
    assert [e.type for e in events] == ["CalendarEventCreated", "CalendarEventUpdated"]
    assert events[1].payload.fields == ["title", "description"]  # type: ignore[attr-defined]
    assert events[1].meta.actor.kind == "ai"
    stored = await _stored(brain, event.id)
    assert stored is not None and (stored.title, stored.description) == ("Team-Treffen", "Agenda")


async def test_update_of_only_the_start_keeps_the_length_and_emits_only_moved(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Workshop", berlin(30, 9), berlin(30, 12))
    async with brain.transactions.begin() as uow:
        _, changed = await service.update_event(uow, user, USER, event.id, start_time=berlin(1, 13, month=12))
    assert changed == ["start_time"]
    stored = await _stored(brain, event.id)
    assert stored is not None and (stored.start_time, stored.end_time) == (berlin(1, 13, month=12),
                                                                            berlin(1, 16, month=12))
    events = await _events(brain, user)
    assert [e.type for e in events] == ["CalendarEventCreated", "CalendarEventMoved"]
    assert events[1].payload.model_dump(include={"old_start", "new_start"}) == {
        "old_start": berlin(30, 9), "new_start": berlin(1, 13, month=12)}


async def test_update_with_a_new_length_emits_updated_for_the_end_and_moved(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Workshop", berlin(30, 9), berlin(30, 12))
    async with brain.transactions.begin() as uow:
        await service.update_event(uow, user, USER, event.id, start_time=berlin(30, 10), end_time=berlin(30, 11))
    events = await _events(brain, user)
    assert [e.type for e in events] == ["CalendarEventCreated", "CalendarEventUpdated", "CalendarEventMoved"]
    assert events[1].payload.fields == ["end_time"]  # type: ignore[attr-defined]


async def test_update_of_only_the_end_emits_updated_without_moved(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Workshop", berlin(30, 9), berlin(30, 12))
    async with brain.transactions.begin() as uow:
        await service.update_event(uow, user, USER, event.id, end_time=berlin(30, 13))
    assert [e.type for e in await _events(brain, user)] == ["CalendarEventCreated", "CalendarEventUpdated"]


async def test_update_refuses_an_end_before_the_start(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Workshop", berlin(30, 9), berlin(30, 12))
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.update_event(uow, user, USER, event.id, end_time=berlin(30, 8))
    assert refused.value.code == "bad_range"
    stored = await _stored(brain, event.id)
    assert stored is not None and stored.end_time == berlin(30, 12)


async def test_move_keeps_the_length_and_emits_calendar_event_moved(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Yoga", berlin(30, 18), berlin(30, 19, 30))
    async with brain.transactions.begin() as uow:
        await service.move_event(uow, user, system("rule"), event.id, berlin(2, 18, month=12))
    stored = await _stored(brain, event.id)
    assert stored is not None and (stored.start_time, stored.end_time) == (berlin(2, 18, month=12),
                                                                            berlin(2, 19, 30, month=12))
    latest = (await _events(brain, user))[-1]
    assert latest.type == "CalendarEventMoved" and latest.meta.actor.kind == "system"
    assert latest.payload.title == "Yoga"  # type: ignore[attr-defined]


async def test_moving_an_all_day_event_keeps_its_days_across_a_dst_change(brain: Brain, user: User) -> None:
    # Two local days, the second of which (Sunday 28 March 2027) has only 23 hours in Berlin.
    event = await _create(brain, user, "Wochenende", berlin(20, month=12), berlin(22, month=12), is_all_day=True)
    async with brain.transactions.begin() as uow:
        await service.move_event(uow, user, USER, event.id, datetime(2027, 3, 27, tzinfo=BERLIN))
    stored = await _stored(brain, event.id)
    assert stored is not None
    assert (stored.start_time, stored.end_time) == (datetime(2027, 3, 27, tzinfo=BERLIN),
                                                    datetime(2027, 3, 29, tzinfo=BERLIN))


async def test_moving_to_the_same_start_emits_nothing(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Yoga", berlin(30, 18))
    async with brain.transactions.begin() as uow:
        await service.move_event(uow, user, USER, event.id, berlin(30, 18))
    assert [e.type for e in await _events(brain, user)] == ["CalendarEventCreated"]


async def test_delete_removes_the_event_and_emits_calendar_event_deleted(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Absage", berlin(30, 18))
    async with brain.transactions.begin() as uow:
        await service.delete_event(uow, user, ai(), event.id)
    assert await _stored(brain, event.id) is None
    latest = (await _events(brain, user))[-1]
    assert latest.type == "CalendarEventDeleted" and latest.meta.record_id == str(event.id)
    assert latest.payload.model_dump(include={"title", "was_recurring"}) == {"title": "Absage", "was_recurring": False}


async def test_failed_transaction_leaves_neither_event_row_nor_domain_event(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe_all(seen.append)
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.create_event(uow, user, USER, "Verloren", berlin(30, 18))
            raise RuntimeError("boom after the write")
    assert await _count(brain, CalendarEvent) == 0
    assert await _count(brain, EventRecord) == 0
    assert seen == []


async def test_failed_transaction_leaves_a_moved_event_where_it_was(brain: Brain, user: User) -> None:
    event = await _create(brain, user, "Fest", berlin(30, 18))
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.move_event(uow, user, USER, event.id, berlin(1, 18, month=12))
            raise RuntimeError("boom after the write")
    stored = await _stored(brain, event.id)
    assert stored is not None and stored.start_time == berlin(30, 18)
    assert [e.type for e in await _events(brain, user)] == ["CalendarEventCreated"]


# ---- today, upcoming and the local day -------------------------------------------------------------


async def test_today_lists_events_overlapping_the_berlin_day(brain: Brain, user: User) -> None:
    await _create(brain, user, "ends at midnight", berlin(29, 23), berlin(30, 0))
    await _create(brain, user, "night shift", berlin(29, 23, 30), berlin(30, 0, 30))
    await _create(brain, user, "breakfast", berlin(30, 7), berlin(30, 8))
    await _create(brain, user, "late call", berlin(30, 23, 30), berlin(30, 23, 59))
    await _create(brain, user, "tomorrow at midnight", berlin(1, 0, month=12))
    await _create(brain, user, "all day", berlin(30), is_all_day=True)
    assert [title for _, title in await _today(brain, user)] == ["night shift", "all day", "breakfast", "late call"]


async def test_today_follows_the_berlin_day_when_utc_is_still_yesterday(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    await _create(brain, user, "monday", berlin(30, 20))
    await _create(brain, user, "tuesday", berlin(1, 0, 30, month=12))
    clock.set(datetime(2026, 11, 30, 22, 59, tzinfo=UTC))  # 23:59 Monday in Berlin
    assert [title for _, title in await _today(brain, user)] == ["monday"]
    clock.set(datetime(2026, 11, 30, 23, 0, tzinfo=UTC))  # 00:00 Tuesday in Berlin, still Monday in UTC
    assert await _today(brain, user) == [(1, "tuesday")]


async def test_upcoming_lists_running_and_future_events_by_start_with_a_limit(brain: Brain, user: User) -> None:
    await _create(brain, user, "over", berlin(30, 7), berlin(30, 8))
    await _create(brain, user, "running", berlin(30, 8), berlin(30, 9))
    await _create(brain, user, "friday", berlin(4, 10, month=12))
    await _create(brain, user, "tonight", berlin(30, 19))
    await _create(brain, user, "next year", datetime(2027, 1, 5, 10, tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        upcoming = await service.upcoming_events(uow, user, limit=3)
        today = await service.todays_events(uow, user)
    # Positions are the agenda's: the same number names the same event in both lists; one that is over has none.
    assert [(r.position, r.event.title) for r in upcoming] == [(1, "running"), (2, "tonight"), (3, "friday")]
    assert [(r.position, r.event.title) for r in today] == [(0, "over"), (1, "running"), (2, "tonight")]


async def test_find_event_resolves_position_id_and_title_fragment(brain: Brain, user: User) -> None:
    dentist = await _create(brain, user, "Zahnarzt", berlin(30, 14))
    party = await _create(brain, user, "Geburtstagsfeier Anna", berlin(5, 19, month=12))
    past = await _create(brain, user, "Altes Treffen", berlin(1, 10))
    async with brain.transactions.begin() as uow:
        assert (await service.find_event(uow, user, "1")).event.id == dentist.id
        assert (await service.find_event(uow, user, "#2")).event.id == party.id
        assert (await service.find_event(uow, user, str(party.id))).position == 2
        assert (await service.find_event(uow, user, "anna")).event.id == party.id
        found_past = await service.find_event(uow, user, "altes")
        assert found_past.event.id == past.id and found_past.position == 0
        assert (await service.find_event(uow, user, str(past.id))).event.id == past.id


async def test_find_event_takes_the_titles_words_in_another_order(brain: Brain, user: User) -> None:
    bank = await _create(brain, user, "Call with the bank", berlin(30, 14))
    await _create(brain, user, "Bank holiday party", berlin(2, 18, month=12))
    async with brain.transactions.begin() as uow:
        assert (await service.find_event(uow, user, "the bank call")).event.id == bank.id
        with pytest.raises(DomainError) as missing:  # every word must be in the title
            await service.find_event(uow, user, "bank lunch")
        assert missing.value.code == "not_found"
    other = await _other_user(brain)
    async with brain.transactions.begin() as uow:
        with pytest.raises(DomainError):  # another person's titles are never searched
            await service.find_event(uow, other, "the bank call")


async def test_find_event_refuses_ambiguous_fragments_and_unknown_references(brain: Brain, user: User) -> None:
    await _create(brain, user, "Laufen im Park", berlin(30, 18))
    await _create(brain, user, "Laufen am See", berlin(2, 18, month=12))
    async with brain.transactions.begin() as uow:
        with pytest.raises(DomainError) as ambiguous:
            await service.find_event(uow, user, "laufen")
        assert ambiguous.value.code == "ambiguous"
        assert "2. Laufen am See" in ambiguous.value.text.params["choices"]
        for reference in ("3", str(uuid.uuid4()), "Kino"):
            with pytest.raises(DomainError) as missing:
                await service.find_event(uow, user, reference)
            assert missing.value.code == "not_found"


async def test_one_persons_events_are_invisible_to_another(brain: Brain, user: User) -> None:
    mine = await _create(brain, user, "Mein Termin", berlin(30, 12))
    other = await _other_user(brain)
    await _create(brain, other, "Fremder Termin", berlin(30, 13))
    assert await _today(brain, user) == [(1, "Mein Termin")]
    assert await _today(brain, other) == [(1, "Fremder Termin")]
    async with brain.transactions.begin() as uow:
        assert [r.event.title for r in await service.upcoming_events(uow, other)] == ["Fremder Termin"]
        for reference in (str(mine.id), "Mein"):
            with pytest.raises(DomainError):
                await service.find_event(uow, other, reference)
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.delete_event(uow, other, USER, mine.id)
    assert refused.value.code == "not_found"
    result = await brain.tools.execute(other.id, "move_event", {"event": str(mine.id), "start_time": "2026-12-01"},
                                       USER)
    assert not result.ok and result.error_code == "not_found"
    assert await _stored(brain, mine.id) is not None


# ---- through the tool executor --------------------------------------------------------------------


async def _snapshot(brain: Brain) -> tuple[int, int]:
    return await _count(brain, CalendarEvent), await _count(brain, EventRecord)


async def test_create_event_tool_reads_times_as_the_persons_local_time(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(
        user.id, "create_event", {"title": "Friseur", "start_time": "2026-12-01T10:00", "location": "Salon"}, USER
    )
    assert result.ok, result.message
    assert result.data["start"] == "2026-12-01T10:00:00+01:00" and result.data["end"] == "2026-12-01T11:00:00+01:00"
    stored = await _stored(brain, uuid.UUID(result.data["id"]))
    assert stored is not None and stored.start_time == datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    assert [e.type for e in await _events(brain, user)] == ["CalendarEventCreated"]


async def test_create_event_tool_keeps_an_event_already_over_and_says_it_is_past(brain: Brain, user: User) -> None:
    # The clock stands at 8:30 in Berlin: 7:00-8:00 is over, 8:00-9:00 going on, an all-day event today is neither.
    past = await brain.tools.execute(user.id, "create_event", {"title": "Run", "start_time": "2026-11-30T07:00"}, USER)
    assert past.ok and past.message is not None
    assert past.message.msgid == "Added {title} at {start}. That time has already passed: it is kept as a past event."
    for arguments in ({"title": "Call", "start_time": "2026-11-30T08:00"},
                      {"title": "Holiday", "start_time": "2026-11-30", "is_all_day": True}):
        result = await brain.tools.execute(user.id, "create_event", arguments, USER)
        assert result.ok and result.message is not None and "passed" not in result.message.msgid
    assert await _count(brain, CalendarEvent) == 3


async def test_create_event_tool_takes_the_end_of_an_all_day_event_as_its_last_day(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "create_event", {
        "title": "Weihnachten", "start_time": "2026-12-24", "end_time": "2026-12-26", "is_all_day": "yes"}, USER)
    assert result.ok, result.message
    stored = await _stored(brain, uuid.UUID(result.data["id"]))
    assert stored is not None and stored.is_all_day
    assert (stored.start_time, stored.end_time) == (berlin(24, month=12), berlin(27, month=12))


async def test_event_tools_resolve_references_and_list_with_positions(brain: Brain, user: User) -> None:
    for title, start in [("Kino", "2026-12-02T20:00"), ("Mittagessen", "2026-11-30T12:00")]:
        assert (await brain.tools.execute(user.id, "create_event", {"title": title, "start_time": start}, USER)).ok
    today = await brain.tools.execute(user.id, "get_todays_events", {}, USER)
    assert [(e["position"], e["title"]) for e in today.data["events"]] == [(1, "Mittagessen")]
    upcoming = await brain.tools.execute(user.id, "get_upcoming_events", {"limit": "5"}, USER)
    assert [(e["position"], e["title"], e["location"]) for e in upcoming.data["events"]] == [
        (1, "Mittagessen", None), (2, "Kino", None)]
    moved = await brain.tools.execute(user.id, "move_event", {"event": "2", "start_time": "2026-12-03T19:00"}, USER)
    assert moved.ok and moved.data["end"] == "2026-12-03T20:00:00+01:00"
    updated = await brain.tools.execute(user.id, "update_event", {"event": "kino", "location": "Astor"}, USER)
    assert updated.ok and updated.data["changed"] == ["location"] and updated.data["location"] == "Astor"
    deleted = await brain.tools.execute(user.id, "delete_event", {"event": "Mittag"}, USER)
    assert deleted.ok
    assert [e.type for e in await _events(brain, user)] == [
        "CalendarEventCreated", "CalendarEventCreated", "CalendarEventMoved", "CalendarEventUpdated",
        "CalendarEventDeleted"]


@pytest.mark.parametrize(("tool", "arguments", "code"), [
    ("create_event", {"title": "Kino", "start_time": "soon"}, "bad_datetime"),
    ("create_event", {"title": "Kino", "start_time": "2026-12-02T20:00", "is_all_day": "maybe"}, "bad_type"),
    ("create_event", {"title": "Kino"}, "missing_parameter"),
    ("create_event", {"title": "Kino", "start_time": "2026-12-02T20:00", "end_time": "2026-12-02T19:00"},
     "bad_range"),
    ("create_event", {"title": "Kino", "start_time": "2026-12-02T20:00", "end_time": "2026-12-20T20:00"},
     "out_of_range"),
    ("create_event", {"title": ["Kino"], "start_time": "2026-12-02T20:00"}, "bad_type"),
    ("move_event", {"event": "Zahnarzt", "start_time": "2026-12-02T20:00"}, "not_found"),
    ("move_event", {"event": "5", "start_time": "2026-12-02T20:00"}, "not_found"),
    ("delete_event", {}, "missing_parameter"),
    ("update_event", {"event": "1"}, "nothing_to_change"),
    ("get_upcoming_events", {"limit": 0}, "out_of_range"),
    ("get_upcoming_events", {"limit": "many"}, "bad_type"),
])
async def test_event_tools_refuse_bad_arguments_and_leave_the_database_unchanged(
    brain: Brain, user: User, tool: str, arguments: dict[str, Any], code: str
) -> None:
    created = await brain.tools.execute(user.id, "create_event", {"title": "Da", "start_time": "2026-11-30T12:00"},
                                        USER)
    assert created.ok
    before = await _snapshot(brain)
    result = await brain.tools.execute(user.id, tool, arguments, USER)
    assert not result.ok and result.error_code == code
    assert result.message is not None
    assert await _snapshot(brain) == before


@pytest.mark.parametrize(("start", "last", "span", "says"), [
    ("2026-12-24", "2026-12-24", (berlin(24, month=12), berlin(25, month=12)), "Added Heiligabend on Thu, Dec 24"),
    ("2026-12-24", None, (berlin(24, month=12), berlin(25, month=12)), "Added Heiligabend on Thu, Dec 24"),
    ("2026-12-24", "2026-12-26", (berlin(24, month=12), berlin(27, month=12)),
     "Added Heiligabend from Thu, Dec 24 to Sat, Dec 26"),
    # The last day is the one the clocks go forward: its midnight after is 23 hours later.
    ("2027-03-26", "2027-03-28", (datetime(2027, 3, 26, tzinfo=BERLIN), datetime(2027, 3, 29, tzinfo=BERLIN)),
     "Added Heiligabend from Fri, Mar 26"),
])
async def test_create_event_tool_names_the_days_of_an_all_day_event(
    brain: Brain, user: User, start: str, last: str | None, span: tuple[datetime, datetime], says: str
) -> None:
    from brain.i18n import Renderer

    arguments: dict[str, Any] = {"title": "Heiligabend", "start_time": start, "is_all_day": True}
    if last is not None:
        arguments["end_time"] = last
    result = await brain.tools.execute(user.id, "create_event", arguments, USER)
    assert result.ok and result.message is not None
    stored = await _stored(brain, uuid.UUID(result.data["id"]))
    assert stored is not None and (stored.start_time, stored.end_time) == span
    reply = Renderer("en", "Europe/Berlin")(result.message)
    assert says in reply
    if start.startswith("2027"):
        assert "to Sun, Mar 28" in reply


async def test_move_event_takes_a_new_day_or_time_of_day_and_keeps_the_other_part(brain: Brain, user: User) -> None:
    # "move the dentist to Friday" keeps 14:00; "... to 16:30" keeps the day; the length stays; neither is refused.
    event = await _create(brain, user, "Zahnarzt", berlin(1, 14, month=12), berlin(1, 14, 45, month=12))
    moved = await brain.tools.execute(user.id, "move_event", {"event": "Zahnarzt", "date": "2026-12-04"}, USER)
    assert moved.ok, moved.message
    stored = await _stored(brain, event.id)
    assert stored is not None and (stored.start_time, stored.end_time) == (berlin(4, 14, month=12),
                                                                             berlin(4, 14, 45, month=12))
    assert (await brain.tools.execute(user.id, "move_event", {"event": "Zahnarzt", "time": "16:30"}, USER)).ok
    stored = await _stored(brain, event.id)
    assert stored is not None and stored.start_time == berlin(4, 16, 30, month=12)
    before = await _snapshot(brain)
    refused = await brain.tools.execute(user.id, "move_event", {"event": "Zahnarzt"}, USER)
    assert not refused.ok and refused.error_code == "missing_time"
    assert await _snapshot(brain) == before
