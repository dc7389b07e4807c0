"""/task, /tasks and /done: add a task (with a due date phrase), list open tasks, complete one."""

from __future__ import annotations

from datetime import date
from typing import Any

from bot.commands import Command
from bot.parsing.dates import DueAtTime, cut, due_at_time, find_date, find_dateish, with_time_of_day
from bot.turn import PendingButton, Turn
from brain.i18n import N_, Text, ntr, tr
from brain.people.local_time import local_now

LIST_LIMIT = 15  # shown; the count of the rest is said
FETCH_LIMIT = 100  # read (the task list's maximum), to count what is not shown
BUTTON_LIMIT = 8


async def task(turn: Turn, args: str) -> None:
    if not args:
        turn.say(tr("Usage: /task <what> [until when], e.g. /task Buy milk by Friday"))
        return
    call: dict[str, Any] = {"title": args}
    note: Text | None = None  # why a time said with no day made the task due when it is
    found = find_date(args, turn.today)
    if found is not None:
        title = cut(args, *with_time_of_day(args, found))  # a task has a due day, no time
        if title:
            call = {"title": title, "due_date": found.value.isoformat()}
    elif (at_time := due_at_time(args, turn.today, local_now(turn.user, turn.now).time())) is not None:
        # "Report at 3pm": the day of the next 3pm is the due day.
        call = {"title": at_time.title, "due_date": at_time.due.isoformat()}
        note = time_note(at_time, turn.today)
    bad_day = find_dateish(call["title"], turn.today)
    if bad_day is not None:  # "Meeting prep 31.02.": a question, not a task with the wrong date in its title
        turn.say(tr("I couldn't read the date \"{text}\". Write it like 24.12., 24.12.2026 or 2026-12-24.",
                    text=bad_day[:20]))
        return
    result = await turn.tool("create_task", call)
    if note is not None and result.ok and result.message is not None:
        turn.say(result.message, note)
        return
    turn.say_result(result)


def time_note(at_time: DueAtTime, today: date) -> Text:
    """Said after a task made due by a time with no day ("Report at 3pm", by /task or as a to-do in free text): the
    time, which a task does not keep, is not dropped without a word."""
    if at_time.due == today:
        return tr("A task keeps a day, not a time: {time} is still ahead today, so it is due today.",
                  time=at_time.meant)
    return tr("A task keeps a day, not a time: {time} has passed today, so it is due tomorrow.", time=at_time.meant)


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
    page = min(max(int(args), 1), pages) if args.strip().isdigit() and len(args.strip()) < 4 else 1
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
    rows = [buttons[i:i + 4] for i in range(0, len(buttons), 4)]
    pager = ([turn.button(tr("‹ Back"), "command", text=f"/tasks {page - 1}")] if page > 1 else []) + \
        ([turn.button(tr("More ›"), "command", text=f"/tasks {page + 1}")] if page < pages else [])
    turn.say("\n".join(lines), buttons=[*rows, pager] if pager else rows)


def _task_line(turn: Turn, position: int, item: dict[str, Any]) -> str:
    line = f"{position}. {item['title']}"
    due = item.get("due_date")
    if due:
        from datetime import date

        due_day = date.fromisoformat(due)
        label = tr("overdue since {date}", date=due_day) if due_day < turn.today else (
            tr("today") if due_day == turn.today else tr("due {date}", date=due_day))
        line += f" ({turn.t(label)})"
    return line


async def done(turn: Turn, args: str) -> None:
    if not args:
        await tasks(turn, "")
        return
    result = await turn.tool("complete_task", {"task": args})
    turn.say_result(result)


COMMANDS = (
    Command("task", N_("/task Buy milk by Friday"), N_("Add a task"), task, aliases=("todo", "aufgabe")),
    Command("tasks", "/tasks", N_("Open tasks"), tasks, aliases=("aufgaben",)),
    Command("done", "/done 1", N_("Complete a task (number, or part of its title)"), done, aliases=("erledigt",)),
)
