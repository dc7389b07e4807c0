"""Importing a part of the project that may not be there: packages plug in tools, tables, subscribers
and commands by convention (a `tools.py`, `models.py`, ...), and a missing file simply means none."""

from __future__ import annotations

import importlib
from types import ModuleType


def optional_module(name: str) -> ModuleType | None:
    """`name` imported, or None when it (or its package) does not exist. An import error *inside* an
    existing module is not hidden."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:
        parts = name.split(".")
        if missing.name in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}:
            return None
        raise
