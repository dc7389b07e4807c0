"""Timeline anchors: the time a message talks about ("gestern", "letzte Woche", "im März", "vor 3 Tagen",
"next Friday", "in May 2023", "2023-05-12"), read relative to the message time in the person's zone.
A hand-written German/English reader (microseconds, offline); the finest expression found wins. A date without
a year takes the side its clause's tense points to ("I went ... in March" looks back), else the nearest one."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

PRECISION_RANK = {"year": 0, "quarter": 1, "month": 2, "week": 3, "day": 4, "hour": 5, "minute": 6}


@dataclass(frozen=True)
class TimeAnchor:
    """[start, end) in UTC of the period meant, and how fine it is."""

    start: datetime
    end: datetime
    precision: str
    phrase: str


MONTHS = {
    "january": 1, "jan": 1, "januar": 1, "jänner": 1, "february": 2, "feb": 2, "februar": 2, "march": 3,
    "mar": 3, "märz": 3, "maerz": 3, "april": 4, "apr": 4, "may": 5, "mai": 5, "june": 6, "jun": 6, "juni": 6,
    "july": 7, "jul": 7, "juli": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9, "october": 10,
    "oct": 10, "oktober": 10, "okt": 10, "november": 11, "nov": 11, "december": 12, "dec": 12, "dezember": 12,
    "dez": 12,
}
ABBREVIATIONS = frozenset("jan feb mar apr jun jul aug sep sept oct okt nov dec dez".split())
# Full names only where a month stands without a day ("mar", "dec" alone are too often something else).
MONTH_NAMES = "|".join(sorted((m for m in MONTHS if m not in ABBREVIATIONS), key=len, reverse=True))
MONTH_ANY = "|".join(sorted(MONTHS, key=len, reverse=True))
WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5, "sonnabend": 5,
    "sonntag": 6,
}
WEEKDAY_NAMES = "|".join(WEEKDAYS)
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2, "few": 3, "a few": 3,
    "ein": 1, "eine": 1, "einem": 1, "einer": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5,
    "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "paar": 2, "ein paar": 2,
    "einigen": 3, "wenigen": 3,
}
NUMBER = "(" + "|".join([r"\d{1,3}", *sorted(NUMBERS, key=len, reverse=True)]) + ")"
UNITS = {
    "minute": "minute", "minutes": "minute", "min": "minute", "minuten": "minute",
    "hour": "hour", "hours": "hour", "stunde": "hour", "stunden": "hour",
    "day": "day", "days": "day", "tag": "day", "tage": "day", "tagen": "day",
    "week": "week", "weeks": "week", "woche": "week", "wochen": "week",
    "month": "month", "months": "month", "monat": "month", "monate": "month", "monaten": "month",
    "year": "year", "years": "year", "jahr": "year", "jahre": "year", "jahren": "year",
}
UNIT = "(" + "|".join(sorted(UNITS, key=len, reverse=True)) + ")"
LAST = r"(last|past|previous|letzte[nrs]?|vergangene[nrs]?|vorige[nrs]?)"
THIS = r"(this|diese[nrs]?)"
NEXT = r"(next|coming|nächste[nrs]?|naechste[nrs]?|kommende[nrs]?)"
ORDINAL_QUARTER = {"first": 1, "1st": 1, "ersten": 1, "erste": 1, "1.": 1, "second": 2, "2nd": 2, "zweiten": 2,
                   "zweite": 2, "2.": 2, "third": 3, "3rd": 3, "dritten": 3, "dritte": 3, "3.": 3, "fourth": 4,
                   "4th": 4, "vierten": 4, "vierte": 4, "4.": 4, "last": 4, "letzten": 4}


# Tense: which way the words around a date without a year look, so "in March" can pick its side. A compact
# lexicon, no model: auxiliaries and frequent verbs, perfect forms ("have visited", "habe ... gemacht"), time
# words. "was" (English past, German "what") and "war" (German past, English noun) count only in the language
# the message looks like.
_PAST_EN = re.compile(
    r"\b(?:did|didn't|wasn't|were|weren't|had|hadn't|went|came|saw|met|flew|drove|took|made|gave|ate|drank|"
    r"bought|spent|told|said|found|felt|began|ran|wrote|slept|heard|ago|yesterday|last|previous|recently|"
    r"used to)\b|(?<!'ve )(?<!have )(?<!has )(?<!'s )\bgot\b")
_PERFECT_EN = re.compile(
    r"\b(?:have|has|'ve|had)(?:n't|\s+not)?\s+(?:(?:i|you|we|they|he|she|it|already|just|never|ever|also|"
    r"finally|recently|really|all|both|not)\s+){0,2}(?P<p>[a-z]{2,}ed|been|gone|seen|done|met|made|taken|given|"
    r"eaten|bought|flown|driven|written|heard|found|told|said|had|spent|left|won)\b")
_SUBJECT_ED = re.compile(
    r"\b(?:i|we|you|he|she|they|it)\s+(?:(?:also|just|then|finally|really|already|never|first|once|recently|"
    r"actually|only)\s+)?(?P<p>[a-z]{2,}ed)\b")
_NAME_ED = re.compile(r"\b(?P<s>[A-ZÄÖÜ][a-zäöüß]+)\s+(?P<p>[a-z]{2,}ed)\b")  # "Anna visited"
_NOT_SUBJECTS = frozenset("the a an this that these those my your our their his her its in on at for so very and "
                          "but then when if we you he she they it".split())
# Booking and planning verbs look back at the act but ahead at the date ("I booked a flight for 3 May").
_NOT_PAST_ED = frozenset("booked reserved planned scheduled arranged hundred".split())
_FUTURE_EN = re.compile(
    r"\b(?:will|won't|shall|gonna|tomorrow|upcoming|soon|plan|plans|planning|planned|scheduled)\b|'ll\b"
    r"|\bnext\b(?!\s+to\b)|\b(?:going|want|wants|hope|hoping|about|intend|intends|have|has|need|needs)\s+to\b"
    r"|\blooking forward\b|\bcan't wait\b")
_PAST_DE = re.compile(
    r"\b(?:warst|waren|hatte|hattest|hatten|hattet|wurde|wurden|ging|gingen|kam|kamen|fuhr|fuhren|flog|flogen|"
    r"traf|trafen|sah|sahen|wollte|wollten|konnte|konnten|musste|mussten|gestern|vorgestern|damals|neulich|"
    r"kürzlich|letzte[nrsm]?|vergangene[nrsm]?|vorige[nrsm]?)\b")
_FUTURE_DE = re.compile(
    r"\b(?:werde|wirst|wird|werden|werdet|übermorgen|uebermorgen|nächste[nrsm]?|naechste[nrsm]?|"
    r"kommende[nrsm]?|bald|demnächst|geplant|vorgesehen|plane|planen|planst|plant|vorhaben|willst|wollen|"
    r"möchte|möchtest|möchten|freue mich|freuen uns)\b")
_HABEN = re.compile(r"\b(?:habe|hab|hast|hat|haben|habt)\b")
_SEIN = re.compile(r"\b(?:bin|bist|ist|sind|seid)\b")
_SEPARATED_VOR = re.compile(r"\bvor\b(?=\s*(?:[,;:.!?]|$))")  # "ich habe im Mai vor, ..."
# Participles are lowercase in running text, which keeps nouns ("Gelegenheit", "Geschichte") out.
_GE_PARTICIPLE = re.compile(r"(?<!\w)[a-zäöüß]*ge[a-zäöüß]{2,}(?:t|en)\b|(?<!\w)[a-zäöüß]{3,}iert\b")
_OTHER_PARTICIPLE = re.compile(r"(?<!\w)(?:be|ver|er|ent|zer|emp|miss)[a-zäöüß]{2,}t\b")
# Participles that say how someone is, or that a date is planned, not that something happened.
_NOT_PAST_PARTICIPLES = frozenset(
    "geplant gespannt gestresst genervt gelaunt gewohnt gewöhnt gebucht reserviert vorgesehen interessiert "
    "motiviert bestimmt bereit verabredet vereinbart verplant".split())
_GERMAN_HINTS = frozenset("ich du wir ihr und nicht ist bin sind der die das den dem mit auf im am zum zur habe "
                          "hat ein eine mein meine noch schon auch wie wo wann".split())
_ENGLISH_HINTS = frozenset("i you we the and not is are my to of it with on at did do what when where how".split())
_WORD = re.compile(r"[a-zäöüß']+")
_CLAUSE_BREAK = re.compile(r"[,;:\n]|[!?]+|\.+(?=\s|$)|\b(?:and|but|or|while|whereas|und|aber|oder|sondern|"
                           r"während)\b")
_SENTENCE_BREAK = re.compile(r"[;\n]|[!?]+|\.+(?=\s|$)")


def _means_tomorrow(low: str, start: int) -> bool:
    """The word "morgen" means tomorrow, except in "heute Morgen", "guten Morgen", "am Morgen": a morning."""
    before = low[max(0, start - 12):start]
    return not re.search(r"(heute|guten|am|jeden|einen|diesen|dem|den|gestern|morgen)\s+$", before)


def _dot_inside_date(low: str, at: int) -> bool:
    """A dot after a number or a month's short name ("am 3.5. war ich", "on Dec. 3") does not end a sentence."""
    before = _WORD.findall(low[max(0, at - 5):at])
    return low[at - 1:at].isdigit() or (bool(before) and before[-1] in ABBREVIATIONS)


