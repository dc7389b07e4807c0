"""ToolSpecs over the places service."""

from __future__ import annotations

import uuid
from typing import Any

from brain.errors import DomainError
from brain.i18n import ntr, tr
from brain.modules.places import service
from brain.modules.places.models import Place
from brain.modules.places.service import (
    CATEGORIES,
    MAX_ACCURACY_M,
    MAX_ADDRESS,
    MAX_LAT,
    MAX_LNG,
    MAX_NAME,
    MIN_LAT,
    MIN_LNG,
)
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def place_data(place: Place, position: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "place_id": str(place.id), "name": place.name, "category": place.category, "lat": place.lat,
        "lng": place.lng, "address": place.address, "visit_count": place.visit_count,
        "last_visited_at": place.last_visited_at.isoformat() if place.last_visited_at else None,
    }
    if position is not None:
        data["position"] = position
    return data


async def _create(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    place = await service.create_place(ctx.uow, ctx.user, ctx.actor, args["name"], category=args.get("category"),
                                       lat=args.get("lat"), lng=args.get("lng"), address=args.get("address"))
    return ToolResult.success(tr("Saved the place {name}.", name=place.name), place=place_data(place))


async def _delete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    place = await service.delete_place(ctx.uow, ctx.user, ctx.actor, args["place"])
    return ToolResult.success(tr("Deleted the place {name}.", name=place.name), place_id=str(place.id))


async def _visit(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    visit, place = await service.visit_place(ctx.uow, ctx.user, ctx.actor, args["place"])
    return ToolResult.success(
        ntr("Visit to {name} noted ({count} visit so far).", "Visit to {name} noted ({count} visits so far).",
            place.visit_count, name=place.name),
        visit_id=str(visit.id), place=place_data(place),
    )


async def _delete_visit(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    try:
        visit_id = uuid.UUID(args["visit"])
    except ValueError:
        raise DomainError(tr("No such visit."), code="not_found") from None
    _, place = await service.delete_visit(ctx.uow, ctx.user, ctx.actor, visit_id)
    return ToolResult.success(
        ntr("Removed a visit to {name} ({count} visit left).", "Removed a visit to {name} ({count} visits left).",
            place.visit_count, name=place.name),
        visit_id=str(visit_id), place=place_data(place),
    )


async def _log_location(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    result = await service.log_location(ctx.uow, ctx.user, ctx.actor, args["lat"], args["lng"], args.get("accuracy"))
    data: dict[str, Any] = {
        "log_id": str(result.log.id), "place": place_data(result.place) if result.place else None,
        "distance_m": round(result.distance_m) if result.distance_m is not None else None,
        "visit_id": str(result.visit.id) if result.visit else None,
    }
    if result.place is None:
        return ToolResult.success(tr("Location saved."), **data)
    return ToolResult.success(
        tr("Location saved: at {name} ({distance} m away).", name=result.place.name, distance=data["distance_m"]),
        **data,
    )


async def _start(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    session = await service.start_tracking(ctx.uow, ctx.user, ctx.actor)
    return ToolResult.success(tr("Tracking started."), session_id=str(session.id),
                              started_at=session.started_at.isoformat())


async def _stop(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    session = await service.stop_tracking(ctx.uow, ctx.user, ctx.actor)
    duration_ms = session.duration_ms or 0
    log_count = session.log_count or 0
    return ToolResult.success(
        ntr("Tracking stopped after {minutes} min with {count} location.",
            "Tracking stopped after {minutes} min with {count} locations.", log_count,
            minutes=round(duration_ms / 60_000)),
        session_id=str(session.id), duration_ms=duration_ms, log_count=log_count,
    )


async def _list(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    if args.get("visited_today"):
        today = await service.places_visited(ctx.uow, ctx.user)
        return ToolResult.success(
            ntr("{count} place visited today.", "{count} places visited today.", len(today)),
            places=[{**place_data(t.place), "visits_today": t.visits, "first_at": t.first_at.isoformat(),
                     "last_at": t.last_at.isoformat()} for t in today],
        )
    ranked = await service.list_places(ctx.uow, ctx.user, args.get("sort", "visits"))
    return ToolResult.success(
        ntr("{count} place.", "{count} places.", len(ranked)),
        places=[place_data(place, position) for position, place in ranked],
    )


async def _nearest(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    found = await service.nearest_place(ctx.uow, ctx.user, args["lat"], args["lng"])
    if found is None:
        return ToolResult.success(tr("None of your places has coordinates yet."), place=None, distance_m=None)
    place, distance = found
    return ToolResult.success(tr("The nearest place is {name}, {distance} m away.", name=place.name,
                                 distance=round(distance)),
                              place=place_data(place), distance_m=round(distance))


_PLACE = ToolParam("place", "string", "The place: its number in the list, its id, or part of its name.",
                   required=True, max_length=MAX_NAME)


def _coordinate(name: str, description: str, low: float, high: float, required: bool) -> ToolParam:
    return ToolParam(name, "number", description, required=required, minimum=low, maximum=high)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("create_place", "places", "Save a place the person knows, optionally with coordinates.",
             (ToolParam("name", "string", "Name of the place, e.g. 'Gym'.", required=True, max_length=MAX_NAME),
              ToolParam("category", "string", "Kind of place.", enum=CATEGORIES),
              _coordinate("lat", "Latitude in degrees.", MIN_LAT, MAX_LAT, False),
              _coordinate("lng", "Longitude in degrees.", MIN_LNG, MAX_LNG, False),
              ToolParam("address", "string", "Postal address.", max_length=MAX_ADDRESS)),
             "write", _create),
    ToolSpec("delete_place", "places", "Delete one of the person's places and its visits.", (_PLACE,),
             "destructive", _delete),
    ToolSpec("visit_place", "places", "Note that the person is at or visited one of their places.", (_PLACE,),
             "write", _visit),
    ToolSpec("delete_visit", "places", "Remove one noted visit to a place, e.g. one noted by mistake.",
             (ToolParam("visit", "string", "The visit's id.", required=True, max_length=64),),
             "destructive", _delete_visit),
    ToolSpec("log_location", "places", "Store the person's current location; a known place within 150 m is "
             "recognised and counted as a visit.",
             (_coordinate("lat", "Latitude in degrees.", MIN_LAT, MAX_LAT, True),
              _coordinate("lng", "Longitude in degrees.", MIN_LNG, MAX_LNG, True),
              ToolParam("accuracy", "number", "Accuracy radius in metres.", minimum=0, maximum=MAX_ACCURACY_M)),
             "write", _log_location),
    ToolSpec("start_tracking", "places", "Start a location tracking session.", (), "write", _start),
    ToolSpec("stop_tracking", "places", "Stop the running location tracking session.", (), "write", _stop),
    ToolSpec("get_places", "places", "The person's places with visit counts, or only those visited today.",
             (ToolParam("sort", "string", "Sort by visit count (default) or name.", enum=("visits", "name")),
              ToolParam("visited_today", "boolean", "Only places visited today.")),
             "read", _list),
    ToolSpec("nearest_place", "places", "The person's saved place closest to a position, with its distance.",
             (_coordinate("lat", "Latitude in degrees.", MIN_LAT, MAX_LAT, True),
              _coordinate("lng", "Longitude in degrees.", MIN_LNG, MAX_LNG, True)),
             "read", _nearest),
)
