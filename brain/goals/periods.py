"""Goal periods in the person's time zone: a local day, a week from Monday, or a calendar month.
Pure date arithmetic, plus the UTC instants that bound a period for queries over timestamps."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

Period = Literal["day", "week", "month"]
PERIODS: tuple[str, ...] = ("day", "week", "month")


def period_bounds(period: str, local_date: date) -> tuple[date, date]:
    """The local dates [start, end) of the period that contains `local_date`."""
    if period == "day":
        return local_date, local_date + timedelta(days=1)
    if period == "week":
        start = local_date - timedelta(days=local_date.weekday())
        return start, start + timedelta(days=7)
    if period == "month":
        start = local_date.replace(day=1)
        end = date(start.year + 1, 1, 1) if start.month == 12 else date(start.year, start.month + 1, 1)
        return start, end
    raise ValueError(f"unknown goal period {period!r}")


def period_start(period: str, local_date: date) -> date:
    return period_bounds(period, local_date)[0]


def next_period_start(period: str, start: date) -> date:
    return period_bounds(period, start)[1]


def period_instants(period: str, local_date: date, timezone: str) -> tuple[datetime, datetime]:
    """[start, end) of the period as UTC instants. Local midnight is taken in the person's zone, so a
    week or month that contains a DST switch is an hour shorter or longer than its days times 24."""
    zone = ZoneInfo(timezone)
    start, end = period_bounds(period, local_date)
    return (
        datetime.combine(start, time.min, tzinfo=zone).astimezone(UTC),
        datetime.combine(end, time.min, tzinfo=zone).astimezone(UTC),
    )


def local_date_at(at: datetime, timezone: str) -> date:
    """The person's calendar date at the instant `at`."""
    return at.astimezone(ZoneInfo(timezone)).date()
