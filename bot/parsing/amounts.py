"""Numbers and volumes as people type them: "250", "250ml", "0,5 l", "zwei", "a", "1 Glas"."""

from __future__ import annotations

import math
import re

NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "ein": 1, "eine": 1, "einen": 1, "einem": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4,
    "fünf": 5, "fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
}
VOLUME_RE = re.compile(r"^(?P<num>\d+(?:[.,]\d+)?)\s*(?P<unit>ml|l|cl|dl|liter|litre|liters|litres)?$", re.I)
_UNIT_ML = {"ml": 1, "cl": 10, "dl": 100, "l": 1000, "liter": 1000, "litre": 1000, "liters": 1000, "litres": 1000}
# What a "glass", "cup" or "bottle" holds when someone names it instead of millilitres.
VESSELS_ML: dict[str, int] = {
    "glass": 250, "glasses": 250, "glas": 250, "gläser": 250, "glaeser": 250,
    "cup": 250, "cups": 250, "tasse": 250, "tassen": 250, "mug": 300, "becher": 300,
    "bottle": 500, "bottles": 500, "flasche": 500, "flaschen": 500,
}


def parse_count(word: str) -> int | None:
    word = word.strip().lower()
    if word.isascii() and word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word)


def parse_volume_ml(text: str) -> int | None:
    """'250', '250ml', '0,5 l', '1.5L' -> millilitres; None if it is not a volume. A bare number is ml
    unless it is small and has a decimal point (then it reads as litres: '0.5' -> 500)."""
    match = VOLUME_RE.match(text.strip())
    if not match:
        return None
    number = float(match.group("num").replace(",", "."))
    if not math.isfinite(number):  # hundreds of digits overflow the float: not a volume anyone drank
        return None
    unit = (match.group("unit") or "").lower()
    if not unit:
        unit = "l" if number < 10 and ("." in match.group("num") or "," in match.group("num")) else "ml"
    ml = round(number * _UNIT_ML[unit])
    return ml
