"""A button that runs one tool call as the person who pressed it (`Turn.tool_button`: the next glass of water,
undo) and says the tool's result."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.turn import Turn


async def tool_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    turn.say_result(await turn.tool(str(payload["name"]), dict(payload.get("args", {}))))


COMMANDS: tuple[Command, ...] = ()
ACTIONS = {"tool": tool_pressed}
