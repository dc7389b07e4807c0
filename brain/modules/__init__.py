"""The five life modules. Each is a folder with models (tables), service (mutations that emit their
events) and tools (ToolSpecs over the service)."""

from __future__ import annotations

import importlib

from brain.tools.spec import ToolSpec

MODULES: tuple[str, ...] = ("todo", "calendar", "drink", "food", "places")


def all_tools() -> list[ToolSpec]:
    tools: list[ToolSpec] = []
    for name in MODULES:
        try:
            module = importlib.import_module(f"brain.modules.{name}.tools")
        except ModuleNotFoundError as missing:
            if missing.name == f"brain.modules.{name}" or missing.name == f"brain.modules.{name}.tools":
                continue
            raise
        tools.extend(module.TOOLS)
    return tools
