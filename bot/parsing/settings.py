"""Settings said in words, read as the command that makes them: "sprich Deutsch" as /lang de, "ich wohne in Berlin" as
/tz Berlin, "no reminders between 10pm and 7am" as /quiet 22:00-07:00 ("after 10pm" as /quiet 22:00-, keeping the
end), "pause reminders for 3 days" as /pause 3, "ich bin im Urlaub bis Sonntag" as /vacation bis Sonntag. Without a
language model these got "I didn't understand" (or, with a time in them, were offered as an appointment). Each pattern
takes the whole message, so a sentence that only mentions a language or a city is left alone; the command then says
what it did, or why it could not."""

from __future__ import annotations

import re

from bot.parsing.dates import FoundTime, find_bare_hour, find_time

_LANGUAGES = {"german": "de", "deutsch": "de", "english": "en", "englisch": "en"}
_LANGUAGE_RES = (
    re.compile(r"^(?:please\s+|bitte\s+)?(?:switch|change)\s+(?:the\s+language\s+)?to\s+(?P<lang>german|english)"
               r"(?:\s+please)?$", re.I),
    re.compile(r"^(?:please\s+|can\s+you\s+)?(?:speak|talk|write)\s+(?:in\s+)?(?P<lang>german|english)"
               r"(?:\s+(?:please|with\s+me))?$", re.I),
    re.compile(r"^(?:bitte\s+)?(?:sprich|rede|schreib|schreibe)\s+(?:bitte\s+)?(?:(?:auf|in)\s+)?"
               r"(?P<lang>deutsch|englisch)(?:\s+(?:bitte|mit\s+mir))*$", re.I),
    re.compile(r"^(?:(?:auf|in)\s+)?(?P<lang>deutsch|englisch|german|english)\s+(?:bitte|please)$", re.I),
    re.compile(r"^(?:stell\w*\s+)?(?:die\s+)?sprache\s+(?:auf\s+)?(?P<lang>deutsch|englisch)(?:\s+(?:stellen|bitte))*$",
               re.I),
)
# A place named with a capital (a city) or a zone name ("Europe/Berlin"): "I live in a flat" is no time zone.
_PLACE = r"(?P<place>[A-ZÄÖÜ][\w.'-]*(?:\s+[A-ZÄÖÜ][\w.'-]*){0,2}|[A-Za-z_]+/[A-Za-z_/+-]+)"
_ZONE_RES = (
    re.compile(rf"^my\s+time\s*zone\s+is\s+(?:now\s+)?{_PLACE}$"),
    re.compile(rf"^[Mm]eine\s+[Zz]eitzone\s+ist\s+(?:jetzt\s+)?{_PLACE}$"),
    re.compile(rf"^[Ii]\s+(?:now\s+)?live\s+(?:now\s+)?in\s+{_PLACE}(?:\s+now)?$"),
    re.compile(rf"^[Ii]\s+(?:have\s+)?moved\s+to\s+{_PLACE}$"),
    re.compile(rf"^(?:[Ii]ch\s+)?(?:wohne|lebe)\s+(?:jetzt\s+)?in\s+{_PLACE}$"),
    re.compile(rf"^(?:[Ii]ch\s+)?(?:bin|wohne)\s+(?:jetzt\s+)?(?:nach|in)\s+{_PLACE}\s+(?:gezogen|umgezogen)$"),
)
_NO_REMINDERS = (r"^(?:please\s+|bitte\s+)?(?:no\s+(?:reminders|notifications|messages)|keine\s+(?:erinnerungen|"
                 r"nachrichten|benachrichtigungen))")
_QUIET_RE = re.compile(_NO_REMINDERS + r"\s+(?:between|zwischen|from|von)\s+(?P<first>.+?)\s+(?:and|und|to|bis)\s+"
                       r"(?P<last>.+?)(?:\s+(?:please|bitte))?$", re.I)
# One end of the quiet hours: "no reminders after 10pm" (the start), "keine Nachrichten vor 8 Uhr" (the end).
_QUIET_END_RE = re.compile(_NO_REMINDERS + r"\s+(?P<side>after|nach|ab|from|before|vor|until|bis)\s+(?P<time>.+?)"
                           r"(?:\s+(?:please|bitte))?$", re.I)
_PAUSE_RE = re.compile(r"^(?:please\s+|bitte\s+)?(?:pause|pausiere|pausier)\s+(?:(?:the|my|all|die|meine|alle)\s+)*"
                       r"(?:reminders|erinnerungen|notifications|benachrichtigungen)"
                       r"(?:\s+(?:for|für|fuer)\s+(?P<days>\d{1,3}|[a-zäöü]+)\s+(?:days?|tage?n?))?$", re.I)
_VACATION_RE = re.compile(
    r"^(?:i'?m|i\s+am|ich\s+bin|bin)\s+(?:on\s+(?:vacation|holiday)|im\s+urlaub|in\s+urlaub|auf\s+urlaub|verreist)\s+"
    r"(?P<span>(?:until|till|bis|from|vom|von|ab)\s+.+)$"
    r"|^(?:urlaub|vacation)\s+(?P<span2>(?:until|till|bis|from|vom|von|ab)\s+.+)$", re.I)
_RESUME_RE = re.compile(r"^(?:(?:turn\s+)?reminders\s+back\s+on|resume\s+(?:the\s+|my\s+)?reminders"
                        r"|erinnerungen\s+wieder\s+(?:an|einschalten))"
                        r"[.!]*$", re.I)


