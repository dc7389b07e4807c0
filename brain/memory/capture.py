"""Short-term capture: every message (the person's and the assistant's) becomes a pending entry with its
magnet fields — embedding, entities, timeline anchor, themes, emotion/Plutchik sector and salience — read
in-process from lexicons and regexes, so capture costs one embedding and a couple of statements."""

from __future__ import annotations

import functools
import math
import re
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Table, Text, any_, bindparam, func, literal, literal_column, select, union_all
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.memory.embedder import Embedder, embedded, space_of
from brain.memory.lexicon import (
    DEMONYMS,
    DENIALS,
    EMOJI_EMOTIONS,
    EMOTION_SECTORS,
    EMOTION_STEMS,
    LANGUAGE_MARKERS,
    NAME_CONNECTORS,
    NEGATIONS,
    NOT_NAMES,
    PERSON_AFTER,
    PERSON_BEFORE,
    PERSON_RELATIONS,
    PLACE_BEFORE,
    POSSESSIVES,
    STOPWORDS,
    STOPWORDS_EN,
)
from brain.memory.models import ASSISTANT, SPEAKER_CHARS, SPEAKERS, MemoryEntity, ShortTermEntry
from brain.memory.timeline import TimeAnchor, find_time_anchor
from brain.modules.places.models import Place
from brain.names import name_key
from brain.people.models import User
from brain.pipeline_log import PipelineLog, write_log_now

MAX_THEMES = 8
MAX_NEW_ENTITIES = 3
MAX_NGRAM = 3
MAX_CANDIDATES = 1000
PHATIC = frozenset("ok okay thanks thank you thx danke cool nice yes no ja nein haha lol hm hmm sure alright gut "
                   "super great bye tschüss ciao".split())

_TOKEN = re.compile(r"[^\W\d_][\w'’\-]*|\d+", re.UNICODE)
_SENTENCE_MARK = re.compile(r"[.!?:;\n]")
# Stretches whose capitalisation says nothing about names: markdown headings, bold or underlined emphasis.
_STYLED = re.compile(r"^[ \t]*#{1,6}[ \t].*$|\*\*[^*\n]+\*\*|__[^_\n]+__", re.MULTILINE)
_QUOTED = re.compile(r'"[^"\n]{1,200}"|“[^“”\n]{1,200}”|„[^“”„\n]{1,200}[“”]')
MAX_NAME_WORDS = 4  # capitalised words in one name; a longer run of them is a heading or a title, not a name
MAX_TITLE_TOKENS = 8  # words in a quoted title taken as one name ("The Art of Falling")


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    low: str
    start: int
    sentence_start: bool
    # False where capitalisation carries no information: a heading, emphasis, or a title-case line of a
    # text with several lines.
    plain_case: bool = True
    quote: int = 0  # 1-based number of the double-quoted stretch the token lies in, 0 outside quotes

    @property
    def capitalized(self) -> bool:
        return self.text[:1].isupper()

    @property
    def bare(self) -> str:
        """The lowercased word without a possessive 's ("Petco's" -> "petco")."""
        return self.low.removesuffix("'s")


@dataclass(frozen=True)
class Mention:
    """A name in a message: `kind` is a guess (person/place/thing); `cued` if a cue word made it a name."""

    name: str
    kind: str
    cued: bool


@dataclass(frozen=True)
class Magnets:
    themes: list[str]
    mentions: list[Mention]
    candidates: list[str]  # lowercased words and n-grams that might name a known entity or place
    name_keys: list[str]  # the candidates written as a name: only these link a known thing
    anchor: TimeAnchor | None
    emotion: str | None
    sector: str | None
    salience: float
    language: str


@dataclass(frozen=True)
class Captured:
    id: uuid.UUID
    status: str  # pending | rejected
    reason: str | None = None
    entity_ids: list[uuid.UUID] = field(default_factory=list)


def _inside(spans: Sequence[tuple[int, int]], starts: Sequence[int]) -> list[int]:
    """For each position (ascending), the 1-based number of the (ascending, disjoint) span holding it, or 0."""
    if not spans:
        return [0] * len(starts)
    found: list[int] = []
    k = 0
    for start in starts:
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        found.append(k + 1 if k < len(spans) and spans[k][0] <= start else 0)
    return found


