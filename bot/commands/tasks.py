"""/task, /tasks and /done: add a task (with a due date phrase), list open tasks, complete one."""

from __future__ import annotations

import re
import uuid
from datetime import date, time, timedelta
from typing import Any

from bot.commands import Command
from bot.parsing.dates import DueAtTime, cut, due_at_time, find_date, find_dateish, time_with_day, with_time_of_day
from bot.parsing.recurrence import find_repetition
from bot.turn import PendingButton, Turn
from brain.errors import DomainError
from brain.i18n import N_, Text, ntr, tr
from brain.modules.todo.service import find_task, remember_shown
from brain.people.local_time import local_now
from brain.tools.spec import ToolResult

LIST_LIMIT = 15  # shown; the count of the rest is said
FETCH_LIMIT = 100  # read (the task list's maximum), to count what is not shown
BUTTON_LIMIT = 8


DELETE_WORDS = frozenset({"delete", "remove", "löschen", "loeschen", "entfernen"})


async def task(turn: Turn, args: str) -> None:
    if not args:
        turn.say(tr("Usage: /task <what> [until when], e.g. /task Buy milk by Friday"))
        return
    verb, _, reference = args.partition(" ")
    if verb.casefold() in DELETE_WORDS and reference.strip():
        await _delete(turn, reference.strip())
        return
    # "rent monthly on the 1st", "Yoga jeden zweiten Dienstag": the rest is read as the first occurrence.
    repetition = find_repetition(args, turn.today)
    if repetition is not None:
        args = repetition.cut_from(args)
    call: dict[str, Any] = {"title": args}
    note: Text | None = None  # why a time said with no day made the task due when it is
    found = find_date(args, turn.today)
    if found is not None:
        title = cut(args, *with_time_of_day(args, found))  # the day and its time leave the title
        if title:
            call = {"title": title, "due_date": found.value.isoformat()}
            said = time_with_day(args, found)
            if said is not None:
                call["due_time"] = said.isoformat(timespec="minutes")
    elif (at_time := due_at_time(args, turn.today, local_now(turn.user, turn.now).time())) is not None:
        # "Report at 3pm": due at the next 3pm.
        call = {"title": at_time.title, "due_date": at_time.due.isoformat(),
                "due_time": at_time.meant.isoformat(timespec="minutes")}
        note = time_note(at_time, turn.today)
    if repetition is not None:
        call["repeat"] = repetition.rule
    bad_day = find_dateish(call["title"], turn.today)
    if bad_day is not None:  # "Meeting prep 31.02.": a question, not a task with the wrong date in its title
        turn.say(tr("I couldn't read the date \"{text}\". Write it like 24.12., 24.12.2026 or 2026-12-24.",
                    text=bad_day[:20]))
        return
    say_task(turn, await turn.tool("create_task", call), note)


async def _delete(turn: Turn, reference: str) -> None:
    """Deletes the task; of a repeating one, asks first: skip this occurrence, or end the series?"""
    try:
        async with turn.brain.transactions.begin() as uow:
            found = await find_task(uow, turn.user, reference, status="any")
    except DomainError as refused:
        turn.say(refused.text)
        return
    if found.task.recurrence is None or found.task.completed_at is not None:
        turn.say_result(await turn.tool("delete_task", {"task": str(found.task.id)}))
        return
    turn.say(tr("{title} repeats. Skip only this one, or delete the whole series?", title=found.task.title),
             buttons=[[turn.tool_button(tr("Only this one"), "delete_task", task=str(found.task.id), scope="this"),
                       turn.tool_button(tr("The whole series"), "delete_task", task=str(found.task.id),
                                        scope="series")]])


def say_task(turn: Turn, result: ToolResult, note: Text | None = None) -> None:
    """A new task's reply, with Done and Undo for exactly this task (a to-do read from free text may be a misreading:
    one press takes it back); one due at a time also gets a button that sets a reminder for then."""
    if not result.ok or result.message is None:
        turn.say_result(result)
        return
    task = str(result.data["id"])
    row = [turn.tool_button(tr("✓ Done"), "complete_task", task=task),
           turn.tool_button(tr("Undo"), "delete_task", task=task)]
    if result.data.get("due_time"):
        row.insert(0, turn.tool_button(tr("⏰ Remind me then"), "set_task_reminder", task=task))
    turn.say(result.message, note, buttons=[row])


def time_note(at_time: DueAtTime, today: date) -> Text | None:
    """Said after a task made due by a time with no day ("Report at 3pm", by /task or as a to-do in free text) when
    that time has passed today: the task is tomorrow's, which the person may not have meant."""
    if at_time.due == today:
        return None
    return tr("{time} has passed today, so it is due tomorrow.", time=at_time.meant)


# Between the items of a task that is a list ("Einkaufen: Milch, Eier, Brot", "Milch, Eier und Brot kaufen").
_BETWEEN_ITEMS_RE = re.compile(r"\s*(?:,|;|&|\bund\b|\band\b)\s*", re.I)


