"""Places mutations (each emits its event in the same unit of work), the location log with its
automatic visits, tracking sessions, and the read side: lists, nearest place, today's visits."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.sql import Select

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    LocationLogged,
    PlaceCreated,
    PlaceDeleted,
    PlaceVisitDeleted,
    PlaceVisited,
    TrackingStarted,
    TrackingStopped,
)
from brain.i18n import tr
from brain.modules.places.models import LocationLog, Place, PlaceVisit, TrackingSession
from brain.names import name_key
from brain.people.local_time import local_date
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork

CATEGORIES: tuple[str, ...] = ("home", "work", "food", "shopping", "sport", "culture", "nature", "transport",
                               "health", "education", "nightlife", "other")
MAX_NAME, MAX_ADDRESS = 100, 300
MIN_LAT, MAX_LAT = -90.0, 90.0
MIN_LNG, MAX_LNG = -180.0, 180.0
MAX_ACCURACY_M = 100_000.0
AUTO_VISIT_RADIUS_M = 150.0
# A person lingering near a place sends many location logs; one visit per stay is what counts.
AUTO_VISIT_GAP = timedelta(hours=2)
EARTH_RADIUS_M = 6_371_000.0
_AMBIGUOUS_SHOWN = 5

PlaceOrder = Literal["visits", "name"]
VisitSource = Literal["manual", "location"]


@dataclass(frozen=True)
class LocationResult:
    log: LocationLog
    place: Place | None
    distance_m: float | None
    visit: PlaceVisit | None


@dataclass(frozen=True)
class PlaceToday:
    place: Place
    visits: int
    first_at: datetime
    last_at: datetime


def _check_coordinates(lat: float | None, lng: float | None) -> None:
    if (lat is None) != (lng is None):
        raise DomainError(tr("Give both latitude and longitude, or neither."), code="incomplete_coordinates")
    if lat is not None and not MIN_LAT <= lat <= MAX_LAT:
        raise DomainError(tr("Latitude must be between {min} and {max}.", min=MIN_LAT, max=MAX_LAT),
                          code="out_of_range")
    if lng is not None and not MIN_LNG <= lng <= MAX_LNG:
        raise DomainError(tr("Longitude must be between {min} and {max}.", min=MIN_LNG, max=MAX_LNG),
                          code="out_of_range")


def _check_category(category: str | None) -> None:
    if category is not None and category not in CATEGORIES:
        raise DomainError(tr("Unknown place category: {name}. Known: {choices}.", name=category[:32],
                             choices=", ".join(CATEGORIES)), code="bad_enum")


def _clean_name(name: str) -> str:
    text = name.strip()
    if not text:
        raise DomainError(tr("A place needs a name."), code="empty")
    if len(text) > MAX_NAME:
        raise DomainError(tr("A place name can be at most {max} characters.", max=MAX_NAME), code="too_long")
    if text.isdigit():
        # Bare numbers are read as list positions when a place is looked up.
        raise DomainError(tr("A place name cannot be just a number."), code="bad_name")
    return text


def distance_sql(lat: float, lng: float) -> ColumnElement[float]:
    """Haversine distance in metres from (lat, lng) to a place's coordinates, evaluated in SQL."""
    half_dlat = func.radians(Place.lat - lat) / 2
    half_dlng = func.radians(Place.lng - lng) / 2
    a = (func.power(func.sin(half_dlat), 2)
         + math.cos(math.radians(lat)) * func.cos(func.radians(Place.lat)) * func.power(func.sin(half_dlng), 2))
    # least() guards asin against rounding just above 1 for antipodal points.
    return 2 * EARTH_RADIUS_M * func.asin(func.sqrt(func.least(a, 1.0)))


def _canonical(stmt: Select[Any]) -> Select[Any]:
    """The order that list positions refer to: most visited first, then by name."""
    return stmt.order_by(Place.visit_count.desc(), func.lower(Place.name), Place.created_at, Place.id)


async def create_place(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    name: str,
    *,
    category: str | None = None,
    lat: float | None = None,
    lng: float | None = None,
    address: str | None = None,
) -> Place:
    clean = _clean_name(name)
    _check_category(category)
    _check_coordinates(lat, lng)
    clean_address = (address or "").strip() or None
    if clean_address is not None and len(clean_address) > MAX_ADDRESS:
        raise DomainError(tr("An address can be at most {max} characters.", max=MAX_ADDRESS), code="too_long")
    # Names stay unique per person so that looking a place up by its name is never ambiguous.
    names = (await uow.session.scalars(select(Place.name).where(Place.user_id == user.id))).all()
    if any(name_key(existing) == name_key(clean) for existing in names):
        raise DomainError(tr("You already have a place called {name}.", name=clean), code="duplicate")
    place = Place(id=uuid.uuid4(), user_id=user.id, name=clean, category=category, lat=lat, lng=lng,
                  address=clean_address, visit_count=0)
    uow.session.add(place)
    uow.emit(PlaceCreated(place_id=place.id, name=clean, category=category, lat=lat, lng=lng),
             user_id=user.id, record_id=place.id, actor=actor)
    return place