def _title_case_lines(text: str, words: Sequence[tuple[str, str, int]]) -> set[int]:
    """Starts of the lines, in a text of several lines, that read as headings: no sentence end, at least two
    words, and every content word capitalised ("Tips for Better Sleep", "Adams Visitor Center"). `words`
    holds (text, lowercase, line start) of each word."""
    lines: dict[int, list[tuple[str, str]]] = {}
    for word, low, line_start in words:
        if not low.isdigit():
            lines.setdefault(line_start, []).append((word, low))
    if len(lines) < 2:
        return set()
    titled: set[int] = set()
    for line_start, line in lines.items():
        if len(line) < 2:
            continue
        end = text.find("\n", line_start)
        if text[line_start:len(text) if end < 0 else end].rstrip(" \t*_").endswith((".", "!", "?")):
            continue
        content = [word for word, low in line if low.removesuffix("'s") not in STOPWORDS]
        if len(content) >= 2 and all(word[:1].isupper() for word in content):
            titled.add(line_start)
    return titled


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    line_starts: list[int] = []
    previous_end = 0
    line_start = 0
    for m in _TOKEN.finditer(text):
        word = m.group(0).strip("'’-")
        if not word:
            continue
        # A sentence starts at the first token and after . ! ? : ; or a line break.
        starts = not tokens or bool(_SENTENCE_MARK.search(text, previous_end, m.start()))
        if starts:
            line_start = text.rfind("\n", previous_end, m.start()) + 1 or line_start
        tokens.append(Token(word, word.lower().replace("’", "'"), m.start(), starts))
        line_starts.append(line_start)
        previous_end = m.end()
    positions = [t.start for t in tokens]
    styled = _inside([(m.start(), m.end()) for m in _STYLED.finditer(text)], positions)
    quoted = _inside([(m.start(), m.end()) for m in _QUOTED.finditer(text)], positions)
    titled = _title_case_lines(text, [(t.text, t.low, line) for t, line in zip(tokens, line_starts, strict=True)]) \
        if line_start else set()  # (line_start is 0 for a text of one line)
    for i, t in enumerate(tokens):
        if styled[i] or quoted[i] or line_starts[i] in titled:
            tokens[i] = Token(t.text, t.low, t.start, t.sentence_start,
                              not styled[i] and line_starts[i] not in titled, quoted[i])
    return tokens


def detect_language(tokens: Sequence[Token]) -> str:
    words = [t.low for t in tokens]
    de = sum(w in LANGUAGE_MARKERS["de"] for w in words) + sum(ch in "äöüß" for w in words for ch in w)
    en = sum(w in LANGUAGE_MARKERS["en"] for w in words)
    return "de" if de > en else "en"


def normalize_theme(word: str) -> str:
    """Lowercase with a light plural fold, so "birthdays"/"birthday" and "Geburtstags"/"Geburtstag" meet."""
    word = word.lower().replace("’", "'").removesuffix("'s")
    if len(word) > 5 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def read_themes(tokens: Sequence[Token], exclude: set[str] | None = None) -> list[str]:
    """Keywords: the most frequent, then longest, content words (no stopwords, numbers or names)."""
    exclude = exclude or set()
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, token in enumerate(tokens):
        low = token.low.removesuffix("'s")
        if len(low) < 4 or low in STOPWORDS or low in NOT_NAMES or low.isdigit() or low in exclude or "'" in low:
            continue
        # Capitalised words are names or German nouns: folding "Siemens" or "Geburtstags" would only hurt.
        theme = low if token.capitalized else normalize_theme(low)
        if theme in STOPWORDS:
            continue
        counts[theme] += 1
        first.setdefault(theme, i)
    best = sorted(counts, key=lambda t: (-counts[t], -len(t), first[t]))[:MAX_THEMES]
    return sorted(best, key=lambda t: first[t])


_PHRASES = {stem: label for stem, label in EMOTION_STEMS.items() if " " in stem}
_EXACT = {stem[:-1]: label for stem, label in EMOTION_STEMS.items() if stem.endswith("$")}
_PREFIXES = {stem: label for stem, label in EMOTION_STEMS.items() if " " not in stem and not stem.endswith("$")}
_PREFIX_LENGTHS = sorted({len(stem) for stem in _PREFIXES}, reverse=True)


