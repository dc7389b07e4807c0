"""Free text that needs no language model: drinks ("250 ml water", "zwei Kaffee"), meals
("lunch: pasta 650 kcal"), tasks with a deadline ("Einkaufen bis Freitag") and explicit to-dos
("todo: call mom"). Anything else returns None, and the dialog answers kindly instead."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

from bot.parsing.amounts import VESSELS_ML, parse_count, parse_number, parse_volume_ml
from bot.parsing.dates import (
    DueAtTime,
    FoundTime,
    cut,
    due_at_time,
    find_bare_hour,
    find_date,
    find_time,
    on_another_day,
    time_with_day,
    with_time_of_day,
)
from bot.parsing.reminders import ReminderRequest, read_reminder
from brain.i18n import Text
from brain.modules.drink.service import MAX_AT_ONCE

DRINK_WORDS: dict[str, str] = {
    "water": "water", "waters": "water", "wasser": "water", "sprudel": "water", "mineralwasser": "water",
    "coffee": "coffee", "coffees": "coffee", "kaffee": "coffee", "kaffees": "coffee", "espresso": "coffee",
    "espressos": "coffee", "cappuccino": "coffee", "latte": "coffee", "flat white": "coffee",
    "tea": "tea", "teas": "tea", "tee": "tea", "tees": "tea",
    "juice": "juice", "saft": "juice", "orangensaft": "juice", "apfelsaft": "juice",
    "beer": "alcohol", "beers": "alcohol", "bier": "alcohol", "wine": "alcohol", "wein": "alcohol",
    "smoothie": "smoothie", "cola": "soda", "soda": "soda", "limo": "soda", "limonade": "soda",
    "milch": "other", "milk": "other", "kakao": "other", "cocoa": "other", "eistee": "tea",
    "schorle": "juice", "apfelschorle": "juice", "spezi": "soda", "mate": "soda", "radler": "alcohol",
    "sekt": "alcohol",
}
# Drinks said by a name more exact than their kind: logged with it, so the reply says "330 ml Bier", not "Alkohol".
DRINK_NAMES: dict[str, str] = {
    "sprudel": "Sprudel", "mineralwasser": "Mineralwasser", "espresso": "Espresso", "espressos": "Espresso",
    "cappuccino": "Cappuccino", "latte": "Latte", "orangensaft": "Orangensaft", "apfelsaft": "Apfelsaft",
    "beer": "beer", "beers": "beer", "bier": "Bier", "wine": "wine", "wein": "Wein", "cola": "Cola",
    "limonade": "Limonade", "milch": "Milch", "milk": "milk", "kakao": "Kakao", "cocoa": "cocoa", "eistee": "Eistee",
    "schorle": "Schorle", "apfelschorle": "Apfelschorle", "spezi": "Spezi", "mate": "Mate", "radler": "Radler",
    "sekt": "Sekt",
}
# Forms that can only be plural: the number before them counts drinks ("25 coffees" is 25 coffees, never 25 ml).
# "Wasser", "Kaffee" and "Tee" serve as German plurals too, so a number with them stays open (see parse_drinks).
PLURAL_DRINK_WORDS = frozenset({"waters", "coffees", "kaffees", "espressos", "teas", "tees", "beers"})
# A bare number with a drink is millilitres from here on ("Wasser 300"); up to MAX_AT_ONCE it counts drinks
# ("zwei Kaffee"); in between ("20 water": 20 ml, or twenty?) it is not guessed.
MIN_BARE_ML = 50
LITRE_ML = 1000
HALF_WORDS = frozenset({"half", "halber", "halben", "halbe"})
FILLER = {
    "i", "ive", "had", "have", "drank", "drink", "just", "of", "ich", "habe", "hab", "hatte", "trank",
    "getrunken", "gerade",
    "noch", "more", "another", "a", "an", "ein", "eine", "einen", "one", "mug", "ml", "l", "ne", "nen", "'ne",
    # When, as people say it of a drink just had ("Ich habe heute 2 Kaffee getrunken", "had a tea today").
    "heute", "today", "eben", "vorhin", "soeben", "now", "already", "schon", "bereits",
    # ... and a part of today ("abends ein Glas Wein", "a beer tonight"); never "morgen", which is tomorrow.
    "morgens", "vormittags", "mittags", "nachmittags", "abends", "tonight", "earlier",
    # How it came, which changes neither its kind nor its size ("green tea please", "Kaffee mit Milch").
    "please", "bitte", "green", "grüner", "grünen", "black", "schwarzer", "schwarzen", "iced", "hot",
    "heißer", "heißen", "heiße", "kalter", "kalten", "kaltes", "cold", "with", "mit", "milk", "milch", "sugar",
    "zucker", "hafermilch", "oat", "fresh", "frischer", "frischen", "frisch", "schwarz", "pur", "large", "small",
    "big", "großer", "großen", "großes", "kleiner", "kleinen", "kleines",
    # Drinking it now ("Ich trinke gerade einen Tee", "I'm drinking a coffee").
    "trinke", "trink", "drinking", "am",
}
MEAL_WORDS: dict[str, str] = {
    "breakfast": "breakfast", "frühstück": "breakfast", "fruehstueck": "breakfast",
    "lunch": "lunch", "mittagessen": "lunch", "mittag": "lunch",
    "dinner": "dinner", "abendessen": "dinner", "abendbrot": "dinner", "supper": "dinner",
    "snack": "snack",
}
# A whole number with nothing glued before it: not the "200" of "1.200", nor the "5" of "250,5". A minus sign
# counts only glued to the digits with a space (or nothing) before it ("Apple -50 kcal"); "Wrap-400 kcal" and
# "Apple - 50 kcal" use it as a dash.
_AMOUNT = r"(?:(?<![\w.,])(?P<sign>-))?(?<![\w.,])(?P<n>\d+(?:[.,]\d+)*)"
KCAL_RE = re.compile(_AMOUNT + r"\s*(?:kcal|kalorien|calories|cal)\b", re.I)
PROTEIN_RE = re.compile(_AMOUNT + r"\s*g\s*(?:protein|eiweiß|eiweiss)\b", re.I)
# Words that say the meal was eaten, not what it was ("ich habe Pizza gegessen", "had a salad just now").
EATING_WORDS_RE = re.compile(
    r"(?<!\w)(?:ate|eaten|eat|had|i've|ive|gegessen|esse|gefrühstückt|gefruehstueckt|verdrückt|verputzt|aß|ass)(?!\w)",
    re.I)
# Fillers around the food: who ate it, when, and an article ("I just had a pizza", "ich habe heute ein Brötchen",
# "Pizza I had just now").
MEAL_FILLERS = frozenset({
    "i", "we", "ich", "wir", "have", "habe", "hab", "haben", "hatte", "hatten", "just", "now", "gerade", "eben",
    "vorhin", "heute", "today", "noch", "also", "auch", "a", "an", "ein", "eine", "einen",
})
# A message about calories that is not a meal: it speaks of the person, and says nothing of eating.
NOT_EATEN_RE = re.compile(r"^(?:i|i'm|ich|my|mein|meine|we|wir|you|du)\b", re.I)
ATE_RE = re.compile(r"\b(?:ate|eaten|had|eat|gegessen|hatte|aß|ass|esse|gefrühstückt)\b", re.I)
# What follows a meal word when the message is about a meal rather than one eaten ("Lunch was great", "Frühstück
# morgen mit Oma", "Dinner with Anna", "Dinner at 7").
NOT_FOOD_START_RE = re.compile(
    r"^(?:was|war|is|ist|will|wird|tomorrow|morgen|tonight|next|nächste[nm]?|plans?|ideas?|ideen?|recipe|rezept)\b",
    re.I)
# ... and, unless the calories say it was eaten, what starts a plan ("Dinner with Anna", "Mittag um 12 bei Oma").
PLAN_START_RE = re.compile(r"^(?:with|mit|at|um|on|am|bei|in|for|für|heute|today)\b", re.I)
STATE_RE = re.compile(r"^(?:i am|i'm|ich bin|we are|we're|wir sind|i was|ich war|it is|it's|es ist)\b", re.I)
# ("erinnere mich ..." asks for a reminder: bot.parsing.reminders reads it first.)
# ("add task buy milk", "new todo: call Anna", "neue Aufgabe Milch kaufen" say the same.)
TASK_PREFIX_RE = re.compile(r"^(?:(?:please\s+|bitte\s+)?(?:(?:add|new|create|make)\s+(?:a\s+)?(?:new\s+)?"
                            r"(?:task|todo|to-do)|neue\s+aufgabe|aufgabe\s+(?:hinzufügen|anlegen))"
                            r"|todo|to-do|task|aufgabe|nicht\s+vergessen|vergiss\s+nicht|don[’']?t\s+forget"
                            r"(?:\s+to)?|remember\s+to)\s*[:\-,]?\s+(?P<rest>.+)$", re.I)
# What the speaker has to do ("I need to call the bank", "ich muss noch Milch kaufen"): a task when the rest is one
# said plainly (an errand verb; see _bare_task), so "I need to sleep" or "ich muss morgen zum Arzt" stay as they are.
NEED_TO_RE = re.compile(r"^(?:i\s+(?:need|have|got)\s+to|i\s+(?:must|should)|i\s+still\s+(?:need|have)\s+to"
                        r"|ich\s+(?:muss|sollte|soll)(?:\s+noch)?(?:\s+unbedingt)?)\s+(?P<rest>.+)$", re.I)
# "Müll rausbringen nicht vergessen"
TASK_SUFFIX_RE = re.compile(r"^(?P<rest>.+?)\s*[,:\-]?\s+nicht\s+vergessen$", re.I)
# "vergiss nicht, Milch zu kaufen": the task is "Milch kaufen".
_ZU_VERB_RE = re.compile(r"\bzu\s+(?P<verb>[a-zäöüß]{3,}en)$|\b(?P<prefix>ab|an|auf|aus|ein|mit|nach|vor|weg|zurück"
                         r"|raus|rein|heim|fest|frei|los|hin|her|bei|zusammen)zu(?P<stem>[a-zäöüß]{3,}en)$")
DEADLINE_RE = re.compile(r"\b(bis|until|till|by|due|spätestens|spaetestens)\b", re.I)
# A to-do said as a bare verb phrase, without "todo:" or a deadline: a German infinitive at its end ("Milch kaufen",
# "Mama anrufen"), an English imperative first ("buy milk", "call mom"). Verbs of errands only, so that a phrase that
# describes ("schön essen", "read a good book today") is not made a task; a few words at most.
TASK_VERBS_DE = frozenset({
    "kaufen", "einkaufen", "besorgen", "holen", "abholen", "anrufen", "zurückrufen", "bezahlen", "überweisen",
    "erledigen", "putzen", "aufräumen", "waschen", "spülen", "buchen", "bestellen", "kündigen", "beantragen",
    "vereinbaren", "ausmachen", "reparieren", "zurückgeben", "abgeben", "schicken", "verschicken", "abschicken",
    "drucken", "ausdrucken", "unterschreiben", "vorbereiten", "packen", "einpacken", "gießen", "mähen", "reservieren",
    "anmelden", "abmelden", "verlängern", "tanken", "entsorgen", "rausbringen", "einreichen", "beantworten",
    "schreiben", "mailen", "fragen", "erinnern", "organisieren", "planen", "einräumen", "ausräumen", "staubsaugen",
})
# Verbs that make a to-do only with a thing to do ("Steuererklärung machen", "die Präsentation fertig machen").
VAGUE_TASK_VERBS_DE = frozenset({"machen", "tun", "erledigen"})
VAGUE_OBJECTS = frozenset({
    "das", "es", "was", "nichts", "etwas", "alles", "mal", "noch", "dann", "so", "jetzt", "heute", "gleich", "sowas",
    "dies", "hier", "schnell", "bitte", "fertig", "auch", "endlich", "wieder", "nicht", "feierabend", "schluss", "spaß",
    "sinn", "mut", "ernst", "weiter",
})
TASK_VERBS_EN = frozenset({
    "buy", "get", "pick", "call", "phone", "text", "email", "e-mail", "pay", "book", "order", "cancel", "renew",
    "clean", "tidy", "wash", "fix", "repair", "return", "send", "mail", "post", "print", "sign", "prepare", "pack",
    "mow", "schedule", "submit", "reply", "answer", "file", "ask", "bring", "collect", "register", "vacuum",
    "write", "pickup",
})
BARE_TASK_WORDS = 6
DETERMINERS = frozenset({"the", "my", "this", "that", "last", "a", "an", "these", "those"})
# The companion's own entries: an English verb with only one of them is said to the companion ("cancel the reminder"),
# not a to-do. (German errands put the verb last, and the companion's own verbs, "löschen", are no errands.)
OWN_THINGS = frozenset({
    "reminder", "reminders", "task", "tasks", "entry", "entries", "event", "events", "meal", "meals", "drink", "drinks",
    "goal", "goals", "place", "places", "it", "that", "this", "one",
})
# A task said done by (part of) its title: "erledigt: Milch kaufen", "done: call mom", "Milch kaufen erledigt".
# Without the colon ("done buy milk", "erledigt Milch kaufen") unless what follows says how or when ("done for today").
DONE_PREFIX_RE = re.compile(r"^(?:(?:erledigt|done|abgehakt|completed)\s*[:\-]\s*|(?:erledigt|done|abgehakt)\s+"
                            r"(?!(?:for|with|mit|für|fuer|today|heute|now|jetzt|already|schon|soon|gleich|in|by|bis"
                            r"|at|um|and|und|so|too|auch|here|hier)\b)|(?:i'?m\s+|i\s+am\s+)?done\s+with\s+"
                            r"(?:the\s+|my\s+)?|(?:ich\s+)?(?:bin\s+)?fertig\s+mit\s+(?:dem\s+|der\s+|den\s+)?)(?P<task>.+)$",
                            re.I)
DONE_SUFFIX_RE = re.compile(r"^(?:(?:ich\s+)?(?:habe|hab)\s+(?:(?:die|den|das|meine|meinen)\s+)?)?"
                            r"(?P<task>.+?)\s*[:\-]?\s+(?:ist\s+|is\s+)?(?:erledigt|done|abgehakt)$", re.I)
# "I finished the report", "I've completed my tax return"
DONE_EN_RE = re.compile(r"^i(?:'ve|\s+have)?\s+(?:just\s+)?(?:finished|completed)\s+(?:the\s+|my\s+)?(?P<task>.+)$",
                        re.I)
# "mark the plumber as done", "markiere die Steuer als erledigt", "hake die Steuer ab"
_MARKED = (r"(?:bitte\s+)?(?:the\s+|my\s+|die\s+|den\s+|das\s+|meine\s+|meinen\s+)?(?:task\s+|aufgabe\s+)?"
           r"(?P<task>.+?)")
DONE_MARK_RES = (
    re.compile(rf"^(?:please\s+|bitte\s+)?(?:mark|markiere|markier)\s+{_MARKED}\s+(?:as|als)\s+"
               r"(?:done|complete|completed|finished|erledigt)$", re.I),
    re.compile(rf"^(?:bitte\s+)?(?:hake|hak)\s+{_MARKED}\s+ab$", re.I),
    re.compile(rf"^(?:please\s+)?(?:check|tick)\s+off\s+{_MARKED}$", re.I),
)
# One of the companion's entries taken back by (part of) its words: "delete the reminder about the dentist", "lösche
# die Aufgabe Milch kaufen", "Termin beim Zahnarzt absagen", "remove the dentist appointment".
_ARTICLE = r"(?:(?:the|my|den|die|das|dem|der|meinen|meine|meinem|meiner)\s+)?"
_LINK = r"(?:(?:about|for|to|of|called|named|an|für|fuer|zu|zum|zur|wegen|mit|beim|bei)\s+)?"
_NOUNS = r"(?P<noun>reminder|task|to-?do|appointment|event|erinnerung|aufgabe|termin)"
DELETE_RES = (
    re.compile(rf"^(?:please\s+)?(?:delete|remove|cancel)\s+(?:the|my)\s+{_NOUNS}\s+{_LINK}{_ARTICLE}(?P<what>.+?)"
               r"(?:,?\s+please)?$", re.I),
    re.compile(rf"^(?:please\s+)?(?:delete|remove)\s+(?:the|my)\s+(?P<what>.+?)\s+{_NOUNS}(?:,?\s+please)?$", re.I),
    # A reminder is only the companion's: cancelling it takes it back ("cancel the dentist appointment" is an errand).
    re.compile(r"^(?:please\s+)?cancel\s+(?:the|my)\s+(?P<what>.+?)\s+(?P<noun>reminder)(?:,?\s+please)?$", re.I),
    re.compile(r"^(?:bitte\s+)?(?:lösche|loesche|lösch|entferne|streiche)\s+(?:bitte\s+)?(?:die|den|meine|meinen)\s+"
               rf"{_NOUNS}\s+{_LINK}{_ARTICLE}(?P<what>.+?)(?:\s+bitte)?$", re.I),
    re.compile(rf"^(?:die\s+|den\s+|meine\s+|meinen\s+)?{_NOUNS}\s+{_LINK}{_ARTICLE}(?P<what>.+?)\s+"
               r"(?:löschen|loeschen|entfernen|streichen|absagen)(?:\s+bitte)?$", re.I),
    # A German compound names the appointment: "Lösche den Friseurtermin", "Zahnarzttermin absagen".
    re.compile(r"^(?:bitte\s+)?(?:lösche|loesche|lösch|entferne|streiche)\s+(?:bitte\s+)?(?:den|meinen)\s+"
               r"(?P<what>[^\W\d_]{3,}?)-?(?P<noun>termin)(?:\s+bitte)?$", re.I),
    re.compile(r"^(?:den\s+|meinen\s+)?(?P<what>[^\W\d_]{3,}?)-?(?P<noun>termin)\s+"
               r"(?:löschen|loeschen|entfernen|streichen|absagen)(?:\s+bitte)?$", re.I),
)
# An appointment named by what it is and with whom: "delete the meeting with Tom", "lösche das Treffen mit Anna",
# "Mittagessen mit Ben löschen". The words are the title the calendar is searched for.
_WITH_WHOM = (r"(?P<what>(?:meeting|call|lunch|dinner|breakfast|coffee|date|treffen|besprechung|telefonat|termin|"
              r"mittagessen|abendessen|frühstück|kaffee)\s+(?:with|mit)\s+.+?)")


def _delete_res(what: str, *, article_said: bool) -> tuple[re.Pattern[str], ...]:
    """The three ways to ask for something to be deleted: "delete the X", "lösche die X", "X löschen", with `what` the
    pattern of X (a group named what); `article_said`: "the" / "die" must come before it."""
    optional = "" if article_said else "?"
    return (
        re.compile(rf"^(?:please\s+)?(?:delete|remove)\s+(?:(?:the|my)\s+){optional}{what}(?:,?\s+please)?$", re.I),
        re.compile(rf"^(?:bitte\s+)?(?:lösche|loesche|lösch|entferne|streiche)\s+(?:bitte\s+)?"
                   rf"(?:(?:das|die|den|mein|meine|meinen)\s+){optional}{what}(?:\s+bitte)?$", re.I),
        re.compile(rf"^(?:(?:das|die|den|mein|meine|meinen)\s+)?{what}\s+(?:löschen|loeschen|entfernen|streichen)"
                   r"(?:\s+bitte)?$", re.I),
    )


EVENT_DELETE_RES = _delete_res(_WITH_WHOM, article_said=True)
# Which tool takes an entry back, and the name of what it is given.
DELETE_TOOLS = {"reminder": ("delete_reminder", "reminder"), "erinnerung": ("delete_reminder", "reminder"),
                "task": ("delete_task", "task"), "todo": ("delete_task", "task"), "to-do": ("delete_task", "task"),
                "aufgabe": ("delete_task", "task"), "appointment": ("delete_event", "event"),
                "event": ("delete_event", "event"), "termin": ("delete_event", "event")}
DELETE_VERBS = frozenset({"lösche", "loesche", "lösch", "entferne", "streiche", "delete", "remove"})
NOT_A_TITLE_RE = re.compile(r"^(?:alles|all|everything|nichts|nothing|das|that|this|it|es)$", re.I)
# A day that is what the to-do is about, not when it is due.
TOPIC_BEFORE_RE = re.compile(r"\b(?:about|regarding|re|über|wegen|for|für)\s*$", re.I)
# Who a phrase is about, or when it was: a statement, not a to-do ("ich muss noch Milch kaufen" is one, but "wir waren
# einkaufen" is not; the first stays with the model).
NOT_A_TASK_RE = re.compile(
    r"^(?:ich|wir|du|er|sie|es|i|we|you|he|she|they|it|my|mein|meine|get well)\b"
    r"|\b(?:gestern|yesterday|war|waren|was|were)\b",
    re.I)


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    # A time said with no day that made a task due on the day of its next occurrence: the reply says so.
    at_time: DueAtTime | None = None


def parse_free_text(text: str, today: date, *, now: time | None = None) -> list[ToolCall] | None:
    """The calls a text asks for, or None. `now` is the person's local time of day; without it a to-do's time with
    no day ("todo: Report at 3pm") cannot be placed on today or tomorrow and stays in the title."""
    cleaned = re.sub(r"(?<!\d)[.!]+$", "", text.strip())
    if not cleaned or len(cleaned) > 500:
        return None
    if cleaned.endswith("?"):
        # "Hab ich heute schon Wasser getrunken?" asks, it logs nothing (bot.parsing.questions may answer it); an
        # explicit to-do stays one ("todo: ask Anna about Friday?").
        return parse_task(cleaned, today, now) if TASK_PREFIX_RE.match(cleaned) else None
    if (entry := _log_lead(cleaned)) is not None:
        cleaned = entry
    if (counted := _meal_with_kcal_after(cleaned)) is not None:
        return counted
    return (_listed(drink_corrected(cleaned) or meal_corrected(cleaned)) or parse_drinks(cleaned, now)
            or several_drinks(cleaned)
            or _meal_sentence(cleaned) or parse_meal(cleaned) or _eaten(cleaned) or parse_done(cleaned)
            or last_drink_deleted(cleaned) or entry_deleted(cleaned) or _listed(event_moved(cleaned, today))
            or _listed(task_renamed(cleaned))
            or shopping_list(cleaned, today, now) or put_on_the_list(cleaned, today, now)
            or parse_task(cleaned, today, now))


# "log 500ml water", "track two coffees", "trag 2 Kaffee ein", "notiere Pizza zum Mittag": the entry without the verb
# that asks to log it (only when what is left is a drink or a meal: "add milk to the list" stays a to-do).
_LOG_LEAD_RES = (
    re.compile(r"^(?:please\s+)?(?:log|track|record|add|note)(?:\s+(?:me|down))?\s+(?P<entry>.+?)(?:,?\s+please)?$",
               re.I),
    re.compile(r"^(?:bitte\s+)?(?:notiere|notier|vermerke)(?:\s+(?:mir|bitte))?\s+(?P<entry>.+?)(?:,?\s+bitte)?$",
               re.I),
    re.compile(r"^(?:bitte\s+)?(?:trage|trag)(?:\s+(?:mir|bitte))?\s+(?P<entry>.+?)\s+ein(?:,?\s+bitte)?$", re.I),
)


# The calories said after a meal told in a sentence, as an estimate: "Brötchen mit Käse zum Frühstück, ca. 350 kcal",
# "pasta for lunch, about 600 kcal", "lunch: pasta ~650 kcal".
_ESTIMATE_TAIL_RE = re.compile(r"(?:[\s,;(–-]+(?:ca\.?|circa|etwa|ungefähr|ungefaehr|rund|about|around|roughly"
                               r"|approx\.?|approximately|~|mit|with))?\s*~?\s*$", re.I)


def _meal_with_kcal_after(text: str) -> list[ToolCall] | None:
    """A meal with its calories after it: the meal as the meal readers read it without them (so no "about" or "~"
    stays in its description), and the calories; None for anything else."""
    body = text.rstrip(" )")
    said = next((m for m in KCAL_RE.finditer(body) if m.end() == len(body)), None)
    if said is None or said.group("sign") or (kcal := whole_amount(said)) is None:
        return None
    before = body[:said.start()]
    rest = before[:_ESTIMATE_TAIL_RE.search(before).start()].rstrip(" ,;(–-")  # type: ignore[union-attr]
    if not rest or KCAL_RE.search(rest) is not None:
        return None
    calls = _meal_sentence(rest) or parse_meal(rest) or _eaten(rest)
    if calls is None or len(calls) != 1 or calls[0].name != "log_meal" or "kcal" in calls[0].args:
        return None
    calls[0].args["kcal"] = kcal
    return calls


# A shopping list said as one: "Einkaufen: Milch, Eier, Brot", "shopping list: milk, eggs": one task that holds it.
_SHOPPING_RE = re.compile(r"^(?P<head>einkaufen|einkaufsliste|einkauf|shopping(?:\s+list)?|groceries|grocery\s+list"
                          r"|to\s+buy|zu\s+kaufen|besorgen)\s*:\s*(?P<items>\S.*)$", re.I)


# A to-do put on the list in words: "add call the plumber to my list", "put milk on my to-do list", "setz Milch auf
# meine Liste", "schreib Zahnpasta auf die Einkaufsliste" (read as "todo: ..." reads the rest).
_ON_THE_LIST_RES = (
    re.compile(r"^(?:please\s+)?(?:add|put|write)\s+(?P<rest>.+?)\s+(?:to|on|onto)\s+(?:my|the)\s+"
               r"(?:(?:to-?do|todo|task|shopping)\s+)?(?:list|tasks|to-?dos)(?P<tail>\s+(?:by|until|for|on|due)\s+.+?)?"
               r"(?:,?\s+please)?$", re.I),
    re.compile(r"^(?:bitte\s+)?(?:setz|setze|schreib|schreibe|pack|packe|nimm|nehme)\s+(?:bitte\s+)?(?P<rest>.+?)\s+"
               r"(?:auf|in)\s+(?:meine|die)\s+(?:(?:to-?do-?|aufgaben|einkaufs)\s*)?(?:liste|aufgaben)"
               r"(?P<tail>\s+(?:bis|für|fuer|am|zum)\s+.+?)?(?:,?\s+bitte)?$", re.I),
)


def put_on_the_list(text: str, today: date, now: time | None) -> list[ToolCall] | None:
    said = next(_matches(_ON_THE_LIST_RES, text), None)
    return parse_task(f"todo: {said.group('rest')}{said.group('tail') or ''}", today, now) if said is not None \
        else None


def shopping_list(text: str, today: date, now: time | None) -> list[ToolCall] | None:
    """The list as one to-do, read as "todo: ..." reads it (a deadline in it is its due day)."""
    said = _SHOPPING_RE.match(text)
    if said is None:
        return None
    head = said.group("head")
    return parse_task(f"todo: {head[:1].upper()}{head[1:]}: {said.group('items').strip()}", today, now)


def _log_lead(text: str) -> str | None:
    for said in _matches(_LOG_LEAD_RES, text):
        entry = said.group("entry")
        if parse_drinks(entry) or several_drinks(entry) or _meal_sentence(entry) or parse_meal(entry):
            return entry
    return None


def _matches(patterns: Sequence[re.Pattern[str]], text: str) -> Iterator[re.Match[str]]:
    """The matches of those of `patterns` that match the whole message (a final "." or "!" aside), in order."""
    cleaned = re.sub(r"[.!]+$", "", text.strip())
    return (said for pattern in patterns if (said := pattern.match(cleaned)) is not None)


def _listed(call: ToolCall | None) -> list[ToolCall] | None:
    return [call] if call is not None else None


# Between the drinks of one message: "2 Kaffee und ein Wasser", "a coffee and a glass of water", "Bier, Wasser".
_BETWEEN_DRINKS = re.compile(r"\s*(?:(?<!\d),|,(?!\d)|;|\+|&|\bund\b|\band\b|\bplus\b|\bsowie\b)\s*", re.I)
MAX_DRINKS_AT_ONCE = 5


def several_drinks(text: str) -> list[ToolCall] | None:
    """Several drinks in one message, each a drink on its own; None unless every part is one."""
    parts = [part for part in _BETWEEN_DRINKS.split(text) if part.strip()]
    if not 2 <= len(parts) <= MAX_DRINKS_AT_ONCE:
        return None
    calls: list[ToolCall] = []
    for part in parts:
        drink = parse_drinks(part)
        if drink is None:
            return None
        calls.extend(drink)
    return calls


# The last drink, or the last of a kind, taken back in words: "lösche den letzten Kaffee", "remove my last drink".
_LAST_DRINK_RES = (
    re.compile(r"^(?:bitte\s+)?(?:lösche|loesche|lösch|entferne|streiche)\s+(?:bitte\s+)?(?:den|das|die|meinen|mein|"
               r"meine)\s+letzten?\s+(?P<drink>[^\W\d_]+)(?:\s+bitte)?$", re.I),
    re.compile(r"^(?:den\s+|das\s+|die\s+|meinen\s+|mein\s+|meine\s+)?letzten?\s+(?P<drink>[^\W\d_]+)\s+"
               r"(?:löschen|loeschen|entfernen|streichen)(?:\s+bitte)?$", re.I),
    re.compile(r"^(?:please\s+)?(?:delete|remove|undo)\s+(?:the|my)\s+last\s+(?P<drink>[^\W\d_]+)(?:,?\s+please)?$",
               re.I),
)
_ANY_DRINK = frozenset({"getränk", "getraenk", "drink"})


def last_drink_deleted(text: str) -> list[ToolCall] | None:
    for pattern in _LAST_DRINK_RES:
        said = pattern.match(text)
        if said is None:
            continue
        word = said.group("drink").lower()
        if word in _ANY_DRINK:
            return [ToolCall("undo_last_drink", {})]
        if word in DRINK_WORDS and DRINK_WORDS[word] != "other":
            return [ToolCall("undo_last_drink", {"drink_type": DRINK_WORDS[word]})]
    return None


def entry_deleted(text: str) -> list[ToolCall] | None:
    """A reminder, task or appointment the person takes back by its words; the tool finds it among theirs, or says
    it found none or which of several they mean."""
    for pattern in DELETE_RES:
        said = pattern.match(text)
        if said is not None:
            tool, key = DELETE_TOOLS[said.group("noun").lower()]
            what = said.group("what").strip(" ,:-\"'„“")
            return [ToolCall(tool, {key: what[:200]})] if what else None
    said = next(_matches(EVENT_DELETE_RES, text), None)
    return [ToolCall("delete_event", {"event": said.group("what")[:200]})] if said is not None else None


# A drink or a meal told of a past day ("had 2 beers last night", "gestern Abend Pizza gegessen"): the logs keep
# today's, so the reply says that rather than "I didn't understand" (the memory keeps what was told).
_PAST_DAY_RE = re.compile(r"\b(?:yesterday|last\s+night|the\s+day\s+before|gestern|vorgestern)\b", re.I)
_ATE_OR_DRANK_RE = re.compile(r"\b(?:ate|eaten|had|drank|drunk|gegessen|getrunken|hatte|gab\s+es)\b", re.I)


def past_day_log_said(text: str) -> bool:
    """Whether a message tells a drink or a meal of an earlier day."""
    if len(text) > 200 or text.rstrip().endswith("?") or not _PAST_DAY_RE.search(text) \
            or not _ATE_OR_DRANK_RE.search(text):
        return False
    words = set(re.findall(r"[\wäöüß]+", text.lower()))
    return bool(words & set(DRINK_WORDS)) or bool(words & set(MEAL_WORDS)) or bool(
        re.search(r"\b(?:ate|eaten|gegessen)\b", text, re.I))


# An amount alone ("250", "500 ml"): a drink, most likely, but which is not said.
_AMOUNT_ALONE_RE = re.compile(r"^\s*(?P<ml>\d{2,4})\s*(?:ml)?\s*[.!]?\s*$", re.I)
AMOUNT_ALONE_ML = (50, 2000)


def amount_alone(text: str) -> int | None:
    """The millilitres of a message that is only an amount ("250", "330 ml"), or None."""
    said = _AMOUNT_ALONE_RE.match(text)
    if said is None:
        return None
    ml = int(said.group("ml"))
    return ml if AMOUNT_ALONE_ML[0] <= ml <= AMOUNT_ALONE_ML[1] else None


# Something to delete named by its words alone, without saying what kind it is: "lösche die Pizza", "delete the
# dentist", "Milch kaufen löschen". What it is, is looked up among the person's entries (bot.commands.deleting).
_DELETE_WHAT_RES = _delete_res(r"(?P<what>.+?)", article_said=False)
_NOT_NAMED = frozenset({"it", "that", "this", "them", "everything", "all", "es", "das", "dies", "alles", "alle",
                        "sie", "ihn"})
DELETE_WORDS_MAX = 6


def delete_target(text: str) -> str | None:
    """The words of something the person asks to delete without saying its kind ("lösche die Pizza": "Pizza"), or
    None ("delete it" names nothing)."""
    said = next(_matches(_DELETE_WHAT_RES, text), None)
    if said is None:
        return None
    what = said.group("what").strip(" ,.:;\"'„“”")
    if not what or what.lower() in _NOT_NAMED or len(what.split()) > DELETE_WORDS_MAX or not re.search(r"[^\W\d_]",
                                                                                                       what):
        return None
    return what


def parse_done(text: str) -> list[ToolCall] | None:
    """A task said done by (part of) its title; the tool finds it among the open tasks, or says it found none."""
    said = next(_matches((*DONE_MARK_RES, DONE_PREFIX_RE, DONE_SUFFIX_RE, DONE_EN_RE), text), None)
    if said is None:
        return None
    title = said.group("task").strip(" :-")
    if not title or NOT_A_TITLE_RE.match(title) or NOT_A_TASK_RE.search(title) or STATE_RE.match(title):
        return None  # "alles erledigt", "ich bin erledigt": how things are, no task named
    return [ToolCall("complete_task", {"task": title[:200]})]


# Where and when a drink was had, which changes nothing of it: "a glass of water at the office", "Kaffee im Büro",
# "drank 2 glasses of water this morning", "ein Glas Wasser im Büro getrunken". Taken off only when what is left is a
# drink.
# Only a place with its article ("at the office", "im Büro"), or work and home: "Kaffee bei Anna" is a visit.
_DRINK_PLACE_RE = re.compile(r"\s+(?:(?:at|in|on)\s+(?:the|my)\s+[^\W\d_]+(?:\s+[^\W\d_]+)?|at\s+(?:work|home)"
                             r"|(?:im|beim|in\s+der|in\s+dem|auf\s+der|bei\s+der)\s+[^\W\d_]+)(?=\s|$)", re.I)
_DRINK_WHEN_RE = re.compile(
    r"\b(?:this\s+(?:morning|afternoon|evening)|heute\s+(?:morgen|früh|vormittag|nachmittag|abend))\b", re.I)


_AND_ALSO_RE = re.compile(r"^\s*(?:und|and|also|plus|auch|außerdem|dazu|then)\s+(?=\S)", re.I)


def parse_drinks(text: str, now: time | None = None) -> list[ToolCall] | None:
    """The drinks a text logs. `now` (the person's local time): a drink said with a clock time that has passed today
    ("I had a coffee at 7", "Kaffee um 9") is today's drink; with a time still ahead it is a plan, not read here."""
    text = _AND_ALSO_RE.sub("", text)  # "und einen Kaffee", "and a tea" after a drink just logged
    calls = _drinks(text)
    if calls is None:
        plain = _DRINK_WHEN_RE.sub(" ", text)
        plain = _DRINK_PLACE_RE.sub("", plain.strip())
        if now is not None and (clock := find_time(plain)) is not None and _passed_today(plain, clock, now):
            plain = re.sub(r"\b(?:at|um|gegen|around)\s*$", "", cut(plain, clock.start, clock.end).strip(), flags=re.I)
        if plain.strip() != text.strip():
            calls = _drinks(plain)
    return calls


def _passed_today(text: str, clock: FoundTime, now: time) -> bool:
    """Whether a clock time said of something done has passed today in one of its readings ("um 9" at 14:00 is 9:00;
    "at 7" at 02:00 has not: a plan, or yesterday's)."""
    readings = [clock.value]
    if clock.open_meridiem and clock.value.hour < 12:
        readings.append(clock.value.replace(hour=clock.value.hour + 12))
    return any(reading <= now for reading in readings)


def _drinks(text: str) -> list[ToolCall] | None:
    words = re.findall(r"[\wäöüß.,]+", re.sub(r"\bi['’]ve\b", "i have", re.sub(r"\bi['’]m\b", "i am", text.lower())))
    words = [w.strip(".,") for w in words if w.strip(".,")]
    drink_type = None
    name = None
    counted = False  # a plural drink word or a vessel: the bare number counts drinks
    count = 1
    volume: int | None = None
    vessel: int | None = None
    pending_number: str | None = None
    half = False
    for word in words:
        if word in DRINK_WORDS and drink_type is None:
            drink_type = DRINK_WORDS[word]
            name = DRINK_NAMES.get(word)
            counted = counted or word in PLURAL_DRINK_WORDS
            continue
        ml = parse_volume_ml(word)
        if ml is not None and (word[-1].isalpha() or pending_number is None):
            if word[-1].isalpha():  # '250ml', '0,5l'
                volume = ml
                continue
            pending_number = word
            continue
        if word in ("ml", "l", "cl", "dl", "liter", "litre", "liters", "litres") and pending_number is not None:
            volume = parse_volume_ml(pending_number + word)
            if volume is None:  # an amount nobody drank ("999…9 ml"): not a default glass either
                return None
            pending_number = None
            continue
        if word in ("liter", "litre", "liters", "litres") and volume is None:  # "ein Liter Wasser", "a litre"
            volume = LITRE_ML // 2 if half else LITRE_ML
            continue
        if word in HALF_WORDS:  # "ein halber Liter", "half a litre"
            half = True
            continue
        if word in VESSELS_ML:
            vessel = VESSELS_ML[word]
            counted = True
            continue
        number = parse_count(word)
        if number is not None and word not in ("a", "an", "ein", "eine", "einen", "one"):
            pending_number = str(number)
            continue
        if word in FILLER:
            continue
        return None  # an unknown word: this is not (only) a drink
    if drink_type is None or (half and volume is None):  # "half a cup": not guessed
        return None
    if pending_number is not None:
        pending = parse_number(pending_number)
        if pending is None:  # hundreds of digits: no count or volume anyone drank
            return None
        if counted or volume is not None:  # "25 coffees", "3 glasses of water", "2 × 250 ml Wasser"
            if not pending.is_integer():
                return None
            count = int(pending)
        elif not pending.is_integer():
            volume = parse_volume_ml(pending_number)  # "Wasser 0,5": half a litre
        elif pending <= MAX_AT_ONCE:
            count = int(pending)  # "zwei Kaffee"
        elif pending >= MIN_BARE_ML:
            volume = int(pending)  # "Wasser 300" means 300 ml
        else:
            return None  # "20 water": 20 ml or twenty drinks? Not guessed; the reply asks for "250 ml water"
    # Too many at once is for the tool to refuse in words ("at most 10") when the person clearly counted; a
    # number that only might be a count ("11 Kaffee") is not read.
    if count < 1 or (count > MAX_AT_ONCE and not counted):
        return None
    ml = volume or vessel
    args: dict[str, Any] = {"drink_type": drink_type}
    if name is not None:
        args["name"] = name
    if ml is not None:
        args["quantity_ml"] = ml
    if count > 1:
        args["count"] = count
    return [ToolCall("log_drink", args)]


# A meal named inside a sentence that says it was eaten ("Ich habe heute Mittag Pizza gegessen", "had pizza for
# lunch", "zu Abend Suppe gegessen"): the meal word with what introduces it.
MEAL_PHRASE_RE = re.compile(
    r"(?<!\w)(?:(?:zu|zum|zur|heute|for(?:\s+a)?|as(?:\s+a)?|als|at|beim|mein|my)\s+)?"
    r"(?P<meal>frühstück|fruehstueck|mittagessen|mittag|abendessen|abendbrot|abend|breakfast|lunch|dinner|supper"
    r"|snack)"
    r"(?!\w)", re.I)
# Verbs that can only mean eating ("had" and "hatte" also have a day or a meeting).
ONLY_EATING_RE = re.compile(r"(?<!\w)(?:ate|eaten|gegessen|gefrühstückt|gefruehstueckt|verdrückt|aß)(?!\w)", re.I)


def _meal_in_sentence(text: str) -> tuple[str, str] | None:
    """(meal type, the sentence without the meal phrase) for a sentence that says a named meal was eaten."""
    phrase = MEAL_PHRASE_RE.search(text)
    if phrase is None:
        return None
    # With a verb that can only mean eating, any meal phrase; with "had" or "hatte", only a meal the food was for,
    # closing the sentence ("had pizza for lunch"), not one that says when ("I had a meeting at lunch") or is part
    # of something else ("a call for lunch break").
    if not ONLY_EATING_RE.search(text) and not (
            ATE_RE.search(text) and re.match(r"(?:for|zum|zu|as|als)\s", phrase.group(0), re.I)
            and not _food_only(KCAL_RE.sub(" ", text[phrase.end():]))):
        return None
    word = phrase.group("meal").lower()
    return MEAL_WORDS.get(word, "dinner"), text[:phrase.start()] + " " + text[phrase.end():]


# A meal said as a sentence of its own: "lunch was a chicken salad", "zum Abendessen gab es Pasta", "ich esse gerade
# einen Apfel", "I'm eating an apple" ("Lunch was great" says how it was, not what).
MEAL_SENTENCE_RES = (
    re.compile(r"^(?:my\s+)?(?P<meal>breakfast|lunch|dinner|supper)\s+(?:was|were)\s+(?P<food>(?:a|an|some)\s+.+)$",
               re.I),
    re.compile(r"^(?:zum\s+|zu\s+)?(?P<meal>frühstück|fruehstueck|mittagessen|mittag|abendessen|abendbrot|abend)\s+"
               r"(?:gab\s+es|gab's|gabs|hatte\s+ich)\s+(?P<food>.+)$", re.I),
    re.compile(r"^(?:ich\s+)?(?:esse|ess)\s+(?:gerade|grad|jetzt|eben)\s+(?P<food>.+)$", re.I),
    re.compile(r"^(?:i'?m|i\s+am)\s+(?:just\s+)?eating\s+(?P<food>.+)$", re.I),
    # The food with the meal it was ("pizza for dinner", "Müsli zum Frühstück"), or the meal first ("for lunch I had
    # a salad", "zum Frühstück Müsli"); read only when the rest is no errand ("book a table for dinner").
    re.compile(r"^(?P<food>(?!.*\b(?:with|mit|tomorrow|morgen|tonight|heute\s+abend|next|nächste\w*)\b)"
               r"(?:\d+\s+)?[^\d:]\D*?)"
               r"\s+(?:for(?:\s+a)?|zum|zu|als|as\s+a)\s+(?P<meal>breakfast|lunch|dinner|supper|frühstück|fruehstueck"
               r"|mittagessen|mittag|abendessen|abendbrot|snack)$", re.I),
    re.compile(r"^(?:for|zum|zu)\s+(?P<meal>breakfast|lunch|dinner|supper|frühstück|fruehstueck|mittagessen|mittag"
               r"|abendessen|abendbrot)\s*[,:]?\s+(?:i\s+had\s+|i\s+ate\s+|we\s+had\s+|hatte\s+ich\s+|gibt\s+es\s+)?"
               r"(?P<food>(?!.*\b(?:tomorrow|morgen|next|nächste\w*)\b)\D+)$", re.I),
)
# The two forms that name a meal and a food with no verb of eating, and words that say the rest is no food.
_FOOD_FOR_MEAL = MEAL_SENTENCE_RES[-2:]
_NOT_EATEN_WORDS = frozenset({
    "time", "zeit", "ready", "bereit", "meet", "meeting", "treffen", "treffe", "kommt", "kommen", "komme", "come",
    "comes", "coming", "table", "tisch", "reservierung", "reservation", "date", "einladung", "invitation", "invited",
    "eingeladen", "plan", "plans", "call", "anruf", "termin", "appointment", "break", "pause", "late", "spät", "home",
    "hause", "out", "raus", "going", "gehe", "gehen", "geht", "go", "see", "sehe", "join", "we", "wir", "they",
    "sie", "he", "er", "she", "you", "du", "ihr", "i", "ich",
})
# Something said eaten with no meal named (read after parse_meal, which takes "heute Mittag Pizza gegessen"): the meal
# of the time of day. "Schokolade gegessen", "Ich habe heute einen Apfel gegessen", "I ate an apple".
EATEN_RES = (
    re.compile(r"^(?:ich\s+)?(?:habe\s+|hab\s+)?(?:(?:heute|gerade|eben|vorhin|grad)\s+)*(?P<food>.+?)\s+gegessen$",
               re.I),
    re.compile(r"^(?:i\s+)?(?:just\s+)?ate\s+(?P<food>.+?)(?:\s+(?:today|just\s+now))?$", re.I),
)
# Another day's meal is not today's to log ("Ich habe gestern Pizza gegessen").
_OTHER_DAY_RE = re.compile(r"\b(?:gestern|vorgestern|yesterday|letzte\w*|last|neulich|früher)\b", re.I)
# What follows "gegessen" / "ate" without naming a food ("zu viel gegessen", "ate out", "mit Anna gegessen").
NOT_A_FOOD_RE = re.compile(
    r"^(?:nichts|noch\s+nichts|zu\s+viel|viel|wenig|genug|kaum|alles|etwas|was|schon|nicht|kein\w*|mit|bei|beim|im|in"
    r"|auswärts|draußen|zusammen|too\s+much|nothing|out|with|at|a\s+lot|lots|well|late|early|already|something"
    r"|anything|too|so|very)\b", re.I)


def _eaten(text: str) -> list[ToolCall] | None:
    return _meal_sentence(text, EATEN_RES) or _had_food(text) or _food_alone(text)


# What may stand beside a food named alone ("a banana", "zwei Brötchen", "some pasta").
_FOOD_ALONE_FILLER = frozenset({"a", "an", "some", "ein", "eine", "einen", "etwas", "bisschen", "one", "two", "three",
                                "zwei", "drei", "and", "und", "with", "mit"})


def _food_alone(text: str) -> list[ToolCall] | None:
    """A common food named alone ("Pizza", "a banana", "2 Brötchen"), as a drink named alone is: eaten now, the meal
    of the time of day (with Undo in the reply)."""
    words = re.findall(r"[^\W\d_]+|\d+", text.lower())
    if not 1 <= len(words) <= 4 or FOODS.isdisjoint(words) \
            or any(w not in FOODS and w not in _FOOD_ALONE_FILLER and not w.isdigit() for w in words):
        return None
    return _had_food(f"had {text}")


# Common foods, English and German: "had" or "hatte" (or a meal that "was") says a meal was eaten only of a food
# ("I had a sandwich", "Ich hatte ein Brötchen", "breakfast was oatmeal"); "I had a meeting" or "a bad day" is none.
FOODS = frozenset("""
    pizza pizzas pasta spaghetti lasagna lasagne salad salads salat sandwich sandwiches burger burgers hamburger
    fries pommes soup suppe apple apples apfel äpfel banana bananas banane bananen orange oranges bread brot
    brötchen toast cereal müsli muesli oatmeal porridge haferflocken yogurt yoghurt joghurt egg eggs ei eier
    rice reis curry sushi noodles nudeln steak chicken hähnchen fish fisch cake kuchen cookie cookies keks kekse
    chocolate schokolade croissant bagel wrap burrito tacos taco kebab döner currywurst bratwurst schnitzel
    cheese käse fruit obst vegetables gemüse chips crisps nuts nüsse muffin pancakes pfannkuchen waffles waffeln
    omelette omelett risotto falafel hummus pie donut doughnut brezel pretzel potatoes kartoffeln quark smoothie
    bowl stew eintopf auflauf
""".split())
HAD_RES = (
    re.compile(r"^(?:i\s+|we\s+)?(?:just\s+|already\s+)?had\s+(?P<food>.+?)(?:\s+(?:today|just\s+now|earlier))?$",
               re.I),
    re.compile(r"^(?:ich\s+|wir\s+)?hatte(?:n)?\s+(?:(?:heute|gerade|eben|vorhin|grad|schon)\s+)*(?P<food>.+)$", re.I),
    re.compile(r"^(?:my\s+)?(?P<meal>breakfast|lunch|dinner|supper)\s+(?:was|were)\s+(?P<food>.+)$", re.I),
)


def _had_food(text: str) -> list[ToolCall] | None:
    said = next(_matches(HAD_RES, text), None)
    if said is None or FOODS.isdisjoint(re.findall(r"[^\W\d_]+", said.group("food").lower())) \
            or not _NOT_EATEN_WORDS.isdisjoint(said.group("food").lower().split()):
        return None
    return _meal_sentence(text, HAD_RES)


def _meal_sentence(text: str, patterns: tuple[re.Pattern[str], ...] = MEAL_SENTENCE_RES) -> list[ToolCall] | None:
    for pattern in patterns:
        said = pattern.match(text)
        if said is None:
            continue
        food = said.group("food")
        if NOT_A_FOOD_RE.match(food) or _OTHER_DAY_RE.search(food) or _bare_task(food) \
                or food.split()[0].lower() in TASK_VERBS_EN:
            return None
        if "meal" in said.groupdict() and pattern in _FOOD_FOR_MEAL and (
                len(food.split()) > 4 or not _NOT_EATEN_WORDS.isdisjoint(food.lower().split())):
            return None  # "time for lunch", "Anna kommt zum Abendessen", "meet Tom for lunch": no food named
        meal = (said.groupdict().get("meal") or "").lower()
        meal_type = "dinner" if meal == "abend" else MEAL_WORDS.get(meal)
        calls = parse_meal(f"{meal_type or 'snack'}: {said.group('food')}")
        if calls and meal_type is None:
            calls[0].args.pop("meal_type", None)  # eaten now: the tool takes the meal of the time of day
        return calls
    return None


def parse_meal(text: str) -> list[ToolCall] | None:
    first = text.lower().partition(" ")[0].rstrip(":")
    meal_type = MEAL_WORDS.get(first)
    if meal_type is None and _PAST_DAY_RE.search(text):
        return None  # "gestern Abend Pizza gegessen" was not today's ("Abendessen: Reste von gestern" is)
    kcal = KCAL_RE.search(text)
    inside = _meal_in_sentence(text) if meal_type is None else None
    if meal_type is None and kcal is None and inside is None:
        return None
    if inside is None and meal_type is None and NOT_EATEN_RE.match(text) and not ATE_RE.search(text):
        return None  # "I burned 300 kcal", "Mein Ziel sind 1800 kcal": about calories, not a meal
    description = text
    args: dict[str, Any] = {}
    if inside is not None:
        args["meal_type"], description = inside
    elif meal_type is not None:
        args["meal_type"] = meal_type
        description = text[len(text.split(" ", 1)[0]):].lstrip(" :")
        # "Lunch was great", "Dinner with Anna tomorrow at 19:00": a sentence about a meal, or a plan, not a log.
        if NOT_FOOD_START_RE.match(description) or (
                kcal is None and (PLAN_START_RE.match(description) or find_time(description) is not None)):
            return None
    if kcal:
        calories = whole_amount(kcal)
        if calories is None:  # hundreds of digits, or "1.200.5 kcal": not an amount anyone ate
            return None
        args["kcal"] = calories
        description = KCAL_RE.sub(" ", description, count=1)
    protein = PROTEIN_RE.search(description)
    if protein:
        grams = whole_amount(protein)
        if grams is None:
            return None
        args["protein"] = grams
        description = PROTEIN_RE.sub(" ", description, count=1)
    description = _food_only(description)
    if not description or (inside is not None and (PLAN_START_RE.match(description)
                                                   or NOT_FOOD_START_RE.match(description))):
        return None
    args["description"] = description
    return [ToolCall("log_meal", args)]


def whole_amount(match: re.Match[str]) -> int | None:
    """The kcal or grams a KCAL_RE / PROTEIN_RE match says, negative if it has a minus (the caller refuses it)."""
    number = parse_number(match.group("n"))
    if number is None:
        return None
    # Decimals round half up ("250,5 kcal" -> 251), as people round by hand; Python's round() would give 250.
    whole = math.floor(number + 0.5)
    return -whole if match.group("sign") else whole


def _food_only(description: str) -> str:
    """What was eaten, without who ate it, the verb and the fillers: "ich habe Pizza gegessen" -> "Pizza"."""
    words = EATING_WORDS_RE.sub(" ", description).split()
    while words and words[0].strip(",;:-").lower() in MEAL_FILLERS | {""}:
        words.pop(0)
    while words and words[-1].strip(",;:-").lower() in MEAL_FILLERS | {""}:
        words.pop()
    return " ".join(words).strip(" ,;:-")


def _bare_task(text: str) -> bool:
    """Whether a text (its day taken out) is a to-do said as a bare verb phrase ("Milch kaufen", "call mom"), with no
    time of day (a time and a day are offered as appointment, reminder or task: bot.commands.reminders.read_plan)."""
    words = re.findall(r"[\wäöüß'-]+", text.lower())
    if not 2 <= len(words) <= BARE_TASK_WORDS or NOT_A_TASK_RE.search(text) or find_time(text) is not None:
        return False
    if words[0] in DELETE_VERBS and set(words) & (set(DELETE_TOOLS) | OWN_THINGS):
        return False  # "Lösche die Aufgabe Milch kaufen" takes an entry back, it is no errand
    if words[0] in TASK_VERBS_EN and (words[1] in ("me", "us", "you") or (
            len(rest := [w for w in words[1:] if w not in DETERMINERS | {"all", "every"}]) == 1
            and rest[0] in OWN_THINGS)):
        return False  # "cancel the reminder", "cancel all my reminders", "call me later": said to the companion
    if words[-1] in VAGUE_TASK_VERBS_DE:  # "Steuererklärung machen" is one, "das machen" or "mal was tun" none
        return not set(words[:-1]) <= VAGUE_OBJECTS
    return words[-1] in TASK_VERBS_DE or (words[0] in TASK_VERBS_EN and words[-1] not in TASK_VERBS_DE)


# Where a person has to go, after "ich muss" / "I need to": "ich muss heute noch zur Post", "I need to go to the bank".
# Home, bed, work and school are where a day goes anyway, no errand ("I need to go to sleep", "ich muss zur Arbeit").
_GOING_RE = re.compile(r"^(?:(?:noch|unbedingt|dringend|mal|still)\s+)*"
                       r"(?!.*\b(?:hause|bett|arbeit|schule|uni|klo|toilette|sleep|bed|home|work|school|toilet|class)\b)(?:(?:zur|zum|in\s+die|ins|nach)\s+\S+(?:\s+\S+)?"
                       r"(?:\s+(?:gehen|fahren|laufen))?|go\s+to\s+(?:the\s+)?\S+(?:\s+\S+)?)$", re.I)
_STILL_RE = re.compile(r"^(?:(?:noch|unbedingt|dringend|mal|still)\s+)+", re.I)


def parse_task(text: str, today: date, now: time | None = None) -> list[ToolCall] | None:
    explicit = TASK_PREFIX_RE.match(text) or TASK_SUFFIX_RE.match(text)
    body = explicit.group("rest").strip() if explicit else text
    needed = NEED_TO_RE.match(text) if explicit is None else None
    if needed is not None:  # "I need to call the bank tomorrow", "ich muss noch Milch kaufen": the errand after it
        body = needed.group("rest").strip()
    if explicit:
        body = _ZU_VERB_RE.sub(lambda m: m["verb"] or f"{m['prefix']}{m['stem']}", body)
    found = find_date(body, today)

    def errand(words: str) -> bool:
        if _bare_task(words):
            return True
        if needed is None or find_time(words) is not None:
            return False
        said = _STILL_RE.sub("", words.strip())
        # "ich muss noch einkaufen": an errand verb alone; "ich muss zur Post": where they have to go
        return said.lower() in TASK_VERBS_DE or _GOING_RE.match(said) is not None

    if explicit is None:
        if found is not None and found.value >= today and errand(cut(body, found.start, found.end)) \
                and not TOPIC_BEFORE_RE.search(body[:found.start]):
            pass  # "morgen Milch kaufen": due that day (but "text Anna about Saturday" is about it)
        elif found is None and errand(body):
            pass  # "Milch kaufen", "call mom"
        elif found is None or not DEADLINE_RE.search(body[found.start:found.end]):
            return None
        if STATE_RE.match(body):  # "I am on vacation until Friday" says how things are, it asks nothing done
            return None
    args: dict[str, Any] = {}
    title = body
    at_time = None
    if found is not None:
        title = cut(body, *with_time_of_day(body, found))
        args["due_date"] = found.value.isoformat()
        said = time_with_day(body, found)
        if said is not None:
            args["due_time"] = said.isoformat(timespec="minutes")
    elif now is not None and (at_time := due_at_time(body, today, now)) is not None:
        # "todo: Report at 3pm" as "/task Report at 3pm": due at the next 3pm, the time out of the title.
        title = at_time.title
        args["due_date"] = at_time.due.isoformat()
        args["due_time"] = at_time.meant.isoformat(timespec="minutes")
    if needed is not None:  # "ich muss heute noch zur Post": "Zur Post"; "ich muss die Miete überweisen": "Miete ..."
        title = _STILL_RE.sub("", title)
        if title.split(" ", 1)[0].lower() in ("die", "den", "das", "meine", "meinen", "mein") and _bare_task(title):
            title = title.split(" ", 1)[1]
    if not title:
        return None
    args["title"] = title[:1].upper() + title[1:]
    return [ToolCall("create_task", args, at_time)]


# Where the person is or was today: "ich bin im Café Luna", "bin gerade beim Bäcker", "ich war heute im Kino", "I'm at
# the gym". German with im / in der / beim / bei / am (a bare "in" says a state: "in Eile"), English with "at".
PLACE_DE_RE = re.compile(
    r"^(?:ich\s+)?(?P<verb>bin|war)\s+"
    r"(?:(?:heute\s+(?:morgen|früh|vormittag|mittag|nachmittag|abend)|heute|gerade|grad|jetzt|eben|noch|schon|vorhin)\s+)*"
    r"(?:im|in\s+der|beim|bei\s+der|bei\s+dem|bei|am|an\s+der)\s+(?P<name>.+)$", re.I)
PLACE_EN_RE = re.compile(
    r"^(?:i'm|i\s+am|im|i\s+was)\s+(?:(?:now|just|still|already|today)\s+)*at\s+(?:the\s+)?(?P<name>.+?)"
    r"(?:\s+(?:today|now|right\s+now))?$", re.I)
# What follows those words when they say how the person is, not where ("im Stress", "im Urlaub" is /vacation).
NOT_A_PLACE = frozenset({
    "stress", "urlaub", "eimer", "moment", "recht", "unrecht", "zweifel", "prinzip", "grunde", "allgemeinen",
    "ende", "anfang", "dienst", "begriff", "gange", "kommen", "gehen", "arbeiten",
    "a loss", "peace", "ease", "risk", "least", "last", "first", "all", "it", "this", "that", "once",
})
PLACE_WORDS = 4
# When today, said after the place ("I was at the gym this morning", "war im Kino heute Abend"): not its name.
_WHEN_TAIL = re.compile(
    r"(?:\s+(?:heute|today|gerade|jetzt|now|right\s+now|just\s+now|earlier(?:\s+today)?|before|this\s+(?:morning|"
    r"afternoon|evening)|tonight|vorhin|eben|(?:heute\s+)?(?:morgen|früh|vormittag|mittag|nachmittag|abend)))+$",
    re.I)


# Home and work said without a place word: "ich bin (wieder) zu Hause", "bin daheim", "I'm home", "I'm back home",
# "ich bin auf der Arbeit": the place of that name.
_HOME_RES = (
    (re.compile(r"^(?:ich\s+)?(?:bin|war)\s+(?:(?:heute|gerade|grad|jetzt|eben|noch|schon|wieder|endlich)\s+)*"
                r"(?:zu\s*hause|zuhause|daheim)$", re.I), "Zuhause"),
    (re.compile(r"^(?:ich\s+)?(?:bin|war)\s+(?:(?:heute|gerade|grad|jetzt|eben|noch|schon|wieder)\s+)*"
                r"(?:auf|bei)\s+der\s+arbeit$", re.I), "Arbeit"),
    (re.compile(r"^(?:i'm|i\s+am|im)\s+(?:(?:now|just|back|finally|already)\s+)*home(?:\s+now)?$", re.I), "Home"),
)


# Two fixed days, a Monday and a Thursday: only whether a sentence names another day than its own matters ("this
# Monday" is its own day on a Monday).
_SOME_DAYS = (date(2026, 11, 30), date(2026, 12, 3))


def _on_another_day(text: str) -> bool:
    """ "war am Montag beim Arzt", "I was at Café Luna on Sunday", "ich war am 3.12. im Kino": a visit of another
    day (and "bin am Freitag bei Anna" a plan), not where the person is or was today. A weekday in a name ("at the
    Sunday market") is not a day."""
    for day in _SOME_DAYS:
        found = find_date(text, day)
        if found is not None and found.value != day \
                and not re.search(r"\b(?:the|der|dem|den)\s+$", text[:found.start], re.I):
            return True
    return False


def place_said(text: str) -> str | None:
    """The name of the place a person says they are at, or were at today; None for anything else."""
    cleaned = re.sub(r"[.!]+$", "", text.strip())
    home = next((name for pattern, name in _HOME_RES if pattern.match(cleaned)), None)
    if home is not None:
        return home
    match = PLACE_DE_RE.match(cleaned) or PLACE_EN_RE.match(cleaned)
    if match is None or re.search(r"\b(?:gestern|yesterday|(?<!heute\s)morgen|tomorrow)\b", cleaned, re.I) \
            or _on_another_day(cleaned):
        return None
    # The name ends where the sentence goes on ("Bin beim Arzt, melde mich später").
    name = re.split(r"[,;:()]|\s+(?:und|and|aber|but|weil|because|bis|until|then|dann)\s+", match.group("name"))[0]
    name = _WHEN_TAIL.sub("", name.strip()).strip(" ,")
    words = name.split()
    if not words or len(words) > PLACE_WORDS or name.lower() in NOT_A_PLACE or any(c.isdigit() for c in name) \
            or find_time(name) is not None:
        return None
    return name[:1].upper() + name[1:]


# The daily water goal said in words: "Mein Wasserziel ist 2,5 Liter", "set my water goal to 3 liters",
# "Trinkziel 2000 ml": the day's water target that /today measures (set_drink_goal refuses what it cannot keep).
WATER_GOAL_RE = re.compile(
    r"^(?:(?:please\s+|bitte\s+)?(?:set|change|make|ändere|änder|setze|setz|stelle|stell)\s+(?:bitte\s+)?)?"
    r"(?:my\s+|mein\s+|meine\s+|das\s+|the\s+)?(?:daily\s+|tägliches\s+)?"
    r"(?:water\s+goal|drink(?:ing)?\s+goal|wasserziel|trinkziel|wasser-ziel)\s*"
    r"(?:(?:is|to|=|:|ist|auf|soll\s+sein|sind)\s*)*(?P<amount>\d+(?:[.,]\d+)*\s*(?:ml|l|liters?|litres?|liter))"
    r"(?:\s+(?:setzen|stellen|a\s+day|per\s+day|am\s+tag|pro\s+tag|täglich))*$", re.I)


# ... and said as what the person wants to drink each day: "my goal is to drink 3 liters a day", "I want to drink 2
# liters of water a day", "ich will täglich 2 Liter trinken", "ich möchte 2,5 Liter Wasser am Tag trinken".
_AMOUNT_L = r"(?P<amount>\d+(?:[.,]\d+)*\s*(?:ml|l|liters?|litres?|liter))"
_DAILY = r"(?:a\s+day|per\s+day|each\s+day|every\s+day|daily|am\s+tag|pro\s+tag|täglich|jeden\s+tag)"
WATER_GOAL_WANT_RES = (
    re.compile(rf"^(?:my\s+goal\s+is|i\s+want|i'd\s+like|i\s+would\s+like|i\s+need|i\s+should)\s+to\s+drink\s+"
               rf"{_AMOUNT_L}(?:\s+of\s+water)?\s+{_DAILY}$", re.I),
    re.compile(rf"^(?=.*{_DAILY})(?:ich\s+)?(?:will|möchte|moechte|sollte|muss)\s+(?:(?:täglich|jeden\s+tag|am\s+tag|pro\s+tag)\s+)?"
               rf"{_AMOUNT_L}(?:\s+wasser)?\s+(?:{_DAILY}\s+)?trinken$", re.I),
    re.compile(rf"^mein\s+ziel\s+(?:ist|sind)\s+{_AMOUNT_L}(?:\s+wasser)?\s+{_DAILY}$", re.I),
)


# The wish to drink more, with no amount: "I want to drink more water", "ich sollte mehr trinken", "I don't drink
# enough water", "ich trinke zu wenig": answered with the day's water, the goal and how the water reminders help.
MORE_WATER_RES = (
    re.compile(r"^(?:i\s*)?(?:really\s+)?(?:want|wanna|need|have|should|must|would\s+like|['’]d\s+like|am\s+going"
               r"|['’]m\s+going|will\s+try|['’]ll\s+try|try)\s+(?:to\s+)?drink\s+more(?:\s+water)?"
               r"(?:\s+(?:today|this\s+week|from\s+now\s+on|every\s+day|each\s+day))?$", re.I),
    re.compile(r"^(?:please\s+)?help\s+me\s+(?:to\s+)?drink\s+more(?:\s+water)?$", re.I),
    re.compile(r"^i\s+(?:don['’]t|do\s+not|never)\s+drink\s+enough(?:\s+water)?$|^i\s+drink\s+too\s+little(?:\s+water)?$",
               re.I),
    re.compile(r"^(?:ich\s+)?(?:will|möchte|moechte|sollte|muss|werde|würde\s+gern|wuerde\s+gern)\s+(?:gern\s+|gerne\s+)?"
               r"(?:(?:ab\s+)?(?:heute|jetzt|morgen)\s+)?mehr\s+(?:wasser\s+)?trinken$", re.I),
    re.compile(r"^(?:bitte\s+)?hilf\s+mir,?\s+mehr\s+(?:wasser\s+)?zu\s+trinken$", re.I),
    re.compile(r"^ich\s+trinke\s+(?:zu\s+wenig|nicht\s+genug)(?:\s+wasser)?$", re.I),
)


def more_water_wished(text: str) -> bool:
    return next(_matches(MORE_WATER_RES, text), None) is not None


# The wish to drink less coffee: "I want to drink less coffee", "I should cut down on coffee", "ich trinke zu viel
# Kaffee", "ich möchte weniger Kaffee trinken": answered with the day's coffee and a limit to keep count with.
LESS_COFFEE_RES = (
    re.compile(r"^(?:i\s*)?(?:really\s+)?(?:want|wanna|need|have|should|must|would\s+like|['’]d\s+like|am\s+going"
               r"|['’]m\s+going|will\s+try|['’]ll\s+try|try)\s+(?:to\s+)?(?:drink\s+(?:less|fewer)\s+coffees?"
               r"|cut\s+(?:down|back)\s+on\s+coffee|have\s+(?:less|fewer)\s+coffees?)"
               r"(?:\s+(?:today|this\s+week|from\s+now\s+on))?$", re.I),
    re.compile(r"^i\s+drink\s+too\s+much\s+coffee$|^(?:please\s+)?help\s+me\s+(?:to\s+)?drink\s+less\s+coffee$", re.I),
    re.compile(r"^(?:ich\s+)?(?:will|möchte|moechte|sollte|muss|werde|würde\s+gern|wuerde\s+gern)\s+(?:gern\s+|gerne\s+)?"
               r"(?:(?:ab\s+)?(?:heute|jetzt|morgen)\s+)?weniger\s+kaffee\s+trinken$", re.I),
    re.compile(r"^ich\s+trinke\s+zu\s+viel\s+kaffee$|^(?:bitte\s+)?hilf\s+mir,?\s+weniger\s+kaffee\s+zu\s+trinken$",
               re.I),
)


def less_coffee_wished(text: str) -> bool:
    return next(_matches(LESS_COFFEE_RES, text), None) is not None


def water_goal_said(text: str) -> int | None:
    """The daily water goal in ml a message sets, or None."""
    match = next(_matches((WATER_GOAL_RE, *WATER_GOAL_WANT_RES), text), None)
    if match is None:
        return None
    amount = re.sub(r"(?i)\s*(?:liters?|litres?|liter)$", " l", match.group("amount"))
    return parse_volume_ml(amount.replace(" ", ""))



# A task told as done in the past tense, without saying "erledigt": "Hab Milch gekauft", "Habe Mama angerufen", "bought
# milk", "called the bank". Its object words are matched against the open tasks (bot.commands.tasks.done_in_words);
# only one that holds them all is completed.
_DONE_DE_RE = re.compile(r"^(?:(?:ich\s+)?(?:habe|hab)\s+)?(?:(?:heute|gerade|eben|endlich|schon|jetzt)\s+)*"
                         r"(?P<obj>.+?)\s+(?!(?:vergessen|verloren|verpasst|verschoben|verschlafen|verpennt|versäumt"
                         r"|verlegt|verbockt|abgesagt|gestrichen)$)"
                         r"(?P<part>\w*ge\w+(?:t|en)|\w+iert|(?:be|er|ver|zer|ent|über)\w+t"
                         r"|(?:be|er|ver|zer|ent|über|unter)\w+en)$", re.I)
_DONE_EN_RE = re.compile(r"^(?:i\s+)?(?:just\s+|finally\s+|already\s+)?(?:bought|called|phoned|paid|booked|ordered"
                         r"|cleaned|fixed|repaired|sent|picked\s+up|returned|washed|mailed|texted|emailed|renewed"
                         r"|cancel(?:l)?ed|signed|printed|submitted|collected|watered)\s+(?P<obj>.+?)"
                         r"(?:\s+(?:today|just\s+now))?$", re.I)
# ... and said finished: "Die Wäsche ist fertig", "the slides are finished" (only an open task holding the words is
# completed, so "Das Essen ist fertig" completes nothing).
_FINISHED_RE = re.compile(r"^(?P<obj>.+?)\s+(?:ist|sind|is|are)\s+(?:jetzt\s+|endlich\s+|now\s+|finally\s+)?"
                          r"(?:fertig|finished|complete)$", re.I)
_NOT_OBJECT = frozenset({"the", "my", "a", "an", "some", "den", "die", "das", "dem", "der", "meine", "meinen", "mein",
                         "meinem", "ein", "eine", "einen", "for", "für", "fuer", "und", "and"})


def done_said(text: str) -> list[str] | None:
    """The object words of a task told as done in the past tense ("Hab Milch gekauft": ["milch"]), or None."""
    said = _DONE_DE_RE.match(text.strip()) or _DONE_EN_RE.match(text.strip()) or _FINISHED_RE.match(text.strip())
    if said is None or _OTHER_DAY_RE.search(said.group("obj")) or re.search(r"\b(?:nicht|noch\s+nicht|kein\w*|not)\b",
                                                                          said.group("obj"), re.I):
        return None  # another day's, or not done ("Miete noch nicht überwiesen")
    words = [w for w in re.findall(r"[\wäöüß'-]+", said.group("obj").lower()) if w not in _NOT_OBJECT]
    return words if 1 <= len(words) <= 4 else None


# An appointment moved in words: "move the dentist to Friday at 10", "reschedule my dentist appointment to 11",
# "verschiebe den Zahnarzt auf Freitag 10 Uhr", "Termin beim Zahnarzt auf 11 Uhr verschieben". What is moved is found by
# its title (the tool says when none or several match); a day alone keeps the time, a time alone keeps the day.
_APPOINTMENT_WORDS = r"(?:(?:appointment|meeting|termin|treffen)\s+(?:with|at|mit|beim|bei|bei\s+der|zum|zur|am)\s+)?"
_MOVE_RES = (
    re.compile(r"^(?:please\s+)?(?:move|reschedule|shift|push|postpone|change)\s+(?:the|my)\s+" + _APPOINTMENT_WORDS
               + r"(?P<what>.+?)(?:\s+(?:appointment|meeting))?\s+to\s+(?P<when>.+?)(?:,?\s+please)?$", re.I),
    re.compile(r"^(?:bitte\s+)?(?:verschiebe|verschieb|verleg|verlege)\s+(?:bitte\s+)?(?:den|das|die|meinen|mein|meine)\s+"
               + _APPOINTMENT_WORDS + r"(?P<what>.+?)(?:-?termin)?\s+auf\s+(?P<when>.+?)(?:\s+bitte)?$", re.I),
    re.compile(r"^(?:den\s+|das\s+|die\s+|meinen\s+|mein\s+|meine\s+)?" + _APPOINTMENT_WORDS
               + r"(?P<what>.+?)(?:-?termin)?\s+auf\s+(?P<when>.+?)\s+(?:verschieben|verlegen)(?:\s+bitte)?$", re.I),
)


# The last drink corrected: "that was 250ml", "oops, it was 250 ml", "actually it was a tea", "I meant tea", "das
# waren nur 250 ml", "nein, ein Tee", "ich meinte Tee". What follows must read as an amount or a drink alone.
_CORRECTION_RES = (
    re.compile(r"^(?:(?:oops|ups|hoppla|oh|sorry|no|nope|nein|correction|korrektur)\s*[,:!.]?\s*)*"
               r"(?:(?:that|it)\s+was(?:\s+(?:only|just|actually))?|i\s+meant|meant|actually(?:\s*,)?(?:\s+it\s+was)?"
               r"|(?:das|es)\s+(?:war|waren)(?:\s+(?:nur|eigentlich|doch|aber))?|ich\s+meinte|meinte|gemeint\s+war"
               r"|eigentlich)\s+(?P<what>.+)$", re.I),
    re.compile(r"^(?:oops|ups|hoppla|sorry|no|nope|nein|correction|korrektur)\s*[,:!.]\s*(?:only\s+|just\s+|nur\s+)?"
               r"(?P<what>.+)$", re.I),
)


def drink_corrected(text: str) -> ToolCall | None:
    """The correct_last_drink call for a message that corrects the drink just logged, or None."""
    for said in _matches(_CORRECTION_RES, text):
        what = said.group("what").strip(" ,")
        ml = parse_volume_ml(what.replace(" ", "")) if re.fullmatch(r"[\d.,]+\s*(?:ml|l|cl)", what, re.I) else None
        if ml is not None:
            return ToolCall("correct_last_drink", {"quantity_ml": ml})
        drinks = _drinks(what)
        if drinks is None or len(drinks) != 1 or drinks[0].args.get("count", 1) != 1:
            continue
        args = {key: value for key, value in drinks[0].args.items() if key in ("drink_type", "quantity_ml", "name")}
        return ToolCall("correct_last_drink", args)
    return None


# What a meal correction may name: the kind of meal ("I meant dinner", "das war das Abendessen") or its calories
# ("that was 600 kcal", "das waren 600 kcal").
_MEAL_CORRECTED_RE = re.compile(r"^(?:(?:the|a|my|das|ein|mein|zum|zu|for|as|als)\s+)?(?P<meal>frühstück|fruehstueck"
                                r"|mittagessen|mittag|abendessen|abendbrot|breakfast|lunch|dinner|supper|snack)$", re.I)


def meal_corrected(text: str) -> ToolCall | None:
    """The correct_last_meal call for a message that corrects the meal just logged, or None."""
    for said in _matches(_CORRECTION_RES, text):
        what = said.group("what").strip(" ,")
        kcal = KCAL_RE.fullmatch(what)
        if kcal is not None and not kcal.group("sign"):
            amount = whole_amount(kcal)
            return ToolCall("correct_last_meal", {"kcal": amount}) if amount is not None else None
        meal = _MEAL_CORRECTED_RE.match(what)
        if meal is not None:
            return ToolCall("correct_last_meal", {"meal_type": MEAL_WORDS.get(meal.group("meal").lower(), "dinner")})
    return None


# A task renamed: "rename task 1 to call the electrician", "rename the plumber task to electrician", "benenne Aufgabe
# 2 um in Steuer", "Aufgabe 2 umbenennen in Steuer".
_RENAME_RES = (
    re.compile(r"^(?:please\s+)?rename\s+(?:the\s+|my\s+)?(?:(?:task|to-?do)\s+(?P<what>.+?)|(?P<named>.+?)\s+"
               r"(?:task|to-?do))\s+(?:to|as)\s+(?P<title>.+?)(?:,?\s+please)?$", re.I),
    re.compile(r"^(?:bitte\s+)?(?:benenne|benenn)\s+(?:bitte\s+)?(?:die\s+|meine\s+)?aufgabe\s+(?P<what>.+?)\s+um\s+"
               r"(?:in|zu)\s+(?P<title>.+?)(?:\s+bitte)?$", re.I),
    re.compile(r"^(?:die\s+|meine\s+)?aufgabe\s+(?P<what>.+?)\s+(?:umbenennen|umtaufen)\s+(?:in|zu)\s+(?P<title>.+?)"
               r"(?:\s+bitte)?$", re.I),
)


def task_renamed(text: str) -> ToolCall | None:
    """The update_task call for a task renamed in words ("task 1", "the plumber task"), or None."""
    for said in _matches(_RENAME_RES, text):
        what = (said.groupdict().get("what") or said.groupdict().get("named") or "").strip(" ,\"'„“#")
        title = said.group("title").strip(" ,\"'„“")
        if what and title:
            return ToolCall("update_task", {"task": what[:200], "title": title[:1].upper() + title[1:]})
    return None


_A_REMINDER_RE = re.compile(r"\b(?:reminders?|erinnerung(?:en)?)\b", re.I)


@dataclass(frozen=True)
class ReminderMove:
    """A reminder moved in words: which one (words of its text, or "" when none were said) and its new time."""

    reminder: str
    at: datetime  # aware, in the person's zone
    day_said: bool = True  # False: a time of day alone ("to 8pm"), which keeps the reminder's own day


# The reminder's own words around "reminder": "the stretch reminder", "the reminder to stretch", "die Erinnerung an
# den Müll", "meine Müll-Erinnerung".
_REMINDER_REF_JOIN_RE = re.compile(r"^(?:(?:to|for|about|of|an|ans|für|fuer|zum|zur|daran)\s+)?"
                                   r"(?:(?:the|my|den|die|das|dem|der|meinen|meine|mein)\s+)?", re.I)


def reminder_moved(text: str, now: datetime) -> ReminderMove | Text | None:
    """A reminder moved in words ("move the stretch reminder to 8pm", "verschiebe die Erinnerung an den Müll auf
    morgen 7 Uhr"), its new time read as a reminder's time is (a time alone keeps the reminder's day, see
    `ReminderMove.day_said`): the move, what to ask when the time cannot be read, or None when no reminder is
    meant."""
    for said in _matches(_MOVE_RES, text):
        what = said.group("what").strip(" ,")
        if not _A_REMINDER_RE.search(what):
            continue
        ref = re.sub(r"\s+", " ", _A_REMINDER_RE.sub(" ", what).replace("-", " ")).strip()
        ref = _REMINDER_REF_JOIN_RE.sub("", ref).strip()
        when = said.group("when").strip()
        when = f"at {when}" if re.fullmatch(r"\d{1,2}", when) else when  # "to 7": the hour, as "at 7" reads
        read = read_reminder(f"{when} {ref or '…'}", now)
        if isinstance(read, ReminderRequest):
            day_said = find_date(when, now.date()) is not None or re.match(r"in\s", when, re.I) is not None
            return ReminderMove(ref, read.at, day_said)
        return read
    return None


def event_moved(text: str, today: date) -> ToolCall | None:
    """The move_event call for an appointment moved in words, or None (also when the new time cannot be read, or a
    reminder is meant: `reminder_moved`)."""
    for said in _matches(_MOVE_RES, text):
        what = said.group("what").strip(" ,")
        if _A_REMINDER_RE.search(what):
            return None
        when = said.group("when").strip()
        found_day = find_date(when, today)
        rest = cut(when, found_day.start, found_day.end).strip() if found_day is not None else when
        rest = re.sub(r"^(?:at|um|,)\s*", "", rest, flags=re.I).strip()
        clock = find_time(rest) or (find_bare_hour(rest, 0) if re.fullmatch(r"\d{1,2}", rest) else None)
        if clock is not None:
            rest = cut(rest, clock.start, clock.end).strip()
        if rest or (found_day is None and clock is None) or not what or re.search(r"\b(?:week|woche)\b", when, re.I):
            return None  # more than a day and a time after "to", or a week and no day in it: not read
        args: dict[str, Any] = {"event": what[:200]}
        if found_day is not None:
            args["date"] = found_day.value.isoformat()
        if clock is not None:
            meant = on_another_day(when, clock, found_day.part if found_day is not None else None)
            args["time"] = meant.isoformat(timespec="minutes")
        return ToolCall("move_event", args)
    return None
