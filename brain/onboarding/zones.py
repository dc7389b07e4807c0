"""A time zone from what a person can easily give: a shared location (offline lookup with `timezonefinder`)
or a city name, matched against the IANA zone names ("New York" -> America/New_York), the city names CLDR
gives each zone in our languages ("Wien" -> Europe/Vienna) and a few large cities that have no zone of
their own ("München" -> Europe/Berlin). Pure lookups; nothing is stored here."""

from __future__ import annotations

import difflib
import unicodedata
from functools import cache
from zoneinfo import available_timezones

from babel.dates import get_timezone_location, get_timezone_name

from brain.i18n import SUPPORTED_LOCALES

# Zones named after a region rather than a city (US/Eastern, Etc/GMT+3, ...) are legacy links or offsets;
# a person names a city, so these areas are preferred when two zones share a name.
_CITY_AREAS = ("Europe/", "America/", "Asia/", "Africa/", "Australia/", "Pacific/", "Atlantic/", "Indian/",
               "Antarctica/", "Arctic/")
# Large cities people write that are not the exemplar city of their zone.
_CITIES: dict[str, str] = {
    "münchen": "Europe/Berlin", "munich": "Europe/Berlin", "hamburg": "Europe/Berlin", "köln": "Europe/Berlin",
    "cologne": "Europe/Berlin", "frankfurt": "Europe/Berlin", "stuttgart": "Europe/Berlin",
    "düsseldorf": "Europe/Berlin", "dresden": "Europe/Berlin", "leipzig": "Europe/Berlin",
    "hannover": "Europe/Berlin", "nürnberg": "Europe/Berlin", "bremen": "Europe/Berlin", "bonn": "Europe/Berlin",
    "graz": "Europe/Vienna", "salzburg": "Europe/Vienna", "linz": "Europe/Vienna", "innsbruck": "Europe/Vienna",
    "basel": "Europe/Zurich", "bern": "Europe/Zurich", "genf": "Europe/Zurich", "geneva": "Europe/Zurich",
    "lausanne": "Europe/Zurich", "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles",
    "washington": "America/New_York", "boston": "America/New_York", "miami": "America/New_York",
    "atlanta": "America/New_York", "philadelphia": "America/New_York", "houston": "America/Chicago",
    "dallas": "America/Chicago", "mumbai": "Asia/Kolkata", "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata", "beijing": "Asia/Shanghai", "peking": "Asia/Shanghai", "osaka": "Asia/Tokyo",
    "barcelona": "Europe/Madrid", "milan": "Europe/Rome", "mailand": "Europe/Rome", "munchen": "Europe/Berlin",
}
_CLOSE_MATCH_CUTOFF = 0.85
MAX_CITY_LENGTH = 64
MIN_FUZZY_LENGTH = 5


def normalize_place_name(text: str) -> str:
    """'  São_Paulo, Brazil ' -> 'sao paulo'; 'Zürich' -> 'zurich' (accents off, case folded)."""
    head = text.split(",", 1)[0]
    decomposed = unicodedata.normalize("NFKD", head.replace("_", " ").replace("-", " "))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split())


@cache
def _index() -> dict[str, str]:
    """normalized name -> zone. Built once (about 600 zones in two languages)."""
    zones = sorted(available_timezones())
    index: dict[str, str] = {}

    def add(name: str, zone: str) -> None:
        key = normalize_place_name(name)
        if not key:
            return
        current = index.get(key)
        if current is None or (not current.startswith(_CITY_AREAS) and zone.startswith(_CITY_AREAS)):
            index[key] = zone

    for zone in zones:
        if not zone.startswith(_CITY_AREAS):
            continue  # legacy aliases ("Canada/Atlantic", "US/Pacific", "EST"): no city, and no place to guess
        add(zone, zone)  # "europe/berlin"
        add(zone.rsplit("/", 1)[-1], zone)  # "berlin"
    for zone in zones:
        if not zone.startswith(_CITY_AREAS):
            continue
        for locale in SUPPORTED_LOCALES:
            try:
                add(get_timezone_location(zone, locale=locale, return_city=True), zone)
            except (LookupError, ValueError):
                continue
    for city, zone in _CITIES.items():
        index.setdefault(normalize_place_name(city), zone)
    return index


def city_name(zone: str, locale: str) -> str:
    """The city a zone is named after, as the person's language writes it (CLDR): "Wien" for Europe/Vienna in
    German, "Vienna" in English."""
    try:
        return get_timezone_location(zone, locale=locale, return_city=True)
    except (LookupError, ValueError):
        return zone.rsplit("/", 1)[-1].replace("_", " ")


# Names of Coordinated Universal Time in the time zone database.
UTC_KEYS = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "UCT", "Universal", "Zulu", "GMT",
                      "Etc/GMT", "Etc/Greenwich", "GMT0", "Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0"})


def zone_name(zone: str, locale: str) -> str:
    """A zone as people name it: 'Berlin (Central European Time)', 'Berlin (Mitteleuropäische Zeit)', 'New York
    (Eastern Time)'. The IANA key (Europe/Berlin) is for machines; a zone without a city (UTC, Etc/...) keeps its own
    name."""
    if zone in UTC_KEYS:
        return "UTC"
    if zone.startswith("Etc/") or "/" not in zone:
        return zone
    city = city_name(zone, locale)
    try:
        long_name = get_timezone_name(zone, "long", locale=locale)
    except (LookupError, ValueError):
        return city
    return f"{city} ({long_name})" if long_name and long_name != city else city


def zone_for_city(text: str) -> str | None:
    """The IANA zone for a city or zone name, tolerating a small typo ("Berln"); None when unknown."""
    key = normalize_place_name(text)
    if not key or len(key) > MAX_CITY_LENGTH:
        return None
    index = _index()
    if key in index:
        return index[key]
    if len(key) < MIN_FUZZY_LENGTH:
        return None  # a short word is a near miss of too many ("est" of "west")
    close = difflib.get_close_matches(key, index.keys(), n=1, cutoff=_CLOSE_MATCH_CUTOFF)
    return index[close[0]] if close else None


@cache
def _finder() -> object | None:
    try:
        from timezonefinder import TimezoneFinder
    except ImportError:  # an install without the optional lookup: the city name still works
        return None
    return TimezoneFinder(in_memory=False)


def zone_at(lat: float, lng: float) -> str | None:
    """The IANA zone at a position (offline polygons); None at sea or without the lookup package.
    Offsets-only answers (Etc/GMT+1 at sea) are not a place's zone, so they count as unknown too."""
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lng <= 180.0):
        return None
    finder = _finder()
    if finder is None:
        return None
    zone = finder.timezone_at(lng=lng, lat=lat)  # type: ignore[attr-defined]
    if not isinstance(zone, str) or zone.startswith("Etc/") or zone not in available_timezones():
        return None
    return zone