def _spans(low: str, breaks: re.Pattern[str]) -> list[tuple[int, int]]:
    spans, start = [], 0
    for b in breaks.finditer(low):
        if b[0].startswith(".") and _dot_inside_date(low, b.start()):
            continue
        spans.append((start, b.start()))
        start = b.end()
    spans.append((start, len(low)))
    return spans


def _is_past_ed(word: str) -> bool:
    return not (word.endswith("eed") or word in _NOT_PAST_ED)


def _tense_counts(text: str, low: str, german: bool) -> tuple[int, int]:
    """How many past and how many future markers a piece of the message holds."""
    past = len(_PAST_EN.findall(low)) + len(_PAST_DE.findall(low))
    past += len(re.findall(r"\bwar\b" if german else r"\bwas\b", low))
    past += sum(_is_past_ed(m["p"]) for m in _PERFECT_EN.finditer(low))
    past += sum(_is_past_ed(m["p"]) for m in _SUBJECT_ED.finditer(low))
    past += sum(_is_past_ed(m["p"]) and m["s"].lower() not in _NOT_SUBJECTS for m in _NAME_ED.finditer(text))
    haben, sein = _HABEN.search(low), _SEIN.search(low)
    if haben or sein:
        ge = [p for p in _GE_PARTICIPLE.findall(text) if p not in _NOT_PAST_PARTICIPLES]
        other = [p for p in _OTHER_PARTICIPLE.findall(text) if p not in _NOT_PAST_PARTICIPLES]
        past += bool(ge or (haben and other))
    future = len(_FUTURE_EN.findall(low)) + len(_FUTURE_DE.findall(low))
    future += sum(_means_tomorrow(low, m.start()) for m in re.finditer(r"\bmorgen\b", low))
    future += bool(haben and _SEPARATED_VOR.search(low))
    return past, future


