"""The command table: every command module, in the order /help lists them, and the button action kinds they
handle. /help and a nudge's buttons (which may run a command) need the whole table, so they are wired here."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

from bot.commands import (
    ActionHandler,
    Command,
    activity,
    ai_settings,
    basics,
    calendar,
    companion,
    data,
    drinks,
    facts,
    food,
    goals,
    link,
    memory,
    missions,
    onboarding,
    places,
    proposals,
    pulse,
    reminders,
    rituals,
    streaks,
    tasks,
    today,
    tools,
    undo,
    week,
)
from bot.turn import Turn
from brain.i18n import N_, tr

COMMAND_MODULES: tuple[ModuleType, ...] = (
    basics, today, tasks, drinks, food, calendar, places, streaks, goals, week, pulse, memory, undo, proposals,
    activity, ai_settings, companion, missions, onboarding, rituals, link, data, tools, reminders, facts,
)


async def help_(turn: Turn, args: str) -> None:
    seen: set[str] = set()
    lines = [turn.t(tr("What I understand:"))]
    for command in command_table().values():
        if command.name in seen:
            continue
        seen.add(command.name)
        lines.append(f"{turn.t(tr(command.usage))} — {turn.t(tr(command.summary))}")
    lines.append(turn.t(tr("You can also just write, e.g. \"250 ml water\", \"two coffees\" or "
                           "\"Buy milk by Friday\".")))
    turn.say(*lines)


HELP = Command("help", "/help", N_("This list"), help_, aliases=("hilfe",))


async def nudge_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    await pulse.nudge_pressed(turn, payload, command_table())


# Handlers that need the table; each joins the module it belongs to (its place in /help, and WAITS).
TABLE_COMMANDS: dict[ModuleType, tuple[Command, ...]] = {basics: (HELP,)}
TABLE_ACTIONS: dict[ModuleType, dict[str, ActionHandler]] = {pulse: {"nudge": nudge_pressed}}


def _commands(module: ModuleType) -> Iterator[Command]:
    yield from TABLE_COMMANDS.get(module, ())
    yield from module.COMMANDS


def _actions(module: ModuleType) -> dict[str, ActionHandler]:
    return {**TABLE_ACTIONS.get(module, {}), **getattr(module, "ACTIONS", {})}


def command_table() -> dict[str, Command]:
    table: dict[str, Command] = {}
    for module in COMMAND_MODULES:
        for command in _commands(module):
            for name in (command.name, *command.aliases):
                if name in table:
                    raise ValueError(f"command /{name} is defined twice")
                table[name] = command
    return table


def action_handlers() -> dict[str, ActionHandler]:
    handlers: dict[str, ActionHandler] = {}
    for module in COMMAND_MODULES:
        for kind, handler in _actions(module).items():
            if kind in handlers:
                raise ValueError(f"button action kind {kind!r} is handled twice")
            handlers[kind] = handler
    return handlers


def waiting_handlers() -> frozenset[str]:
    """Names of the commands (with aliases) and action kinds of the modules that set `WAITS`."""
    names: set[str] = set()
    for module in COMMAND_MODULES:
        if getattr(module, "WAITS", False):
            for command in _commands(module):
                names.update((command.name, *command.aliases))
            names.update(_actions(module))
    return frozenset(names)
