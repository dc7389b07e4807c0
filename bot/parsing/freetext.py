"""Free text that needs no language model: drinks ("250 ml water", "zwei Kaffee"), meals
("lunch: pasta 650 kcal"), tasks with a deadline ("Einkaufen bis Freitag") and explicit to-dos
("todo: call mom"). Anything else returns None, and the dialog answers kindly instead."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from bot.parsing.amounts import VESSELS_ML, parse_count, parse_volume_ml
from bot.parsing.dates import cut, find_date, find_time
from brain.modules.drink.service import MAX_AT_ONCE

DRINK_WORDS: dict[str, str] = {
    "water": "water", "waters": "water", "wasser": "water", "sprudel": "water", "mineralwasser": "water",
    "coffee": "coffee", "coffees": "coffee", "kaffee": "coffee", "kaffees": "coffee", "espresso": "coffee",
    "espressos": "coffee", "cappuccino": "coffee", "latte": "coffee", "flat white": "coffee",
    "tea": "tea", "teas": "tea", "tee": "tea", "tees": "tea",
    "juice": "juice", "saft": "juice", "orangensaft": "juice", "apfelsaft": "juice",
    "beer": "alcohol", "beers": "alcohol", "bier": "alcohol", "wine": "alcohol", "wein": "alcohol",
    "smoothie": "smoothie", "cola": "soda", "soda": "soda", "limo": "soda", "limonade": "soda",
}
FILLER = {
    "i", "had", "have", "drank", "drink", "just", "of", "ich", "habe", "hatte", "trank", "getrunken", "gerade",
    "noch", "more", "another", "a", "an", "ein", "eine", "einen", "one", "mug", "ml", "l",
}
MEAL_WORDS: dict[str, str] = {
    "breakfast": "breakfast", "frühstück": "breakfast", "fruehstueck": "breakfast",
    "lunch": "lunch", "mittagessen": "lunch", "mittag": "lunch",
    "dinner": "dinner", "abendessen": "dinner", "abendbrot": "dinner", "supper": "dinner",
    "snack": "snack",
}
KCAL_RE = re.compile(r"(?P<n>\d{1,5})\s*(?:kcal|kalorien|calories|cal)\b", re.I)
PROTEIN_RE = re.compile(r"(?P<n>\d{1,3})\s*g\s*(?:protein|eiweiß|eiweiss)\b", re.I)
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
# "I had pasta 650 kcal": the meal is the pasta.
I_ATE_RE = re.compile(r"^(?:i had|i ate|i've had|ich hatte|ich habe|ich aß|ich ass)\s+", re.I)
STATE_RE = re.compile(r"^(?:i am|i'm|ich bin|we are|we're|wir sind|i was|ich war|it is|it's|es ist)\b", re.I)
TASK_PREFIX_RE = re.compile(r"^(?:todo|to-do|task|aufgabe|erinnere mich(?: daran)?,?)\s*[:\-]?\s+(?P<rest>.+)$", re.I)
DEADLINE_RE = re.compile(r"\b(bis|until|till|by|due|spätestens|spaetestens)\b", re.I)


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)


def parse_free_text(text: str, today: date) -> list[ToolCall] | None:
    cleaned = re.sub(r"(?<!\d)[.!]+$", "", text.strip())
    if not cleaned or len(cleaned) > 500:
        return None
    return parse_drinks(cleaned) or parse_meal(cleaned) or parse_task(cleaned, today)


def parse_drinks(text: str) -> list[ToolCall] | None:
    words = re.findall(r"[\wäöüß.,]+", text.lower())
    words = [w.strip(".,") for w in words if w.strip(".,")]
    drink_type = None
    count = 1
    volume: int | None = None
    vessel: int | None = None
    pending_number: str | None = None
    for word in words:
        if word in DRINK_WORDS and drink_type is None:
            drink_type = DRINK_WORDS[word]
            continue
        ml = parse_volume_ml(word)
        if ml is not None and (word[-1].isalpha() or pending_number is None):
            if word[-1].isalpha():  # '250ml', '0,5l'
                volume = ml
                continue
            pending_number = word
            continue
        if word in ("ml", "l", "cl", "liter", "litre", "litres") and pending_number is not None:
            volume = parse_volume_ml(pending_number + word)
            if volume is None:  # an amount nobody drank ("999…9 ml"): not a default glass either
                return None
            pending_number = None
            continue
        if word in VESSELS_ML:
            vessel = VESSELS_ML[word]
            continue
        number = parse_count(word)
        if number is not None and word not in ("a", "an", "ein", "eine", "einen", "one"):
            pending_number = str(number)
            continue
        if word in FILLER:
            continue
        return None  # an unknown word: this is not (only) a drink
    if drink_type is None:
        return None
    if pending_number is not None:
        pending = float(pending_number.replace(",", "."))
        if not math.isfinite(pending):  # hundreds of digits: no count or volume anyone drank
            return None
        n = int(pending)
        if vessel is None and volume is None and n >= 20:
            volume = n  # "Wasser 300" means 300 ml
        else:
            count = n
    if not 1 <= count <= MAX_AT_ONCE:
        return None
    ml = volume or vessel
    args: dict[str, Any] = {"drink_type": drink_type}
    if ml is not None:
        args["quantity_ml"] = ml
    if count > 1:
        args["count"] = count
    return [ToolCall("log_drink", args)]


def parse_meal(text: str) -> list[ToolCall] | None:
    first = text.lower().partition(" ")[0].rstrip(":")
    meal_type = MEAL_WORDS.get(first)
    kcal = KCAL_RE.search(text)
    if meal_type is None and kcal is None:
        return None
    if meal_type is None and NOT_EATEN_RE.match(text) and not ATE_RE.search(text):
        return None  # "I burned 300 kcal", "Mein Ziel sind 1800 kcal": about calories, not a meal
    description = text
    args: dict[str, Any] = {}
    if meal_type is not None:
        args["meal_type"] = meal_type
        description = text[len(text.split(" ", 1)[0]):].lstrip(" :")
        # "Lunch was great", "Dinner with Anna tomorrow at 19:00": a sentence about a meal, or a plan, not a log.
        if NOT_FOOD_START_RE.match(description) or (
                kcal is None and (PLAN_START_RE.match(description) or find_time(description) is not None)):
            return None
    if kcal:
        args["kcal"] = int(kcal.group("n"))
        description = I_ATE_RE.sub("", KCAL_RE.sub("", description))
    protein = PROTEIN_RE.search(description)
    if protein:
        args["protein"] = int(protein.group("n"))
        description = PROTEIN_RE.sub("", description)
    description = re.sub(r"\s{2,}", " ", description).strip(" ,;:-")
    if not description:
        return None
    args["description"] = description
    return [ToolCall("log_meal", args)]


def parse_task(text: str, today: date) -> list[ToolCall] | None:
    explicit = TASK_PREFIX_RE.match(text)
    body = explicit.group("rest").strip() if explicit else text
    found = find_date(body, today)
    if explicit is None:
        if found is None or not DEADLINE_RE.search(body[found.start:found.end]):
            return None
        if STATE_RE.match(body):  # "I am on vacation until Friday" says how things are, it asks nothing done
            return None
    args: dict[str, Any] = {}
    title = body
    if found is not None:
        title = cut(body, found.start, found.end)
        args["due_date"] = found.value.isoformat()
    if not title:
        return None
    args["title"] = title[:1].upper() + title[1:]
    return [ToolCall("create_task", args)]
