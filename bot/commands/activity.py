"""/activity: what the assistant did and proposed, newest first, across all modules. Every write it made
that can be reverted gets an Undo button; undoing runs the inverse tool through the normal path (its own
event, linked to the undone one by `caused_by`). Ten entries a page, with a More button."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from bot.commands import Command
from bot.turn import PendingButton, Turn
from brain.companion.models import Proposal
from brain.events.actor import USER
from brain.events.store import EventRecord
from brain.i18n import N_, Text, tr
from brain.modules.drink.service import drink_label
from brain.tools.proposal_wording import action_text
from brain.tools.proposals import recent_proposals
from brain.tools.staging import short_id
from brain.undo import is_undoable, undo_event, undone_ids

PAGE_SIZE = 10
MAX_PAGES = 20  # what one /activity can page through; older entries are in the event store still
UNDO = "activity_undo"
MORE = "activity_more"

# What an AI event did, by event type; placeholders are payload fields.
EVENT_LINES: dict[str, str] = {
    "TaskCreated": N_("added the task {title}"),
    "TaskCompleted": N_("completed the task {title}"),
    "TaskUncompleted": N_("reopened the task {title}"),
    "TaskUpdated": N_("changed a task"),
    "TaskDeleted": N_("deleted the task {title}"),
    "TaskRescheduled": N_("moved the task {title}"),
    "CalendarEventCreated": N_("added the event {title} ({start_time})"),
    "CalendarEventUpdated": N_("changed an event"),
    "CalendarEventMoved": N_("moved the event {title} to {new_start}"),
    "CalendarEventDeleted": N_("deleted the event {title}"),
    "DrinkLogged": N_("logged {quantity_ml} ml {drink}"),
    "DrinkEntryDeleted": N_("deleted {quantity_ml} ml {drink}"),
    "DrinkEntryUndone": N_("took back {quantity_ml} ml {drink}"),
    "DrinkGoalSet": N_("set the drink goal to {daily_ml} ml"),
    "MealLogged": N_("logged the meal {description}"),
    "MealDeleted": N_("deleted a meal"),
    "NutritionGoalSet": N_("set the calorie goal to {daily_calories} kcal"),
    "PlaceCreated": N_("saved the place {name}"),
    "PlaceDeleted": N_("deleted the place {name}"),
    "PlaceVisited": N_("noted a visit to {name}"),
    "PlaceVisitDeleted": N_("removed a visit to {name}"),
    "LocationLogged": N_("stored your location"),
    "GoalCreated": N_("started the goal {title}"),
}
STATUS_LINES: dict[str, str] = {
    "pending": N_("waiting for you"),
    "approved": N_("approved"),
    "rejected": N_("rejected"),
    "expired": N_("expired"),
}


@dataclass(frozen=True)
class Entry:
    at: datetime
    text: Text
    undo_event_id: uuid.UUID | None = None


def _event_entry(record: EventRecord, undone: set[uuid.UUID]) -> Entry:
    event = record.to_event()
    fields: dict[str, Any] = event.payload.model_dump()
    if "drink_type" in fields:  # the translated kind, unless the drink has its own name
        named = fields.get("name")
        fields["drink"] = named if named and named != fields["drink_type"] else drink_label(fields["drink_type"])
    template = EVENT_LINES.get(record.type)
    what = tr(template, **fields) if template else tr("{type} in {module}", type=record.type, module=record.module)
    if record.id in undone:
        return Entry(record.occurred_at, tr("{what} (undone)", what=what))
    return Entry(record.occurred_at, what, record.id if is_undoable(record.type, record.payload) else None)


def _proposal_entry(proposal: Proposal) -> Entry:
    status = tr(STATUS_LINES.get(proposal.status, proposal.status))
    if proposal.status == "rejected" and proposal.reason:
        status = tr("rejected: {reason}", reason=proposal.reason)
    # In the person's words, as the proposal asked them ("Add the task Buy milk"), not the tool's name and arguments.
    action = action_text(proposal.tool_name, proposal.arguments or {}, year=proposal.created_at.year)
    return Entry(proposal.created_at, tr("proposed: {action} [{id}] — {status}", action=action,
                                         id=short_id(proposal.id), status=status))


async def _entries(turn: Turn, upto: int) -> list[Entry]:
    """The newest `upto` entries of both kinds, merged newest first."""
    async with turn.brain.transactions.read() as session:
        records = (await session.scalars(
            select(EventRecord)
            .where(EventRecord.user_id == turn.user.id, EventRecord.actor["kind"].astext == "ai")
            .order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc()).limit(upto)
        )).all()
        undone = await undone_ids(session, turn.user.id, [r.id for r in records])
        staged = await recent_proposals(session, turn.user.id, upto)
    entries = [_event_entry(r, undone) for r in records] + [_proposal_entry(p) for p in staged]
    return sorted(entries, key=lambda e: e.at, reverse=True)[:upto]


async def show_page(turn: Turn, page: int) -> None:
    page = max(0, min(page, MAX_PAGES - 1))
    entries = await _entries(turn, (page + 1) * PAGE_SIZE + 1)
    shown = entries[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]
    if not shown:
        turn.say(tr("The assistant has not done or proposed anything yet.") if page == 0
                 else tr("There is nothing older."))
        return
    lines = [turn.t(tr("What the assistant did and proposed, newest first:"))]
    undo_buttons: list[PendingButton] = []
    for number, entry in enumerate(shown, start=page * PAGE_SIZE + 1):
        lines.append(f"{number}. {turn.render.format_value(entry.at)}: {turn.t(entry.text)}")
        if entry.undo_event_id is not None:
            undo_buttons.append(turn.button(tr("Undo {number}", number=number), UNDO,
                                            event_id=str(entry.undo_event_id)))
    buttons = [undo_buttons[i:i + 4] for i in range(0, len(undo_buttons), 4)]
    if len(entries) > (page + 1) * PAGE_SIZE and page + 1 < MAX_PAGES:
        buttons.append([turn.button(tr("More"), MORE, page=page + 1)])
    turn.say("\n".join(lines), buttons=buttons)


async def activity(turn: Turn, args: str) -> None:
    await show_page(turn, 0)


async def more_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    try:
        page = int(payload.get("page", 1))
    except (TypeError, ValueError):
        page = 1
    await show_page(turn, page)


async def undo_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    try:
        event_id = uuid.UUID(str(payload.get("event_id")))
    except ValueError:
        turn.say(tr("That button is not valid."))
        return
    turn.say_result(await undo_event(turn.brain.transactions, turn.brain.tools, turn.user.id, event_id, USER))


COMMANDS = (
    Command("activity", "/activity", N_("What the assistant did and proposed, with undo"), activity,
            aliases=("aktivität", "aktivitaet")),
)
ACTIONS = {UNDO: undo_pressed, MORE: more_pressed}
