"""A person's local time: stored instants are UTC; "today" and "this morning" are theirs."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from brain.people.models import User


def local_now(user: User, at: datetime) -> datetime:
    return at.astimezone(ZoneInfo(user.timezone))


def local_date(user: User, at: datetime) -> date:
    return local_now(user, at).date()


def day_bounds(user: User, day: date) -> tuple[datetime, datetime]:
    """[start, end) of the person's local day as aware datetimes (DST days are 23 or 25 hours)."""
    zone = ZoneInfo(user.timezone)
    start = datetime.combine(day, time.min, tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
    return start, end
