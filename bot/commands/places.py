"""/place: "I'm at <name>" records a visit (creating the place if new); without a name lists places. A shared
location is logged, and counts as a visit of a saved place within 150 m (or of one the person picks)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from bot.commands import Command
from bot.commands.calendar import DELETE_WORDS
from bot.commands.onboarding import take_shared_location
from bot.offers import take_fresh_offer
from bot.turn import Turn
from brain.i18n import N_, ntr, tr

PLACE_OFFER = "place_offer"


async def place(turn: Turn, args: str) -> None:
    if not args:
        result = await turn.tool("get_places", {})
        items: list[dict[str, Any]] = result.data.get("places", []) if result.ok else []
        if not items:
            turn.say(tr("No places yet. Tell me where you are with /place <name>."))
            return
        lines = [turn.t(tr("Your places:"))]
        for position, item in enumerate(items[:15], start=1):
            visits = ntr("{count} visit", "{count} visits", int(item.get("visit_count", 0)))
            lines.append(f"{position}. {item['name']} ({turn.t(visits)})")
        turn.say("\n".join(lines))
        return
    verb, _, reference = args.partition(" ")
    deleting = verb.casefold() in DELETE_WORDS
    if deleting and reference.strip():
        # "/place delete Gym", "/ort löschen 2": the place and its visits (a place called "Delete" is still visited).
        turn.say_result(await turn.tool("delete_place", {"place": reference.strip()}))
        return
    visit = await turn.tool("visit_place", {"place": args})
    if not visit.ok and visit.error_code == "not_found":
        if deleting:  # "/place delete" with nothing after it: which place, not a new one called "delete"
            turn.say(tr("Which place? Give its name, number or id."))
            return
        created = await turn.tool("create_place", {"name": args})
        if not created.ok:
            turn.say_result(created)
            return
        visit = await turn.tool("visit_place", {"place": created.data["place"]["place_id"]})
    turn.say_result(visit)


async def places_today(turn: Turn) -> None:
    """"Wo war ich heute?": the places visited today, each with when (first and last visit when they differ)."""
    result = await turn.tool("get_places", {"visited_today": True})
    if not result.ok:
        turn.say_result(result)
        return
    items: list[dict[str, Any]] = result.data.get("places", [])
    if not items:
        turn.say(tr("No place noted today. Tell me where you are, e.g. \"I'm at the gym\"."))
        return
    lines = [turn.t(tr("Where you were today:"))]
    for item in sorted(items, key=lambda i: str(i["first_at"])):
        first, last = (datetime.fromisoformat(str(item[key])) for key in ("first_at", "last_at"))
        if turn.render.time_of(first) == turn.render.time_of(last):
            lines.append("• " + turn.t(tr("{name} at {time}", name=item["name"], time=turn.render.time_of(first))))
        else:
            lines.append("• " + turn.t(tr("{name}, {first} and {last}", name=item["name"],
                                          first=turn.render.time_of(first), last=turn.render.time_of(last))))
    turn.say("\n".join(lines))


async def place_in_words(turn: Turn, name: str) -> None:
    """"Ich bin im Café Luna": a visit of that place if the person has one by that name; a place not saved yet is
    offered, with a button, rather than made of every "I'm at ..." (the button does what /place <name> does)."""
    visit = await turn.tool("visit_place", {"place": name})
    if visit.ok or visit.error_code != "not_found":
        turn.say_result(visit)
        return
    turn.say(tr("{name} is not one of your places yet. Save it and check in there?", name=name),
             buttons=[[turn.button(tr("📍 Check in"), PLACE_OFFER, name=name)]])


async def place_offer_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    """The offer's button (once: a second press finds it used), as /place <name> would."""
    await place(turn, str(payload["name"]))


# "ja", "yes please", "speichern", "check in" typed instead of pressed: the offer made at most this long ago.
PLACE_OFFER_WINDOW = timedelta(minutes=10)
_YES_RE = re.compile(r"^(?:ja|yes|yep|yeah|yup|ok|okay|gerne?|sure|klar|genau|bitte|please|mach\s+das|do\s+it"
                     r"|speichern|save(?:\s+it)?|check\s*in|einchecken|📍)(?:[\s,]+(?:bitte|please|gerne?|danke|thanks))*"
                     r"[\s.!]*$", re.I)


async def place_offer_answered(turn: Turn, text: str) -> bool:
    """A yes typed to the latest place offer (within the window): taken as its press; False when none waits."""
    if _YES_RE.match(text.strip()) is None:
        return False
    offer = await take_fresh_offer(turn, PLACE_OFFER, PLACE_OFFER_WINDOW)
    if offer is None:
        return False
    await place(turn, str(offer["name"]))
    return True


SHARED_LOCATION_CHOICES = 6


async def shared_location(turn: Turn, lat: float, lng: float) -> None:
    """A position the person shared: the onboarding may be asking for it (time zone); otherwise it is logged,
    and when no saved place is near enough to count the visit, the person's places are offered to pick from."""
    if await take_shared_location(turn, lat, lng):
        return
    result = await turn.tool("log_location", {"lat": lat, "lng": lng})
    if not result.ok or result.data.get("place") is not None:
        turn.say_result(result)
        return
    listed = await turn.tool("get_places", {})
    places: list[dict[str, Any]] = listed.data.get("places", [])[:SHARED_LOCATION_CHOICES] if listed.ok else []
    if not places:
        turn.say(result.message, tr("No saved place is near. Save where you are with /place <name>."))
        return
    turn.say(result.message, tr("No saved place is near. Are you at one of these?"), buttons=[
        [turn.tool_button(str(item["name"]), "visit_place", place=str(item["place_id"]))]
        for item in places])


COMMANDS = (
    Command("place", "/place Café Luna", N_("Check in at a place, or list your places"), place,
            aliases=("ort", "orte", "places")),
)

ACTIONS = {PLACE_OFFER: place_offer_pressed}
