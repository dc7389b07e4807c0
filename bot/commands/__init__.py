"""The command table: the single source for routing and for /help (name, usage, translated summary),
and the button action kinds that command modules handle.

Each module in COMMAND_MODULES may define `COMMANDS` (a tuple of Command) and `ACTIONS` (action kind ->
handler of a pressed button's payload). A module that sets `WAITS = True` has commands and actions that wait on
the language model or the embedder: the dialog runs them holding no pooled connection between statements (see
`Database.unshared`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from bot.turn import Turn
from brain.optional_import import optional_module

CommandHandler = Callable[[Turn, str], Awaitable[None]]
ActionHandler = Callable[[Turn, dict[str, Any]], Awaitable[None]]

COMMAND_MODULES: tuple[str, ...] = (
    "basics", "today", "tasks", "drinks", "food", "calendar", "places", "streaks", "goals", "week", "pulse", "memory",
    "undo", "proposals", "activity", "ai_settings", "companion", "missions", "onboarding", "rituals", "link",
    "data",
    "reminders",
    "facts",
)


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # an N_() msgid when it holds words: examples read best in the person's language
    summary: str  # an N_() msgid, translated when /help renders it
    handler: CommandHandler
    aliases: tuple[str, ...] = ()


def _modules() -> list[ModuleType]:
    return [m for name in COMMAND_MODULES if (m := optional_module(f"bot.commands.{name}")) is not None]


def command_table() -> dict[str, Command]:
    table: dict[str, Command] = {}
    for module in _modules():
        for command in getattr(module, "COMMANDS", ()):
            for name in (command.name, *command.aliases):
                if name in table:
                    raise ValueError(f"command /{name} is defined twice")
                table[name] = command
    return table


def action_handlers() -> dict[str, ActionHandler]:
    handlers: dict[str, ActionHandler] = {}
    for module in _modules():
        for kind, handler in getattr(module, "ACTIONS", {}).items():
            if kind in handlers:
                raise ValueError(f"button action kind {kind!r} is handled twice")
            handlers[kind] = handler
    return handlers


def waiting_handlers() -> frozenset[str]:
    """Names of the commands (with aliases) and action kinds of the modules that set `WAITS`."""
    names: set[str] = set()
    for module in _modules():
        if getattr(module, "WAITS", False):
            for command in getattr(module, "COMMANDS", ()):
                names.update((command.name, *command.aliases))
            names.update(getattr(module, "ACTIONS", {}))
    return frozenset(names)
