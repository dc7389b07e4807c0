"""Tables of the food module: logged meals and each person's single nutrition goal.
Meals carry the person's local day so "today" is a plain indexed equality."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import ForeignKey, Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class Meal(Base):
    __tablename__ = "meals"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    meal_type: Mapped[str] = mapped_column(String(16))
    input_type: Mapped[str] = mapped_column(String(16))
    description: Mapped[str] = mapped_column(String(500))
    calories: Mapped[int | None] = mapped_column(Integer)
    protein: Mapped[int | None] = mapped_column(Integer)
    carbs: Mapped[int | None] = mapped_column(Integer)
    fat: Mapped[int | None] = mapped_column(Integer)
    logged_at: Mapped[datetime] = mapped_column()
    local_date: Mapped[date] = mapped_column()
    # clock_timestamp, not now(): meals of one transaction still get a stable order for "delete last".
    created_at: Mapped[datetime] = mapped_column(server_default=func.clock_timestamp())

    __table_args__ = (Index("ix_meals_user_date", "user_id", "local_date"),)


class NutritionGoal(Base):
    __tablename__ = "nutrition_goals"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    # Unique: one active goal per person, replaced in place by an upsert.
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), unique=True)
    daily_calories: Mapped[int] = mapped_column(Integer)
    daily_protein: Mapped[int | None] = mapped_column(Integer)
    daily_carbs: Mapped[int | None] = mapped_column(Integer)
    daily_fat: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
