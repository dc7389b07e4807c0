"""Places module: each mutation writes its record and exactly its event, with the actor; a failing
transaction leaves neither; places are found by position, id or name; locations near a known place
become visits; tool calls coerce or refuse their arguments; one person never sees another's places."""

from __future__ import annotations

import math
import uuid
from datetime import date, datetime, timedelta
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
from brain.modules.places import service
from brain.modules.places.models import LocationLog, Place, PlaceVisit, TrackingSession
from brain.people.models import User
from brain.people.service import resolve_identity

BERLIN = ZoneInfo("Europe/Berlin")
BRANDENBURG_GATE = (52.516275, 13.377704)
ALEXANDERPLATZ = (52.521918, 13.413215)
MUSEUM_ISLAND = (52.5169, 13.4019)
HOME = (52.5, 13.4)
# One metre of latitude is about 1/111195 degree on a 6371 km sphere.
METRE_LAT = 1 / 111_195


def haversine_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lng1, lat2, lng2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * 6_371_000 * math.asin(math.sqrt(h))


async def _count(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


async def _counts(brain: Brain) -> tuple[int, ...]:
    return tuple([await _count(brain, m) for m in (Place, PlaceVisit, LocationLog, TrackingSession, EventRecord)])


async def _other_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"other-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


async def _place(brain: Brain, user: User, name: str, at: tuple[float, float] | None = None, **kw: Any) -> Place:
    async with brain.transactions.begin() as uow:
        lat, lng = at if at else (None, None)
        return await service.create_place(uow, user, USER, name, lat=lat, lng=lng, **kw)


async def test_create_place_writes_place_and_event_with_user_actor(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe("PlaceCreated", seen.append)
    place = await _place(brain, user, " Gym ", (52.51, 13.39), category="sport", address="Sportweg 1")
    async with brain.transactions.read() as s:
        stored = await s.get(Place, place.id)
        events = await query_events(s, user.id, module="places")
    assert stored is not None and stored.user_id == user.id
    assert (stored.name, stored.category, stored.lat, stored.lng, stored.address) == (
        "Gym", "sport", 52.51, 13.39, "Sportweg 1")
    assert stored.visit_count == 0 and stored.last_visited_at is None
    assert [e.type for e in events] == ["PlaceCreated"]
    assert events[0].meta.actor.kind == "user" and events[0].meta.record_id == str(place.id)
    payload: Any = events[0].payload
    assert (payload.name, payload.category, payload.lat, payload.lng) == ("Gym", "sport", 52.51, 13.39)
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("name", "kwargs", "code"),
    [
        ("", {}, "empty"),
        ("x" * 101, {}, "too_long"),
        ("42", {}, "bad_name"),
        ("Castle", {"category": "castle"}, "bad_enum"),
        ("North pole+", {"lat": 90.5, "lng": 0.0}, "out_of_range"),
        ("Date line+", {"lat": 0.0, "lng": -180.5}, "out_of_range"),
        ("Half", {"lat": 52.5}, "incomplete_coordinates"),
        ("Home", {}, "duplicate"),
        ("HOME", {}, "duplicate"),
    ],
)
async def test_create_place_refuses_invalid_input_without_writing(
    brain: Brain, user: User, name: str, kwargs: dict[str, Any], code: str
) -> None:
    await _place(brain, user, "Home")
    before = await _counts(brain)
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.create_place(uow, user, USER, name, **kwargs)
    assert refused.value.code == code
    assert await _counts(brain) == before


async def test_failed_transaction_leaves_neither_place_nor_event(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe_all(seen.append)
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.create_place(uow, user, USER, "Home", lat=HOME[0], lng=HOME[1])
            await service.start_tracking(uow, user, USER)
            await service.log_location(uow, user, USER, *HOME)
            raise RuntimeError("boom after the write")
    assert await _counts(brain) == (0, 0, 0, 0, 0)
    assert seen == []


async def test_places_are_found_by_position_id_or_name_fragment(brain: Brain, user: User) -> None:
    home = await _place(brain, user, "Home")
    office = await _place(brain, user, "Home office")
    gym = await _place(brain, user, "Gym")
    async with brain.transactions.begin() as uow:
        await service.visit_place(uow, user, USER, "gym")
    async with brain.transactions.begin() as uow:
        # Order is by visits, then name: Gym (1 visit), Home, Home office.
        assert (await service.find_place(uow, user, "1")).id == gym.id
        assert (await service.find_place(uow, user, " 3 ")).id == office.id
        assert (await service.find_place(uow, user, str(home.id))).id == home.id
        assert (await service.find_place(uow, user, "HOME")).id == home.id  # an exact name beats fragments
        assert (await service.find_place(uow, user, "offi")).id == office.id
        # LIKE wildcards in a fragment are matched literally.
        for ref, code in (("ho", "ambiguous"), ("4", "not_found"), ("0", "not_found"), ("Moon", "not_found"),
                          (str(uuid.uuid4()), "not_found"), ("  ", "missing_place"), ("_", "not_found"),
                          ("%", "not_found")):
            with pytest.raises(DomainError) as refused:
                await service.find_place(uow, user, ref)
            assert refused.value.code == code, ref
    with pytest.raises(DomainError) as ambiguous:
        async with brain.transactions.begin() as uow:
            await service.find_place(uow, user, "me")
    assert "Home" in ambiguous.value.text.params["names"] and "Home office" in ambiguous.value.text.params["names"]


async def test_names_are_matched_without_accents_or_case_and_an_ambiguous_one_names_positions(
    brain: Brain, user: User
) -> None:
    cafe = await _place(brain, user, "Café Luna")
    bar = await _place(brain, user, "Luna Bar")
    with pytest.raises(DomainError) as duplicate:
        await _place(brain, user, "cafe  LUNA")  # the same place, written plainly
    assert duplicate.value.code == "duplicate"
    async with brain.transactions.begin() as uow:
        assert (await service.find_place(uow, user, "cafe luna")).id == cafe.id
        assert (await service.find_place(uow, user, "CAFÉ")).id == cafe.id
        assert (await service.find_place(uow, user, "bar")).id == bar.id
        with pytest.raises(DomainError) as ambiguous:
            await service.find_place(uow, user, "luna")
    assert ambiguous.value.code == "ambiguous"
    assert ambiguous.value.text.params["names"] == "1. Café Luna, 2. Luna Bar"  # the numbers /place takes


async def test_a_name_with_umlauts_is_found_however_they_are_written(brain: Brain, user: User) -> None:
    """Umlauts typed as ae/oe/ue or left off, and ß as ss, name the same place, on either side."""
    bakery = await _place(brain, user, "Bäckerei Müller")
    cafe = await _place(brain, user, "Cafe Koenig")
    for written in ("Baeckerei Mueller", "backerei muller"):
        with pytest.raises(DomainError) as duplicate:
            await _place(brain, user, written)
        assert duplicate.value.code == "duplicate", written
    async with brain.transactions.begin() as uow:
        for ref in ("Baeckerei Mueller", "backerei muller", "mueller", "Müller"):
            assert (await service.find_place(uow, user, ref)).id == bakery.id, ref
        for ref in ("Café König", "cafe konig", "könig"):
            assert (await service.find_place(uow, user, ref)).id == cafe.id, ref


async def test_visit_place_records_a_visit_and_emits_the_new_count(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    gym = await _place(brain, user, "Gym")
    async with brain.transactions.begin() as uow:
        await service.visit_place(uow, user, USER, "Gym")
    clock.advance(timedelta(hours=1))
    async with brain.transactions.begin() as uow:
        visit, place = await service.visit_place(uow, user, ai(rationale="user said they are at the gym"), "1")
    assert place.visit_count == 2
    async with brain.transactions.read() as s:
        stored = await s.get(Place, gym.id)
        visits = (await s.scalars(select(PlaceVisit).order_by(PlaceVisit.visited_at))).all()
        events = await query_events(s, user.id, types="PlaceVisited")
    assert stored is not None and stored.visit_count == 2 and stored.last_visited_at == clock.now()
    assert [v.source for v in visits] == ["manual", "manual"] and visits[1].id == visit.id
    assert all(v.user_id == user.id and v.local_date == date(2026, 11, 30) for v in visits)
    assert [e.payload.visit_count for e in events] == [2, 1]  # type: ignore[attr-defined]
    assert events[0].meta.record_id == str(visit.id) and events[0].meta.actor.kind == "ai"
    assert events[0].payload.place_id == gym.id  # type: ignore[attr-defined]


async def test_delete_place_emits_place_deleted_and_keeps_the_location_history(brain: Brain, user: User) -> None:
    home = await _place(brain, user, "Home", HOME)
    async with brain.transactions.begin() as uow:
        result = await service.log_location(uow, user, USER, *HOME)
    assert result.place is not None and result.visit is not None
    async with brain.transactions.begin() as uow:
        deleted = await service.delete_place(uow, user, ai(rationale="user moved out"), "home")
    assert deleted.id == home.id
    async with brain.transactions.read() as s:
        latest = (await query_events(s, user.id, module="places", limit=1))[0]
        log = await s.get(LocationLog, result.log.id)
    assert latest.type == "PlaceDeleted" and latest.meta.record_id == str(home.id)
    assert latest.payload.name == "Home" and latest.meta.actor.kind == "ai"  # type: ignore[attr-defined]
    assert await _count(brain, Place) == 0 and await _count(brain, PlaceVisit) == 0
    assert log is not None and log.place_id is None


async def test_nearest_place_uses_haversine_distance_over_own_places_only(brain: Brain, user: User) -> None:
    await _place(brain, user, "Brandenburg Gate", BRANDENBURG_GATE)
    await _place(brain, user, "Alexanderplatz", ALEXANDERPLATZ)
    await _place(brain, user, "Somewhere without coordinates")
    other = await _other_user(brain)
    await _place(brain, other, "Museum", MUSEUM_ISLAND)
    async with brain.transactions.begin() as uow:
        found = await service.nearest_place(uow, user, *MUSEUM_ISLAND)
        from_gate = await service.nearest_place(uow, user, 52.5163, 13.3777)
    assert found is not None and from_gate is not None
    place, distance = found
    assert place.name == "Alexanderplatz"
    assert distance == pytest.approx(haversine_m(MUSEUM_ISLAND, ALEXANDERPLATZ), abs=0.5)
    assert 900 < distance < 1000
    assert from_gate[0].name == "Brandenburg Gate" and from_gate[1] < 5
    result = await brain.tools.execute(user.id, "nearest_place", {"lat": "52.5169", "lng": 13.4019}, USER)
    assert result.ok and result.data["place"]["name"] == "Alexanderplatz"
    assert result.data["distance_m"] == round(haversine_m(MUSEUM_ISLAND, ALEXANDERPLATZ))
    # The other person's closest place is theirs, however far away the query point is.
    theirs = await brain.tools.execute(other.id, "nearest_place", {"lat": 0, "lng": 0}, USER)
    assert theirs.ok and theirs.data["place"]["name"] == "Museum" and theirs.data["distance_m"] > 5_000_000


async def test_a_location_within_150_m_of_a_place_becomes_a_visit_at_most_every_two_hours(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    home = await _place(brain, user, "Home", HOME)
    actor = system("rule")

    async def log(metres_north: float) -> service.LocationResult:
        async with brain.transactions.begin() as uow:
            return await service.log_location(uow, user, actor, HOME[0] + metres_north * METRE_LAT, HOME[1], 12.5)

    first = await log(100)
    assert first.place is not None and first.place.id == home.id and first.visit is not None
    assert first.distance_m == pytest.approx(100, abs=0.5)
    clock.advance(timedelta(minutes=119))
    too_soon = await log(50)
    assert too_soon.place is not None and too_soon.visit is None
    clock.advance(timedelta(minutes=1))
    again = await log(140)
    assert again.visit is not None
    clock.advance(timedelta(hours=3))
    outside = await log(160)
    assert outside.place is None and outside.distance_m is None and outside.visit is None

    async with brain.transactions.read() as s:
        stored = await s.get(Place, home.id)
        logs = (await s.scalars(select(LocationLog).order_by(LocationLog.logged_at))).all()
        events = await query_events(s, user.id, module="places", types=["LocationLogged", "PlaceVisited"])
    assert stored is not None and stored.visit_count == 2
    assert [log.place_id for log in logs] == [home.id, home.id, home.id, None]
    assert all(log.accuracy == 12.5 and log.user_id == user.id for log in logs)
    assert [e.type for e in reversed(events)] == [
        "LocationLogged", "PlaceVisited", "LocationLogged", "LocationLogged", "PlaceVisited", "LocationLogged"]
    assert all(e.meta.actor.kind == "system" for e in events)
    visited: Any = events[1].payload
    assert visited.visit_count == 2 and visited.place_id == home.id
    logged: Any = events[-1].payload
    assert logged.place_id == home.id and logged.accuracy == 12.5 and events[-1].meta.record_id == str(first.log.id)
    async with brain.transactions.read() as s:
        sources = (await s.scalars(select(PlaceVisit.source))).all()
    assert sources == ["location", "location"]


async def test_tracking_session_counts_its_location_logs_and_duration(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    async with brain.transactions.begin() as uow:
        await service.log_location(uow, user, USER, *HOME)  # before the session: not counted
    async with brain.transactions.begin() as uow:
        started = await service.start_tracking(uow, user, USER)
    with pytest.raises(DomainError) as twice:
        async with brain.transactions.begin() as uow:
            await service.start_tracking(uow, user, USER)
    assert twice.value.code == "already_tracking"
    for minutes in (10, 20):
        clock.advance(timedelta(minutes=minutes))
        async with brain.transactions.begin() as uow:
            await service.log_location(uow, user, USER, *ALEXANDERPLATZ)
    clock.advance(timedelta(minutes=60))
    async with brain.transactions.begin() as uow:
        stopped = await service.stop_tracking(uow, user, ai(rationale="user arrived"))
    assert stopped.id == started.id and stopped.duration_ms == 90 * 60 * 1000 and stopped.log_count == 2
    async with brain.transactions.read() as s:
        stored = await s.get(TrackingSession, started.id)
        events = await query_events(s, user.id, types=["TrackingStarted", "TrackingStopped"])
    assert stored is not None and stored.stopped_at == clock.now() and stored.user_id == user.id
    assert [e.type for e in events] == ["TrackingStopped", "TrackingStarted"]
    stop: Any = events[0].payload
    assert (stop.session_id, stop.duration_ms, stop.log_count) == (started.id, 5_400_000, 2)
    assert events[0].meta.actor.kind == "ai" and events[1].meta.actor.kind == "user"
    assert events[1].payload.timestamp == started.started_at  # type: ignore[attr-defined]
    with pytest.raises(DomainError) as not_running:
        async with brain.transactions.begin() as uow:
            await service.stop_tracking(uow, user, USER)
    assert not_running.value.code == "not_tracking"


async def test_places_visited_today_ignores_other_days(brain: Brain, user: User, clock: FixedClock) -> None:
    await _place(brain, user, "Home")
    await _place(brain, user, "Gym")
    await _place(brain, user, "Bakery")
    clock.set(datetime(2026, 11, 29, 18, 0, tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        await service.visit_place(uow, user, USER, "Gym")
    for hour, name in ((7, "Bakery"), (9, "Home"), (19, "Home")):
        clock.set(datetime(2026, 11, 30, hour, 0, tzinfo=BERLIN))
        async with brain.transactions.begin() as uow:
            await service.visit_place(uow, user, USER, name)
    async with brain.transactions.begin() as uow:
        today = await service.places_visited(uow, user)
    assert [(t.place.name, t.visits) for t in today] == [("Bakery", 1), ("Home", 2)]
    assert today[1].first_at == datetime(2026, 11, 30, 9, 0, tzinfo=BERLIN)
    assert today[1].last_at == datetime(2026, 11, 30, 19, 0, tzinfo=BERLIN)
    result = await brain.tools.execute(user.id, "get_places", {"visited_today": "yes"}, USER)
    assert result.ok and [p["name"] for p in result.data["places"]] == ["Bakery", "Home"]
    assert result.data["places"][1]["visits_today"] == 2


async def test_get_places_sorts_by_visits_or_name_with_stable_positions(brain: Brain, user: User) -> None:
    await _place(brain, user, "Zoo")
    await _place(brain, user, "Bakery")
    await _place(brain, user, "Office")
    for name in ("Zoo", "Zoo", "Office"):
        ok = await brain.tools.execute(user.id, "visit_place", {"place": name}, USER)
        assert ok.ok
    by_visits = await brain.tools.execute(user.id, "get_places", {}, USER)
    by_name = await brain.tools.execute(user.id, "get_places", {"sort": "Name"}, USER)
    assert [(p["position"], p["name"], p["visit_count"]) for p in by_visits.data["places"]] == [
        (1, "Zoo", 2), (2, "Office", 1), (3, "Bakery", 0)]
    assert [(p["position"], p["name"]) for p in by_name.data["places"]] == [(3, "Bakery"), (2, "Office"), (1, "Zoo")]
    visited = await brain.tools.execute(user.id, "visit_place", {"place": "3"}, USER)
    assert visited.ok and visited.data["place"]["name"] == "Bakery" and visited.data["place"]["visit_count"] == 1


async def test_places_tools_coerce_arguments_and_run_a_whole_day(brain: Brain, user: User) -> None:
    created = await brain.tools.execute(
        user.id, "create_place", {"name": "Home", "category": "HOME", "lat": "52.5", "lng": "13,4"}, USER)
    assert created.ok, created.message
    assert created.data["place"]["lat"] == 52.5 and created.data["place"]["lng"] == 13.4
    assert created.data["place"]["category"] == "home"
    uuid.UUID(created.data["place"]["place_id"])
    started = await brain.tools.execute(user.id, "start_tracking", {}, USER)
    assert started.ok
    logged = await brain.tools.execute(user.id, "log_location", {"lat": "52.5005", "lng": 13.4, "accuracy": "8"},
                                       USER)
    assert logged.ok and logged.data["place"]["name"] == "Home" and logged.data["distance_m"] == 56
    assert logged.data["visit_id"] is not None
    stopped = await brain.tools.execute(user.id, "stop_tracking", {}, USER)
    assert stopped.ok and stopped.data["log_count"] == 1 and stopped.data["duration_ms"] == 0
    deleted = await brain.tools.execute(user.id, "delete_place", {"place": created.data["place"]["place_id"]}, USER)
    assert deleted.ok and await _count(brain, Place) == 0


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("create_place", {"name": "Far", "lat": 200, "lng": 0}, "out_of_range"),
        ("create_place", {"name": "Far", "lat": 0, "lng": "-181"}, "out_of_range"),
        ("create_place", {"name": "Half", "lat": 52.5}, "incomplete_coordinates"),
        ("create_place", {"name": "Castle", "category": "castle"}, "bad_enum"),
        ("create_place", {"name": "home"}, "duplicate"),
        ("create_place", {"name": "7"}, "bad_name"),
        ("create_place", {"category": "sport"}, "missing_parameter"),
        ("create_place", {"name": "Pool", "lat": "north", "lng": 13}, "bad_type"),
        ("visit_place", {"place": "Nowhere"}, "not_found"),
        ("visit_place", {"place": "o"}, "ambiguous"),
        ("visit_place", {"place": "9"}, "not_found"),
        ("visit_place", {}, "missing_parameter"),
        ("visit_place", {"place": True}, "bad_type"),
        ("delete_place", {"place": str(uuid.uuid4())}, "not_found"),
        ("log_location", {"lat": "200", "lng": "13"}, "out_of_range"),
        ("log_location", {"lat": "north", "lng": 13}, "bad_type"),
        ("log_location", {"lat": 52.5}, "missing_parameter"),
        ("log_location", {"lat": 52.5, "lng": 13.4, "accuracy": -1}, "out_of_range"),
        ("stop_tracking", {}, "not_tracking"),
        ("nearest_place", {"lat": 0, "lng": 181}, "out_of_range"),
        ("get_places", {"sort": "distance"}, "bad_enum"),
    ],
)
async def test_places_tool_refusals_return_an_error_code_and_change_nothing(
    brain: Brain, user: User, tool: str, args: dict[str, Any], code: str
) -> None:
    await _place(brain, user, "Home", HOME)
    await _place(brain, user, "Home office")
    before = await _counts(brain)
    result = await brain.tools.execute(user.id, tool, args, USER)
    assert not result.ok and result.error_code == code
    assert result.message is not None
    assert await _counts(brain) == before


async def test_starting_tracking_twice_through_the_tool_is_refused_and_changes_nothing(
    brain: Brain, user: User
) -> None:
    assert (await brain.tools.execute(user.id, "start_tracking", {}, USER)).ok
    before = await _counts(brain)
    again = await brain.tools.execute(user.id, "start_tracking", {}, USER)
    assert not again.ok and again.error_code == "already_tracking"
    assert await _counts(brain) == before


async def test_one_person_never_sees_or_touches_another_persons_places(brain: Brain, user: User) -> None:
    home = await _place(brain, user, "Home", HOME)
    async with brain.transactions.begin() as uow:
        await service.visit_place(uow, user, USER, "Home")
        await service.start_tracking(uow, user, USER)
    other = await _other_user(brain)
    listed = await brain.tools.execute(other.id, "get_places", {}, USER)
    assert listed.ok and listed.data["places"] == []
    today = await brain.tools.execute(other.id, "get_places", {"visited_today": True}, USER)
    assert today.ok and today.data["places"] == []
    for tool in ("visit_place", "delete_place"):
        for ref in (str(home.id), "Home", "1"):
            result = await brain.tools.execute(other.id, tool, {"place": ref}, USER)
            assert not result.ok and result.error_code == "not_found", (tool, ref)
    nearest = await brain.tools.execute(other.id, "nearest_place", {"lat": HOME[0], "lng": HOME[1]}, USER)
    assert nearest.ok and nearest.data["place"] is None
    async with brain.transactions.begin() as uow:
        logged = await service.log_location(uow, other, USER, *HOME)
    assert logged.place is None and logged.log.session_id is None  # the first person's session is not theirs
    stop = await brain.tools.execute(other.id, "stop_tracking", {}, USER)
    assert not stop.ok and stop.error_code == "not_tracking"
    # The other person may use the same name: names are unique per person only.
    assert (await brain.tools.execute(other.id, "create_place", {"name": "Home"}, USER)).ok
    async with brain.transactions.read() as s:
        mine = await s.get(Place, home.id)
        other_events = await query_events(s, other.id, module="places")
    assert mine is not None and mine.visit_count == 1
    assert sorted(e.type for e in other_events) == ["LocationLogged", "PlaceCreated"]
