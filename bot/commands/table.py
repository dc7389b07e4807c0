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
from brain.i18n import N_, Renderer, tr

COMMAND_MODULES: tuple[ModuleType, ...] = (
    basics, today, tasks, drinks, food, calendar, places, streaks, goals, week, pulse, memory, undo, proposals,
    activity, ai_settings, companion, missions, onboarding, rituals, link, data, tools, reminders, facts,
)


# /help's groups, in order, and the modules whose commands each lists (every module of COMMAND_MODULES once).
HELP_GROUPS: tuple[tuple[str, tuple[ModuleType, ...]], ...] = (
    (N_("Logs"), (today, tasks, drinks, food, calendar, places, undo)),
    (N_("Goals and streaks"), (streaks, goals, week)),
    (N_("Rituals and reminders"), (reminders, rituals, pulse)),
    (N_("Assistant"), (proposals, activity, companion, missions, tools)),
    (N_("Memory"), (memory, facts)),
    (N_("Your data"), (data, link)),
    (N_("Settings"), (basics, onboarding, ai_settings)),
)


def command_menu(locale: str) -> list[tuple[str, str]]:
    """The commands a chat app lists in its menu (Telegram's "/" menu), in /help's order, with their summaries in
    `locale`: (name, description), administrators' commands left out."""
    render = Renderer(locale)
    return [(command.name, render(tr(command.summary))) for _, modules in HELP_GROUPS for module in modules
            for command in _commands(module) if not command.admin]


async def help_(turn: Turn, args: str) -> None:
    """The commands by group; those for administrators only to administrators."""
    companion = turn.brain.companion
    admin = companion is not None and companion.is_admin(turn.inbound.platform, turn.inbound.platform_user_id)
    lines = [turn.t(tr("What I understand:"))]
    for title, modules in HELP_GROUPS:
        lines.append("")
        lines.append(turn.t(tr(title)) + ":")
        for module in modules:
            for command in _commands(module):
                if command.admin and not admin:
                    continue
                lines.append(f"{turn.t(tr(command.usage))} — {turn.t(tr(command.summary))}")
        if drinks in modules:
            lines.append(turn.t(tr("Drinks: a bare number up to 10 counts glasses or cups (2.5 too), 50 and more is "
                                   "ml; in between I ask which. With a unit it is that much: 0.5 l.")))
    lines.append("")
    lines.append(turn.t(tr("You can also just write, e.g. \"250 ml water\", \"two coffees\", \"Buy milk by Friday\" "
                           "or \"I'm at Café Luna\", and ask \"What's on tomorrow?\" or \"How much water today?\".")))
    lines.append(turn.t(tr("Something logged wrong? Write \"that was 250 ml\", \"I meant dinner\" or \"undo\". "
                           "\"What do you know about me?\" shows what you told me about yourself.")))
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