async def find_place(uow: UnitOfWork, user: User, ref: str, *, for_update: bool = False) -> Place:
    """One of the person's places by 1-based list position, id, or case-insensitive name fragment."""
    text = ref.strip()
    if not text:
        raise DomainError(tr("Which place? Give its name, number or id."), code="missing_place")
    mine = select(Place).where(Place.user_id == user.id)
    if text.isascii() and text.isdigit():
        position = int(text)
        # Bounded by how many places there are, so a number past PostgreSQL's bigint never reaches OFFSET.
        count = await uow.session.scalar(select(func.count()).select_from(mine.subquery()))
        place = None if not 1 <= position <= (count or 0) else await uow.session.scalar(
            _canonical(mine).offset(position - 1).limit(1))
        if place is None:
            raise DomainError(tr("There is no place number {position}.", position=position), code="not_found")
    else:
        try:
            place_id = uuid.UUID(text)
        except ValueError:
            place = await _by_name(uow, mine, text)
        else:
            place = await uow.session.scalar(mine.where(Place.id == place_id))
            if place is None:
                raise DomainError(tr("No such place."), code="not_found")
    if for_update:
        locked = await uow.session.scalar(
            mine.where(Place.id == place.id).with_for_update().execution_options(populate_existing=True)
        )
        if locked is None:
            raise DomainError(tr("No such place."), code="not_found")
        return locked
    return place


async def _by_name(uow: UnitOfWork, mine: Select[Any], fragment: str) -> Place:
    """The place a name or part of one means, however its accents, umlauts and case are written (`name_key`). A
    person has tens of places, not thousands, so they are compared here, in list order (their positions are what
    /place takes)."""
    wanted = name_key(fragment)
    listed = list((await uow.session.scalars(_canonical(mine))).all())
    matches = [(position, p) for position, p in enumerate(listed, start=1) if wanted in name_key(p.name)]
    if not matches:
        raise DomainError(tr("You have no place called {name}.", name=fragment[:MAX_NAME]), code="not_found")
    exact = [p for _, p in matches if name_key(p.name) == wanted]
    if len(matches) == 1 or len(exact) == 1:
        return exact[0] if exact else matches[0][1]
    raise DomainError(
        tr("{name} matches several places: {names}. Which one do you mean? Give its number.", name=fragment[:MAX_NAME],
           names=", ".join(f"{position}. {p.name}" for position, p in matches[:_AMBIGUOUS_SHOWN])),
        code="ambiguous",
    )


async def delete_place(uow: UnitOfWork, user: User, actor: ActorT, ref: str) -> Place:
    place = await find_place(uow, user, ref, for_update=True)
    await uow.session.delete(place)
    uow.emit(PlaceDeleted(place_id=place.id, name=place.name), user_id=user.id, record_id=place.id, actor=actor)
    return place


async def _record_visit(uow: UnitOfWork, user: User, actor: ActorT, place: Place, source: VisitSource) -> PlaceVisit:
    """Adds a visit to a place the caller holds locked, so concurrent visits cannot lose a count."""
    visit = PlaceVisit(id=uuid.uuid4(), user_id=user.id, place_id=place.id, source=source, visited_at=uow.now,
                       local_date=local_date(user, uow.now))
    uow.session.add(visit)
    place.visit_count += 1
    place.last_visited_at = uow.now
    uow.emit(PlaceVisited(visit_id=visit.id, place_id=place.id, name=place.name, visit_count=place.visit_count),
             user_id=user.id, record_id=visit.id, actor=actor)
    return visit


async def visit_place(uow: UnitOfWork, user: User, actor: ActorT, ref: str) -> tuple[PlaceVisit, Place]:
    place = await find_place(uow, user, ref, for_update=True)
    visit = await _record_visit(uow, user, actor, place, "manual")
    return visit, place


async def delete_visit(uow: UnitOfWork, user: User, actor: ActorT, visit_id: uuid.UUID) -> tuple[PlaceVisit, Place]:
    """Removes one visit (one noted by mistake); the place's count and last visit follow."""
    visit = await uow.session.scalar(
        select(PlaceVisit).where(PlaceVisit.user_id == user.id, PlaceVisit.id == visit_id)
    )
    if visit is None:
        raise DomainError(tr("No such visit."), code="not_found")
    place = await find_place(uow, user, str(visit.place_id), for_update=True)
    await uow.session.delete(visit)
    await uow.session.flush()
    place.visit_count = max(place.visit_count - 1, 0)
    place.last_visited_at = await uow.session.scalar(
        select(func.max(PlaceVisit.visited_at)).where(PlaceVisit.user_id == user.id, PlaceVisit.place_id == place.id)
    )
    uow.emit(PlaceVisitDeleted(visit_id=visit.id, place_id=place.id, name=place.name, visit_count=place.visit_count),
             user_id=user.id, record_id=visit.id, actor=actor)
    return visit, place