def _emotion_word(word: str) -> str | None:
    """The label of a word: an exact entry, else the longest stem the word starts with."""
    label = _EXACT.get(word)
    if label is not None:
        return label
    for length in _PREFIX_LENGTHS:
        if length <= len(word):
            label = _PREFIXES.get(word[:length])
            if label is not None:
                return label
    return None


def read_emotion(text: str, tokens: Sequence[Token]) -> tuple[str | None, str | None]:
    """(label, Plutchik sector) of the dominant emotion word, skipping negated ones; (None, None) if neutral."""
    hits: list[tuple[int, str]] = []
    low = text.lower().replace("’", "'")
    for phrase, label in _PHRASES.items():
        for m in re.finditer(re.escape(phrase), low):
            hits.append((m.start(), label))
    for i, token in enumerate(tokens):
        found = _emotion_word(token.low)
        if found is None:
            continue
        label = found
        if any(t.low in NEGATIONS for t in tokens[max(0, i - 3):i]):
            continue
        hits.append((token.start, label))
    for emoji, label in EMOJI_EMOTIONS.items():
        for m in re.finditer(re.escape(emoji), text):
            hits.append((m.start(), label))
    if not hits:
        return None, None
    counts = Counter(label for _, label in hits)
    first = {label: pos for pos, label in sorted(hits, reverse=True)}
    label = min(counts, key=lambda lab: (-counts[lab], first[lab]))
    return label, EMOTION_SECTORS[label]


def _name_word(token: Token) -> bool:
    return token.capitalized and len(token.text) > 1 and token.bare not in NOT_NAMES \
        and token.low not in PERSON_RELATIONS


def _joined(tokens: Sequence[Token], j: int) -> bool:
    """Token j continues the name before it: no sentence break and at most one character between them."""
    return not tokens[j].sentence_start and tokens[j].start - (tokens[j - 1].start + len(tokens[j - 1].text)) <= 1


def _name_text(tokens: Sequence[Token]) -> str:
    """The name as written, without a possessive 's on its last word ("Rachel's" -> "Rachel")."""
    words = [t.text for t in tokens]
    words[-1] = re.sub(r"['’]s$", "", words[-1]) or words[-1]
    return " ".join(words)


def _name_at(tokens: Sequence[Token], i: int, stopwords: frozenset[str] = STOPWORDS) -> tuple[str, int] | None:
    """A run of up to four capitalised tokens starting at i ("Anna Schmidt", "New York", "Rocky Mountain
    National Park"). A stopword or a nationality may only open a run that continues ("New York", "French
    Laundry", not "New" or "French")."""
    if i >= len(tokens) or not _name_word(tokens[i]):
        return None
    j = i + 1
    while j < len(tokens) and j - i < MAX_NAME_WORDS and _name_word(tokens[j]) and _joined(tokens, j) \
            and tokens[j].low not in stopwords:
        j += 1
    if j == i + 1 and (tokens[i].low in stopwords or tokens[i].bare in DEMONYMS):
        return None
    return _name_text(tokens[i:j]), j


def _title_at(tokens: Sequence[Token], i: int) -> tuple[int, int] | None:
    """(end, capitalised words) of the English name or title that starts at i: capitalised words, joined by
    at most two lowercase connectors ("Museum of Modern Art", "Walk for Hunger", "Bank of the West"), that
    ends on a word that is no stopword or nationality ("World War II", not "Last"). None if there is none."""
    if not _name_word(tokens[i]):
        return None
    end = None
    words = 0
    j = i
    while j < len(tokens):
        if j > i:
            k = j
            while k < len(tokens) and k - j < 2 and tokens[k].low in NAME_CONNECTORS \
                    and not tokens[k].capitalized and _joined(tokens, k):
                k += 1
            if k >= len(tokens) or not _name_word(tokens[k]) or not _joined(tokens, k):
                break
            j = k
        words += 1
        # English stopwords only: German ones ("war", "man", "hat") end English names ("World War", "Iron Man").
        if tokens[j].low not in STOPWORDS_EN and tokens[j].bare not in DEMONYMS:
            end = (j + 1, words)
        j += 1
    return end


