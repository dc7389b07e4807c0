"""Greetings, thanks and goodbyes, answered without a language model.

A person who writes "hi" or "danke" to a bot without a model (`make run` on a laptop without Ollama) should not be
told "I didn't understand that": the message is plain, only not a log entry. The whole message must be one of these
phrases (punctuation, emoji and a few words such as "companion" or "dir" around it are fine), so "hi, two
coffees" still goes to the parser.
"""

from __future__ import annotations

import re
from enum import Enum

from brain.i18n import Text, tr


class Smalltalk(Enum):
    GREETING = "greeting"
    THANKS = "thanks"
    GOODBYE = "goodbye"
    GOOD_NIGHT = "good_night"
    HOW_ARE_YOU = "how_are_you"


_PHRASES: dict[Smalltalk, tuple[str, ...]] = {
    Smalltalk.GREETING: (
        "hi", "hey", "hello", "hallo", "hallöchen", "servus", "moin", "moin moin", "grüß dich", "grüß gott",
        "griaß di", "na", "huhu", "yo", "good morning", "morning", "good afternoon", "good evening", "guten morgen",
        "morgen", "guten tag", "tag", "guten abend", "hi there", "hey there", "hello there", "hallo du",
    ),
    Smalltalk.HOW_ARE_YOU: (
        "how are you", "how are you doing", "how's it going", "hows it going", "what's up", "whats up", "wie geht's",
        "wie gehts", "wie geht es dir", "wie geht's dir", "wie gehts dir", "alles gut", "alles klar",
    ),
    Smalltalk.THANKS: (
        "thanks", "thank you", "thx", "ty", "thanks a lot", "thank you so much", "thank you very much", "many thanks",
        "cheers", "danke", "vielen lieben dank", "tausend dank",
        "danke schön", "dankeschön", "danke sehr", "vielen dank", "merci", "super danke", "ok danke", "okay danke",
        "ok thanks", "okay thanks", "great thanks", "perfect thanks", "perfekt danke",
    ),
    Smalltalk.GOODBYE: (
        "bye", "bye bye", "goodbye", "see you", "see ya", "cya", "later", "tschüss", "tschüs", "ciao", "tschau",
        "bis dann", "bis später", "bis bald", "auf wiedersehen", "ade",
    ),
    Smalltalk.GOOD_NIGHT: ("good night", "night", "nighty night", "gute nacht", "nacht", "n8"),
}
# A word or two that may stand beside a phrase without changing what it is ("hi companion", "danke dir").
_AROUND = frozenset({"companion", "bot", "dir", "you", "du", "euch", "again", "nochmal", "mal", "all", "ihr",
                     "so", "sehr", "and", "und", "oh", "ah", "hey", "ok", "okay"})
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+", re.UNICODE)
_LONGEST = 6  # words; anything longer carries more than a greeting

_BY_WORDS: dict[tuple[str, ...], Smalltalk] = {}
for _kind in (Smalltalk.GREETING, Smalltalk.HOW_ARE_YOU, Smalltalk.GOODBYE, Smalltalk.GOOD_NIGHT,
              Smalltalk.THANKS):
    for _phrase in _PHRASES[_kind]:
        _BY_WORDS[tuple(_phrase.split())] = _kind  # a phrase of two kinds would take the later one


def smalltalk_of(text: str) -> Smalltalk | None:
    """What a message that is only a greeting, a thank-you or a goodbye is; None for anything else."""
    words = [w.lower() for w in _WORDS.findall(text.replace("\u2019", "'"))]  # "geht’s" as "geht's"
    if not words or len(words) > _LONGEST:
        return None
    found: Smalltalk | None = None
    i = 0
    while i < len(words):
        for length in (4, 3, 2, 1):
            kind = _BY_WORDS.get(tuple(words[i:i + length]))
            if kind is not None and i + length <= len(words):
                # The last of several counts ("danke, tschüss" says goodbye), but a greeting never overrides.
                found = kind if found is None or kind is not Smalltalk.GREETING else found
                i += length
                break
        else:
            if words[i] not in _AROUND:
                return None
            i += 1
    return found


def smalltalk_reply(kind: Smalltalk, name: str | None) -> Text:
    if kind is Smalltalk.GREETING:
        if name:
            return tr("Hi {name}! Tell me what you drank, ate or want to get done, for example \"250 ml water\" or "
                      "\"Buy milk by Friday\". /today shows your day.", name=name)
        return tr("Hi! Tell me what you drank, ate or want to get done, for example \"250 ml water\" or "
                  "\"Buy milk by Friday\". /today shows your day.")
    if kind is Smalltalk.HOW_ARE_YOU:
        return tr("I'm well, thanks! And you? If you like, tell me what you drank, ate or want to get done.")
    if kind is Smalltalk.THANKS:
        return tr("You're welcome!")
    if kind is Smalltalk.GOOD_NIGHT:
        return tr("Good night! Sleep well.")
    return tr("Bye! I'm here whenever you need me.")
