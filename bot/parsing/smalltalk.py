"""Greetings, thanks, goodbyes, how the person feels and what the companion can do, answered without a language model.

A person who writes "hi" or "danke" to a bot without a model (`make run` on a laptop without Ollama) should not be
told "I didn't understand that": the message is plain, only not a log entry. The whole message must be one of these
phrases (punctuation, emoji and a few words such as "companion" or "dir" around it are fine), so "hi, two
coffees" still goes to the parser.
"""

from __future__ import annotations

import re
import unicodedata
from enum import Enum

from brain.i18n import Text, tr


class Smalltalk(Enum):
    GREETING = "greeting"
    THANKS = "thanks"
    GOODBYE = "goodbye"
    GOOD_NIGHT = "good_night"
    HOW_ARE_YOU = "how_are_you"
    FEELING_GOOD = "feeling_good"  # "gut, danke", "I'm fine": the answer to "And you?"
    FEELING_LOW = "feeling_low"  # "mir geht es schlecht", "ich bin müde", "I'm stressed"
    ABOUT = "about"  # "was kannst du?", "what can you do?", "who are you?"
    ACK = "ack"  # "ok", "cool", "👍": heard, nothing asked
    NEVER_MIND = "never_mind"  # "never mind", "forget it", "egal", "schon gut", "cancel", "nein danke"


