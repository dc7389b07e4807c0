"""Imports every model module so `Base.metadata` knows all tables (for Alembic)."""

from __future__ import annotations

import importlib

import brain.actions.models
import brain.events.store
import brain.outbox.models
import brain.people.models  # noqa: F401
from brain.modules import MODULES
from brain.store.base import Base

for _name in MODULES:
    try:
        importlib.import_module(f"brain.modules.{_name}.models")
    except ModuleNotFoundError as _missing:
        if _missing.name not in (f"brain.modules.{_name}", f"brain.modules.{_name}.models"):
            raise

target_metadata = Base.metadata
