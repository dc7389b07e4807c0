"""Questions about the person's own logs, answered without a language model: "Wie viel Wasser habe ich heute
getrunken?", "Was steht morgen an?", "What are my tasks?". Without a model the rule-based reader used to answer
them with "I didn't understand", and worse, read "Hab ich heute schon Wasser getrunken?" as a glass of water.

`is_question` says whether a message asks rather than tells (the logs then take nothing from it); `asked_about`
says which view answers it, or None when it asks something the logs cannot answer (a past day, a memory, ...)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import Enum

from bot.parsing.dates import find_date


class View(Enum):
    DAY = "day"  # today at a glance (drinks, meals, tasks, calendar)
    MEALS = "meals"  # today's meals, each with its time and calories
    TASKS = "tasks"  # the open tasks
    REMINDERS = "reminders"  # the reminders coming up
    AGENDA = "agenda"  # one day's events, reminders and tasks due
    CLOCK = "clock"  # the person's local time and date ("Wie spät ist es?", "what day is it?")


@dataclass(frozen=True)
class Asked:
    view: View
    day: date | None = None  # the day of an AGENDA


_WORDS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
# How a question starts: a question word, or a request to show something ("was" is German; as English "was" it still
# needs a topic below).
QUESTION_WORDS = frozenset({
    "wie", "was", "welche", "welcher", "welches", "wann", "wieviel", "wieviele", "steht", "stehen", "gibt", "zeig",
    "zeige", "liste", "how", "what", "what's", "whats", "which", "when", "show", "list", "anything",
})
# A verb first asks only with a pronoun after it ("Habe ich heute genug getrunken", "did I drink enough"); "Habe 0,5 l
# Wasser getrunken" and "had a coffee" tell.
ASKING_VERBS = frozenset({"hab", "habe", "hast", "hatte", "bin", "muss", "do", "did", "have", "has", "had", "is", "are",
                          "am", "was"})
PRONOUNS = frozenset({"ich", "du", "es", "wir", "i", "you", "we", "there", "it", "my"})
# Topics, by the words that name them.
_EATING = frozenset({"gegessen", "essen", "ate", "eaten", "eat", "meals", "meal", "mahlzeiten", "mahlzeit",
                     "food", "gefrühstückt"})
_INTAKE = _EATING | frozenset({
    "wasser", "water", "getrunken", "trinken", "trank", "drank", "drink", "drinks", "drunk", "kaffee", "kaffees",
    "coffee", "coffees", "tee", "tea", "kalorien", "calories", "kcal", "protein", "eiweiß", "eiweiss",
})
_TASKS = frozenset({"aufgabe", "aufgaben", "todo", "todos", "to-do", "to-dos", "task", "tasks", "erledigen"})
_REMINDERS = frozenset({"erinnerung", "erinnerungen", "reminder", "reminders"})
_PLANS = frozenset({"termin", "termine", "kalender", "calendar", "appointment", "appointments", "event", "events",
                    "schedule", "plans", "plan", "agenda", "vor", "los"})
_DAY = frozenset({"tag", "day"})  # "Wie sieht mein Tag aus?", "How is my day?"
_TODAY = frozenset({"heute", "today", "tonight"})
_MINE = frozenset({"mein", "my", "meinen", "meiner"})
_PERSONAL = _MINE | _TODAY | frozenset({"ich", "i", "me", "mir", "hab", "habe", "hatte", "bisher"})


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORDS.findall(text)]


def is_question(text: str) -> bool:
    """Whether the message asks something: a question mark at its end, a question word first, or a verb and a pronoun
    first."""
    words = _words(text)
    if text.rstrip().endswith("?"):
        return True
    if len(words) < 2:
        return False
    return words[0] in QUESTION_WORDS or (words[0] in ASKING_VERBS and words[1] in PRONOUNS)


def _plans(words: list[str], text: str) -> bool:
    """Asks what is planned: names the calendar, or says "steht … an", "what's on", "habe ich … vor"."""
    said = set(words)
    if said & (_PLANS - {"vor", "los"}):
        return True
    if ("steht" in said or "stehen" in said) and words[-1] == "an":
        return True
    if words[-1] == "vor" and said & {"habe", "hab", "hast"}:  # "Was habe ich morgen vor?"
        return True
    if words[-1] == "los" and "was" in said:  # "Was ist morgen los?"
        return True
    return re.search(r"\bwhat(?:'|’)?s\s+(?:on|planned|happening)\b|\bwhat\s+is\s+(?:on|planned)\b",
                     text, re.I) is not None


# "Wie spät ist es?", "Wie viel Uhr ist es?", "what time is it?", "welcher Tag ist heute?", "what day is it today?"
CLOCK_RE = re.compile(
    r"^(?:wie\s+sp[äa]t\s+ist\s+es|wie\s*viel\s+uhr\s+(?:ist\s+es|haben\s+wir)|what(?:'s|\s+is)\s+the\s+time"
    r"|what\s+time\s+is\s+it|welcher\s+tag\s+ist\s+heute|welchen\s+tag\s+haben\s+wir(?:\s+heute)?"
    r"|what\s+day\s+is\s+(?:it|today)(?:\s+today)?|what(?:'s|\s+is)\s+the\s+date(?:\s+today)?"
    r"|welches\s+datum\s+(?:ist\s+heute|haben\s+wir(?:\s+heute)?))(?:\s+(?:now|jetzt|gerade))?\s*\??$", re.I)


def asked_about(text: str, today: date) -> Asked | None:
    """Which view answers a question about the logs; None for any other message or question."""
    if CLOCK_RE.match(text.strip().replace("’", "'")):
        return Asked(View.CLOCK)
    if not is_question(text) or len(text) > 200:
        return None
    words = _words(text)
    if not words:
        return None
    said = set(words)
    found = find_date(text, today)
    day = found.value if found is not None else None
    if day is None and said & _TODAY:
        day = today
    if said & _TASKS:
        return Asked(View.TASKS) if day is None or day >= today else None
    if said & _REMINDERS:
        return Asked(View.REMINDERS) if day is None or day >= today else None
    if _plans(words, text):
        if day is None or day == today:
            return Asked(View.DAY)
        return Asked(View.AGENDA, day) if day > today else None
    if (said & _INTAKE and (said & _PERSONAL or len(words) <= 2)) or (said & _DAY and said & _MINE):
        # Only today's figures are kept at a glance; "gestern" or "last week" is for the model (or /week). About the
        # person's own intake only: "Wie viele Kalorien hat eine Banane?" is no question about the log.
        if day is not None and day != today:
            return None
        # What was eaten, listed ("Was habe ich heute gegessen?"); drinks and calories are in the day at a glance.
        return Asked(View.MEALS if said & _EATING and not said & (_INTAKE - _EATING) else View.DAY)
    return None


# A command's word typed without its slash, alone ("help", "undo", "Aufgaben"): what people used to other chats type.
COMMAND_WORDS = {
    "help": "help", "hilfe": "help", "undo": "undo", "rückgängig": "undo", "tasks": "tasks", "aufgaben": "tasks",
    "todo": "tasks", "todos": "tasks", "today": "today", "heute": "today", "week": "week", "woche": "week",
    "streaks": "streaks", "reminders": "remind", "erinnerungen": "remind", "places": "place", "orte": "place",
}


def command_word(text: str) -> str | None:
    """The command a message that is only its word (without the slash) asks for, or None."""
    return COMMAND_WORDS.get(text.strip().strip(".!?").strip().lower())