# The morning summary and the evening reflection, by their names in both languages.
_MORNING = (r"(?:(?:the|my)\s+)?(?:morning\s+summary|daily\s+summary|summary\s+every\s+morning"
            r"|(?:die\s+|meine\s+)?(?:morgenübersicht|morgenzusammenfassung|tagesübersicht|zusammenfassung))"
            r"|(?:the|my)\s+summary")
_EVENING = (r"(?:(?:the|my)\s+)?(?:evening\s+reflection|evening\s+review"
            r"|(?:den\s+|meinen\s+|die\s+|meine\s+)?(?:abendrückblick|abendreflexion|abendreflektion))")
_RITUAL_AT_RE = re.compile(rf"^(?:(?:please\s+)?(?:set|send\s+me(?:\s+a)?|move)\s+)?(?P<which>{_MORNING}|{_EVENING})\s+"
                           r"(?:(?:at|to|for|um|auf|ab)\s+)?(?P<time>[\d:.\s]+(?:uhr|am|pm|h)?)$", re.I)
_RITUAL_OFF_RE = re.compile(
    rf"^(?:(?:please\s+)?(?:turn|switch)\s+off\s+|no\s+more\s+|stop\s+(?:the\s+|my\s+)?|keine?n?\s+)?"
    rf"(?P<which>{_MORNING}|{_EVENING})(?:\s+(?:off|aus|mehr|ausschalten|abschalten|abstellen|please|bitte))*$", re.I)


def _ritual(said: str) -> tuple[str, str] | None:
    at = _RITUAL_AT_RE.match(said)
    if at is not None:
        command = "evening" if re.search(_EVENING, at.group("which"), re.I) else "morning"
        found = _hour(at.group("time"))
        if found is None:
            return None
        value = found.value
        if command == "evening" and found.open_meridiem and value.hour < 12:
            value = value.replace(hour=value.hour + 12)  # "Abendrückblick um 9" is 21:00
        return command, f"{value:%H:%M}"
    off = _RITUAL_OFF_RE.match(said)
    if off is not None and (off.group(0).lower() != off.group("which").lower()):  # the name alone says nothing
        return ("evening" if re.search(_EVENING, off.group("which"), re.I) else "morning"), "off"
    return None


# A ritual started in words: "start the morning ritual", "Morgenritual starten", "Starte die Abendroutine".
_RITUAL_START_RES = (
    re.compile(r"^(?:please\s+)?(?:start|begin|run)\s+(?:the\s+|my\s+)?(?P<name>[^\W\d_][\w -]{1,30}?)\s+"
               r"(?:ritual|routine)$", re.I),
    re.compile(r"^(?:bitte\s+)?(?:starte|beginne)\s+(?:bitte\s+)?(?:das\s+|die\s+|mein\s+|meine\s+)?"
               r"(?P<name>[^\W\d_]{2,30}?)-?(?:ritual|routine)$", re.I),
    re.compile(r"^(?:das\s+|die\s+|mein\s+|meine\s+)?(?P<name>[^\W\d_]{2,30}?)-?(?:ritual|routine)\s+"
               r"(?:starten|beginnen)(?:\s+bitte)?$", re.I),
)


def setting_said(text: str) -> tuple[str, str] | None:
    """The command (name, arguments) a message that says a setting in words asks for, or None."""
    said = re.sub(r"(?<!\d)[.!]+$", "", text.strip())  # "bis 10.12." keeps its date's dot
    if not said or len(said) > 120:
        return None
    for pattern in _LANGUAGE_RES:
        match = pattern.match(said)
        if match is not None:
            return "lang", _LANGUAGES[match.group("lang").lower()]
    for pattern in _ZONE_RES:
        match = pattern.match(said)
        if match is not None:
            return "tz", match.group("place")
    quiet = _QUIET_RE.match(said)
    if quiet is not None:
        first, last = _hour(quiet.group("first")), _hour(quiet.group("last"))
        if first is None or last is None:
            return None
        start = first.value
        if first.open_meridiem and last.open_meridiem and start.hour < 12 and start > last.value:
            start = start.replace(hour=start.hour + 12)  # "zwischen 10 und 7": from 22:00
        return "quiet", f"{start:%H:%M}-{last.value:%H:%M}"
    end = _QUIET_END_RE.match(said)
    if end is not None:
        found = _hour(end.group("time"))
        if found is None:
            return None
        value = found.value
        if end.group("side").lower() in ("before", "vor", "until", "bis"):
            return "quiet", f"-{value:%H:%M}"  # "vor 8": the morning's 8
        if found.open_meridiem and 6 <= value.hour < 12:
            value = value.replace(hour=value.hour + 12)  # "nach 10": the evening's 10
        return "quiet", f"{value:%H:%M}-"
    pause = _PAUSE_RE.match(said)
    if pause is not None:
        return "pause", pause.group("days") or ""
    vacation = _VACATION_RE.match(said)
    if vacation is not None:
        return "vacation", (vacation.group("span") or vacation.group("span2")).strip()
    if _RESUME_RE.match(said):
        return "resume", ""
    for pattern in _RITUAL_START_RES:
        started = pattern.match(said)
        if started is not None:
            return "ritual", started.group("name").strip()
    return _ritual(said)


def _hour(text: str) -> FoundTime | None:
    """A time said alone ("10pm", "22 Uhr", "22:30", or a bare "22")."""
    found = find_time(text)
    if found is None:
        bare = find_bare_hour(text.strip(), 0)
        found = bare if bare is not None and bare.end == len(text.strip()) else None
    return found