def _holds(title: str, words: set[str]) -> bool:
    """Whether a task said done in `words` is this one: its title holds them all, and of a list every item is
    named ("Hab Milch gekauft" does not finish "Einkaufen: Milch, Eier, Brot")."""
    if not words <= set(re.findall(r"[\wäöüß'-]+", title.lower())):
        return False
    items = [set(re.findall(r"[\wäöüß'-]+", part.lower()))
             for part in _BETWEEN_ITEMS_RE.split(title.split(":", 1)[-1]) if part.strip()]
    return len(items) < 2 or all(item & words for item in items)


async def done_in_words(turn: Turn, words: list[str], before: Text | None = None) -> bool:
    """Completes the one open task whose title holds all of `words` ("Hab Milch gekauft" and "Milch kaufen"), `before`
    said first; False, saying nothing, when none or several do."""
    listed = await turn.tool("list_tasks", {"filter": "open", "limit": FETCH_LIMIT})
    if not listed.ok:
        return False
    matching = [item for item in listed.data.get("tasks", []) if _holds(str(item["title"]), set(words))]
    if len(matching) != 1:
        return False
    if before is not None:
        turn.say(before)
    turn.say_result(await turn.tool("complete_task", {"task": str(matching[0]["id"])}))
    return True


async def tasks(turn: Turn, args: str) -> None:
    result = await turn.tool("list_tasks", {"filter": "open", "limit": FETCH_LIMIT})
    if not result.ok:
        turn.say_result(result)
        return
    items: list[dict[str, Any]] = result.data.get("tasks", [])
    if not items:
        turn.say(tr("No open tasks. Add one with /task."))
        return
    pages = max(1, -(-len(items) // LIST_LIMIT))
    page = min(max(int(args), 1), pages) if args.strip().isdecimal() and len(args.strip()) < 4 else 1
    start = (page - 1) * LIST_LIMIT
    lines = [turn.t(tr("Open tasks:") if pages == 1 else tr("Open tasks (page {page} of {pages}):", page=page,
                                                             pages=pages))]
    buttons: list[PendingButton] = []
    # Each task under its number in the task list, the number /done takes (a task done today keeps its number until
    # tomorrow, so the numbers shown may skip one).
    for item in items[start:start + LIST_LIMIT]:
        position = item["position"]
        lines.append(_task_line(turn, position, item))
        if len(buttons) < BUTTON_LIMIT:
            buttons.append(turn.tool_button(f"✓ {position}", "complete_task", task=item["id"]))
    hidden = len(items) - start - LIST_LIMIT
    if hidden > 0:
        more = (ntr("… and {count} more.", "… and {count} more.", hidden, count=hidden) if len(items) < FETCH_LIMIT
                else tr("… and more."))
        lines.append(turn.t(more))
    elif len(items) >= FETCH_LIMIT:
        lines.append(turn.t(tr("… and more.")))
    # The numbers stay what this list shows until the next list, also for a task added meanwhile that sorts first.
    async with turn.brain.transactions.begin() as uow:
        await remember_shown(uow, turn.user, [(item["position"], uuid.UUID(item["id"])) for item in items])
    rows = [buttons[i:i + 4] for i in range(0, len(buttons), 4)]
    pager = ([turn.button(tr("‹ Back"), "command", text=f"/tasks {page - 1}")] if page > 1 else []) + \
        ([turn.button(tr("More ›"), "command", text=f"/tasks {page + 1}")] if page < pages else [])
    turn.say("\n".join(lines), buttons=[*rows, pager] if pager else rows)


def _task_line(turn: Turn, position: int, item: dict[str, Any]) -> str:
    line = f"{position}. {item['title']}" + (" 🔁" if item.get("repeat") else "")
    due = item.get("due_date")
    if due:
        due_day = date.fromisoformat(due)
        label = tr("overdue since {date}", date=due_day) if due_day < turn.today else (
            tr("today") if due_day == turn.today else tr("tomorrow") if due_day == turn.today + timedelta(days=1)
            else tr("due {date}", date=due_day))
        line += f" ({turn.t(label)}"
        if item.get("due_time"):
            line += ", " + turn.render.format_value(time.fromisoformat(item["due_time"]))
        line += ")"
    return line


async def done(turn: Turn, args: str) -> None:
    if not args:
        await tasks(turn, "")
        return
    result = await turn.tool("complete_task", {"task": args})
    turn.say_result(result)


COMMANDS = (
    Command("task", N_("/task Buy milk by Friday"), N_("Add a task (/task delete 2 removes one)"), task,
            aliases=("todo", "aufgabe")),
    Command("tasks", "/tasks", N_("Open tasks"), tasks, aliases=("aufgaben",)),
    Command("done", "/done 1", N_("Complete a task (number, or part of its title)"), done, aliases=("erledigt",)),
)