async def nearest_place(
    uow: UnitOfWork, user: User, lat: float, lng: float, *, for_update: bool = False
) -> tuple[Place, float] | None:
    """The person's closest place with coordinates and its distance in metres, or None."""
    _check_coordinates(lat, lng)
    distance = distance_sql(lat, lng).label("distance_m")
    stmt = (
        select(Place, distance)
        .where(Place.user_id == user.id, Place.lat.is_not(None), Place.lng.is_not(None))
        .order_by(distance, Place.id).limit(1)
    )
    if for_update:
        stmt = stmt.with_for_update(of=Place).execution_options(populate_existing=True)
    row = (await uow.session.execute(stmt)).first()
    return None if row is None else (row[0], float(row[1]))


async def active_session(uow: UnitOfWork, user: User, *, for_update: bool = False) -> TrackingSession | None:
    stmt = select(TrackingSession).where(TrackingSession.user_id == user.id, TrackingSession.stopped_at.is_(None))
    return await uow.session.scalar(stmt.with_for_update() if for_update else stmt)


async def log_location(
    uow: UnitOfWork, user: User, actor: ActorT, lat: float, lng: float, accuracy: float | None = None
) -> LocationResult:
    """Stores a location; within 150 m of a known place it is attached to it and, unless that place was
    visited less than two hours ago, counts as a visit."""
    _check_coordinates(lat, lng)
    if accuracy is not None and not 0 <= accuracy <= MAX_ACCURACY_M:
        raise DomainError(tr("Accuracy must be between {min} and {max} m.", min=0, max=MAX_ACCURACY_M),
                          code="out_of_range")
    nearest = await nearest_place(uow, user, lat, lng, for_update=True)
    place, distance = nearest if nearest and nearest[1] <= AUTO_VISIT_RADIUS_M else (None, None)
    session = await active_session(uow, user)
    log = LocationLog(id=uuid.uuid4(), user_id=user.id, lat=lat, lng=lng, accuracy=accuracy,
                      place_id=place.id if place else None, session_id=session.id if session else None,
                      logged_at=uow.now, local_date=local_date(user, uow.now))
    uow.session.add(log)
    uow.emit(LocationLogged(log_id=log.id, lat=lat, lng=lng, place_id=log.place_id, accuracy=accuracy),
             user_id=user.id, record_id=log.id, actor=actor)
    visit = None
    if place is not None and (place.last_visited_at is None or uow.now - place.last_visited_at >= AUTO_VISIT_GAP):
        visit = await _record_visit(uow, user, actor, place, "location")
    return LocationResult(log=log, place=place, distance_m=distance, visit=visit)


async def start_tracking(uow: UnitOfWork, user: User, actor: ActorT) -> TrackingSession:
    if await active_session(uow, user, for_update=True) is not None:
        raise DomainError(tr("Tracking is already running."), code="already_tracking")
    session = TrackingSession(id=uuid.uuid4(), user_id=user.id, started_at=uow.now)
    uow.session.add(session)
    uow.emit(TrackingStarted(session_id=session.id, timestamp=uow.now), user_id=user.id, record_id=session.id,
             actor=actor)
    return session


async def stop_tracking(uow: UnitOfWork, user: User, actor: ActorT) -> TrackingSession:
    session = await active_session(uow, user, for_update=True)
    if session is None:
        raise DomainError(tr("Tracking is not running."), code="not_tracking")
    log_count = int(await uow.session.scalar(
        select(func.count()).select_from(LocationLog)
        .where(LocationLog.user_id == user.id, LocationLog.session_id == session.id)
    ) or 0)
    session.stopped_at = uow.now
    session.duration_ms = int((uow.now - session.started_at) / timedelta(milliseconds=1))
    session.log_count = log_count
    uow.emit(TrackingStopped(session_id=session.id, duration_ms=session.duration_ms, log_count=log_count),
             user_id=user.id, record_id=session.id, actor=actor)
    return session


async def list_places(uow: UnitOfWork, user: User, order: PlaceOrder = "visits") -> list[tuple[int, Place]]:
    """(position, place) pairs; positions always follow the visit order, so "number 2" means the same
    place however the list was sorted."""
    places = (await uow.session.scalars(_canonical(select(Place).where(Place.user_id == user.id)))).all()
    ranked = list(enumerate(places, start=1))
    if order == "name":
        ranked.sort(key=lambda pair: pair[1].name.lower())
    return ranked


async def places_visited(uow: UnitOfWork, user: User, day: date | None = None) -> list[PlaceToday]:
    """The places visited on one local day (today by default), in the order of the first visit."""
    day = day or local_date(user, uow.now)
    first = func.min(PlaceVisit.visited_at)
    rows = (await uow.session.execute(
        select(Place, func.count(PlaceVisit.id), first, func.max(PlaceVisit.visited_at))
        .join(PlaceVisit, PlaceVisit.place_id == Place.id)
        .where(PlaceVisit.user_id == user.id, PlaceVisit.local_date == day, Place.user_id == user.id)
        .group_by(Place.id).order_by(first)
    )).all()
    return [PlaceToday(place=p, visits=int(n), first_at=f, last_at=last) for p, n, f, last in rows]
