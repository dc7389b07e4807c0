"""Translatable text. The brain returns `Text` (a message id plus parameters); it is rendered in the
user's locale and time zone at the edge, with gettext catalogues from `locales/` and Babel formatting.

Message ids are English source strings with `{name}` placeholders. `tr` and `ntr` mark them for
`pybabel extract`.
"""

from __future__ import annotations

import gettext
import math
from dataclasses import dataclass, field
from datetime import date, datetime, time, tzinfo
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_date, format_skeleton, format_time
from babel.numbers import format_decimal, format_percent
from babel.support import NullTranslations, Translations

SUPPORTED_LOCALES: tuple[str, ...] = ("en", "de")
DEFAULT_LOCALE = "en"
LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
DOMAIN = "messages"
HUGE_NUMBER = 10**18  # from here on a number is written as typed (see `Renderer.format_value`)
# A day written out, without and with its year (Babel's skeletons abbreviate the weekday in English).
LONG_DAY_PATTERNS = {"en": ("EEEE, MMMM d", "EEEE, MMMM d, y"), "de": ("EEEE, d. MMMM", "EEEE, d. MMMM y")}


@dataclass(frozen=True)
class Text:
    """A message to be translated later: `msgid` (or a singular/plural pair with `count`)."""

    msgid: str
    params: dict[str, Any] = field(default_factory=dict)
    plural: str | None = None
    count: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"msgid": self.msgid, "params": {k: _jsonable(v) for k, v in self.params.items()}}
        if self.plural is not None:
            data["plural"] = self.plural
            data["count"] = self.count
        return data


@dataclass(frozen=True)
class Percent:
    """A share in whole percent (13 for 13 %), written as the person's language writes percentages: "13%" in
    English, "13 %" in German (Babel's pattern, with a no-break space). Message ids say "({percent})", not
    "({percent} %)"."""

    value: int


@dataclass(frozen=True)
class LongDay:
    """A day written out, "Thursday, December 3" / "Donnerstag, 3. Dezember" (with the year when `with_year`);
    a date-time also with its time of day in the person's zone ("… at 18:00")."""

    value: date
    with_year: bool = False


def moment(at: datetime, now: datetime | date, zone: str | tzinfo) -> Text | datetime:
    """When something happens, as a person says it: "today at 9:39 PM", "tomorrow at 7:00 AM", or the date-time
    itself further off; `now` (or the local day meant as today). For a reply rendered at once (later, "today" would
    be another day)."""
    tz = ZoneInfo(zone) if isinstance(zone, str) else zone
    local = at.astimezone(tz)
    days = (local.date() - (now.astimezone(tz).date() if isinstance(now, datetime) else now)).days
    if days == 0:
        return tr("today at {time}", time=local.time())
    if days == 1:
        return tr("tomorrow at {time}", time=local.time())
    return at


def _jsonable(value: Any) -> Any:
    if isinstance(value, Text):
        return {"__text__": value.to_json()}
    if isinstance(value, Percent):
        return {"__percent__": value.value}
    if isinstance(value, datetime | date | time):
        return {"__dt__": value.isoformat(), "__kind__": type(value).__name__}
    return value


def tr(msgid: str, /, **params: Any) -> Text:
    """Mark `msgid` for translation; placeholders are filled when rendered."""
    return Text(msgid, params)


def ntr(singular: str, plural: str, count: int, /, **params: Any) -> Text:
    """A plural-aware message; `{count}` is available in both forms."""
    return Text(singular, {"count": count, **params}, plural=plural, count=count)


def N_(msgid: str) -> str:
    """Mark a constant string for extraction without translating it here (e.g. button labels in tables)."""
    return msgid


# Languages as people write their names ("/lang Deutsch"), in either language.
LANGUAGE_WORDS = {"english": "en", "englisch": "en", "deutsch": "de", "german": "de"}


def normalize_locale(value: str | None) -> str | None:
    """Map 'de-DE', 'de_AT', 'EN', 'Deutsch', 'english' to a supported language code, or None."""
    if not value:
        return None
    named = LANGUAGE_WORDS.get(value.strip().lower())
    if named is not None:
        return named
    lang = value.replace("-", "_").split("_")[0].strip().lower()
    return lang if lang in SUPPORTED_LOCALES else None


