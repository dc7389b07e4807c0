"""The five life modules. Each is a folder with models (tables), service (mutations that emit their
events) and tools (ToolSpecs over the service)."""

from __future__ import annotations

from brain.optional_import import optional_module
from brain.tools.spec import ToolSpec

MODULES: tuple[str, ...] = ("todo", "calendar", "drink", "food", "places")
# Packages beyond the life modules that offer tools (each a `tools.py` with a TOOLS tuple).
TOOL_PROVIDERS: tuple[str, ...] = (
    *(f"brain.modules.{name}" for name in MODULES), "brain.goals", "brain.projections", "brain.pulse",
    "brain.rituals",
    "brain.reminders",
)


def all_tools() -> list[ToolSpec]:
    tools: list[ToolSpec] = []
    for package in TOOL_PROVIDERS:
        module = optional_module(f"{package}.tools")
        if module is not None:
            tools.extend(module.TOOLS)
    return tools
