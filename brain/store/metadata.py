"""Imports every model module so `Base.metadata` knows all tables (for Alembic)."""

from __future__ import annotations

import importlib

import brain.actions.models
import brain.events.store
import brain.outbox.models
import brain.people.models  # noqa: F401
from brain.modules import MODULES
from brain.store.base import Base

# Packages with their own tables (each a `models.py`).
MODEL_PACKAGES = (
    *(f"brain.modules.{name}" for name in MODULES), "brain.goals", "brain.projections", "brain.pulse",
    "brain.feedback", "brain.memory",
)

for _package in MODEL_PACKAGES:
    try:
        importlib.import_module(f"{_package}.models")
    except ModuleNotFoundError as _missing:
        if _missing.name not in (_package, f"{_package}.models"):
            raise

target_metadata = Base.metadata