@dataclass(frozen=True)
class _Found:
    start: datetime  # local, aware
    end: datetime
    precision: str
    pos: int
    phrase: str
    floating: bool = False  # a clock time still waiting for its day


class _Reader:
    def __init__(self, text: str, at: datetime, zone: ZoneInfo) -> None:
        self.text = text
        self.low = text.lower()
        self.zone = zone
        self.now = at.astimezone(zone)
        self.today = self.now.date()
        self.found: list[_Found] = []

    # Periods, as local aware datetimes.
    def _midnight(self, d: date) -> datetime:
        return datetime.combine(d, time.min, tzinfo=self.zone)

    def day(self, d: date, m: re.Match[str]) -> None:
        self._add(self._midnight(d), self._midnight(d + timedelta(days=1)), "day", m)

    def days(self, first: date, count: int, m: re.Match[str]) -> None:
        self._add(self._midnight(first), self._midnight(first + timedelta(days=count)), "day", m)

    def week(self, any_day: date, m: re.Match[str]) -> None:
        monday = any_day - timedelta(days=any_day.weekday())
        self._add(self._midnight(monday), self._midnight(monday + timedelta(days=7)), "week", m)

    def month(self, year: int, month: int, m: re.Match[str]) -> None:
        nxt = date(year + (month == 12), month % 12 + 1, 1)
        self._add(self._midnight(date(year, month, 1)), self._midnight(nxt), "month", m)

    def quarter(self, year: int, q: int, m: re.Match[str]) -> None:
        first = date(year, 3 * (q - 1) + 1, 1)
        nxt = date(year + (q == 4), (3 * q) % 12 + 1, 1)
        self._add(self._midnight(first), self._midnight(nxt), "quarter", m)

    def year(self, year: int, m: re.Match[str]) -> None:
        self._add(self._midnight(date(year, 1, 1)), self._midnight(date(year + 1, 1, 1)), "year", m)

    def clock(self, d: date, hour: int, minute: int | None, m: re.Match[str]) -> None:
        start = datetime.combine(d, time(hour, minute or 0), tzinfo=self.zone)
        if minute is None:
            self._add(start, start + timedelta(hours=1), "hour", m)
        else:
            self._add(start, start + timedelta(minutes=1), "minute", m)

    def _add(self, start: datetime, end: datetime, precision: str, m: re.Match[str]) -> None:
        self.found.append(_Found(start, end, precision, m.start(), m.group(0)))

    # Dates without a year resolve to the nearest occurrence (a tie goes to the past: people mostly tell)...
    def nearest_month(self, month: int) -> tuple[int, int]:
        options = [(self.today.year + dy, month) for dy in (-1, 0, 1)]
        here = self.today.year * 12 + self.today.month
        return min(options, key=lambda ym: (abs(ym[0] * 12 + ym[1] - here), ym[0] * 12 + ym[1] > here))

    def nearest_date(self, month: int, day: int) -> date | None:
        options = []
        for dy in (-1, 0, 1):
            try:
                options.append(date(self.today.year + dy, month, day))
            except ValueError:
                continue
        if not options:
            return None
        return min(options, key=lambda d: (abs((d - self.today).days), d > self.today))

    # Unless the words around it say which way it looks: then the latest one up to today (past) or the
    # first one from today on (future); the current month belongs to both sides.
    def month_without_year(self, month: int, pos: int, lean: int | None = None) -> tuple[int, int]:
        lean = self.lean(pos) if lean is None else lean
        if lean < 0:
            return (self.today.year if month <= self.today.month else self.today.year - 1), month
        if lean > 0:
            return (self.today.year if month >= self.today.month else self.today.year + 1), month
        return self.nearest_month(month)

    def date_without_year(self, month: int, day: int, pos: int) -> date | None:
        lean = self.lean(pos)
        if lean == 0:
            return self.nearest_date(month, day)
        for years in range(9):  # a 29 February can be up to eight years away (1896 -> 1904, 2096 -> 2104)
            d = _safe_date(self.today.year + lean * years, month, day)
            if d is not None and (d <= self.today if lean < 0 else d >= self.today):
                return d
        return None

    def lean(self, pos: int) -> int:
        """-1 if the clause around `pos` looks back, +1 if it looks ahead, 0 if it does not say or says both.
        A clause without any marker leaves it to its sentence ("In March, we went to Lisbon")."""
        low = self._tense_low
        for spans in (self._clauses, self._sentences):
            start, end = max((s for s in spans if s[0] <= pos), default=(0, len(low)))
            past, future = _tense_counts(self.text[start:end], low[start:end], self._german)
            if past or future:
                return (future > past) - (future < past)
        return 0

    @cached_property
    def _tense_low(self) -> str:
        return self.low.replace("\u2019", "'")  # same length: positions stay valid

    @cached_property
    def _clauses(self) -> list[tuple[int, int]]:
        return _spans(self._tense_low, _CLAUSE_BREAK)

    @cached_property
    def _sentences(self) -> list[tuple[int, int]]:
        return _spans(self._tense_low, _SENTENCE_BREAK)

    @cached_property
    def _german(self) -> bool:
        words = _WORD.findall(self._tense_low)
        return sum(w in _GERMAN_HINTS for w in words) > sum(w in _ENGLISH_HINTS for w in words)