def _quoted_title(tokens: Sequence[Token], i: int) -> int | None:
    """The end of a quoted title that starts at i ("The Art of Falling", "How I Built This"): a quoted
    stretch of two to eight words whose content words are all capitalised."""
    quote = tokens[i].quote
    if not quote or (i > 0 and tokens[i - 1].quote == quote) or not tokens[i].capitalized:
        return None
    end = i
    while end < len(tokens) and tokens[end].quote == quote:
        end += 1
    if not 2 <= end - i <= MAX_TITLE_TOKENS:
        return None
    content = [t for t in tokens[i:end] if t.low not in STOPWORDS and not t.low.isdigit()]
    return end if content and all(t.capitalized for t in content) else None


def _plain_name(tokens: Sequence[Token], lowered: Callable[[], set[str]]) -> bool:
    """Whether an uncued run of capitalised words can be a name: its capitals must carry information (not a
    heading, emphasis or all-caps), and a single word must not appear in lower case in the same message
    ("the Center" next to "a community center" is a common noun)."""
    if not all(t.plain_case for t in tokens):
        return False
    if all(_name_text([t]).isupper() for t in tokens):
        return False
    return len(tokens) > 1 or tokens[0].bare not in lowered()


def _cue(tokens: Sequence[Token], i: int, end: int, language: str) -> tuple[str | None, bool]:
    """(kind, weak) of the cue around the name tokens[i:end]: a person or a place, or None; weak if the cue
    is a bare "and"."""
    prev = tokens[i - 1].low if i > 0 else ""
    prev2 = tokens[i - 2].low if i > 1 else ""
    nxt = tokens[end].low if end < len(tokens) else ""
    inside = not tokens[i].sentence_start
    if prev in PERSON_RELATIONS and (prev2 in POSSESSIVES or language == "de"):
        return "person", False
    if prev in ("namens", "heißt", "heisst", "named", "called"):
        return "person", False
    if language == "en" and inside and prev in PERSON_BEFORE:
        return "person", prev == "and"
    if language == "en" and inside and prev in PLACE_BEFORE:
        return "place", False
    if language == "de" and prev in ("nach", "aus"):
        return "place", False
    if nxt in PERSON_AFTER and end - i == 1 and language == "en":
        return "person", nxt == "and"
    if nxt == "und" and end + 1 < len(tokens) and tokens[end + 1].low in ("ich", "mir", "mich", "wir"):
        # German capitalises every noun ("Brot und Butter"): only "Anna und ich" marks a person.
        return "person", False
    return None, False


def read_mentions(tokens: Sequence[Token], language: str) -> list[Mention]:
    """Names marked by a cue ("my sister Anna", "meine Schwester Anna", "with Tom", "in Berlin", "nach
    Hamburg", "Anna said"); in English also names inside a sentence whose capitals say they are names: a
    quoted title, or a run of capitalised words ("Honda Civic", "Museum of Modern Art") that is no heading,
    emphasis, all-caps word or capitalised common noun. German capitalises every noun, so there only cues
    count."""
    found: dict[str, Mention] = {}

    @functools.cache
    def lowered() -> set[str]:  # the words the message writes in lower case, read only when needed
        return {t.bare for t in tokens if not t.capitalized}

    evidence: dict[str, int] = {}  # name -> 0 uncued, 1 a bare "and", 2 a cue

    def add(name: str, kind: str, strength: int) -> None:
        # The first mention of a name decides its kind, unless a later one has a stronger cue (so a heading,
        # which drops the weak cues, never gives a name a kind the same text without it would not).
        if strength > evidence.get(name.lower(), -1):
            found[name.lower()] = Mention(name, kind, strength > 0)
            evidence[name.lower()] = strength

    i = 0
    while i < len(tokens):
        title_end = _quoted_title(tokens, i) if language == "en" else None
        if title_end is not None:
            add(_name_text(tokens[i:title_end]), "thing", 0)
            i = title_end
            continue
        inside = not tokens[i].sentence_start
        end = i + 1
        # In English, a word that is only a German stopword may be part of a name ("World War", "Iron Man").
        named = _name_at(tokens, i, STOPWORDS_EN if language == "en" else STOPWORDS)
        if named is not None:
            name, end = named
            kind, weak = _cue(tokens, i, end, language)
            # "and" is the weakest cue ("Tom and Anna", but also "internet and TV"): the word must read as a
            # name by itself there.
            if kind is not None and (not weak or _plain_name(tokens[i:end], lowered)):
                add(name, kind, 1 if weak else 2)
                i = end
                continue
        if language == "en":
            # Uncued: the whole run of capitalised words and connectors is one name, or none ("Game of
            # Thrones", not "Game" and "Thrones"); a longer run is a heading or a title.
            title = _title_at(tokens, i)
            if title is not None:
                end, words = title
                if inside and words <= MAX_NAME_WORDS and _plain_name(tokens[i:end], lowered):
                    add(_name_text(tokens[i:end]), "thing", 0)
        i = end
    return list(found.values())


