"""The command table: the single source for routing and for /help (name, usage, translated summary)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.turn import Turn

CommandHandler = Callable[[Turn, str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # an N_() msgid too: examples read best in the person's language
    summary: str  # an N_() msgid, translated when /help renders it
    handler: CommandHandler
    aliases: tuple[str, ...] = ()


def command_table() -> dict[str, Command]:
    from bot.commands import basics, calendar, drinks, food, places, tasks, today, undo

    table: dict[str, Command] = {}
    for module in (basics, today, tasks, drinks, food, calendar, places, undo):
        for command in module.COMMANDS:
            for name in (command.name, *command.aliases):
                table[name] = command
    return table