_PHRASES: dict[Smalltalk, tuple[str, ...]] = {
    Smalltalk.GREETING: (
        "hi", "hey", "hello", "hallo", "hallöchen", "servus", "moin", "moin moin", "grüß dich", "grüß gott",
        "griaß di", "na", "huhu", "yo", "good morning", "morning", "good afternoon", "good evening", "guten morgen",
        "morgen", "guten tag", "tag", "guten abend", "hi there", "hey there", "hello there", "hallo du",
    ),
    Smalltalk.HOW_ARE_YOU: (
        "how are you", "how are you doing", "how's it going", "hows it going", "what's up", "whats up", "wie geht's",
        "wie gehts", "wie geht es dir", "wie geht's dir", "wie gehts dir", "alles gut", "alles klar",
        "wie läuft's", "wie läufts", "wie läuft es", "wie steht's", "wie stehts", "was geht",
        "geht es dir gut", "geht's dir gut", "gehts dir gut", "are you ok", "are you okay", "are you well",
        "are you good",
    ),
    Smalltalk.THANKS: (
        "thanks", "thank you", "thx", "ty", "thanks a lot", "thank you so much", "thank you very much", "many thanks",
        "cheers", "danke", "vielen lieben dank", "tausend dank",
        "danke schön", "dankeschön", "danke sehr", "vielen dank", "merci", "super danke", "ok danke", "okay danke",
        "ok thanks", "okay thanks", "great thanks", "perfect thanks", "perfekt danke",
    ),
    Smalltalk.GOODBYE: (
        "bye", "bye bye", "goodbye", "see you", "see ya", "cya", "later", "tschüss", "tschüs", "ciao", "tschau",
        "bis dann", "bis später", "bis bald", "auf wiedersehen", "ade", "see you tomorrow", "see you later",
        "bis morgen", "bis nachher", "that's all", "thats all", "that's it", "das war's", "das wars",
        "das ist alles", "mehr nicht", "done for today", "i'm done for today", "that's it for today",
        "thats it for today", "feierabend", "ich mache feierabend", "ich mache jetzt feierabend", "mache feierabend",
        "ich mach feierabend", "schluss für heute", "genug für heute", "enough for today",
    ),
    Smalltalk.GOOD_NIGHT: ("good night", "night", "nighty night", "gute nacht", "nacht", "n8", "going to bed",
                           "going to sleep", "off to bed", "gehe schlafen", "gehe ins bett", "ab ins bett", "schlafen",
                           "ins bett"),
    Smalltalk.FEELING_GOOD: (
        "gut", "sehr gut", "super", "prima", "bestens", "passt", "mir geht's gut", "mir gehts gut",
        "mir geht es gut", "ganz gut", "auch gut", "i'm good", "im good", "i'm fine", "im fine", "i'm great",
        "i'm well", "fine", "good", "great", "doing well", "doing good", "doing great", "not bad", "nicht schlecht",
        "all good",
    ),
    Smalltalk.FEELING_LOW: (
        "mir geht's schlecht", "mir gehts schlecht", "mir geht es schlecht", "mir geht's nicht gut",
        "mir gehts nicht gut", "mir geht es nicht gut", "nicht so gut", "nicht gut", "schlecht", "ich bin müde",
        "ich bin traurig", "ich bin gestresst", "ich bin erschöpft", "ich bin kaputt", "ich bin fertig",
        "bin müde", "bin traurig", "bin gestresst", "bin erschöpft", "bin kaputt", "müde", "traurig", "gestresst",
        "erschöpft", "i'm sad", "im sad", "i'm tired", "im tired", "i'm stressed", "im stressed", "i'm exhausted",
        "i feel bad", "i feel sad", "i feel tired", "not good", "not great", "not so good", "not well", "bad day",
        "rough day", "schlechter tag", "harter tag", "tired", "sad", "stressed", "exhausted", "i'm not okay",
        "i'm not ok", "mir geht's mies", "mir gehts mies", "overwhelmed", "anxious", "worried", "nervous", "lonely",
        "down", "frustrated", "annoyed", "upset", "überfordert", "ängstlich", "besorgt", "nervös", "einsam",
        "niedergeschlagen", "frustriert", "genervt", "deprimiert", "depressed", "burnt out", "burned out",
        "ausgebrannt", "unglücklich", "unhappy", "not feeling well", "nicht so toll", "sick", "ill", "krank",
        "ich bin krank", "i'm sick", "i'm ill", "erkältet", "ich bin erkältet", "i have a cold", "i've got a cold",
        "kopfschmerzen", "ich habe kopfschmerzen", "headache", "i have a headache",
    ),
    Smalltalk.ABOUT: (
        "was kannst du", "was kannst du alles", "was machst du", "was kannst du so", "wer bist du",
        "was bist du", "wie funktionierst du", "wie funktioniert das", "what can you do", "what do you do",
        "who are you", "what are you", "how does this work", "how do you work", "what can i do here",
        "was kann ich hier machen", "was kann ich dir schreiben", "what can i ask you", "what can i say",
        "kannst du mir helfen", "hilf mir", "help me", "can you help me", "i need help", "ich brauche hilfe",
    ),
    Smalltalk.ACK: (
        "ok", "okay", "okey", "k", "kk", "okidoki", "cool", "nice", "alright", "all right", "got it", "understood",
        "sure", "yes", "yep", "yeah", "ja", "jep", "jo", "klar", "verstanden", "gut zu wissen", "good to know",
        "lol", "haha", "hehe", "wow",
    ),
    Smalltalk.NEVER_MIND: (
        "never mind", "nevermind", "forget it", "forget about it", "no worries", "doesn't matter", "egal",
        "ach egal", "schon gut", "vergiss es", "nicht so wichtig", "nicht wichtig", "ist egal", "no matter",
        "cancel", "cancel that", "abbrechen", "abbruch", "no thanks", "no thank you", "nein danke", "lass es",
        "lass gut sein", "not now", "jetzt nicht", "nicht jetzt",
    ),
}
# A word or two that may stand beside a phrase without changing what it is ("hi companion", "danke dir").
_AROUND = frozenset({"companion", "bot", "dir", "you", "du", "euch", "again", "nochmal", "mal", "all", "ihr",
                     "so", "sehr", "and", "und", "oh", "ah", "hey", "ok", "okay", "heute", "today", "gerade",
                     "echt", "total", "really", "a", "bit", "bisschen", "ein", "etwas", "ziemlich", "very",
                     "pretty", "eigentlich", "actually", "auch", "too", "also", "denn", "genau", "ich", "bin",
                     "i'm", "im", "i", "am", "feel", "feeling", "fühle", "mich", "mir", "geht", "es", "geht's",
                     "gehts", "jetzt", "now", "gehe"})
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+", re.UNICODE)
_FEELINGS = (Smalltalk.FEELING_GOOD, Smalltalk.FEELING_LOW)
_LONGEST = 6  # words; anything longer carries more than a greeting

_BY_WORDS: dict[tuple[str, ...], Smalltalk] = {}
for _kind in (Smalltalk.ACK, Smalltalk.NEVER_MIND, Smalltalk.GREETING, Smalltalk.HOW_ARE_YOU,
              Smalltalk.FEELING_GOOD, Smalltalk.FEELING_LOW, Smalltalk.ABOUT, Smalltalk.GOODBYE, Smalltalk.GOOD_NIGHT,
              Smalltalk.THANKS):
    for _phrase in _PHRASES[_kind]:
        _BY_WORDS[tuple(_phrase.split())] = _kind  # a phrase of two kinds would take the later one


# Why a person feels low, after how they feel ("I'm stressed about work", "ich bin gestresst wegen der Arbeit"): the
# feeling is still what the message says.
_BECAUSE = frozenset({"about", "because", "since", "with", "at", "from", "wegen", "weil", "da", "von", "mit", "bei",
                      "über", "durch"})


