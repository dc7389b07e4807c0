"""Argument validation and coercion for tool calls, before anything touches the database.

Models and parsers hand us strings for numbers, "yes" for booleans, "Water" for "water", and
"tomorrow" for dates; we accept what is unambiguous and refuse the rest with a translated reason.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from brain.errors import DomainError
from brain.i18n import N_, Text, tr
from brain.tools.spec import ToolParam, ToolSpec

_TRUE = {"true", "yes", "y", "1", "ja", "on"}
_FALSE = {"false", "no", "n", "0", "nein", "off"}
_RELATIVE_DAYS = {
    "today": 0, "heute": 0, "tomorrow": 1, "morgen": 1, "yesterday": -1, "gestern": -1,
    "day after tomorrow": 2, "übermorgen": 2, "uebermorgen": 2,
}
_INT_RE = re.compile(r"^(?P<digits>[+-]?\d{1,40})(\.0+)?$", re.ASCII)
_NUM_RE = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)$")
# What PostgreSQL cannot store in text: a NUL byte, or a lone UTF-16 surrogate (JSON can carry "\ud800").
UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
# Dates and times outside these years are typos or attacks; refusing them keeps day arithmetic downstream (a
# day's end, a reminder before a due date) away from the edges of Python's date range.
FIRST_YEAR, LAST_YEAR = 1900, 2200


def coerce_arguments(tool: ToolSpec, raw: object, *, timezone: str, today: date) -> dict[str, Any]:
    """Validated, typed arguments for `tool`, or DomainError naming the first problem."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise DomainError(tr("The arguments for {tool} must be an object.", tool=tool.name), code="bad_arguments")
    known = {p.name for p in tool.parameters}
    extra = sorted(str(k) for k in raw if k not in known)
    if extra:
        raise DomainError(tr("Unknown parameter for {tool}: {names}.", tool=tool.name, names=", ".join(extra)),
                          code="unknown_parameter")
    result: dict[str, Any] = {}
    for param in tool.parameters:
        value = raw.get(param.name)
        if value is None or (isinstance(value, str) and not value.strip() and param.type != "string"):
            if param.required:
                raise DomainError(tr("Missing required parameter: {name}.", name=param.name), code="missing_parameter")
            continue
        result[param.name] = coerce_value(param, value, timezone=timezone, today=today)
    return result


# How people name the values that commands pass on (a refusal reaches them as the reply); a tool's own label wins.
# Each reads as one thing, so the translated sentences agree with it ("Der Kalorienwert darf höchstens ...").
COMMON_LABELS: dict[str, str] = {
    "title": N_("The title"), "description": N_("The description"), "name": N_("The name"),
    "location": N_("The location"), "place": N_("The place"), "address": N_("The address"),
    "kcal": N_("The calorie count"), "protein": N_("The protein amount"), "carbs": N_("The carbohydrate amount"),
    "fat": N_("The fat amount"), "daily_ml": N_("The daily water goal in ml"), "target": N_("The target"),
    "due_date": N_("The due date"), "start_time": N_("The start"), "end_time": N_("The end"),
    "due_time": N_("The due time"), "at": N_("The time"), "text": N_("The text"),
}


def _what(param: ToolParam) -> Text:
    """How a refusal names the parameter: its human label if it has one, else its name."""
    label = param.label or COMMON_LABELS.get(param.name)
    return tr(label) if label else tr("Parameter {name}", name=param.name)


def coerce_value(param: ToolParam, value: object, *, timezone: str, today: date) -> Any:
    kind = param.type
    if kind == "string":
        return _string(param, value)
    if kind == "integer":
        return _range(param, _integer(param, value))
    if kind == "number":
        return _range(param, _number(param, value))
    if kind == "boolean":
        return _boolean(param, value)
    if kind == "date":
        return _date(param, value, today)
    if kind == "datetime":
        return _datetime(param, value, timezone, today)
    if kind == "time":
        return _time(param, value)
    raise AssertionError(kind)


# Characters that show nothing (zero-width spaces and joiners, word joiner, byte order mark, soft hyphen): at the
# edges of a text they are trimmed like spaces, so an entry of nothing but them is empty, not an invisible title.
_BLANK = r"[\s\u200b-\u200d\u2060\ufeff\u00ad\u180e]+"
_INVISIBLE_EDGES = re.compile(f"^{_BLANK}|{_BLANK}$")