def _number(word: str) -> int | None:
    word = word.strip()
    if word.isdecimal():
        return int(word)
    return NUMBERS.get(word)


def _shift_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _full_year(text: str | None, fallback: int) -> int:
    if not text:
        return fallback
    year = int(text)
    return year + 2000 if year < 100 else year


_Handler = Callable[[_Reader, re.Match[str]], None]
_RULES: list[tuple[re.Pattern[str], _Handler]] = []


def _rule(pattern: str) -> Callable[[_Handler], _Handler]:
    def register(handler: _Handler) -> _Handler:
        _RULES.append((re.compile(pattern, re.IGNORECASE), handler))
        return handler
    return register


@_rule(r"\b(\d{4})-(\d{2})-(\d{2})(?:[ t](\d{1,2}):(\d{2}))?\b")
def _iso(r: _Reader, m: re.Match[str]) -> None:
    d = _safe_date(int(m[1]), int(m[2]), int(m[3]))
    if d is None:
        return
    if m[4] is not None and int(m[4]) < 24 and int(m[5]) < 60:
        r.clock(d, int(m[4]), int(m[5]), m)
    else:
        r.day(d, m)


@_rule(r"\b(\d{4})-(\d{2})\b(?!-)")
def _iso_month(r: _Reader, m: re.Match[str]) -> None:
    if 1 <= int(m[2]) <= 12:
        r.month(int(m[1]), int(m[2]), m)


