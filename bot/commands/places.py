"""/place: "I'm at <name>" records a visit (creating the place if new); without a name lists places."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.turn import Turn
from brain.i18n import N_, ntr, tr


async def place(turn: Turn, args: str) -> None:
    if not args:
        result = await turn.tool("get_places", {})
        items: list[dict[str, Any]] = result.data.get("places", []) if result.ok else []
        if not items:
            turn.say(tr("No places yet. Tell me where you are with /place <name>."))
            return
        lines = [turn.t(tr("Your places:"))]
        for position, item in enumerate(items[:15], start=1):
            visits = ntr("{count} visit", "{count} visits", int(item.get("visit_count", 0)))
            lines.append(f"{position}. {item['name']} ({turn.t(visits)})")
        turn.say("\n".join(lines))
        return
    visit = await turn.tool("visit_place", {"place": args})
    if not visit.ok and visit.error_code == "not_found":
        created = await turn.tool("create_place", {"name": args})
        if not created.ok:
            turn.say_result(created)
            return
        visit = await turn.tool("visit_place", {"place": created.data["place"]["place_id"]})
    turn.say_result(visit)


COMMANDS = (
    Command("place", "/place Café Luna", N_("Check in at a place, or list your places"), place, aliases=("ort",)),
)
