"""Which capitalised words capture takes for names: cued names as before; uncued English names only where the
capitals carry information (no heading, emphasis, all-caps or capitalised common noun), whole multi-word names
and quoted titles instead of their parts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.memory.capture import Mention, detect_language, read_magnets, read_mentions, tokenize

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def mentions(text: str) -> list[Mention]:
    tokens = tokenize(text)
    return read_mentions(tokens, detect_language(tokens))


def names(text: str) -> set[tuple[str, str, bool]]:
    return {(m.name, m.kind, m.cued) for m in mentions(text)}


@pytest.mark.parametrize(("text", "expected"), [
    ("I had lunch with my sister Anna", {("Anna", "person", True)}),
    ("We went climbing with Tom yesterday", {("Tom", "person", True)}),
    ("Next month I am moving to Berlin", {("Berlin", "place", True)}),
    ("Anna said the cake was great", {("Anna", "person", True)}),
    ("I went hiking with Sarah and then flew to New York", {("Sarah", "person", True),
                                                            ("New York", "place", True)}),
    ("we met at Café Central for coffee", {("Café Central", "place", True)}),
    ("Gestern war ich mit meiner Schwester Anna in Berlin", {("Anna", "person", True)}),
    ("Mein Freund Peter kommt nach Hamburg", {("Peter", "person", True), ("Hamburg", "place", True)}),
])
def test_cued_names_are_found_as_before(text: str, expected: set[tuple[str, str, bool]]) -> None:
    assert names(text) == expected


def test_a_cued_place_keeps_all_four_of_its_words() -> None:
    assert names("We hiked a lot in Hawaii Volcanoes National Park last summer") == {
        ("Hawaii Volcanoes National Park", "place", True)}


@pytest.mark.parametrize(("text", "name"), [
    ("We finally visited the Museum of Modern Art on our trip", "Museum of Modern Art"),
    ("I did the Walk for Hunger last month", "Walk for Hunger"),
    ("My partner and I binged Game of Thrones over the holidays", "Game of Thrones"),
    ("Can you tell me more about Settlers of Catan before I buy it", "Settlers of Catan"),
    ("What did the country do after World War II ended", "World War II"),
])
def test_a_multi_word_name_is_one_entity_not_its_parts(text: str, name: str) -> None:
    assert names(text) == {(name, "thing", False)}


def test_a_quoted_title_is_one_entity() -> None:
    found = names('I recently went to the "Women in Art" exhibit and then read "The Art of Falling" at home')
    assert found == {("Women in Art", "thing", False), ("The Art of Falling", "thing", False)}
    # A quoted sentence is no title: its words are read as usual.
    assert names('she wrote "we should visit Lisbon soon" on the card') == {("Lisbon", "thing", False)}


def test_headings_and_title_case_lines_give_no_uncued_names() -> None:
    text = ("Tips for Better Sleep Habits\n"
            "- Keep a regular schedule, even on weekends.\n"
            "## Evening Routine Ideas\n"
            "Try the **Pomodoro Technique** when the Wind Down Period starts.")
    found = names(text)
    assert not {n for n, _, _ in found} & {"Better Sleep Habits", "Sleep Habits", "Routine Ideas", "Evening Routine",
                                           "Pomodoro Technique", "Routine"}
    assert found == {("Wind Down Period", "thing", False)}


def test_the_same_heading_line_in_a_one_line_message_is_read_as_usual() -> None:
    # One line without a full stop is an ordinary chat message, not a heading.
    assert names("met Anna Schmidt today") == {("Anna Schmidt", "thing", False)}


def test_cued_names_survive_in_a_heading() -> None:
    assert names("## Dinner with Anna\nWe talked for hours.") == {("Anna", "person", True)}


@pytest.mark.parametrize("text", [
    "I usually watch TV around 10 PM before bed",
    "I LOVE THIS PLACE SO MUCH",
    "Should I learn SQL or R first for data work",
    "We had Italian food and some Japanese tea",
    "I swim on Mondays and Tuesdays, and I did yoga on Valentine's Day",
    "We need internet, electricity and TV at the new flat",
])
def test_capitals_that_carry_no_information_give_no_names(text: str) -> None:
    assert mentions(text) == []


def test_a_word_the_message_also_uses_in_lower_case_is_a_common_noun() -> None:
    assert names("I called the Center about the volleyball league") == {("Center", "thing", False)}
    assert mentions("I called the Center, but the community center was closed") == []
    # A multi-word name stays a name even when one of its words is also a common noun here.
    assert names("The trail near the Visitor Center starts at the visitor parking") == {
        ("Visitor Center", "thing", False)}


def test_a_nationality_opens_a_name_but_is_none_alone() -> None:
    assert names("We had dinner at French Laundry and loved the French wine") == {("French Laundry", "place", True)}
    themes = read_magnets("I am learning to cook Italian dishes", AT).themes
    assert "italian" in themes


def test_a_possessive_names_the_entity_without_its_s() -> None:
    assert names("I read my friend Rachel's first novel") == {("Rachel", "person", True)}
    magnets = read_magnets("I loved Rachel's novel and the Modern Art Museum's new wing", AT)
    assert {"rachel", "modern art museum"} <= set(magnets.candidates)


def test_an_over_long_capitalised_run_is_a_title_not_a_name() -> None:
    assert mentions("I read the Complete Guide To Better Home Cooking Methods last week") == []


def test_the_whole_name_is_a_lookup_candidate_however_long() -> None:
    magnets = read_magnets("We finally visited the Metropolitan Museum of Art together", AT)
    assert "metropolitan museum of art" in magnets.candidates


def test_german_reads_only_cued_names() -> None:
    assert mentions("Ich habe gestern Game of Thrones mit dem Vater geschaut und das Essen war gut") == []
    assert names("Wir fahren morgen nach Frankfurt") == {("Frankfurt", "place", True)}


@pytest.mark.parametrize(("text", "expected"), [
    ("Gestern waren Anna und ich im Kino", {("Anna", "person", True)}),
    ("Ich habe Brot und Käse für das Picknick gekauft", set()),
    ("Nach dem Sport gehe ich nach Hause", set()),
    ("Das habe ich aus Versehen gelöscht", set()),
])
def test_german_nouns_before_und_or_after_nach_are_no_names(text: str, expected: set[tuple[str, str, bool]]) -> None:
    assert names(text) == expected


# Property-style checks over sentences built from a small vocabulary of names, cue words and plain words.
WORDS = st.sampled_from([
    "Anna", "Tom", "Berlin", "New", "York", "Museum", "of", "Modern", "Art", "the", "with", "in", "and", "my",
    "sister", "said", "TV", "Italian", "Center", "center", "went", "we", "visited", "cake", "yesterday", "for",
    "Walk", "Hunger", "Rachel's", "I", "loved", "to", "park", "Park", "Game", "Thrones", "\"", ",", ".",
])
SENTENCES = st.lists(WORDS, min_size=1, max_size=14).map(lambda words: "we " + " ".join(words))


@given(SENTENCES)
def test_a_text_in_lower_case_has_no_names(text: str) -> None:
    assert mentions(text.lower()) == []


@given(SENTENCES)
def test_every_name_is_made_of_words_of_the_text(text: str) -> None:
    words = {t.text for t in tokenize(text)} | {t.text.removesuffix("'s") for t in tokenize(text)}
    for mention in mentions(text):
        assert set(mention.name.split()) <= words


@given(SENTENCES.map(lambda text: text.replace('"', "")))
def test_a_heading_keeps_only_the_cued_names_of_its_line(text: str) -> None:
    # (A quoted title stays one even in a heading: the quotes, not the capitals, mark it.)
    plain = mentions(text)
    heading = mentions("# " + text + "\nok")
    assert {(m.name, m.kind) for m in heading if not m.cued} == set()
    cued = {(m.name, m.kind) for m in plain if m.cued}
    assert {(m.name, m.kind) for m in heading} <= cued
    if "and" not in text.split():  # a bare "and" only cues a word that reads as a name by itself
        assert {(m.name, m.kind) for m in heading} == cued


@given(SENTENCES)
def test_an_uncued_name_is_never_all_capitals(text: str) -> None:
    assert all(not m.name.isupper() for m in mentions(text) if not m.cued)


@pytest.mark.parametrize(("text", "name"), [
    ("We watched a documentary about the World War and its end", "World War"),
    ("My nephew has loved Iron Man since he was four", "Iron Man"),
    ("I run my blog on Red Hat servers", "Red Hat"),
])
def test_an_english_name_may_end_on_a_german_stopword(text: str, name: str) -> None:
    # "war", "man" and "hat" are German stopwords; in English they end a name like any other word.
    assert names(text) == {(name, "thing", False)}


def test_german_stopwords_still_end_no_german_name() -> None:
    assert names("Gestern war ich mit meiner Schwester Anna im Kino") == {("Anna", "person", True)}
    assert names("Mein Freund Peter Hat Zeit") == {("Peter", "person", True)}