@_rule(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")
def _slash_ymd(r: _Reader, m: re.Match[str]) -> None:
    d = _safe_date(int(m[1]), int(m[2]), int(m[3]))
    if d is not None:
        r.day(d, m)


@_rule(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
def _slash_mdy(r: _Reader, m: re.Match[str]) -> None:
    d = _safe_date(int(m[3]), int(m[1]), int(m[2]))
    if d is not None:
        r.day(d, m)


@_rule(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(?:(\d{4}|\d{2})(?!\d))?(?!\d)")
def _german_numeric(r: _Reader, m: re.Match[str]) -> None:
    day, month = int(m[1]), int(m[2])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return
    d = _safe_date(_full_year(m[3], 0), month, day) if m[3] else r.date_without_year(month, day, m.start())
    if d is not None:
        r.day(d, m)


@_rule(rf"\b(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th|\.)?\s+(?:of\s+)?({MONTH_ANY})\b\.?(?:,?\s+(\d{{4}}))?")
def _day_month(r: _Reader, m: re.Match[str]) -> None:
    month, day = MONTHS[m[2].lower()], int(m[1])
    d = _safe_date(int(m[3]), month, day) if m[3] else r.date_without_year(month, day, m.start())
    if d is not None:
        r.day(d, m)


@_rule(rf"\b({MONTH_ANY})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)(?:,?\s+(\d{{4}}))?")
def _month_day(r: _Reader, m: re.Match[str]) -> None:
    month, day = MONTHS[m[1].lower()], int(m[2])
    if (m[1].lower() in ABBREVIATIONS or m[1].lower() == "may") and not m[0][0].isupper():
        return  # "may 3 people come" is not a date; abbreviations must be capitalised
    d = _safe_date(int(m[3]), month, day) if m[3] else r.date_without_year(month, day, m.start())
    if d is not None:
        r.day(d, m)


@_rule(rf"\b({MONTH_NAMES})\s+(\d{{4}})\b")
def _month_year(r: _Reader, m: re.Match[str]) -> None:
    r.month(int(m[2]), MONTHS[m[1].lower()], m)


@_rule(rf"\b(?:(in|im|since|seit|during|until|bis|ab|of|von|vom|early|late|mid|anfang|ende|mitte)|{LAST}|{THIS}|{NEXT})"
       rf"\s+({MONTH_NAMES})\b(?!\.?\s*\d)")
def _month_named(r: _Reader, m: re.Match[str]) -> None:
    month = MONTHS[m[5].lower()]
    if m[2]:  # last March: the most recent March before this month
        year = r.today.year if month < r.today.month else r.today.year - 1
    elif m[3]:
        year = r.today.year
    elif m[4]:
        year = r.today.year if month > r.today.month else r.today.year + 1
    else:
        since = (m[1] or "").lower() in ("since", "seit")  # the start of something still going on is behind us
        year, month = r.month_without_year(month, m.start(), -1 if since else None)
    r.month(year, month, m)


@_rule(r"\bq([1-4])(?:[\s/]*(\d{4}))?\b")
def _quarter_code(r: _Reader, m: re.Match[str]) -> None:
    r.quarter(_full_year(m[2], r.today.year), int(m[1]), m)


@_rule(r"\b(?:the\s+|im\s+|in\s+)?(first|1st|second|2nd|third|3rd|fourth|4th|last|ersten|erste|zweiten|zweite|"
       r"dritten|dritte|vierten|vierte|letzten|[1-4]\.)\s+(?:quarter|quartal)(?:\s+(?:of\s+)?(\d{4}))?")
def _quarter_ordinal(r: _Reader, m: re.Match[str]) -> None:
    r.quarter(_full_year(m[2], r.today.year), ORDINAL_QUARTER[m[1].lower()], m)


@_rule(rf"\b(?:{LAST}|{THIS}|{NEXT})\s+(?:quarter|quartal)\b")
def _quarter_relative(r: _Reader, m: re.Match[str]) -> None:
    q = (r.today.month - 1) // 3 + 1
    delta = -1 if m[1] else (1 if m[3] else 0)
    index = r.today.year * 4 + (q - 1) + delta
    r.quarter(index // 4, index % 4 + 1, m)


@_rule(r"\b(?:in|im|since|seit|during|of|von|bis|until|year|jahr|im jahre?)\s+((?:19|20)\d{2})\b(?!\s*(?:-|/|\.\d))")
def _year(r: _Reader, m: re.Match[str]) -> None:
    r.year(int(m[1]), m)


@_rule(rf"\b(?:{LAST}|{THIS}|{NEXT})\s+(week|woche|month|monat|year|jahr|weekend|wochenende)\b")
def _relative_period(r: _Reader, m: re.Match[str]) -> None:
    delta = -1 if m[1] else (1 if m[3] else 0)
    unit = m[4].lower()
    if unit in ("week", "woche"):
        r.week(r.today + timedelta(weeks=delta), m)
    elif unit in ("month", "monat"):
        r.month(*_shift_months(r.today.year, r.today.month, delta), m)
    elif unit in ("year", "jahr"):
        r.year(r.today.year + delta, m)
    else:
        r.days(r.today + timedelta(days=5 - r.today.weekday() + 7 * delta), 2, m)


@_rule(r"\b(?:am|at the|on the|this)\s+(?:weekend|wochenende)\b")
def _this_weekend(r: _Reader, m: re.Match[str]) -> None:
    saturday = r.today + timedelta(days=5 - r.today.weekday())
    r.days(saturday, 2, m)


@_rule(rf"\b{NUMBER}\s+{UNIT}\s+(ago|earlier|before)\b")
def _ago(r: _Reader, m: re.Match[str]) -> None:
    _relative_amount(r, m, _number(m[1].lower()), m[2].lower(), -1)


@_rule(rf"\bvor\s+{NUMBER}\s+{UNIT}\b")
def _vor(r: _Reader, m: re.Match[str]) -> None:
    _relative_amount(r, m, _number(m[1].lower()), m[2].lower(), -1)


@_rule(rf"\bin\s+{NUMBER}\s+{UNIT}\b")
def _in_future(r: _Reader, m: re.Match[str]) -> None:
    _relative_amount(r, m, _number(m[1].lower()), m[2].lower(), 1)


def _relative_amount(r: _Reader, m: re.Match[str], amount: int | None, unit_word: str, sign: int) -> None:
    if amount is None or amount > 500:
        return
    unit = UNITS.get(unit_word)
    if unit is None:
        return
    n = amount * sign
    if unit == "minute":
        start = (r.now + timedelta(minutes=n)).replace(second=0, microsecond=0)
        r._add(start, start + timedelta(minutes=1), "minute", m)
    elif unit == "hour":
        start = (r.now + timedelta(hours=n)).replace(minute=0, second=0, microsecond=0)
        r._add(start, start + timedelta(hours=1), "hour", m)
    elif unit == "day":
        r.day(r.today + timedelta(days=n), m)
    elif unit == "week":
        r.week(r.today + timedelta(weeks=n), m)
    elif unit == "month":
        r.month(*_shift_months(r.today.year, r.today.month, n), m)
    else:
        r.year(r.today.year + n, m)


@_rule(r"\b(the day before yesterday|vorgestern|the day after tomorrow|übermorgen|uebermorgen|yesterday|gestern|"
       r"today|heute|tonight|last night|tomorrow|morgen)\b")
def _day_words(r: _Reader, m: re.Match[str]) -> None:
    word = m[1].lower()
    if word == "morgen" and not _means_tomorrow(r.low, m.start()):
        return
    offsets = {"the day before yesterday": -2, "vorgestern": -2, "the day after tomorrow": 2, "übermorgen": 2,
               "uebermorgen": 2, "yesterday": -1, "gestern": -1, "last night": -1, "today": 0, "heute": 0,
               "tonight": 0, "tomorrow": 1, "morgen": 1}
    r.day(r.today + timedelta(days=offsets[word]), m)


@_rule(rf"\b(?:(last|letzten|vergangenen|vorigen)|(next|nächsten|naechsten|kommenden)|(this|diesen)|(on|am))?\s*"
       rf"\b({WEEKDAY_NAMES})\b(?!s\b)")
def _weekday(r: _Reader, m: re.Match[str]) -> None:
    target = WEEKDAYS[m[5].lower()]
    today = r.today.weekday()
    if m[1]:
        back = (today - target) % 7 or 7
        d = r.today - timedelta(days=back)
    elif m[2]:
        ahead = (target - today) % 7 or 7
        d = r.today + timedelta(days=ahead)
    elif m[3]:
        d = r.today + timedelta(days=target - today)
    else:
        back = (today - target) % 7
        ahead = (target - today) % 7
        d = r.today - timedelta(days=back) if back <= ahead else r.today + timedelta(days=ahead)
    r.day(d, m)


@_rule(r"\b(?:(?:at|um|gegen|around|ab)\s+(?P<h1>\d{1,2})(?::(?P<m1>\d{2}))?\s*(?P<s1>am|pm|a\.m\.|p\.m\.|uhr)?"
       r"|(?P<h2>\d{1,2}):(?P<m2>\d{2})\s*(?P<s2>am|pm|uhr)?"
       r"|(?P<h3>\d{1,2})\s*(?P<s3>pm|p\.m\.|a\.m\.|uhr)|(?P<h4>\d{1,2})(?P<s4>am))(?![\w:])")
def _clock(r: _Reader, m: re.Match[str]) -> None:
    for n in "1234":
        if m[f"h{n}"] is not None:
            hour, minute, suffix = int(m[f"h{n}"]), m[f"m{n}"] if n in "12" else None, (m[f"s{n}"] or "").lower()
            break
    if n == "1" and minute is None and not suffix:
        return  # "at 5" alone is too often a count
    if suffix.startswith("p") and hour < 12:
        hour += 12
    elif suffix.startswith("a") and hour == 12:
        hour = 0
    if hour > 23 or (minute is not None and int(minute) > 59):
        return
    # The clock time attaches to a day named elsewhere in the message (see find_time_anchors).
    start = datetime.combine(r.today, time(hour, int(minute or 0)), tzinfo=r.zone)
    precision = "minute" if minute is not None else "hour"
    r.found.append(_Found(start, start, precision, m.start(), m.group(0), floating=True))


def find_time_anchors(text: str, at: datetime, zone: ZoneInfo | str = "UTC") -> list[TimeAnchor]:
    """Every time expression found, in text order, each relative to `at` (aware) in `zone`."""
    if at.tzinfo is None:
        raise ValueError("the message time must be timezone-aware")
    reader = _Reader(text, at, ZoneInfo(zone) if isinstance(zone, str) else zone)
    for pattern, handler in _RULES:
        for match in pattern.finditer(text):
            handler(reader, match)
    days = [f for f in reader.found if f.precision == "day" and f.end - f.start == timedelta(days=1)]
    anchors: list[TimeAnchor] = []
    for f in sorted(reader.found, key=lambda f: f.pos):
        start, end = f.start, f.end
        if f.floating:
            day = days[0].start.date() if days else reader.today
            start = datetime.combine(day, start.timetz())
            end = start + (timedelta(hours=1) if f.precision == "hour" else timedelta(minutes=1))
        anchors.append(TimeAnchor(start.astimezone(UTC), end.astimezone(UTC), f.precision, f.phrase.strip()))
    return anchors


def find_time_anchor(text: str, at: datetime, zone: ZoneInfo | str = "UTC") -> TimeAnchor | None:
    """The finest time expression of the message (the first among equals), or None."""
    anchors = find_time_anchors(text, at, zone)
    if not anchors:
        return None
    return max(anchors, key=lambda a: (PRECISION_RANK[a.precision], -anchors.index(a)))
