"""Tables of the places module: places, visits, location logs and tracking sessions.
Every table carries user_id, and every index leads with it because every query filters by it."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import Float, ForeignKey, Index, Integer, String, func, text
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class Place(Base):
    __tablename__ = "places"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    category: Mapped[str | None] = mapped_column(String(16))
    lat: Mapped[float | None] = mapped_column(Float)
    lng: Mapped[float | None] = mapped_column(Float)
    address: Mapped[str | None] = mapped_column(String(300))
    visit_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Kept on the place (updated under its row lock) so the 2-hour auto-visit check needs no extra query.
    last_visited_at: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (Index("ix_places_user_visits", "user_id", "visit_count"),)


class PlaceVisit(Base):
    __tablename__ = "place_visits"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    place_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("places.id", ondelete="CASCADE"), index=True)
    # "manual" (told by the person or the assistant) or "location" (a location log near the place).
    source: Mapped[str] = mapped_column(String(16))
    visited_at: Mapped[datetime] = mapped_column()
    local_date: Mapped[date] = mapped_column()

    __table_args__ = (Index("ix_place_visits_user_date", "user_id", "local_date"),)


class TrackingSession(Base):
    __tablename__ = "tracking_sessions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    started_at: Mapped[datetime] = mapped_column()
    stopped_at: Mapped[datetime | None] = mapped_column()
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    log_count: Mapped[int | None] = mapped_column(Integer)

    # At most one running session per person, even if two starts race past the service's check.
    __table_args__ = (
        Index("uq_tracking_sessions_user_active", "user_id", unique=True, postgresql_where=text("stopped_at IS NULL")),
    )


class LocationLog(Base):
    __tablename__ = "location_logs"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    lat: Mapped[float] = mapped_column(Float)
    lng: Mapped[float] = mapped_column(Float)
    accuracy: Mapped[float | None] = mapped_column(Float)
    # A deleted place or session leaves the raw location history intact.
    place_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("places.id", ondelete="SET NULL"), index=True)
    session_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("tracking_sessions.id", ondelete="SET NULL"),
                                                         index=True)
    logged_at: Mapped[datetime] = mapped_column()
    local_date: Mapped[date] = mapped_column()

    __table_args__ = (Index("ix_location_logs_user_time", "user_id", "logged_at"),)
