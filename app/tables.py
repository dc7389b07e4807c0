"""Every table of the app, the chat layer's included: what Alembic compares the database with (migrations/env.py),
and what the brain's data rights and linking see as personal tables once the app has imported it (app.wiring does)."""

from __future__ import annotations

from types import ModuleType

from bot import models as bot
from brain import tables

MODEL_MODULES: tuple[ModuleType, ...] = (*tables.MODEL_MODULES, bot)

target_metadata = tables.metadata