def entity_candidates(tokens: Sequence[Token], names: Sequence[str] = ()) -> list[str]:
    """Lowercased words and n-grams (two to three words) that could be a known entity's name or alias ("mom",
    "Café Central", "game of thrones"): an n-gram that starts with a capital, or one in any case within a
    sentence that neither starts nor ends on a stopword. A possessive 's is also read without it ("Anna's").
    The message's own names come first, however long ("museum of modern art")."""
    keys: dict[str, None] = {name.lower(): None for name in names}
    lows = [t.low for t in tokens]
    content = [low not in STOPWORDS and len(low) > 1 and not low.isdigit() for low in lows]
    for i, token in enumerate(tokens):
        low = lows[i]
        if content[i]:
            keys[low] = None
            if low.endswith("'s"):
                keys[token.bare] = None
        capitalized = token.capitalized
        if not capitalized and not content[i]:
            continue
        for j in range(i + 1, min(i + MAX_NGRAM, len(tokens))):
            if not capitalized and tokens[j].sentence_start:
                break
            if capitalized or content[j]:
                key = " ".join(lows[i:j + 1])
                keys[key] = None
                if key.endswith("'s"):
                    keys[key[:-2]] = None
    return list(keys)[:MAX_CANDIDATES]


def name_keys(tokens: Sequence[Token], candidates: Sequence[str], names: Sequence[str] = ()) -> list[str]:
    """The candidates the message writes as a name, the only ones that may link a known "thing" (people and
    places are matched by any candidate: "mom", "berlin"): the message's own names, any key of several words
    ("game of thrones" is specific in any case), a single word capitalised outside headings and emphasis
    that the message does not also write in lower case, and a word with a capital inside it ("YouTube"). So
    the thing "Art" is not linked by "art class" or a heading "**Art**". A capital at a sentence start is
    no evidence either way, so there the thing's being known as a name decides ("Bruno stole my sandwich")."""
    lowered = {t.bare for t in tokens if not t.capitalized}
    written = {name.lower() for name in names}
    for token in tokens:
        if token.text.isupper():
            continue
        if (token.capitalized and token.plain_case and token.bare not in lowered) \
                or token.text[1:] != token.text[1:].lower():
            written.update((token.low, token.bare))
    return [key for key in candidates if " " in key or key in written]


def read_salience(text: str, tokens: Sequence[Token], emotion: str | None, mentions: Sequence[Mention],
                  anchor: TimeAnchor | None, speaker: str) -> float:
    """0..1, how much a message is worth remembering: feelings, people, dates and self-disclosure raise it;
    small talk lowers it. It becomes the node's raw weight on promotion."""
    words = [t.low for t in tokens]
    if not words or all(w in PHATIC for w in words):
        return 0.1
    score = 0.4
    if emotion:
        score += 0.2
    if mentions:
        score += 0.1
    if anchor is not None:
        score += 0.1
    if any(w in ("i", "my", "me", "ich", "mein", "meine", "mir", "mich") for w in words):
        score += 0.1
    if "!" in text:
        score += 0.05
    if len(words) < 4:
        score -= 0.15
    if speaker == ASSISTANT:
        score *= 0.8
    return round(min(max(score, 0.05), 1.0), 3)


def read_magnets(text: str, at: datetime, zone: ZoneInfo | str = "UTC", speaker: str = "user") -> Magnets:
    """Everything capture derives from the text alone (pure: no database, no embedding)."""
    tokens = tokenize(text)
    language = detect_language(tokens)
    mentions = read_mentions(tokens, language)
    names = {part.lower() for m in mentions for part in m.name.split()}
    anchor = find_time_anchor(text, at, zone)
    emotion, sector = read_emotion(text, tokens)
    candidates = entity_candidates(tokens, [m.name for m in mentions])
    return Magnets(
        themes=read_themes(tokens, names), mentions=mentions, candidates=candidates,
        name_keys=name_keys(tokens, candidates, [m.name for m in mentions]), anchor=anchor,
        emotion=emotion, sector=sector, salience=read_salience(text, tokens, emotion, mentions, anchor, speaker),
        language=language,
    )