def visible(text: str) -> str:
    """`text` without spaces and invisible characters at its edges."""
    return _INVISIBLE_EDGES.sub("", text)


def _string(param: ToolParam, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DomainError(tr("{what} must be text.", what=_what(param)), code="bad_type")
    text = visible(str(value))
    if param.enum:
        canonical = {e.lower(): e for e in param.enum}.get(text.lower())
        if canonical is None:
            raise DomainError(tr("{what} must be one of: {choices}.", what=_what(param),
                                 choices=", ".join(param.enum)), code="bad_enum")
        return canonical
    if param.required and not text:
        raise DomainError(tr("{what} must not be empty.", what=_what(param)), code="empty")
    if len(text) > param.max_length:
        raise DomainError(tr("{what} is too long (at most {max} characters).", what=_what(param),
                             max=param.max_length), code="too_long")
    if UNSTORABLE.search(text):
        raise DomainError(tr("{what} contains invalid characters.", what=_what(param)), code="bad_text")
    return text


def _integer(param: ToolParam, value: object) -> int:
    if isinstance(value, bool):
        raise DomainError(tr("{what} must be a whole number.", what=_what(param)), code="bad_type")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    match = _INT_RE.match(value.strip()) if isinstance(value, str) else None
    if match:
        # int() on the digits, not float(): exact above 2**53, and no overflow on long strings.
        return int(match.group("digits"))
    raise DomainError(tr("{what} must be a whole number.", what=_what(param)), code="bad_type")


def _number(param: ToolParam, value: object) -> float:
    if isinstance(value, bool):
        raise DomainError(tr("{what} must be a number.", what=_what(param)), code="bad_type")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUM_RE.match(value.strip()):
        number = float(value.strip().replace(",", "."))
    else:
        raise DomainError(tr("{what} must be a number.", what=_what(param)), code="bad_type")
    if not math.isfinite(number):
        raise DomainError(tr("{what} must be a number.", what=_what(param)), code="bad_type")
    return number


def _range(param: ToolParam, number: Any) -> Any:
    if param.minimum is not None and number < param.minimum:
        raise DomainError(tr("{what} must be at least {min}.", what=_what(param), min=param.minimum),
                          code="out_of_range")
    if param.maximum is not None and number > param.maximum:
        raise DomainError(tr("{what} must be at most {max}.", what=_what(param), max=param.maximum),
                          code="out_of_range")
    return number


def _boolean(param: ToolParam, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    raise DomainError(tr("{what} must be true or false.", what=_what(param)), code="bad_type")


def _date(param: ToolParam, value: object, today: date) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _RELATIVE_DAYS:
            return today + timedelta(days=_RELATIVE_DAYS[text])
        try:
            parsed = date.fromisoformat(text[:10]) if len(text) >= 10 else date.fromisoformat(text)
        except ValueError:
            pass
        else:
            if FIRST_YEAR <= parsed.year <= LAST_YEAR:
                return parsed
    raise DomainError(tr("{what} must be a date like 2026-12-24.", what=_what(param)), code="bad_date")


def _datetime(param: ToolParam, value: object, timezone: str, today: date) -> datetime:
    zone = ZoneInfo(timezone)
    parsed: datetime | None = None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            parsed = None
    if parsed is None:
        raise DomainError(tr("{what} must be a date and time like 2026-12-24T18:00.", what=_what(param)),
                          code="bad_datetime")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
        raise DomainError(tr("{what} must be a date and time like 2026-12-24T18:00.", what=_what(param)),
                          code="bad_datetime")
    return parsed


def _time(param: ToolParam, value: object) -> time:
    if isinstance(value, time):
        return value
    if isinstance(value, str):
        text = value.strip().replace(".", ":")
        if re.fullmatch(r"\d{1,2}", text):
            text += ":00"
        try:
            return time.fromisoformat(text.zfill(5) if len(text) == 4 else text)
        except ValueError:
            pass
    raise DomainError(tr("{what} must be a time like 18:30.", what=_what(param)), code="bad_time")
