"""The language a message is written in, when it says so plainly: a person who never chose a language is answered in
the one they write ("Ich habe heute zwei Kaffee getrunken" to a companion that speaks English). Only the small words
every sentence has are counted (articles, pronouns, auxiliaries, question words), never nouns or names, and only words
that belong to one of the two languages ("in", "am", "an", "was", "will", "so" are in both). A message is German or
English when it has at least `MIN_WORDS` words, `CLEAR` of them that language's and none the other's ("Ich heiße
Mara", "Ich wohne in Hamburg"), or is one of its greetings alone ("Hallo", "Guten Morgen!"); anything else (a short
entry like "Kaffee", a mixed sentence, a name) says nothing, so the language stays as it is."""

from __future__ import annotations

import re

# How many of a language's own words a message of at least MIN_WORDS words needs (and none of the other's) to say
# which language it is in.
CLEAR = 2
MIN_WORDS = 3

_WORDS: dict[str, frozenset[str]] = {
    "de": frozenset("""
        ich du er wir ihr sie und oder aber nicht kein keine keinen der die das dem den des ist sind bin bist war
        waren habe hab hast hat haben hatte hatten mit auf für ein eine einen einem einer mein meine meinen meinem
        meiner dein deine mir mich dir dich uns zum zur vom beim noch schon auch heute morgen gestern bitte danke
        hallo wie wann wo warum welche welcher uhr gerade jetzt sehr viel gut nach bis von zu ja nein nur mal gibt
        kann kannst soll sollte muss musst erinnere erinnerung getrunken gegessen termin aufgabe wieder immer dann
        weil dass wenn nichts etwas heiße heißt abend mittag wer wieso sich euch diese dieser dieses bei steht geht
        wohne wohnst arbeite komme
    """.split()),
    "en": frozenset("""
        i i'm i've i'll you your he she we they and or but not the is are were be been have has had did do does
        with for my me to of at it it's this that what how when where why which who today tomorrow yesterday please
        thanks thank hello just now very much good after until from yes only can could should must remind reminder
        drank ate appointment task again always then because if there some any a don't didn't can't won't let's
        tonight our their would on what's that's there's how's where's when's i'd you're isn't doesn't
        live name
    """.split()),
}
# A message that is only a greeting says its language too, though it is short: "Hallo" and "Moin" are not English,
# "Hello" is not German ("Hi" and "Hey" are both).
_GREETINGS: dict[str, frozenset[str]] = {
    "de": frozenset({"hallo", "hallöchen", "moin", "moin moin", "servus", "guten morgen", "guten tag", "guten abend",
                     "grüß dich", "grüß gott", "grüezi", "hallo zusammen", "hallo du"}),
    "en": frozenset({"hello", "hello there", "good morning", "good afternoon", "good evening", "howdy"}),
}
_UMLAUT = re.compile(r"[äöüß]")
_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def written_language(text: str) -> str | None:
    """"de" or "en" when the message is plainly written in that language, else None."""
    words = [word.lower().replace("’", "'") for word in _TOKEN.findall(text.replace("’", "'"))]
    greeting = " ".join(words)
    for language, greetings in _GREETINGS.items():
        if greeting in greetings:
            return language
    if len(words) < MIN_WORDS:
        return None
    scores = {language: sum(word in own for word in words) for language, own in _WORDS.items()}
    # A word with an umlaut or ß is German ("Müll", "heiße"), counted once per word like any other.
    scores["de"] += sum(1 for word in words if word not in _WORDS["de"] and _UMLAUT.search(word))
    for language, other in (("de", "en"), ("en", "de")):
        if scores[language] >= CLEAR and scores[other] == 0:
            return language
    return None
