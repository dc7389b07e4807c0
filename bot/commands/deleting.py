"""Something to delete named by its words alone ("lösche die Pizza", "delete the dentist"): the person's entries
whose words match are looked up across the logs (today's meals, open tasks, appointments and reminders coming up,
places), and each is offered as a button that deletes it. Nothing is deleted before the tap: the words do not say
which kind was meant, and a deleted appointment cannot be undone."""

from __future__ import annotations

from datetime import datetime

from bot.turn import PendingButton, Turn
from brain.i18n import Text, tr
from brain.modules.food.service import meal_label

# At most this many entries are offered (the best-matching kinds first).
OFFERED = 5


def _matches(what: str, words: str) -> bool:
    """Whether an entry's words are the ones said: one holds the other, ignoring case ("pizza" and "Pizza Margherita",
    "the dentist appointment" and "Dentist")."""
    said, named = what.casefold(), words.casefold()
    return bool(named) and (said in named or named in said)


async def delete_in_words(turn: Turn, what: str) -> None:
    found: list[PendingButton] = []
    meals = await turn.tool("nutrition_summary", {})
    for meal in meals.data.get("meals", []) if meals.ok else []:
        if _matches(what, meal["description"]):
            label = tr("🍽 {meal}: {description}", meal=meal_label(meal["meal_type"]), description=meal["description"])
            found.append(turn.tool_button(label, "delete_meal", meal_id=meal["meal_id"]))
    tasks = await turn.tool("list_tasks", {"limit": 50})
    for task in tasks.data.get("tasks", []) if tasks.ok else []:
        if _matches(what, task["title"]):
            found.append(turn.tool_button(tr("✓ Task: {title}", title=task["title"]), "delete_task", task=task["id"]))
    events = await turn.tool("get_upcoming_events", {"limit": 50})
    for event in events.data.get("events", []) if events.ok else []:
        if _matches(what, event["title"]):
            start = datetime.fromisoformat(event["start"])
            label = tr("📅 {title}, {date}", title=event["title"], date=start.date())
            found.append(turn.tool_button(label, "delete_event", event=event["id"]))
    reminders = await turn.tool("list_reminders", {"limit": 50})
    for reminder in reminders.data.get("reminders", []) if reminders.ok else []:
        if _matches(what, reminder["text"]):
            found.append(turn.tool_button(tr("⏰ Reminder: {text}", text=reminder["text"]), "delete_reminder",
                                          reminder=reminder["id"]))
    places = await turn.tool("get_places", {})
    for place in places.data.get("places", []) if places.ok else []:
        if _matches(what, place["name"]):
            found.append(turn.tool_button(tr("📍 Place: {name}", name=place["name"]), "delete_place",
                                          place=place["place_id"]))
    if not found:
        turn.say(tr("I found nothing called “{what}” to delete: no meal of today, open task, appointment or "
                    "reminder coming up, or place.", what=what[:60]),
                 tr("/undo takes back your last entry."))
        return
    ask: Text = (tr("Delete this? Tap it to delete it.") if len(found) == 1
                 else tr("Which one should I delete? Tap it to delete it."))
    turn.say(ask, buttons=[[button] for button in found[:OFFERED]])
