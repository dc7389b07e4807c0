"""Imports every model module so `Base.metadata` knows all tables (for Alembic)."""

from __future__ import annotations

import brain.actions.models
import brain.events.store
import brain.outbox.models
import brain.people.models  # noqa: F401
from brain.modules import MODULES
from brain.optional_import import optional_module
from brain.store.base import Base

# Packages with their own tables (each a `models.py`).
MODEL_PACKAGES = (
    *(f"brain.modules.{name}" for name in MODULES), "brain.goals", "brain.projections", "brain.pulse",
    "brain.feedback", "brain.memory", "brain.companion", "brain.onboarding", "adapters.telegram", "adapters.matrix",
    "brain.schedules", "brain.rituals",
    "brain.reminders",
    "brain.learning",
)

for _package in MODEL_PACKAGES:
    optional_module(f"{_package}.models")

target_metadata = Base.metadata
