"""Numbers and volumes as people type them: "250", "250ml", "0,5 l", "1,500 ml", "2.000", "zwei", "a", "1 Glas"."""

from __future__ import annotations

import math
import re

NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "ein": 1, "eine": 1, "einen": 1, "einem": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4,
    "fünf": 5, "fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
}
VOLUME_RE = re.compile(r"^(?P<num>\d+(?:[.,]\d+)*)\s*(?P<unit>ml|l|cl|dl|liter|litre|liters|litres)?$", re.I)
# The bot itself writes "2,000 ml" (en) and "2.000 ml" (de), so people copy that: a separator before groups of
# exactly three digits, after one to three leading digits (not a lone 0: "0,500 l" is half a litre), groups
# thousands ("1,500", "2.000", "1.500.000"), with an optional decimal part after the other separator
# ("1.500,5", "1,500.5"). Anything else with one separator is a decimal ("0,5", "1.5", "250,5", "1,50").
# brain/goals/phrase.py reads goal phrases the same way (except that it reads "0,500" as 500).
_GROUPED_RE = re.compile(
    r"(?P<whole>[1-9]\d{0,2}(?P<sep>[.,])\d{3}(?:(?P=sep)\d{3})*)(?:(?P<point>[.,])(?P<fraction>\d+))?")
_DECIMAL_RE = re.compile(r"(?P<whole>\d+)(?:[.,](?P<fraction>\d+))?")
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


def _read_number(text: str) -> tuple[float, bool] | None:
    """The number and whether it has a decimal part, or None."""
    grouped = _GROUPED_RE.fullmatch(text)
    if grouped and grouped.group("point") != grouped.group("sep"):  # "1.500.5" is neither
        whole, fraction = grouped.group("whole").replace(grouped.group("sep"), ""), grouped.group("fraction")
    else:
        plain = _DECIMAL_RE.fullmatch(text)
        if plain is None:
            return None
        whole, fraction = plain.group("whole"), plain.group("fraction")
    number = float(f"{whole}.{fraction}" if fraction else whole)
    if not math.isfinite(number):  # hundreds of digits overflow the float: no amount anyone means
        return None
    return number, fraction is not None


def parse_number(text: str) -> float | None:
    """'250', '0,5', '1.5', '1,500', '2.000', '1.500,5' -> the number (see _GROUPED_RE); None if it is not one.
    No sign: a negative amount is for the caller to notice."""
    read = _read_number(text.strip())
    return read[0] if read else None


def parse_volume_ml(text: str) -> int | None:
    """'250', '250ml', '0,5 l', '1.5L', '1,500 ml', '2.000' -> millilitres; None if it is not a volume. A bare
    number is ml unless it is small and has a decimal part (then it reads as litres: '0.5' -> 500)."""
    match = VOLUME_RE.match(text.strip())
    if not match:
        return None
    read = _read_number(match.group("num"))
    if read is None:
        return None
    number, has_fraction = read
    unit = (match.group("unit") or "").lower()
    if not unit:
        unit = "l" if number < 10 and has_fraction else "ml"
    ml = round(number * _UNIT_ML[unit])
    return ml