def message_time(value: object) -> datetime | None:
    """The message time as aware UTC, or None if missing or unreadable. Never guessed: a naive datetime, a
    string that is not ISO 8601 with a zone, or an instant at or before the epoch is unreadable."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        return None
    try:
        stamp = value.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
    if not math.isfinite(stamp) or stamp <= 0:
        return None
    return value.astimezone(UTC)


_USER_ZONE = select(User.timezone).where(User.id == bindparam("user_id"))


def zone_named(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


async def user_zone(session: AsyncSession, user_id: uuid.UUID) -> ZoneInfo:
    return zone_named(await session.scalar(_USER_ZONE, {"user_id": user_id}))


def _known_entities() -> Any:
    """Known entities and places a message may name (built once: capture runs for every message). Three parts: by
    name key (`all_keys` = keys and name keys, each folded by `name_key`; a thing only by a name key) and by alias,
    each through an index of its own (migrations 0023, 0027), so a lookup reads the matches, not all of the person's
    entities; and the places module's places, all of them (a person has tens, and their names are folded here, in
    Python: see `resolve_entities`). An entity found both by name and by alias comes twice; the caller keeps each id
    once."""
    user_id = bindparam("user_id", type_=MemoryEntity.user_id.type)
    key_param = bindparam("keys", type_=ARRAY(Text))
    name_param = bindparam("name_keys", type_=ARRAY(Text))
    all_param = bindparam("all_keys", type_=ARRAY(Text))
    alias_param = bindparam("alias_keys", type_=ARRAY(Text))
    key = MemoryEntity.name_key
    columns = (MemoryEntity.id, key.label("key"), MemoryEntity.name, MemoryEntity.place_id)
    by_name = select(*columns).where(
        MemoryEntity.user_id == user_id, key == any_(all_param),
        ((MemoryEntity.kind != "thing") & (key == any_(key_param)))
        | ((MemoryEntity.kind == "thing") & (key == any_(name_param))),
    )
    # The partial index's own predicate, written as a literal so that even a generic plan may use the index.
    has_aliases = func.cardinality(MemoryEntity.aliases) > literal_column("0")
    by_alias = select(*columns).where(MemoryEntity.user_id == user_id, has_aliases,
                                      MemoryEntity.aliases.overlap(alias_param))
    places = select(literal(None, type_=MemoryEntity.id.type).label("id"), Place.name.label("key"),
                    Place.name, Place.id.label("place_id")).where(Place.user_id == user_id)
    return union_all(by_name, by_alias, places)


_KNOWN_ENTITIES = _known_entities()
_INSERT_ENTRY = insert(cast(Table, ShortTermEntry.__table__))  # Core: no unit of work for a plain insert


async def resolve_entities(session: AsyncSession, user_id: uuid.UUID, magnets: Magnets, *,
                           create: bool) -> list[uuid.UUID]:
    """Ids of the entities a message names: known entities by name or alias, places of the places module
    (linked to a place entity), and — if `create` — new entities for cued or capitalised names; names are compared
    by `name_key`, so "Jurgen" or "Juergen" names "Jürgen" and the other way round. A known person or place is
    named by any candidate ("mom", "berlin"), as is any entity by one of its aliases; a known thing's name must be
    written as a name (`Magnets.name_keys`): a thing created from "Center" must not tie every later "community
    center" to it."""
    if not magnets.candidates:
        return []
    # Both sides of every comparison of names go through `name_key`: "Jurgen" and "Juergen" find "Jürgen".
    keys = list(dict.fromkeys(name_key(key) for key in magnets.candidates))
    named = list(dict.fromkeys(name_key(key) for key in magnets.name_keys))
    rows = (await session.execute(_KNOWN_ENTITIES, {
        "user_id": user_id, "keys": keys, "name_keys": named, "all_keys": list(dict.fromkeys([*keys, *named])),
        # Aliases are matched as the message writes them and folded.
        "alias_keys": list(dict.fromkeys([*magnets.candidates, *keys]))})).all()
    entities = [row for row in rows if row.id is not None]
    ids = dict.fromkeys(row.id for row in entities)
    linked_places = {row.place_id for row in entities if row.place_id is not None}
    matched = {row.key for row in entities}
    new: dict[str, dict[str, Any]] = {}
    wanted = set(keys)
    for row in rows:
        if row.id is None and (key := name_key(row.name)) in wanted:
            matched.add(key)
            if row.place_id not in linked_places:
                new[key] = {"user_id": user_id, "kind": "place", "name": row.name, "name_key": key,
                            "place_id": row.place_id, "aliases": []}
    if create:
        for mention in magnets.mentions:
            if len(new) >= MAX_NEW_ENTITIES:
                break
            key = name_key(mention.name)
            if key not in matched and key not in new:
                new[key] = {"user_id": user_id, "kind": mention.kind, "name": mention.name, "name_key": key,
                            "place_id": None, "aliases": []}
    if new:
        values = insert(MemoryEntity).values([{"id": uuid.uuid4(), **row} for row in new.values()])
        # Two captures may create the same name at once; the unique (user, kind, lower(name)) index decides.
        upsert = values.on_conflict_do_update(
            index_elements=[MemoryEntity.user_id, MemoryEntity.kind, func.lower(MemoryEntity.name)],
            set_={"name": values.excluded.name},
        ).returning(MemoryEntity.id)
        for entity_id in (await session.scalars(upsert)).all():
            ids[entity_id] = None
    return list(ids)


