"""Capture reads its magnet fields from the text alone: time anchors in German and English relative to the
message time in the person's zone, themes, names with their kind, emotion and Plutchik sector, salience,
and it refuses a message time it cannot read."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.memory.capture import fact_marks, message_time, read_magnets, speaker_of, tokenize
from brain.memory.timeline import find_time_anchor, find_time_anchors

BERLIN = ZoneInfo("Europe/Berlin")
# Monday 30 November 2026, 08:30 in Berlin.
AT = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)


def local_span(text: str) -> tuple[str, date, date] | None:
    anchor = find_time_anchor(text, AT, BERLIN)
    if anchor is None:
        return None
    return anchor.precision, anchor.start.astimezone(BERLIN).date(), anchor.end.astimezone(BERLIN).date()


@pytest.mark.parametrize(("text", "expected"), [
    ("gestern war ich bei Anna", ("day", date(2026, 11, 29), date(2026, 11, 30))),
    ("Yesterday I went running", ("day", date(2026, 11, 29), date(2026, 11, 30))),
    ("vorgestern", ("day", date(2026, 11, 28), date(2026, 11, 29))),
    ("letzte Woche war viel los", ("week", date(2026, 11, 23), date(2026, 11, 30))),
    ("next week is busy", ("week", date(2026, 12, 7), date(2026, 12, 14))),
    ("vor 3 Tagen", ("day", date(2026, 11, 27), date(2026, 11, 28))),
    ("two weeks ago", ("week", date(2026, 11, 16), date(2026, 11, 23))),
    ("next Friday we fly", ("day", date(2026, 12, 4), date(2026, 12, 5))),
    ("last Friday", ("day", date(2026, 11, 27), date(2026, 11, 28))),
    ("am Mittwoch", ("day", date(2026, 12, 2), date(2026, 12, 3))),
    ("in May 2023 I moved", ("month", date(2023, 5, 1), date(2023, 6, 1))),
    ("letzten Monat", ("month", date(2026, 10, 1), date(2026, 11, 1))),
    ("2023-05-12", ("day", date(2023, 5, 12), date(2023, 5, 13))),
    ("am 12.05.2023", ("day", date(2023, 5, 12), date(2023, 5, 13))),
    ("May 12th, 2023", ("day", date(2023, 5, 12), date(2023, 5, 13))),
    ("Q3 2024", ("quarter", date(2024, 7, 1), date(2024, 10, 1))),
    ("letztes Jahr", ("year", date(2025, 1, 1), date(2026, 1, 1))),
    ("since 2019", ("year", date(2019, 1, 1), date(2020, 1, 1))),
    ("last weekend", ("day", date(2026, 11, 28), date(2026, 11, 30))),
    ("morgen gehe ich schwimmen", ("day", date(2026, 12, 1), date(2026, 12, 2))),
    ("in drei Tagen", ("day", date(2026, 12, 3), date(2026, 12, 4))),
])
def test_time_expressions_anchor_relative_to_the_message(text: str, expected: tuple[str, date, date]) -> None:
    assert local_span(text) == expected


def test_a_month_without_year_means_the_nearest_one() -> None:
    # From late November, March is nearer ahead (4 months) than behind (8 months).
    assert local_span("im März") == ("month", date(2027, 3, 1), date(2027, 4, 1))
    assert local_span("in October") == ("month", date(2026, 10, 1), date(2026, 11, 1))


def test_a_clock_time_lands_on_the_day_named_with_it() -> None:
    anchor = find_time_anchor("Wir treffen uns morgen um 15:30", AT, BERLIN)
    assert anchor is not None
    assert anchor.precision == "minute"
    assert anchor.start.astimezone(BERLIN) == datetime(2026, 12, 1, 15, 30, tzinfo=BERLIN)
    anchor = find_time_anchor("tomorrow at 3pm", AT, BERLIN)
    assert anchor is not None and anchor.precision == "hour"
    assert anchor.start.astimezone(BERLIN).hour == 15


def test_local_day_follows_the_persons_zone() -> None:
    # 23:30 UTC on the 30th is already 1 December in Berlin: "today" is the 1st there.
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)
    anchor = find_time_anchor("today", late, BERLIN)
    assert anchor is not None
    assert anchor.start == datetime(2026, 11, 30, 23, 0, tzinfo=UTC)


@pytest.mark.parametrize("text", ["Guten Morgen!", "I may go", "version 1.2.3", "12.5 km", "at 5 people",
                                  "montags gehe ich schwimmen", "Ich habe 3 Kinder", "heute Morgen ist es kalt x"])
def test_things_that_are_not_time_expressions_give_no_extra_anchor(text: str) -> None:
    anchors = find_time_anchors(text, AT, BERLIN)
    assert all(a.phrase.lower() == "heute" for a in anchors)


def test_the_finest_expression_wins() -> None:
    anchor = find_time_anchor("Letztes Jahr, am 12.05.2025, in May", AT, BERLIN)
    assert anchor is not None and anchor.precision == "day"


def test_time_reader_refuses_a_naive_message_time() -> None:
    with pytest.raises(ValueError):
        find_time_anchor("gestern", datetime(2026, 1, 1), BERLIN)


@given(st.text(max_size=200))
def test_time_reader_never_fails_on_arbitrary_text(text: str) -> None:
    for anchor in find_time_anchors(text, AT, BERLIN):
        assert anchor.start < anchor.end
        assert anchor.start.tzinfo is not None


def test_themes_skip_stopwords_and_fold_plurals() -> None:
    magnets = read_magnets("I baked two birthday cakes for the birthdays this week", AT)
    assert "birthday" in magnets.themes
    assert "cake" in magnets.themes
    assert not {"i", "the", "this", "week", "for"} & set(magnets.themes)


def test_people_and_places_are_found_by_their_cues() -> None:
    magnets = read_magnets("Gestern war ich mit meiner Schwester Anna in Berlin", AT, BERLIN)
    assert [(m.name, m.kind) for m in magnets.mentions] == [("Anna", "person")]
    magnets = read_magnets("I went hiking with Sarah and then flew to New York", AT)
    assert {(m.name, m.kind) for m in magnets.mentions} == {("Sarah", "person"), ("New York", "place")}
    magnets = read_magnets("Mein Freund Peter kommt nach Hamburg", AT)
    assert {(m.name, m.kind) for m in magnets.mentions} == {("Peter", "person"), ("Hamburg", "place")}


def test_german_nouns_are_not_taken_for_names() -> None:
    magnets = read_magnets("Das Wetter war schön und die Stimmung im Büro gut", AT)
    assert magnets.mentions == []


def test_known_names_can_be_looked_up_from_candidates() -> None:
    magnets = read_magnets("we met at Cafe Central with mom", AT)
    assert {"cafe central", "mom", "central"} <= set(magnets.candidates)


@pytest.mark.parametrize(("text", "emotion", "sector"), [
    ("I'm so happy about the new flat!", "happy", "joy"),
    ("Ich bin total gestresst wegen der Arbeit", "stressed", "fear"),
    ("ich bin so traurig heute", "sad", "sadness"),
    ("That really made me angry", "angry", "anger"),
    ("Ich freue mich auf den Urlaub", "happy", "joy"),
    ("I'm really looking forward to the trip", "eager", "anticipation"),
    ("Danke, ich bin dir so dankbar 🙏", "grateful", "trust"),
])
def test_emotion_words_map_to_plutchik_sectors(text: str, emotion: str, sector: str) -> None:
    magnets = read_magnets(text, AT)
    assert (magnets.emotion, magnets.sector) == (emotion, sector)


def test_negated_or_lookalike_words_are_no_emotion() -> None:
    assert read_magnets("Ich bin nicht glücklich mit dem Job", AT).emotion is None
    assert read_magnets("Mein Freund kauft im Supermarkt ein", AT).emotion is None
    assert read_magnets("The meeting is at ten", AT).sector is None


def test_salience_rises_with_feeling_people_and_dates_and_falls_for_small_talk() -> None:
    rich = read_magnets("Yesterday my sister Anna told me she is pregnant, I'm so happy!", AT)
    plain = read_magnets("The report has four sections and a summary", AT)
    small = read_magnets("ok thanks", AT)
    assert rich.salience > plain.salience > small.salience
    assert 0.0 < small.salience and rich.salience <= 1.0


def test_assistant_words_weigh_less_than_the_persons() -> None:
    text = "Yesterday my sister Anna told me she is pregnant, I'm so happy!"
    assert read_magnets(text, AT, speaker="assistant").salience < read_magnets(text, AT, speaker="user").salience


def test_message_time_accepts_aware_datetimes_and_iso_strings_with_a_zone() -> None:
    assert message_time(AT) == AT
    assert message_time("2023-05-20T00:59:00+00:00") == datetime(2023, 5, 20, 0, 59, tzinfo=UTC)
    assert message_time("2023-05-20T02:59:00Z") == datetime(2023, 5, 20, 2, 59, tzinfo=UTC)
    plus_two = datetime(2023, 5, 20, 2, 59, tzinfo=timezone(timedelta(hours=2)))
    assert message_time(plus_two) == datetime(2023, 5, 20, 0, 59, tzinfo=UTC)


@pytest.mark.parametrize("value", [None, "", "yesterday", "2023/05/20 (Sat) 02:21", "2023-05-20T00:59:00",
                                   datetime(2023, 5, 20), datetime(1970, 1, 1, tzinfo=UTC), 1684544340, float("nan")])
def test_missing_or_unreadable_message_times_are_refused(value: object) -> None:
    assert message_time(value) is None


def test_tokens_know_where_sentences_start() -> None:
    tokens = tokenize("I met Tom. Then Anna came")
    starts = {t.text: t.sentence_start for t in tokens}
    assert starts["I"] and starts["Then"]
    assert not starts["Tom"] and not starts["Anna"]


def test_a_speaker_is_a_role_or_a_participant_by_name() -> None:
    assert speaker_of("user") == speaker_of(" User ") == "user"
    assert speaker_of("ASSISTANT") == "assistant"
    assert speaker_of("  Anna   Maria ") == "Anna Maria"  # a participant of an imported chat, as written
    assert speaker_of("x" * 64) == "x" * 64
    for bad in ("", "   ", "x" * 65):
        with pytest.raises(ValueError, match="speaker"):
            speaker_of(bad)


def test_a_participant_speaks_first_hand_the_companion_at_second_hand() -> None:
    text = "My brother Jonas moved to Leipzig last week!"
    person, other, companion = (read_magnets(text, AT, BERLIN, speaker).salience
                                for speaker in ("user", "Anna", "assistant"))
    assert person == other > companion


@pytest.mark.parametrize(("text", "marks"), [
    ("Tom is allergic to peanuts", ()),
    ("Tom is not allergic to peanuts", ("¬",)),
    ("Tom isn’t allergic to peanuts", ("¬",)),
    ("Ich mag keinen Kaffee", ("¬",)),
    ("Anna's birthday is on 12 May", ("12",)),
    ("My train leaves at 09:45, platform 7", ("45", "7", "9")),
    ("When is Anna's birthday?", ("?",)),
])
def test_fact_marks_are_what_a_repeat_must_share(text: str, marks: tuple[str, ...]) -> None:
    assert fact_marks(text) == marks
