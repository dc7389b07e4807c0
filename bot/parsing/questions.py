"""Questions about the person's own logs, answered without a language model: "Wie viel Wasser habe ich heute
getrunken?", "Was steht morgen an?", "What are my tasks?". Without a model the rule-based reader used to answer
them with "I didn't understand", and worse, read "Hab ich heute schon Wasser getrunken?" as a glass of water.

`is_question` says whether a message asks rather than tells (the logs then take nothing from it); `asked_about`
says which view answers it, or None when it asks something the logs cannot answer (a past day, a memory, ...)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum

from bot.parsing.dates import MONTHS, WEEKDAYS, find_date
from brain.goals.phrase import parse_goal_phrase


class View(Enum):
    DAY = "day"  # today at a glance (drinks, meals, tasks, calendar)
    MEALS = "meals"  # today's meals, each with its time and calories
    TASKS = "tasks"  # the open tasks
    REMINDERS = "reminders"  # the reminders coming up
    AGENDA = "agenda"  # the events, reminders and tasks due of a coming day, or of days ("diese Woche")
    CLOCK = "clock"  # the person's local time and date ("Wie spät ist es?", "what day is it?")
    PAST_DAY = "past day"  # a past day's drinks and meals ("Wie viel Wasser habe ich gestern getrunken?")
    GOALS = "goals"  # the goals and their progress ("Wie läuft mein Ziel?")
    STREAKS = "streaks"  # the streaks ("my streaks?")
    NEXT_EVENT = "next event"  # the next appointment ("Wann ist mein nächster Termin?")
    EVENTS = "events"  # the appointments coming up ("Zeig mir meine Termine")
    PLACES = "places"  # the person's places and visits ("Zeig mir meine Orte", "Wo war ich heute?")
    WEEK = "week"  # the last seven days' chart ("Wie viel Kaffee hatte ich diese Woche?")
    PLACES_TODAY = "places today"  # where the person was today, with the times ("Wo war ich heute?")


@dataclass(frozen=True)
class Asked:
    view: View
    day: date | None = None  # the (first) day of an AGENDA
    last: date | None = None  # its last day, when it asks about several ("this week")


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
# A meal's name asks about what was eaten only in the past tense ("Was hatte ich zum Frühstück?"); "What's for
# dinner?" asks for an idea.
_MEAL_NAMES = frozenset({"frühstück", "mittagessen", "abendessen", "breakfast", "lunch", "dinner", "supper"})
_INTAKE = _EATING | frozenset({
    "wasser", "water", "getrunken", "trinken", "trank", "drank", "drink", "drinks", "drunk", "kaffee", "kaffees",
    "coffee", "coffees", "tee", "tea", "kalorien", "calories", "kcal", "protein", "eiweiß", "eiweiss",
})
# A question in the past tense about what was had: a weekday alone in it is the one gone.
_TOLD_DONE = frozenset({"gegessen", "getrunken", "gefrühstückt", "ate", "eaten", "drank", "drunk", "had", "hatte",
                        "did"})
_GOALS = frozenset({"goal", "goals", "ziel", "ziele", "zielen"})
_STREAKS = frozenset({"streak", "streaks", "serie", "serien", "strähne", "strähnen"})
_NEXT = frozenset({"next", "nächste", "nächster", "nächstes", "nächsten", "naechste", "naechster", "naechstes"})
_EVENT = frozenset({"termin", "appointment", "event", "meeting", "treffen"})
_TASKS = frozenset({"aufgabe", "aufgaben", "todo", "todos", "to-do", "to-dos", "task", "tasks", "erledigen",
                    "überfällig", "ueberfaellig", "overdue", "due", "fällig", "faellig"})
# What is still to do, asked without naming tasks.
_TODO_RE = re.compile(r"\b(?:muss|müssen|sollte)\s+ich\b.*\b(?:machen|tun|erledigen)\b|\bnoch\s+zu\s+tun\b"
                      r"|\b(?:have|need)\s+to\s+do\b|\bto\s+do\s+(?:today|tomorrow|list)\b|\bleft\s+to\s+do\b",
                      re.I)
_DONE = frozenset({"erledigt", "geschafft", "done", "finished", "completed"})
# ... asked of a span, with the word that makes it the person's own doing ("did I finish", "habe ich erledigt").
_DONE_ASKED = frozenset({"i", "ich", "my", "meine"})
_CALENDAR = frozenset({"termine", "appointments", "events", "kalender", "calendar"})
_PLACES = frozenset({"orte", "places", "ort", "place"})
_REMINDERS = frozenset({"erinnerung", "erinnerungen", "reminder", "reminders"})
_PLANS = frozenset({"termin", "termine", "kalender", "calendar", "appointment", "appointments", "event", "events",
                    "schedule", "plans", "plan", "planned", "geplant", "agenda", "vor", "los"})
_DAY = frozenset({"tag", "day"})  # "Wie sieht mein Tag aus?", "How is my day?"
_TODAY = frozenset({"heute", "today", "tonight"})
_MINE = frozenset({"mein", "my", "meinen", "meiner", "meine", "meinem"})
_PERSONAL = _MINE | _TODAY | frozenset({"ich", "i", "me", "mir", "hab", "habe", "hatte", "bisher"})
_WEEK = frozenset({"woche", "week"})
_WEEKEND = frozenset({"wochenende", "weekend"})
_DAYS = frozenset({"tage", "tagen", "days"})  # "in den nächsten Tagen", "the next few days"
_PAST = frozenset({"letzte", "letzten", "letztes", "last", "vergangene", "vergangenen", "vergangenes", "vorige",
                   "vorigen", "voriges", "previous", "past"})
_COMING = frozenset({"nächste", "nächsten", "nächstes", "naechste", "naechsten", "naechstes", "next", "kommende",
                     "kommenden", "kommendes", "coming", "upcoming"})
# Longer spans than a week: no view keeps them, the model (or /week for the last days) answers.
_LONG = frozenset({"monat", "monats", "month", "jahr", "jahres", "year", "sommer", "summer", "winter"})


@dataclass(frozen=True)
class Period:
    """Days a question names as a span ("diese Woche", "next week", "am Wochenende", "in den nächsten Tagen"), first
    and last included; `past` for one that is over ("letzte Woche"), `long` for one no view keeps ("diesen Monat")."""

    first: date | None = None
    last: date | None = None
    past: bool = False
    long: bool = False


def period_of(words: list[str], today: date) -> Period | None:
    """The span of days a question's words name, or None when they name none (a single day is `find_date`'s)."""
    said = set(words)
    if said & _LONG:
        return Period(long=True)
    span = said & (_WEEK | _WEEKEND | _DAYS)
    if not span:
        return None
    at = min(words.index(word) for word in span)
    before = set(words[max(0, at - 3):at])  # "in den nächsten Tagen", "the next few days", "letzte Woche"
    if before & _PAST:
        return Period(past=True)
    if span & _WEEKEND:
        saturday = today + timedelta(days=(5 - today.weekday()) % 7)
        if today.weekday() == 6:  # on a Sunday, this weekend is today; the next one is six days ahead
            return Period(today + timedelta(days=6), today + timedelta(days=7)) if before & _COMING else \
                Period(today, today)
        return Period(saturday, saturday + timedelta(days=1))
    if span & _WEEK:
        sunday = today + timedelta(days=6 - today.weekday())
        if before & _COMING:
            return Period(sunday + timedelta(days=1), sunday + timedelta(days=7))
        return Period(today, sunday)
    if before & _COMING:
        return Period(today, today + timedelta(days=6))
    return None


# How far back a past day's logs are answered without a model (the logs keep more; older is for the model).
_KEPT = timedelta(days=366)


def _gone(phrase: str, day: date) -> date:
    """The day a date phrase read as a coming one ("Montag", "2.5.") names in a question about what was had: the one
    gone ("Was habe ich am Montag gegessen?"); a phrase that says which ("nächsten Montag", a year) stays."""
    words = _words(phrase)
    if not words or set(words) & _COMING or re.search(r"\d{4}", phrase):
        return day
    if words[-1] in WEEKDAYS:
        return day - timedelta(days=7)
    try:
        return day.replace(year=day.year - 1) if re.search(r"\d", phrase) or set(words) & set(MONTHS) else day
    except ValueError:  # 29 February
        return day


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


# A question word with its verb or "much / viel" right after it: "what are my tasks", "how much water today", "wann
# ist mein Termin". "When I was young, ..." and "Wie immer ..." open statements.
_WH_WORDS = frozenset({"what", "how", "when", "where", "who", "which", "why", "was", "wie", "wann", "wo", "wer",
                       "welche", "welcher", "welches", "warum"})
_WH_FOLLOWERS = frozenset({"is", "are", "was", "were", "do", "does", "did", "am", "much", "many", "long", "often",
                           "ist", "sind", "war", "waren", "hab", "habe", "hat", "haben", "hatte", "viel", "viele",
                           "oft", "lange", "steht", "stehen", "gibt", "mache", "soll", "kann", "muss"})


def asks_plainly(text: str) -> bool:
    """Whether a message is a question, also without its question mark: one at its end, or a question word and its
    verb first ("what are my tasks"). Narrower than `is_question`, so a statement that opens with "when" or "wie"
    ("When I was young I lived in Leeds") is not taken for one: for what the memory keeps as told."""
    if text.rstrip().endswith(("?", "？")):
        return True
    words = _words(text)
    return len(words) >= 2 and "," not in text and (words[0] in ("what's", "whats", "how's", "where's", "who's")
                                                    or (words[0] in _WH_WORDS and words[1] in _WH_FOLLOWERS))


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
    return re.search(r"\bwhat(?:'|’)?s\s+(?:on|planned|happening)\b|\bwhat\s+is\s+(?:on|planned)\b"
                     r"|^anything\s+(?:on|planned|happening)\b",
                     text, re.I) is not None


# "Wie spät ist es?", "Wie viel Uhr ist es?", "what time is it?", "welcher Tag ist heute?", "what day is it today?"
CLOCK_RE = re.compile(
    r"^(?:wie\s+sp[äa]t\s+ist\s+es|wie\s*viel\s+uhr\s+(?:ist\s+es|haben\s+wir)|what(?:'s|\s+is)\s+the\s+time"
    r"|what\s+time\s+is\s+it|welcher\s+tag\s+ist\s+heute|welchen\s+tag\s+haben\s+wir(?:\s+heute)?"
    r"|what\s+day\s+is\s+(?:it|today)(?:\s+today)?|what(?:'s|\s+is)\s+the\s+date(?:\s+today)?"
    r"|welches\s+datum\s+(?:ist\s+heute|haben\s+wir(?:\s+heute)?))(?:\s+(?:now|jetzt|gerade))?\s*\??$", re.I)


# A past day asked about as a whole: "Was war gestern?", "what happened yesterday?", "what did I do on Monday?".
_HOW_WAS_RE = re.compile(r"^(?:und\s+|and\s+)?(?:was\s+war|wie\s+war|was\s+(?:habe|hab)\s+ich\s+\S+(?:\s+\S+)?"
                         r"\s+gemacht|was\s+ist\s+\S+(?:\s+\S+)?\s+passiert|what\s+happened|how\s+was"
                         r"|what\s+did\s+i\s+do)\b", re.I)


# How the week or the day went, as a whole: "Wie war meine Woche?", "how's my week going?", "Wie war mein Tag?".
_HOW_WAS_MY_RE = re.compile(
    r"^(?:und\s+|and\s+|so,?\s+)?(?:wie\s+(?:war|lief|läuft|laeuft|ist)\s+(?:denn\s+)?(?:meine|mein|die|diese|der|dieser)"
    r"|how\s+(?:was|is|has\s+been|did|does)\s+(?:my|this|the)|how(?:'s|’s)\s+(?:my|this|the))\s+"
    r"(?P<span>woche|week|tag|day)(?:\s+(?:bisher|so\s+far|been|going|go|gelaufen|heute|today))*\s*\??$", re.I)


# "How am I doing (this week)?", "wie mache ich mich diese Woche?", "wie läuft es bei mir heute?": today at a glance
# when it says today, else the last seven days. ("How's it going?" alone asks after the companion: small talk.)
_HOW_AM_I_RE = re.compile(
    r"^(?:und\s+|and\s+|so,?\s+)?(?:how\s+am\s+i\s+doing|how\s+(?:is|are)\s+(?:things|it)\s+going(?=\s+(?:this|today))"
    r"|wie\s+(?:mache|schlage)\s+ich\s+mich|wie\s+läuft(?:'s|s|\s+es)(?=\s+(?:bei\s+mir|diese|heute)))"
    r"(?P<span>(?:\s+(?:this\s+week|today|so\s+far|lately|bei\s+mir|diese\s+woche|heute|bisher|denn|so))*)\s*[?!.]*$",
    re.I)


# What may stand around a coming day said alone ("and tomorrow?", "what about Friday", "und am Montag?").
_AROUND_A_DAY = re.compile(r"^(?:and|und|what\s+about|how\s+about|und\s+wie\s+sieht(?:'s|\s+es)\s+aus|wie\s+sieht(?:'s|"
                           r"\s+es)\s+aus|on|am|this|next|nächsten|naechsten|kommenden|diesen|\s|[,?!.])*$", re.I)


def _lone_day(text: str, today: date) -> date | None:
    """A coming day said alone, as a question about it ("tomorrow", "und Freitag?"); "Morgen" alone is a greeting
    ("Morgen!"), so only with a question mark."""
    said = text.strip()
    if len(said) > 40 or (said.lower().strip(" !.") == "morgen"):
        return None
    found = find_date(said, today)
    if found is None or found.value is None or found.value <= today:
        return None
    rest = said[:found.start] + " " + said[found.end:]
    return found.value if _AROUND_A_DAY.match(rest) else None


def asked_about(text: str, today: date) -> Asked | None:
    """Which view answers a question about the logs; None for any other message or question."""
    if CLOCK_RE.match(text.strip().replace("’", "'")):
        return Asked(View.CLOCK)
    lone = _lone_day(text, today)
    if lone is not None:  # "tomorrow", "and Friday?", "übermorgen": that day's agenda
        return Asked(View.AGENDA, lone)
    how_am_i = _HOW_AM_I_RE.match(text.strip().replace("’", "'"))
    if how_am_i is not None:
        return Asked(View.DAY if re.search(r"today|heute", how_am_i.group("span"), re.I) else View.WEEK)
    how_was = _HOW_WAS_MY_RE.match(text.strip())
    if how_was is not None:  # the last seven days, or today at a glance
        return Asked(View.WEEK if how_was.group("span").lower() in ("woche", "week") else View.DAY)
    if not is_question(text) or len(text) > 200:
        return None
    words = _words(text)
    if not words:
        return None
    said = set(words)
    found = find_date(text, today)
    if found is not None:
        phrase = set(_words(text[found.start:found.end]))
        if phrase & _WEEK and not phrase & set(WEEKDAYS):  # "next week" alone is a week here, not its Monday
            found = None
    day = found.value if found is not None else None
    if found is not None and day is not None and day > today and said & _TOLD_DONE:
        day = _gone(text[found.start:found.end], day)
    period = period_of(words, today) if day is None else None
    if day is None and period is None and said & _TODAY:
        day = today
    if day is not None and today - _KEPT <= day < today and _HOW_WAS_RE.match(text):
        return Asked(View.PAST_DAY, day)  # "Was war gestern?", "what did I do yesterday?": that day's logs
    if (said & _GOALS and said & {"wasser", "water", "wasserziel"}) or "wasserziel" in said:
        return Asked(View.DAY)  # the day's water target is in the day at a glance, not a tracked goal
    if said & _GOALS and (said & _PERSONAL or len(words) <= 2):
        return Asked(View.GOALS)
    if said & _STREAKS and (said & _PERSONAL or len(words) <= 2):
        return Asked(View.STREAKS)
    if said & _NEXT and said & _EVENT and found is None and period is None:
        return Asked(View.NEXT_EVENT)  # "Wann ist mein nächster Termin?", "what's my next appointment?"
    where_was_i = words[:3] in (["wo", "war", "ich"], ["where", "was", "i"]) or words[:4] == [
        "where", "have", "i", "been"] or re.search(r"\bwie\s*oft\s+war\s+ich\b|\bhow\s+(?:often|many\s+times)\s+"
                                                 r"(?:have\s+i\s+been|was\s+i|did\s+i\s+go)\b", text, re.I)
    if (said & _PLACES and (said & _PERSONAL or len(words) <= 2)) or where_was_i:
        if where_was_i and day == today and not re.search(r"\b(?:wie\s*oft|how\s+(?:often|many))\b", text, re.I):
            return Asked(View.PLACES_TODAY)  # "Wo war ich heute?": today's visits, not every place
        return Asked(View.PLACES) if day is None or day == today else None
    if _TODO_RE.search(text):  # "Was muss ich heute noch machen?", "What do I have to do tomorrow?"
        if day is not None and day > today:
            return Asked(View.AGENDA, day)
        return Asked(View.TASKS) if day is None or day == today else None
    if said & (_DONE | {"finish", "complete", "get"}) and said & _DONE_ASKED and period is not None \
            and not period.long and (period.past or period.first == today):
        return Asked(View.WEEK)  # "how many tasks did I finish this week?": the last seven days count them
    if said & _DONE and said & _PERSONAL and (day is None or day == today):
        return Asked(View.DAY)  # "Was habe ich heute schon erledigt?": the day counts what was done
    if said & _TASKS:
        if day is not None and day > today:  # "what's due tomorrow?": that day's agenda, not every open task
            return Asked(View.AGENDA, day)
        return Asked(View.TASKS) if (day is None or day >= today) and not (period and period.past) else None
    if said & _REMINDERS:
        return Asked(View.REMINDERS) if (day is None or day >= today) and not (period and period.past) else None
    if _plans(words, text):
        if period is not None:  # "Was steht diese Woche an?", "What's on next week?"
            return Asked(View.AGENDA, period.first, period.last) if period.first is not None else None
        if day is None and said & _CALENDAR:
            return Asked(View.EVENTS)  # "Zeig mir meine Termine": what is coming up, not only today
        if day is None or day == today:
            return Asked(View.DAY)
        return Asked(View.AGENDA, day) if day > today else None
    if said & _MEAL_NAMES and said & _TOLD_DONE:
        said |= {"gegessen"}
    # A day or a span makes it the person's own log too: "how many coffees this week?", "how much water yesterday?".
    if (said & _INTAKE and (said & _PERSONAL or len(words) <= 2 or found is not None or period is not None)) \
            or (said & _DAY and said & _MINE):
        # Today at a glance, a past day's drinks and meals ("gestern"); a span ("letzte Woche") is for the model (or
        # /week). About the person's own intake only: "Wie viele Kalorien hat eine Banane?" is no question about the
        # log.
        if day is not None and today - _KEPT <= day < today:
            return Asked(View.PAST_DAY, day)
        if period is not None and not period.long and (period.past or period.first == today) \
                and not said & (_WEEKEND | _DAYS):
            return Asked(View.WEEK)  # "Wie viel Kaffee hatte ich diese Woche?": the last seven days
        if (day is not None and day != today) or period is not None:
            return None
        # What was eaten, listed ("Was habe ich heute gegessen?"); drinks and calories are in the day at a glance.
        return Asked(View.MEALS if said & _EATING and not said & (_INTAKE - _EATING) else View.DAY)
    return None


# A command's word typed without its slash, alone ("help", "undo", "Aufgaben"): what people used to other chats type.
COMMAND_WORDS = {
    "help": "help", "hilfe": "help", "undo": "undo", "rückgängig": "undo", "tasks": "tasks", "aufgaben": "tasks",
    "todo": "tasks", "todos": "tasks", "today": "today", "heute": "today", "week": "week", "woche": "week",
    "streaks": "streaks", "reminders": "remind", "erinnerungen": "remind", "places": "place", "orte": "place",
    # ... and with "my" before it ("meine Orte", "my tasks").
    "my tasks": "tasks", "meine aufgaben": "tasks", "my todos": "tasks", "my reminders": "remind",
    "meine erinnerungen": "remind", "my places": "place", "meine orte": "place", "my goals": "goal",
    "meine ziele": "goal", "my streaks": "streaks", "meine serien": "streaks", "my appointments": "event",
    "meine termine": "event", "my week": "week", "meine woche": "week", "my day": "today", "mein tag": "today",
    "goals": "goal", "ziele": "goal", "termine": "event", "appointments": "event", "rituals": "ritual",
    "rituale": "ritual", "calendar": "event", "kalender": "event", "my calendar": "event", "mein kalender": "event",
    "meinen kalender": "event", "settings": "settings", "einstellungen": "settings", "my settings": "settings",
    "meine einstellungen": "settings",
    # Lists are tasks ("Einkaufsliste: Milch, Eier" is one, "add eggs to my list" makes one).
    "shopping list": "tasks", "my shopping list": "tasks", "the shopping list": "tasks", "einkaufsliste": "tasks",
    "meine einkaufsliste": "tasks", "die einkaufsliste": "tasks", "my list": "tasks", "meine liste": "tasks",
    "to-do list": "tasks", "todo list": "tasks", "my to-do list": "tasks", "my todo list": "tasks",
    "meine to-do-liste": "tasks", "to-do-liste": "tasks",
}


# Asking to be shown a view by its word: "show my week", "zeig mir meine Aufgaben", "list my reminders, please".
_SHOW_RE = re.compile(r"^(?:(?:please|bitte)\s+)?(?:show|list|open|zeig|zeige|öffne|liste)\s+"
                      r"(?:(?:me|mir|mal|bitte|all|alle)\s+)*|(?:,?\s+(?:please|bitte))$")
# Everything of a kind taken back at once: nothing is deleted in one go by words; the list shows a button for each.
_DELETE_ALL_RE = re.compile(r"^(?:please\s+|bitte\s+)?(?:cancel|delete|remove|clear|lösche|lösch|entferne|storniere)\s+"
                            r"(?:all|alle|every)\s+(?:of\s+)?(?:my|meine|the|die)?\s*"
                            r"(?P<things>reminders|erinnerungen|tasks|aufgaben|termine|appointments)(?:\s+bitte|\s+please)?$")
# Taking the last entry back, said in a sentence: /undo.
_UNDO_RE = re.compile(
    r"^(?:bitte\s+)?(?:mach|mache)\s+(?:bitte\s+)?(?:das|es|den\s+letzten\s+eintrag)\s+(?:bitte\s+)?rückgängig"
    r"(?:\s+bitte)?$"
    r"|^(?:das|den\s+letzten\s+eintrag)\s+rückgängig\s+machen(?:\s+bitte)?$"
    r"|^(?:please\s+)?(?:undo|take\s+back)\s+(?:that|it|this|the\s+last\s+(?:one|entry)|my\s+last\s+entry)"
    r"(?:,?\s+please)?$"
    r"|^(?:please\s+)?take\s+(?:that|it)\s+back(?:,?\s+please)?$"
    r"|^(?:bitte\s+)?nimm\s+(?:das|es)\s+(?:bitte\s+)?zurück$"
    r"|^(?:bitte\s+)?(?:lösche|lösch|entferne)\s+(?:bitte\s+)?(?:den\s+letzten|meinen\s+letzten)\s+eintrag(?:\s+bitte)?$"
    r"|^(?:den\s+)?letzten\s+eintrag\s+(?:löschen|entfernen)(?:\s+bitte)?$"
    r"|^(?:please\s+)?(?:delete|remove)\s+(?:the|my)\s+last\s+(?:entry|one)(?:,?\s+please)?$", re.I)


def command_word(text: str) -> str | None:
    """The command a message that is only its word (without the slash) asks for, or None; "mach das rückgängig",
    "undo that", "delete my last entry" are /undo."""
    said = text.strip().strip(".!?").strip().lower()
    if _UNDO_RE.match(said):
        return "undo"
    every = _DELETE_ALL_RE.match(said)
    if every is not None:  # "cancel all my reminders": the list, with a delete button on each
        return COMMAND_WORDS[every.group("things")]
    return COMMAND_WORDS.get(said) or COMMAND_WORDS.get(_SHOW_RE.sub("", said).strip())


# An appointment's word with a colon before what it is ("Termin: Zahnarzt Montag 10 Uhr"): /event with the rest.
_PREFIXED_RE = re.compile(r"^(?:termin|appointment|event|kalender|calendar)\s*:\s*(?P<rest>\S.*)$", re.I)


# A task done by its number in the list, without the slash: "done 1", "erledigt 2", "1 erledigt".
_DONE_NUMBER_RE = re.compile(r"^(?:(?:done|erledigt|fertig|abgehakt)\s*#?(?P<n>\d{1,3})"
                             r"|#?(?P<m>\d{1,3})\s+(?:done|erledigt|ist\s+erledigt|is\s+done))[.!]?$", re.I)


def command_prefixed(text: str) -> tuple[str, str] | None:
    """The command and its arguments a message written as "Termin: ..." or "done 1" asks for, or None."""
    said = _PREFIXED_RE.match(text.strip())
    if said is not None:
        return "event", said.group("rest").strip()
    goal = _GOAL_SAID_RE.match(text.strip())
    if goal is not None:
        return "goal", goal.group("rest").strip()
    plain = _PLAIN_GOAL_RE.match(text.strip().rstrip(".!"))
    if plain is not None and parse_goal_phrase(plain.group("rest")) is not None:
        return "goal", plain.group("rest")  # "max 2 Kaffee am Tag", "I want at least 8 glasses of water a day"
    kept = _REMEMBER_SAID_RE.match(text.strip())
    if kept is not None:
        return "remember", (kept.group("rest") or kept.group("rest2")).strip()
    done = _DONE_NUMBER_RE.match(text.strip())
    return ("done", done.group("n") or done.group("m")) if done is not None else None


# A goal said plainly, with its bound and its period: "max 2 Kaffee am Tag", "at least 8 glasses of water a day", "ich
# will höchstens 3 Kaffee pro Tag". Without the bound ("2 coffees a day") it may tell a habit, so it is not read.
_PLAIN_GOAL_RE = re.compile(
    r"^(?:(?:i\s+(?:want|would\s+like|'d\s+like|will|'ll)\s+(?:to\s+(?:drink|have|eat|do|finish|visit)\s+)?"
    r"|(?:ich\s+)?(?:will|möchte|moechte|werde)\s+)(?:nur\s+noch\s+|only\s+)?)?"
    r"(?P<rest>(?:max|maximal|maximum|höchstens|hoechstens|at\s+most|no\s+more\s+than|nicht\s+mehr\s+als|mindestens|"
    r"at\s+least|wenigstens)\s+\S.*?\s(?:a|per|pro|am|im|in\s+der|each|every|jeden|jede|die)\s+"
    r"(?:day|tag|week|woche|month|monat))(?:\s+(?:trinken|essen|schaffen|erledigen|besuchen))?$", re.I)


# Something to keep asked for in words: "remember that my sister's birthday is on May 3", "please remember: …", "merk
# dir: der Schlüssel liegt unter der Matte", "Merke dir, dass Anna Tee mag" (what /remember takes after it).
_REMEMBER_SAID_RE = re.compile(
    r"^(?:please\s+)?(?:remember|note)(?:\s+that\b|\s*:)\s*(?P<rest>\S.*)$"
    r"|^(?:bitte\s+)?(?:merk|merke)\s+(?:dir|es\s+dir)\s*(?:bitte\s*)?(?:[:,]\s*)?(?:,?\s*dass\s+)?(?P<rest2>\S.*)$",
    re.I)


# A goal asked for in words: "set a goal: max 2 coffees a day", "neues Ziel: 8 Gläser Wasser am Tag", "Ziel: 5
# Aufgaben pro Tag" (what /goal takes after it; a bare "goal" or "Ziel" needs its colon: "Ziel erreicht!" is none).
_GOAL_SAID_RE = re.compile(
    r"^(?:(?:please\s+)?(?:set|add|create|make|start)\s+(?:me\s+)?(?:a\s+|an\s+|one\s+)?(?:new\s+)?goal\s*(?::|to\b|for\b)?"
    r"|new\s+goal\s*:?|(?:goal|ziel)\s*:"
    r"|(?:bitte\s+)?(?:setz|setze|leg|lege|mach|mache|erstell|erstelle)\s+(?:mir\s+)?(?:bitte\s+)?(?:ein\s+)?(?:neues\s+)?"
    r"ziel\s*:?|neues\s+ziel\s*:?)\s*(?P<rest>\S.*)$", re.I)


# What the logs do not keep (sleep, steps, weight, workouts): said or asked, it gets that answer, not "I didn't
# understand".
_UNTRACKED_RE = re.compile(
    r"\b\d[\d.,]*\s*(?:steps|schritte)\b|\bhow\s+many\s+steps\b|\bwie\s*viele\s+schritte\b"
    r"|\b(?:i\s+slept|slept\s+\d|how\s+(?:long|well)\s+did\s+i\s+sleep|(?:habe|hab)\s+(?:\S+\s+){0,3}geschlafen"
    r"|wie\s+(?:lange|gut)\s+habe?\s+ich\s+geschlafen)\b"
    r"|\b(?:i\s+weigh|my\s+weight\s+is|ich\s+wiege|mein\s+gewicht\s+ist)\b"
    r"|\b(?:i\s+)?(?:went\s+for\s+an?\s+(?:[\w-]+\s+){0,3}(?:run|jog|swim|bike\s+ride|ride|hike|workout)"
    r"|went\s+(?:running|jogging|swimming|cycling|biking|hiking)|worked\s+out|went\s+to\s+the\s+gym"
    r"|(?:did|had)\s+(?:an?\s+)?(?:[\w-]+\s+){0,2}(?:workout|yoga|pilates|training\s+session))\b"
    r"|\bi\s+(?:ran|swam|cycled|biked|hiked)\s+\d"
    r"|\b(?:war|bin|gehe|ging)\s+(?:\S+\s+){0,2}(?:joggen|laufen|schwimmen|radfahren|ins\s+fitnessstudio)\b"
    r"|\b(?:habe|hab)\s+(?:\S+\s+){0,2}trainiert\b"
    r"|\bbin\s+(?:\S+\s+){0,2}\d[\d.,]*\s*(?:km|kilometer|meter|m|minuten|min|stunden|h)\s+"
    r"(?:gelaufen|gejoggt|geschwommen|geradelt)\b",
    re.I)


def untracked_said(text: str) -> bool:
    """Whether a message tells or asks about what no log keeps: sleep, steps, weight, workouts."""
    return len(text) <= 200 and _UNTRACKED_RE.search(text) is not None


# The person asking what the companion knows of them: no log answers it, and no recall query words it.
_ABOUT_ME_RE = re.compile(
    r"^(?:and\s+|und\s+|so\s+|also\s+)?(?:what\s+do\s+you\s+(?:know|remember)\s+about\s+me"
    r"|what\s+have\s+you\s+(?:learned|learnt|remembered)\s+about\s+me|what\s+did\s+i\s+tell\s+you(?:\s+about\s+me)?"
    r"|was\s+wei(?:ß|ss)t\s+du\s+(?:alles\s+|eigentlich\s+|schon\s+)*(?:über|ueber)\s+mich"
    r"|was\s+hast\s+du\s+dir\s+(?:alles\s+|über\s+mich\s+)*gemerkt|was\s+habe?\s+ich\s+dir\s+(?:alles\s+)?erzählt"
    r"|woran\s+erinnerst\s+du\s+dich)\s*(?:so\s+far|bisher|already|schon)?\s*[?!.]*$", re.I)


def about_me_asked(text: str) -> bool:
    """Whether the message asks what the companion knows about the person (or who they are: `name_asked`)."""
    said = text.strip().replace("’", "'")
    return _ABOUT_ME_RE.match(said) is not None or _NAME_ASKED_RE.match(said) is not None


# "Who am I?", "what's my name?", "wie heiße ich?", "weißt du, wie ich heiße?".
_NAME_ASKED_RE = re.compile(
    r"^(?:and\s+|und\s+|so\s+)?(?:who\s+am\s+i|what(?:'s|\s+is)\s+my\s+name|do\s+you\s+(?:know|remember)\s+(?:my\s+name"
    r"|who\s+i\s+am)|wer\s+bin\s+ich|wie\s+hei(?:ß|ss)e\s+ich|(?:wei(?:ß|ss)t|kennst)\s+du\s*,?\s*(?:noch\s*,?\s*)?(?:meinen\s+namen"
    r"|wie\s+ich\s+hei(?:ß|ss)e|wer\s+ich\s+bin)|wie\s+ist\s+mein\s+name)\s*[?!.]*$", re.I)


def name_asked(text: str) -> bool:
    """Whether the message asks who the person is or what their name is."""
    return _NAME_ASKED_RE.match(text.strip().replace("’", "'")) is not None