@cache
def translations(locale: str) -> gettext.NullTranslations:
    lang = normalize_locale(locale) or DEFAULT_LOCALE
    mo = LOCALES_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not mo.exists():
        raise FileNotFoundError(
            f"compiled catalogue {mo} is missing; run `make install` (it runs `pybabel compile`)"
        )
    return Translations.load(str(LOCALES_DIR), locales=[lang], domain=DOMAIN)


class Renderer:
    """Renders `Text` for one person: their locale for words and numbers, their zone for times."""

    def __init__(self, locale: str, timezone: str = "UTC") -> None:
        self.locale = normalize_locale(locale) or DEFAULT_LOCALE
        self.tz = ZoneInfo(timezone)
        self._t = translations(self.locale)
        self._babel_locale = Locale.parse(self.locale)

    def gettext(self, msgid: str) -> str:
        return self._t.gettext(msgid)

    def __call__(self, text: Text | str) -> str:
        if isinstance(text, str):
            return text
        if text.plural is not None:
            template = self._t.ngettext(text.msgid, text.plural, text.count or 0)
        else:
            template = self._t.gettext(text.msgid)
        if not text.params:
            return template
        values = {k: self.format_value(v) for k, v in text.params.items()}
        try:
            return template.format(**values)
        except (KeyError, IndexError, ValueError):
            # A broken translation must never take a reply down; fall back to the source string.
            return text.msgid.format(**values)

    def format_value(self, value: Any) -> str:
        if isinstance(value, Text):
            return self(value)
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, Percent):
            return format_percent(value.value / 100, locale=self._babel_locale)
        if isinstance(value, LongDay):
            return self.long_day_of(value.value, with_year=value.with_year)
        if isinstance(value, int | float):
            if math.isfinite(value) and abs(value) >= HUGE_NUMBER:
                # Past what Babel's decimal context rounds (it raises for 10**26): only an echo of bad input is this
                # large, and it reads best as typed.
                return str(value)
            return format_decimal(value, locale=self._babel_locale, format="#,##0.##")
        if isinstance(value, datetime):
            # A translatable joiner, so German can say "Mo., 30. Nov. um 14:00".
            return self(tr("{date}, {time}", date=self.date_of(value), time=self.time_of(value)))
        if isinstance(value, date):
            return self.date_of(value)
        if isinstance(value, time):
            return format_time(value, format="short", locale=self._babel_locale)
        return str(value)

    def long_date_of(self, value: date) -> str:
        """'Sunday, November 29, 2026' / 'Sonntag, 29. November 2026'."""
        return format_date(value, format="full", locale=self._babel_locale)

    def long_day_of(self, value: date, *, with_year: bool = False) -> str:
        """A `LongDay`: 'Thursday, December 3' ('Donnerstag, 3. Dezember'), a date-time with its local time."""
        day = value.astimezone(self.tz).date() if isinstance(value, datetime) else value
        patterns = LONG_DAY_PATTERNS.get(self.locale, LONG_DAY_PATTERNS[DEFAULT_LOCALE])
        written = format_date(day, format=patterns[1 if with_year else 0], locale=self._babel_locale)
        if isinstance(value, datetime):
            return self(tr("{date} at {time}", date=written, time=self.time_of(value)))
        return written

    def time_of(self, value: datetime) -> str:
        return format_time(value, format="short", locale=self._babel_locale, tzinfo=self.tz)

    def date_of(self, value: date | datetime, fmt: str | None = None) -> str:
        """'Mon, Nov 30' ('Mo., 30. Nov.'); the year only when it is not this year."""
        if isinstance(value, datetime):
            value = value.astimezone(self.tz).date()
        if fmt is not None:
            return format_date(value, format=fmt, locale=self._babel_locale)
        this_year = datetime.now(self.tz).year
        skeleton = "MMMEd" if value.year == this_year else "yMMMEd"
        return format_skeleton(skeleton, value, locale=self._babel_locale)


def null_renderer() -> NullTranslations:
    return NullTranslations()