async def capture(
    session: AsyncSession,
    embedder: Embedder,
    user_id: uuid.UUID,
    text: str,
    at: datetime | str | None,
    *,
    speaker: str = "user",
    source_key: str | None = None,
    now: datetime,
    zone: ZoneInfo | str | None = None,
    log: PipelineLog | None = None,
) -> Captured:
    """Inserts one short-term entry in the caller's transaction. An entry without a readable message time is
    stored as 'rejected' and the rejection logged; it is never given "now" (`now` only stamps the log row)."""
    speaker = _check(speaker, text)
    text = text.strip()
    entry_id = uuid.uuid4()
    when = message_time(at)
    if when is None:
        reason = "missing or unreadable message time"
        session.add(ShortTermEntry(id=entry_id, user_id=user_id, speaker=speaker, text=text, at=None,
                                   source_key=source_key, status="rejected", last_error=f"{reason}: {at!r}"[:500]))
        content = {"reason": reason, "entry_id": str(entry_id), "source_key": source_key, "value": repr(at)[:100]}
        if log is not None:
            log.log("error", "memory.capture", content, user_id=user_id)
        else:
            await write_log_now(session, "error", "memory.capture", content, at=now, user_id=user_id)
        await session.flush()
        return Captured(entry_id, "rejected", reason)

    [captured] = await capture_many(session, embedder, user_id, [Message(text, speaker, source_key)], when,
                                    now=now, zone=zone, log=log)
    return captured


NEGATED = "¬"
ASKED = "?"


_FACT_WORD = re.compile(r"\d+|[^\W\d_][\w'’]*", re.UNICODE)


def fact_marks(text: str) -> tuple[str, ...]:
    """What two messages that read alike must also share to say the same: their numbers, whether they deny
    something, and whether they ask. "Anna's birthday is on 13 May" corrects "... on 12 May", "I don't like
    coffee" contradicts "I like coffee", and "When is Anna's birthday?" does not tell it: none of them repeats the
    other, however close their embeddings (see `promotion`'s duplicate rule). Promotion reads them for every new
    node, so this is one regular expression over the text, not the tokenizer."""
    numbers: set[str] = set()
    negated = False
    for word in _FACT_WORD.findall(text):
        if word.isdigit():
            numbers.add(word.lstrip("0") or "0")
        elif not negated and word.lower().replace("’", "'") in DENIALS:
            negated = True
    marks = sorted(numbers)
    if negated:
        marks.append(NEGATED)
    if is_question(text):
        marks.append(ASKED)
    return tuple(marks)


def is_question(text: str) -> bool:
    """Whether a message asks rather than tells: it ends with a question mark (also a full-width one)."""
    return text.rstrip().endswith(("?", "？"))


