"""Reads a short goal phrase in German or English ("8 Gläser Wasser pro Tag", "max 3 coffees a day",
"3 neue Orte pro Woche") into a measure, a comparison, a target and a period. Pure: no database,
no translation; anything it cannot read unambiguously gives None, and nothing is guessed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from brain.goals.service import MAX_TARGET
from brain.goals.templates import MEASURES

_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|[a-zäöüß]+")
_THOUSANDS_RE = re.compile(r"\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*")
_DECIMAL_RE = re.compile(r"\d+(?:[.,]\d+)?")

_NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12,
    "ein": 1, "eine": 1, "einen": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5,
    "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "zwoelf": 12,
}
# Comparison words, longest first so "no more than" wins over "more than". Goals compare inclusively,
# so the strict ones ("less than 3") move a whole-number target by one ("at most 2").
_COMPARISON_WORDS: tuple[tuple[str, str, int], ...] = (
    ("no more than", "<=", 0), ("not more than", "<=", 0), ("nicht mehr als", "<=", 0),
    ("no less than", ">=", 0), ("not less than", ">=", 0), ("nicht weniger als", ">=", 0),
    ("at most", "<=", 0), ("höchstens", "<=", 0), ("hoechstens", "<=", 0), ("maximal", "<=", 0),
    ("maximum", "<=", 0), ("max", "<=", 0), ("up to", "<=", 0), ("bis zu", "<=", 0), ("limit", "<=", 0),
    ("at least", ">=", 0), ("mindestens", ">=", 0), ("wenigstens", ">=", 0), ("minimum", ">=", 0),
    ("min", ">=", 0),
    ("exactly", "=", 0), ("genau", "=", 0),
    ("less than", "<=", -1), ("fewer than", "<=", -1), ("weniger als", "<=", -1), ("under", "<=", -1),
    ("unter", "<=", -1),
    ("more than", ">=", 1), ("mehr als", ">=", 1), ("over", ">=", 1), ("über", ">=", 1), ("ueber", ">=", 1),
)
_PERIOD_WORDS: dict[str, str] = {
    "day": "day", "days": "day", "daily": "day", "tag": "day", "tage": "day", "tages": "day", "täglich": "day",
    "taeglich": "day", "tagsüber": "day",
    "week": "week", "weeks": "week", "weekly": "week", "woche": "week", "wochen": "week", "wöchentlich": "week",
    "woechentlich": "week",
    "month": "month", "months": "month", "monthly": "month", "monat": "month", "monats": "month",
    "monatlich": "month",
}
# Words that name what is measured (a unit after the number can decide it too, see `_measure`).
_SUBJECT_WORDS: dict[str, str] = {
    "water": "water", "wasser": "water",
    "coffee": "coffees", "coffees": "coffees", "kaffee": "coffees", "kaffees": "coffees", "espresso": "coffees",
    "task": "tasks", "tasks": "tasks", "aufgabe": "tasks", "aufgaben": "tasks", "todo": "tasks", "todos": "tasks",
    "meal": "meals", "meals": "meals", "mahlzeit": "meals", "mahlzeiten": "meals",
    "kcal": "kcal", "calories": "kcal", "calorie": "kcal", "kalorien": "kcal", "cal": "kcal",
    "protein": "protein", "eiweiß": "protein", "eiweiss": "protein",
    "place": "new_places", "places": "new_places", "ort": "new_places", "orte": "new_places",
    "orten": "new_places",
}
_MILLILITRES: dict[str, int] = {"ml": 1, "milliliter": 1, "millilitre": 1, "millilitres": 1, "l": 1000,
                                "liter": 1000, "litre": 1000, "liters": 1000, "litres": 1000, "litern": 1000}
_GRAMS = frozenset({"g", "gramm", "gram", "grams"})
_SUM_MEASURES = frozenset(key for key, m in MEASURES.items() if m.metric == "event_sum")


@dataclass(frozen=True)
class GoalPhrase:
    measure: str  # a key of templates.MEASURES
    comparison: str  # >= | <= | =
    target: float
    period: str  # day | week | month


def _number(token: str) -> float | None:
    if _THOUSANDS_RE.fullmatch(token) and len(token) > 4:
        return float(re.sub(r"[.,]", "", token))
    if _DECIMAL_RE.fullmatch(token):
        return float(token.replace(",", "."))
    return None


def _comparison(text: str) -> tuple[str | None, int]:
    found = []
    for words, op, shift in _COMPARISON_WORDS:
        pattern = rf"(?<!\w){words}(?!\w)"
        if re.search(pattern, text):
            found.append((op, shift))
            text = re.sub(pattern, " ", text)  # so "more than" is not found again inside "no more than"
    if not found:
        return None, 0
    if len({op for op, _ in found}) > 1:
        return "ambiguous", 0
    return found[0]


def _measure(subjects: set[str], unit: str | None) -> str | None:
    if unit in _MILLILITRES:
        return "water_ml" if subjects <= {"water"} else None
    if unit in _GRAMS:
        return "protein" if subjects <= {"protein"} else None
    if unit == "kcal":
        subjects = subjects | {"kcal"}
    if len(subjects) != 1:
        return None
    subject = subjects.pop()
    return "water_glasses" if subject == "water" else subject


def parse_goal_phrase(text: str) -> GoalPhrase | None:
    """The goal a short phrase describes, or None if it is not clear."""
    lowered = " ".join(text.lower().split())
    if not lowered or len(lowered) > 200 or re.search(r"(?<!\w)-\s*\d", lowered):
        return None  # empty, an essay, or a negative number
    lowered = re.sub(r"(?<!\w)to-?dos?\b", "todo", lowered).replace("-", " ")
    tokens = _TOKEN_RE.findall(lowered)
    numbers = [(i, n) for i, t in enumerate(tokens) if (n := _number(t)) is not None]
    if not numbers:
        numbers = [(i, float(_NUMBER_WORDS[t])) for i, t in enumerate(tokens) if t in _NUMBER_WORDS]
    if len(numbers) != 1:
        return None
    index, value = numbers[0]
    unit = tokens[index + 1] if index + 1 < len(tokens) else None
    periods = {_PERIOD_WORDS[t] for t in tokens if t in _PERIOD_WORDS}
    subjects = {_SUBJECT_WORDS[t] for t in tokens if t in _SUBJECT_WORDS}
    comparison, shift = _comparison(lowered)
    measure_key = _measure(subjects, unit)
    if measure_key is None or len(periods) > 1 or comparison == "ambiguous":
        return None
    measure = MEASURES[measure_key]
    if unit in _MILLILITRES:
        value *= _MILLILITRES[unit]
    if measure_key not in _SUM_MEASURES or measure_key == "water_ml":
        if not float(value).is_integer():
            return None  # "2.5 glasses": a count is a whole number
    target = value + shift if measure_key not in _SUM_MEASURES else value
    final_comparison = comparison or measure.default_comparison
    if not 0 < target <= MAX_TARGET and not (target == 0 and final_comparison == "<="):
        return None
    return GoalPhrase(measure=measure_key, comparison=final_comparison, target=target,
                      period=periods.pop() if periods else measure.default_period)
