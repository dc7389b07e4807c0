"""/settings: what the assistant may do. Two switches with buttons — destructive tools (deleting, ending
goals; each call still needs the person's approval) and sending sensitive content (food, places, memories,
notes) to a model that does not run locally — and per-tool overrides with /settings tool <name> <decision>."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.commands import Command
from bot.turn import Turn
from brain.companion.models import CompanionSettings
from brain.events.actor import AiActor
from brain.i18n import N_, Text, tr
from brain.tools.policy import DECISIONS, decide, load_settings

TOGGLE = "ai_setting_toggle"


@dataclass(frozen=True)
class Switch:
    key: str  # the CompanionSettings column
    label: str  # N_() msgids
    explanation: str


SWITCHES: tuple[Switch, ...] = (
    Switch("allow_destructive", N_("The assistant may propose deleting things"),
           N_("When on, the assistant may propose deleting tasks, events, entries or places and ending goals; "
              "you still approve each one. When off, it cannot do that at all.")),
    Switch("remote_consent", N_("Send sensitive content to remote models"),
           N_("When on, your meals, places, memories and notes may be sent to a language model that does not run "
              "on your own hardware. When off, they only go to a local model.")),
)
DECISION_NAMES: dict[str, str] = {
    "auto": N_("runs on its own"),
    "propose": N_("asks you first"),
    "deny": N_("never"),
}


async def _row(session: AsyncSession, user_id: uuid.UUID, *, for_update: bool = False) -> CompanionSettings:
    """The person's settings row, created with the defaults on first use (safe under concurrency)."""
    await session.execute(insert(CompanionSettings).values(user_id=user_id).on_conflict_do_nothing())
    stmt = select(CompanionSettings).where(CompanionSettings.user_id == user_id)
    if for_update:
        stmt = stmt.with_for_update()
    row = await session.scalar(stmt.execution_options(populate_existing=True))
    assert row is not None
    return row


def _state(on: bool) -> Text:
    return tr("on") if on else tr("off")


async def show(turn: Turn, *first: Text) -> None:
    async with turn.brain.transactions.read() as session:
        row = await session.get(CompanionSettings, turn.user.id)
    values = {s.key: bool(getattr(row, s.key)) if row is not None else False for s in SWITCHES}
    lines: list[Text | str] = [*first, tr("What the assistant may do:")]
    for switch in SWITCHES:
        lines.append(tr("• {setting}: {state}", setting=tr(switch.label), state=_state(values[switch.key])))
        lines.append(tr(switch.explanation))
    overrides = dict((row.policy or {}).get("tools") or {}) if row is not None else {}
    for name, decision in sorted(overrides.items()):
        if decision not in DECISION_NAMES:
            continue
        tool = turn.brain.registry.get(name)
        if decision == "auto" and tool is not None and tool.policy == "destructive":
            # What really happens: a tool that deletes never runs unseen (brain.tools.policy).
            lines.append(tr("• {tool}: {decision} (it deletes things)", tool=name,
                            decision=tr(DECISION_NAMES["propose"])))
        else:
            lines.append(tr("• {tool}: {decision}", tool=name, decision=tr(DECISION_NAMES[decision])))
    # The syntax of an override is shown where it is used (/settings tool), not to everyone who opens /settings.
    lines.append(tr("What it does with each of its tools, and how to change one: /settings tool"))
    buttons = [[turn.button(tr("Turn off: {setting}", setting=tr(s.label)) if values[s.key]
                            else tr("Turn on: {setting}", setting=tr(s.label)), TOGGLE, setting=s.key)]
               for s in SWITCHES]
    turn.say(*lines, buttons=buttons)


async def settings(turn: Turn, args: str) -> None:
    words = args.split()
    if words and words[0].lower() in ("tool", "werkzeug"):
        await _tool_override(turn, words[1:])
        return
    await show(turn)


# What the assistant does with a tool now, as the list of /settings tool says it.
LIST_HEADINGS: dict[str, str] = {
    "auto": N_("Runs on its own:"),
    "propose": N_("Asks you first:"),
    "deny": N_("Never:"),
}


async def _tool_list(turn: Turn, *first: Text) -> None:
    """The tools by what the assistant does with each for this person now (their overrides and switches
    included), and how to change one."""
    async with turn.brain.transactions.read() as session:
        settings = await load_settings(session, turn.user.id)
    actor = AiActor()
    groups: dict[str, list[str]] = {decision: [] for decision in LIST_HEADINGS}
    for tool in sorted(turn.brain.registry.all(), key=lambda t: t.name):
        groups[decide(tool, actor, settings=settings).decision].append(tool.name)
    lines: list[Text | str] = [*first, tr("The assistant's tools and what it does with them:")]
    for decision, names in groups.items():
        if names:
            lines.append(tr("{heading} {tools}", heading=tr(LIST_HEADINGS[decision]), tools=", ".join(names)))
    if not settings.allow_destructive:
        lines.append(tr("Tools that delete or end things stay off until you allow them with the button in "
                        "/settings; then you approve each use."))
    lines.append(tr("Change one: /settings tool <name> auto|propose|deny|default, e.g. /settings tool create_task "
                    "auto"))
    turn.say(*lines)


async def _tool_override(turn: Turn, words: list[str]) -> None:
    choices = (*DECISIONS, "default")
    if not words:
        await _tool_list(turn)
        return
    if len(words) != 2 or words[1].lower() not in choices:
        turn.say(tr("Usage: /settings tool <name> auto|propose|deny|default, e.g. /settings tool create_task auto"),
                 tr("/settings tool alone lists the tools."))
        return
    name, decision = words[0], words[1].lower()
    tool = turn.brain.registry.get(name)
    if tool is None:
        await _tool_list(turn, tr("I don't know a tool called {name}.", name=name[:64]))
        return
    async with turn.brain.transactions.begin() as uow:
        row = await _row(uow.session, turn.user.id, for_update=True)
        policy = dict(row.policy or {})
        tools = dict(policy.get("tools") or {})
        if decision == "default":
            tools.pop(tool.name, None)
        else:
            tools[tool.name] = decision
        policy["tools"] = tools
        row.policy = policy  # a new dict, so the JSON column is written
        row.updated_at = uow.now
    if decision == "default":
        note = tr("{tool} follows the defaults again.", tool=tool.name)
    elif tool.policy == "destructive" and decision == "auto":
        note = tr("Set. {tool} deletes things, so it still always asks you first.", tool=tool.name)
    else:
        note = tr("Set: {tool} {decision}.", tool=tool.name, decision=tr(DECISION_NAMES[decision]))
    await show(turn, note)


async def toggle_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    switch = next((s for s in SWITCHES if s.key == payload.get("setting")), None)
    if switch is None:
        turn.say(tr("That button is not valid."))
        return
    async with turn.brain.transactions.begin() as uow:
        row = await _row(uow.session, turn.user.id, for_update=True)
        value = not bool(getattr(row, switch.key))
        setattr(row, switch.key, value)
        row.updated_at = uow.now
    await show(turn, tr("{setting} is now {state}.", setting=tr(switch.label), state=_state(value)))


COMMANDS = (
    Command("settings", "/settings", N_("What the assistant may do on its own"), settings,
            aliases=("einstellungen",)),
)
ACTIONS = {TOGGLE: toggle_pressed}