def speaker_of(value: str) -> str:
    """Who said a message, as the memory stores it: one of the roles of a chat with the companion (SPEAKERS, in any
    case: "User" is "user"), or another participant's name as written, its spaces collapsed (an imported chat, a
    benchmark of chats between two people). The companion's own replies are the only words the memory holds at
    second hand; a participant's are first-hand, as the person's are."""
    name = " ".join(str(value).split())
    if name.lower() in SPEAKERS:
        return name.lower()
    if not name:
        raise ValueError(f"the speaker is empty: one of {SPEAKERS}, or a participant's name")
    if len(name) > SPEAKER_CHARS:
        raise ValueError(f"a speaker's name has at most {SPEAKER_CHARS} characters, not {len(name)}")
    return name


def passage_texts(messages: Sequence[Message]) -> list[str]:
    """What `capture_many` embeds of these messages (ValueError for an empty one, as it raises)."""
    return [embedded_text(_check(message.speaker, message.text), message.text.strip()) for message in messages]


def embedded_text(speaker: str, text: str) -> str:
    """What is embedded of a message: its text, and for another participant's words (an imported chat, a chat between
    two people) who said them first, "Caroline: I went to the support group". A question names the person it asks
    about ("When did Caroline go ..."), and the words alone do not say who it was; the person's own words and the
    companion's replies need no name (there is only one of each)."""
    return text if speaker in SPEAKERS else f"{speaker}: {text}"


def _check(speaker: str, text: str) -> str:
    """The speaker as stored (see `speaker_of`), once the text is known not to be empty."""
    if not text.strip():
        raise ValueError("nothing to remember: the text is empty")
    return speaker_of(speaker)


@dataclass(frozen=True)
class Message:
    """One text to capture, with who said it and its source key."""

    text: str
    speaker: str = "user"
    source_key: str | None = None


async def capture_many(
    session: AsyncSession,
    embedder: Embedder,
    user_id: uuid.UUID,
    messages: Sequence[Message],
    at: datetime | str | None,
    *,
    now: datetime,
    zone: ZoneInfo | str | None = None,
    log: PipelineLog | None = None,
    vectors: Sequence[list[float]] | None = None,
) -> list[Captured]:
    """Inserts short-term entries for messages of one moment (a person's message and the answer to it) in the
    caller's transaction: one embedding call and one INSERT for all of them. The time zone is read from the person
    unless the caller knows it. Without a readable message time, each is stored as 'rejected' (see `capture`).
    `vectors`: the messages' vectors when the caller has them already (of `passage_texts(messages)`)."""
    speakers = [_check(message.speaker, message.text) for message in messages]
    when = message_time(at)
    if when is None:
        return [await capture(session, embedder, user_id, m.text, at, speaker=m.speaker, source_key=m.source_key,
                              now=now, zone=zone, log=log) for m in messages]
    if not messages:
        return []
    zone = await user_zone(session, user_id) if zone is None else zone_named(zone) if isinstance(zone, str) else zone
    texts = [message.text.strip() for message in messages]
    if vectors is None:
        vectors = await embedded(embedder, [embedded_text(speaker, text)
                                            for speaker, text in zip(speakers, texts, strict=True)])
    space = space_of(embedder).key
    rows: list[dict[str, Any]] = []
    captured: list[Captured] = []
    for message, speaker, text, vector in zip(messages, speakers, texts, vectors, strict=True):
        magnets = read_magnets(text, when, zone, speaker)
        # Only people's own words introduce new names; the companion's answers are full of capitalised words.
        entity_ids = await resolve_entities(session, user_id, magnets, create=speaker != ASSISTANT)
        anchor = magnets.anchor
        entry_id = uuid.uuid4()
        rows.append({
            "id": entry_id, "user_id": user_id, "speaker": speaker, "text": text, "at": when,
            "embedding": vector, "embedder": space, "entity_ids": entity_ids, "themes": magnets.themes,
            "timeline_start": anchor.start if anchor else None, "timeline_end": anchor.end if anchor else None,
            "timeline_precision": anchor.precision if anchor else None, "emotion": magnets.emotion,
            "sector": magnets.sector, "salience": magnets.salience, "source_key": message.source_key,
            "status": "pending",
        })
        captured.append(Captured(entry_id, "pending", None, entity_ids))
        if log is not None:
            log.log("db_write", "memory.capture", {
                "table": "memory_short_term", "operation": "insert", "id": str(entry_id), "themes": magnets.themes,
                "entities": len(entity_ids), "precision": anchor.precision if anchor else None,
                "emotion": magnets.emotion, "salience": magnets.salience,
            }, user_id=user_id)
    await session.execute(_INSERT_ENTRY, rows)
    return captured