def smalltalk_of(text: str) -> Smalltalk | None:
    """What a message that is only a greeting, a thank-you or a goodbye is; None for anything else."""
    words = [w.lower() for w in _WORDS.findall(text.replace("\u2019", "'"))]  # "geht’s" as "geht's"
    if not words and 0 < len(text.strip()) <= 12 and any(unicodedata.category(c) == "So" for c in text):
        return Smalltalk.ACK  # "👍", "🙂🙏": an emoji alone says it was heard
    if not words or len(text) > 200:
        return None
    cut = next((i for i, word in enumerate(words) if word in _BECAUSE and i > 0), None)
    if cut is not None and _phrase_of(words[:cut]) is Smalltalk.FEELING_LOW:
        return Smalltalk.FEELING_LOW
    return _phrase_of(words)


def _phrase_of(words: list[str]) -> Smalltalk | None:
    if not words or len(words) > _LONGEST:
        return None
    found: Smalltalk | None = None
    i = 0
    while i < len(words):
        for length in (4, 3, 2, 1):
            kind = _BY_WORDS.get(tuple(words[i:i + length]))
            if kind is not None and i + length <= len(words):
                # The last of several counts ("danke, tschüss" says goodbye), but a greeting never overrides, and
                # thanks do not override how the person is ("gut, danke").
                keeps = kind in (Smalltalk.GREETING, Smalltalk.ACK) or (kind is Smalltalk.THANKS and found in _FEELINGS)
                found = kind if found is None or not keeps else found
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
    if kind is Smalltalk.FEELING_GOOD:
        return tr("Glad to hear it!")
    if kind is Smalltalk.FEELING_LOW:
        return tr("I'm sorry to hear that. Go easy on yourself today. If it helps, I can take something off your "
                  "mind: tell me a task or a reminder, e.g. \"remind me at 6pm to call mom\".")
    if kind is Smalltalk.ABOUT:
        return tr("I'm your companion: I keep your tasks, calendar, drinks, meals and places, remind you, and track "
                  "your goals and streaks. Just write, e.g. \"250 ml water\", \"Buy milk by Friday\", \"remind me "
                  "at 6pm to call mom\" or \"What's on tomorrow?\". /help lists everything.")
    if kind is Smalltalk.GOOD_NIGHT:
        return tr("Good night! Sleep well.")
    if kind is Smalltalk.ACK:
        return tr("👍")
    if kind is Smalltalk.NEVER_MIND:
        return tr("All right.")
    return tr("Bye! I'm here whenever you need me.")


# A person saying their name: "my name is Tom", "ich heiße Jana", "call me Tom"; "I'm Tom" and "ich bin Jana" only with
# a greeting before or "nice to meet you" after ("ich bin Lehrer" is no name). One capitalised word.
_NAME = r"(?P<name>[A-ZÄÖÜ][^\W\d_]{1,30}(?:-[A-ZÄÖÜ][^\W\d_]{1,30})?)"
_GREETED = r"(?:hi|hey|hello|hallo|servus|moin|guten\s+(?:morgen|tag|abend))[,!.]?\s+"
_MET = r"(?:[,.!]?\s+(?:nice\s+to\s+meet\s+you|pleased\s+to\s+meet\s+you|freut\s+mich|schön\s+dich\s+kennenzulernen))"
_NAME_RES = (
    re.compile(rf"^(?:{_GREETED})?(?:my\s+name\s+is|my\s+name's|i'm\s+called|call\s+me|(?:[Ii]ch\s+)?hei(?:ß|ss)e|"
               rf"mein\s+[Nn]ame\s+ist|nenn\s+mich)\s+{_NAME}{_MET}?[.!]*$", re.I),
    re.compile(rf"^{_GREETED}(?:i'm|i\s+am|ich\s+bin|ich\s+bins|ich\s+bin's)\s+{_NAME}{_MET}?[.!]*$", re.I),
    re.compile(rf"^(?:i'm|i\s+am|ich\s+bin)\s+{_NAME}{_MET}[.!]*$", re.I),
)


def name_said(text: str) -> str | None:
    """The name a person tells the companion to call them by, or None."""
    said = text.strip().replace("\u2019", "'")
    if len(said) > 120:
        return None
    for explicit, pattern in zip((True, False, False), _NAME_RES, strict=True):
        match = pattern.match(said)
        # "my name is tom" is a name however it is written; after "I'm" only a capital says it is one
        if match is not None and (explicit or match.group("name")[0].isupper()):
            name = match.group("name")
            if tuple(name.lower().split()) not in _BY_WORDS:  # "I'm Fine, nice to meet you"
                return name[0].upper() + name[1:]
    return None
