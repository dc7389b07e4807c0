"""Commands: each module here defines `COMMANDS` (a tuple of Command) and may define `ACTIONS` (action kind ->
handler of a pressed button's payload). A module that sets `WAITS = True` has commands and actions that wait on
the language model or the embedder: the dialog runs them holding no pooled connection between statements (see
`Database.unshared`). bot.commands.table lists the modules: the single source for routing and for /help."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.turn import Turn

CommandHandler = Callable[[Turn, str], Awaitable[None]]
ActionHandler = Callable[[Turn, dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # an N_() msgid when it holds words: examples read best in the person's language
    summary: str  # an N_() msgid, translated when /help renders it
    handler: CommandHandler
    aliases: tuple[str, ...] = ()
    admin: bool = False  # only for administrators (COMPANION_ADMINS): /help shows it to them alone
