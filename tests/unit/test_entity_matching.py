"""Which words of a message may link a known entity: people and places by any candidate, in any case; a known
"thing" only by a key the message writes as a name (capitalised outside headings and emphasis, with a capital
inside the word, several words, or one of the message's own names)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.memory.capture import read_magnets

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def name_keys(text: str) -> set[str]:
    return set(read_magnets(text, AT).name_keys)


def candidates(text: str) -> set[str]:
    return set(read_magnets(text, AT).candidates)


@pytest.mark.parametrize(("text", "word"), [
    ("I called the Center about the volleyball league", "center"),
    ("I finally watched Dune last night", "dune"),
    ("we order too much from Petco's site", "petco"),
    ("**Tip**: my videos on YouTube do best on Fridays", "youtube"),
    ("PayPal charged me twice", "paypal"),
])
def test_a_word_written_as_a_name_may_link_a_known_thing(text: str, word: str) -> None:
    assert word in name_keys(text)


@pytest.mark.parametrize(("text", "word"), [
    ("we signed up for the art class at the community center", "art"),
    ("we signed up for the art class at the community center", "center"),
    ("## Art\nTry something new every week.", "art"),  # a heading
    ("Try the **Center** first, then go on", "center"),  # emphasis
    ("I called the Center, but the community center was closed", "center"),  # also a common noun here
    ("THE CENTER WAS CLOSED", "center"),
])
def test_a_generic_word_not_written_as_a_name_links_no_known_thing(text: str, word: str) -> None:
    assert word in candidates(text)  # people and places are still looked up by it
    assert word not in name_keys(text)


def test_at_a_sentence_start_a_known_thing_is_matched_by_its_capital() -> None:
    # The capital says nothing there, so the thing's being known as a name decides: a pet, a brand.
    assert "bruno" in name_keys("Bruno once stole a sandwich from Tom")
    assert "amazon" in name_keys("Sure! Amazon has a good selection of these")


def test_lower_case_people_and_places_stay_candidates() -> None:
    keys = candidates("went to berlin with mom and sarah, she is sarah's best friend")
    assert {"berlin", "mom", "sarah", "sarah's"} <= keys
    assert not {"berlin", "mom", "sarah"} & name_keys("went to berlin with mom and sarah")


def test_a_multi_word_name_in_lower_case_is_specific_enough() -> None:
    text = "we binged game of thrones and then hit the san diego zoo"
    assert {"game of thrones", "san diego zoo", "san diego"} <= name_keys(text)
    # Single words of it are not, and no n-gram is read across a sentence break or with a stopword at an end.
    assert not {"game", "thrones", "thrones and", "the museum"} & candidates(text) & name_keys(text)
    assert "game thrones" not in candidates("I love the game. Thrones are for kings")


def test_the_messages_own_names_are_name_keys_however_written() -> None:
    magnets = read_magnets("I had lunch with my sister Anna at the Museum of Modern Art", AT)
    assert {"anna", "museum of modern art"} <= set(magnets.name_keys)


WORDS = st.sampled_from([
    "Anna", "art", "Art", "center", "Center", "the", "with", "in", "of", "my", "mom", "YouTube", "game", "Game",
    "Thrones", "thrones", "we", "went", "to", "Berlin", "berlin", ".", ",", "**", "#", "\n", "\"", "Petco's",
    "NASA",
])
TEXTS = st.lists(WORDS, min_size=1, max_size=16).map(" ".join)


@given(TEXTS)
def test_name_keys_are_candidates(text: str) -> None:
    magnets = read_magnets(text, AT)
    assert set(magnets.name_keys) <= set(magnets.candidates)


@given(TEXTS)
def test_a_single_word_in_lower_case_never_links_a_thing(text: str) -> None:
    # Only a name the message reads itself (a cued one: "with anna" is not one in lower case) could do it.
    magnets = read_magnets(text.lower(), AT)
    assert all(" " in key for key in magnets.name_keys)
